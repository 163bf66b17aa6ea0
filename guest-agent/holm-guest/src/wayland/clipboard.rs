//! The Wayland clipboard, through wlr-data-control
//! (`zwlr_data_control_manager_v1`, which sway offers): a client that is not
//! a focused window may read and set the seat's selection.
//!
//! Setting it: a data source of the guest's, offering the clip's MIME types,
//! becomes the selection; a thread keeps its connection and writes the data
//! to every reader (`send`) until another client sets the selection
//! (`cancelled`). Reading it: the device announces the current selection's
//! offer and its types on the first round trip; each type wanted is
//! received through a pipe.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd as _, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use wayland_client::backend::ObjectId;
use wayland_client::globals::{GlobalListContents, registry_queue_init};
use wayland_client::protocol::{wl_registry, wl_seat};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, event_created_child};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1 as device, zwlr_data_control_manager_v1 as manager,
    zwlr_data_control_offer_v1 as offer, zwlr_data_control_source_v1 as source,
};

use super::client::gone;
use crate::display::{Clip, DisplayError};

/// How long a reader waits for the selection's owner to write it all.
const READ_WITHIN: Duration = Duration::from_secs(5);

/// The text types, first the one read.
const TEXT_TYPES: [&str; 5] =
    ["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT"];

#[derive(Default)]
struct State {
    /// Each offer announced, with its types.
    offers: HashMap<ObjectId, (offer::ZwlrDataControlOfferV1, Vec<String>)>,
    /// The offer that is the selection now.
    selection: Option<ObjectId>,
    /// What the guest's own source serves.
    serving: Option<Clip>,
    /// The guest's source was replaced.
    cancelled: bool,
}

struct Session {
    conn: Connection,
    queue: EventQueue<State>,
    state: State,
    device: device::ZwlrDataControlDeviceV1,
    manager: manager::ZwlrDataControlManagerV1,
    qh: QueueHandle<State>,
}

impl Session {
    fn open(socket: &Path) -> Result<Self, DisplayError> {
        let stream = std::os::unix::net::UnixStream::connect(socket).map_err(|e| {
            DisplayError::Gone(format!("cannot connect to {}: {e}", socket.display()))
        })?;
        let conn = Connection::from_socket(stream).map_err(gone)?;
        let (globals, queue) = registry_queue_init::<State>(&conn).map_err(gone)?;
        let qh = queue.handle();
        let seat: wl_seat::WlSeat = globals.bind(&qh, 1..=7, ()).map_err(gone)?;
        let manager: manager::ZwlrDataControlManagerV1 =
            globals.bind(&qh, 1..=2, ()).map_err(|e| {
                DisplayError::Unsupported(format!(
                    "the compositor has no wlr-data-control, so no clipboard: {e}"
                ))
            })?;
        let device = manager.get_data_device(&seat, &qh, ());
        let mut s = Self { conn, queue, state: State::default(), device, manager, qh };
        s.roundtrip()?;
        Ok(s)
    }

    fn roundtrip(&mut self) -> Result<(), DisplayError> {
        self.queue.roundtrip(&mut self.state).map(drop).map_err(gone)
    }
}

/// The selection as its owner gives it.
pub fn read(socket: &Path) -> Result<Clip, DisplayError> {
    let mut s = Session::open(socket)?;
    let Some((offer, types)) = s.state.selection.as_ref().and_then(|id| s.state.offers.get(id))
    else {
        return Ok(Clip::default());
    };
    let (offer, types) = (offer.clone(), types.clone());
    let mut clip = Clip { types: types.clone(), ..Clip::default() };
    if let Some(t) = TEXT_TYPES.iter().find(|t| types.iter().any(|o| o == *t)) {
        let bytes = receive(&mut s, &offer, t)?;
        clip.text = Some(match *t {
            "STRING" => bytes.iter().map(|b| char::from(*b)).collect(),
            _ => String::from_utf8_lossy(&bytes).into_owned(),
        });
    }
    if types.iter().any(|t| t == holm_proto::desk::PNG_MIME) {
        clip.png = Some(receive(&mut s, &offer, holm_proto::desk::PNG_MIME)?);
    }
    offer.destroy();
    s.device.destroy();
    s.manager.destroy();
    let _ = s.conn.flush();
    Ok(clip)
}

fn receive(
    s: &mut Session,
    offer: &offer::ZwlrDataControlOfferV1,
    mime: &str,
) -> Result<Vec<u8>, DisplayError> {
    let failed = |e: std::io::Error| DisplayError::Failed(format!("clipboard pipe: {e}"));
    let (read, write) =
        rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(|e| failed(e.into()))?;
    offer.receive(mime.to_owned(), write.as_fd());
    s.conn.flush().map_err(gone)?;
    drop(write);
    read_all(read, Instant::now() + READ_WITHIN, mime)
}

fn read_all(fd: OwnedFd, deadline: Instant, mime: &str) -> Result<Vec<u8>, DisplayError> {
    let mut file = std::fs::File::from(fd);
    let mut data = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(DisplayError::Failed(format!(
                "the clipboard's owner did not finish writing {mime} within {} s",
                READ_WITHIN.as_secs()
            )));
        }
        let mut pfd = libc::pollfd {
            fd: std::os::fd::AsRawFd::as_raw_fd(&file),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = i32::try_from(left.as_millis().max(1)).unwrap_or(i32::MAX);
        // SAFETY: one pollfd on our stack, valid for the call.
        if unsafe { libc::poll(&raw mut pfd, 1, ms) } <= 0 {
            continue;
        }
        match file.read(&mut buf) {
            Ok(0) => return Ok(data),
            Ok(n) => data.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(DisplayError::Failed(format!("clipboard pipe: {e}"))),
        }
    }
}

/// Makes a source of the guest's the selection, served on a thread of its
/// own until another client sets the selection.
pub fn own(socket: &Path, clip: Clip) -> Result<(), DisplayError> {
    let mut s = Session::open(socket)?;
    let src = s.manager.create_data_source(&s.qh, ());
    for t in clip.offered() {
        src.offer(t);
    }
    s.state.serving = Some(clip);
    s.device.set_selection(Some(&src));
    s.roundtrip()?;
    if s.state.cancelled {
        return Err(DisplayError::Failed("the compositor cancelled the guest's selection".into()));
    }
    std::thread::Builder::new()
        .name("wayland-clipboard".into())
        .spawn(move || {
            while !s.state.cancelled {
                if let Err(e) = s.queue.blocking_dispatch(&mut s.state) {
                    tracing::info!(error = %e, "the clipboard's source stopped");
                    break;
                }
            }
            src.destroy();
            s.device.destroy();
            s.manager.destroy();
            let _ = s.conn.flush();
        })
        .map_err(|e| DisplayError::Failed(format!("clipboard thread: {e}")))?;
    Ok(())
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

impl Dispatch<device::ZwlrDataControlDeviceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &device::ZwlrDataControlDeviceV1,
        event: device::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            device::Event::DataOffer { id } => {
                state.offers.insert(id.id(), (id, Vec::new()));
            }
            device::Event::Selection { id } => {
                // The previous selection's offer is of no more use.
                if let Some(old) = state.selection.take()
                    && let Some((o, _)) = state.offers.remove(&old)
                {
                    o.destroy();
                }
                state.selection = id.map(|o| o.id());
            }
            device::Event::PrimarySelection { id: Some(o) } => {
                if let Some((o, _)) = state.offers.remove(&o.id()) {
                    o.destroy();
                }
            }
            _ => {}
        }
    }

    event_created_child!(State, device::ZwlrDataControlDeviceV1, [
        device::EVT_DATA_OFFER_OPCODE => (offer::ZwlrDataControlOfferV1, ()),
    ]);
}

impl Dispatch<offer::ZwlrDataControlOfferV1, ()> for State {
    fn event(
        state: &mut Self,
        o: &offer::ZwlrDataControlOfferV1,
        event: offer::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let offer::Event::Offer { mime_type } = event
            && let Some((_, types)) = state.offers.get_mut(&o.id())
        {
            types.push(mime_type);
        }
    }
}

impl Dispatch<source::ZwlrDataControlSourceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &source::ZwlrDataControlSourceV1,
        event: source::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            source::Event::Send { mime_type, fd } => {
                let Some(clip) = &state.serving else { return };
                let data = if mime_type == holm_proto::desk::PNG_MIME {
                    clip.png.as_deref()
                } else {
                    clip.text.as_deref().map(str::as_bytes)
                };
                // The reader may have made its pipe non-blocking; the
                // whole clip is written, blocking this thread alone.
                let _ = rustix::fs::fcntl_setfl(&fd, rustix::fs::OFlags::empty());
                let mut file = std::fs::File::from(fd);
                if let Err(e) = file.write_all(data.unwrap_or_default()) {
                    tracing::debug!(error = %e, mime_type, "a clipboard reader left early");
                }
            }
            source::Event::Cancelled => state.cancelled = true,
            _ => {}
        }
    }
}

wayland_client::delegate_noop!(State: ignore wl_seat::WlSeat);
wayland_client::delegate_noop!(State: ignore manager::ZwlrDataControlManagerV1);
