//! Screen capture with wlr-screencopy into a shared-memory buffer that is
//! made once and reused.
//!
//! Each screen has its own connection ([`Capturer`]) with one memfd, mapped
//! here and handed to the compositor as a `wl_shm` pool, and one `wl_buffer`
//! of the size the compositor asks for. A capture is then: ask for a frame
//! of the output, copy into the buffer, wait for `ready`, read the mapping.
//! wlroots copies on the output's next frame, so the wait is at most one
//! refresh period; the outputs run at [`super::REFRESH_HZ`] for that reason.
//! The buffer is made again only when the output's size changes. The same
//! connection settles the screen on copies with damage ([`Capturer::settle`]).

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use holm_proto::guest::{Region, Settle};
use wayland_client::Proxy as _;
use wayland_client::protocol::{wl_buffer, wl_output, wl_shm, wl_shm_pool};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1;

use super::client::{ANSWER_WITHIN, Client, FrameEvents};
use crate::display::DisplayError;
use crate::image::Frame;
use crate::shm::SharedMemory;

/// `wl_shm` formats that are 32-bit little-endian `B, G, R, X` in memory.
const ARGB8888: u32 = 0;
const XRGB8888: u32 = 1;

/// Shared memory known to the compositor as a pool.
#[derive(Debug)]
struct Pool {
    pool: wl_shm_pool::WlShmPool,
    mem: SharedMemory,
    /// Kept open: the compositor maps the pool from it.
    _fd: OwnedFd,
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.pool.destroy();
    }
}

impl Pool {
    fn create(client: &Client, shm: &wl_shm::WlShm, len: usize) -> Result<Self, DisplayError> {
        let (mem, fd) = SharedMemory::create("holm-screencopy", len)?;
        let size =
            i32::try_from(len).map_err(|_| DisplayError::Failed("screen too large".into()))?;
        let pool = shm.create_pool(fd.as_fd(), size, &client.qh, ());
        Ok(Self { pool, mem, _fd: fd })
    }
}

/// The buffer the compositor copies into, and the layout it has.
#[derive(Debug)]
struct Buffer {
    buffer: wl_buffer::WlBuffer,
    /// Format, width, height, stride.
    spec: (u32, u32, u32, u32),
}

/// One screen's capture connection.
#[derive(Debug)]
pub struct Capturer {
    client: Client,
    output: String,
    shm: wl_shm::WlShm,
    manager: ZwlrScreencopyManagerV1,
    pool: Option<Pool>,
    buffer: Option<Buffer>,
}

/// A frame as it lies in the shared buffer.
#[derive(Debug, Clone, Copy)]
struct Layout {
    width: u32,
    height: u32,
    stride: u32,
    y_invert: bool,
}

impl Capturer {
    /// Connects to the compositor for capturing output `output`.
    pub fn connect(socket: &Path, output: &str) -> Result<Self, DisplayError> {
        let client = Client::connect(socket)?;
        if client.state.output(output).is_none() {
            return Err(DisplayError::Gone(format!("the compositor has no output {output} yet")));
        }
        let shm: wl_shm::WlShm = client.bind(1..=1)?;
        let manager: ZwlrScreencopyManagerV1 = client.bind(2..=3)?;
        Ok(Self { client, output: output.to_owned(), shm, manager, pool: None, buffer: None })
    }

    /// The output's size in pixels now.
    pub fn size(&mut self) -> Result<(u32, u32), DisplayError> {
        self.client.queue.dispatch_pending(&mut self.client.state).map_err(super::client::gone)?;
        let o = self
            .client
            .state
            .output(&self.output)
            .ok_or_else(|| DisplayError::Gone(format!("output {} is gone", self.output)))?;
        let (w, h) = if o.logical.0 > 0 { o.logical } else { o.mode };
        Ok((u32::try_from(w).unwrap_or(0), u32::try_from(h).unwrap_or(0)))
    }

    /// The output's protocol object.
    fn output_wl(&self) -> Result<wl_output::WlOutput, DisplayError> {
        Ok(self
            .client
            .state
            .output(&self.output)
            .ok_or_else(|| DisplayError::Gone(format!("output {} is gone", self.output)))?
            .wl
            .clone())
    }

    /// Copies the output into the shared buffer; answers how it lies there.
    fn copy(&mut self, overlay_cursor: bool) -> Result<Layout, DisplayError> {
        let output = self.output_wl()?;
        self.client.state.frame = FrameEvents::default();
        let frame =
            self.manager.capture_output(i32::from(overlay_cursor), &output, &self.client.qh, ());
        let deadline = Instant::now() + ANSWER_WITHIN;
        let version = self.manager.version();
        let result = (|| {
            self.client.dispatch_until(deadline, |s| {
                s.frame.failed || (s.frame.buffer.is_some() && (version < 3 || s.frame.buffer_done))
            })?;
            let Some(spec) =
                self.client.state.frame.buffer.filter(|_| !self.client.state.frame.failed)
            else {
                return Err(DisplayError::Failed("the compositor refused to capture".into()));
            };
            let buffer = self.buffer_for(spec)?;
            frame.copy(buffer);
            self.client.dispatch_until(deadline, |s| s.frame.ready || s.frame.failed)?;
            if self.client.state.frame.failed {
                return Err(DisplayError::Failed("the compositor failed the copy".into()));
            }
            let (_, width, height, stride) = spec;
            Ok(Layout { width, height, stride, y_invert: self.client.state.frame.flags & 1 != 0 })
        })();
        frame.destroy();
        result
    }

    /// The buffer for `spec`, made (with a pool big enough) when it changed.
    fn buffer_for(
        &mut self,
        spec: (u32, u32, u32, u32),
    ) -> Result<&wl_buffer::WlBuffer, DisplayError> {
        let (format, width, height, stride) = spec;
        if format != XRGB8888 && format != ARGB8888 {
            return Err(DisplayError::Unsupported(format!(
                "the compositor offers wl_shm format {format}; only XRGB8888 and ARGB8888 are supported"
            )));
        }
        if self.buffer.as_ref().is_some_and(|b| b.spec == spec) {
            return Ok(&self.buffer.as_ref().expect("checked").buffer);
        }
        if let Some(old) = self.buffer.take() {
            old.buffer.destroy();
        }
        let len = stride as usize * height as usize;
        if self.pool.as_ref().is_none_or(|p| p.mem.len() < len) {
            self.pool = None;
            self.pool = Some(Pool::create(&self.client, &self.shm, len)?);
        }
        let pool = self.pool.as_ref().expect("made above");
        let int =
            |v: u32| i32::try_from(v).map_err(|_| DisplayError::Failed("frame too large".into()));
        let buffer = pool.pool.create_buffer(
            0,
            int(width)?,
            int(height)?,
            int(stride)?,
            wl_shm::Format::try_from(format).unwrap_or(wl_shm::Format::Xrgb8888),
            &self.client.qh,
            (),
        );
        self.buffer = Some(Buffer { buffer, spec });
        Ok(&self.buffer.as_ref().expect("set above").buffer)
    }

    /// Captures `region` of the output as `B, G, R, X` pixels.
    pub fn capture(&mut self, region: Region, overlay_cursor: bool) -> Result<Frame, DisplayError> {
        let layout = self.copy(overlay_cursor)?;
        let inside = u64::from(region.x) + u64::from(region.width) <= u64::from(layout.width)
            && u64::from(region.y) + u64::from(region.height) <= u64::from(layout.height);
        if !inside || region.width == 0 || region.height == 0 {
            return Err(DisplayError::Failed(format!(
                "region {region} is not inside the {}x{} screen",
                layout.width, layout.height
            )));
        }
        let pool = self.pool.as_ref().ok_or_else(|| DisplayError::Failed("no buffer".into()))?;
        let bytes = pool.mem.bytes(layout.stride as usize * layout.height as usize);
        let row_len = region.width as usize * 4;
        let mut data = Vec::with_capacity(row_len * region.height as usize);
        for row in region.y..region.y + region.height {
            let src_row = if layout.y_invert { layout.height - 1 - row } else { row };
            let start = src_row as usize * layout.stride as usize + region.x as usize * 4;
            data.extend_from_slice(&bytes[start..start + row_len]);
        }
        Ok(Frame { width: region.width, height: region.height, data })
    }

    /// The hash of the whole output's pixels, read in place (no copy out).
    pub fn frame_hash(&mut self) -> Result<u64, DisplayError> {
        let layout = self.copy(false)?;
        let pool = self.pool.as_ref().ok_or_else(|| DisplayError::Failed("no buffer".into()))?;
        Ok(crate::image::pixels_hash(
            pool.mem.bytes(layout.stride as usize * layout.height as usize),
        ))
    }

    /// Waits until the output shows no change for `quiet_ms`, at most
    /// `timeout_ms`, on copies with damage (screencopy version 3); answers
    /// whether it settled, or `None` when the compositor's screencopy is
    /// older (the caller hashes frames then).
    ///
    /// A copy with damage completes only once the output changed since this
    /// connection's previous one, so a pending copy that is still pending
    /// when the quiet window ends means nothing changed. Damage left from
    /// before the settle (the actions' own) completes the first copy at the
    /// next frame: it counts as a change, so the quiet window runs from a
    /// frame that shows the actions' result.
    pub fn settle(&mut self, s: Settle) -> Result<Option<bool>, DisplayError> {
        if self.manager.version() < 3 {
            return Ok(None);
        }
        let deadline = Instant::now() + Duration::from_millis(u64::from(s.timeout_ms));
        let quiet = Duration::from_millis(u64::from(s.quiet_ms));
        let mut since = Instant::now();
        loop {
            let now = Instant::now();
            let quiet_at = since + quiet;
            if now >= quiet_at {
                return Ok(Some(true));
            }
            if now >= deadline {
                return Ok(Some(false));
            }
            if self.damaged_before(quiet_at.min(deadline))? {
                since = Instant::now();
            }
        }
    }

    /// Asks for a copy with damage and waits for it until `until`: answers
    /// whether it completed (the output changed). The copy left pending is
    /// dropped; the damage it would have reported stays with the next one.
    fn damaged_before(&mut self, until: Instant) -> Result<bool, DisplayError> {
        let output = self.output_wl()?;
        self.client.state.frame = FrameEvents::default();
        let frame = self.manager.capture_output(0, &output, &self.client.qh, ());
        let result = (|| {
            self.client.dispatch_until(Instant::now() + ANSWER_WITHIN, |s| {
                s.frame.failed || (s.frame.buffer.is_some() && s.frame.buffer_done)
            })?;
            let Some(spec) =
                self.client.state.frame.buffer.filter(|_| !self.client.state.frame.failed)
            else {
                return Err(DisplayError::Failed("the compositor refused to capture".into()));
            };
            let buffer = self.buffer_for(spec)?;
            frame.copy_with_damage(buffer);
            let done = self.client.dispatch_within(until, |s| s.frame.ready || s.frame.failed)?;
            if self.client.state.frame.failed {
                return Err(DisplayError::Failed("the compositor failed the copy".into()));
            }
            Ok(done)
        })();
        frame.destroy();
        result
    }
}
