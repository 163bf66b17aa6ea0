//! Screen capture: MIT-SHM into a memfd segment that is kept and reused, or
//! plain `GetImage` when the server has no MIT-SHM 1.2.
//!
//! The segment is a memfd sized for the whole screen, mapped here and handed
//! to the server once with `shm::attach_fd`; each capture is then one
//! `ShmGetImage` round trip and the pixels are read straight from the mapping.
//! It is made again when the screen grows, and dies with the connection.

use holm_proto::guest::Region;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat};
use x11rb::protocol::{shm, xfixes};

use super::{Conn, XError};
use crate::image::{CursorImage, Frame};
use crate::shm::SharedMemory;

/// A shared-memory segment known to the X server.
#[derive(Debug)]
pub struct Segment {
    id: shm::Seg,
    mem: SharedMemory,
}

impl Segment {
    /// Makes a memfd of `len` bytes, maps it, and attaches it to the server.
    fn create(conn: &Conn, len: usize) -> Result<Self, XError> {
        // Owned from here on, so an error below unmaps it.
        let (mem, fd) = SharedMemory::create("holm-capture", len)?;
        let id = conn.c.generate_id()?;
        // The server gets its own copy of the descriptor; ours closes here.
        shm::attach_fd(&conn.c, id, fd, false)?.check()?;
        Ok(Self { id, mem })
    }

    fn len(&self) -> usize {
        self.mem.len()
    }

    /// The first `n` bytes of the segment.
    fn bytes(&self, n: usize) -> &[u8] {
        self.mem.bytes(n)
    }
}

/// A capture: the pixels, where the pointer is, and its image when asked for.
#[derive(Debug)]
pub struct Captured {
    /// The pixels of the region.
    pub frame: Frame,
    /// The pointer position in screen pixels.
    pub pointer: (i32, i32),
    /// The pointer image, when asked for and XFixes is there.
    pub cursor: Option<CursorImage>,
}

/// Makes sure a segment of at least `len` bytes is attached; `false` when
/// MIT-SHM cannot be used on this connection.
fn ensure_segment(conn: &mut Conn, len: usize) -> Result<bool, XError> {
    match &conn.shm {
        None => return Ok(false),
        Some(Some(seg)) if seg.len() >= len => return Ok(true),
        Some(_) => {}
    }
    if let Some(Some(old)) = conn.shm.take() {
        let _ = shm::detach(&conn.c, old.id);
    }
    // Sized for the whole screen, so any region fits and it is made once.
    let full = usize::from(conn.width) * usize::from(conn.height) * 4;
    match Segment::create(conn, len.max(full)) {
        Ok(seg) => {
            conn.shm = Some(Some(seg));
            Ok(true)
        }
        Err(XError::Gone(e)) => Err(XError::Gone(e)),
        Err(e) => {
            tracing::warn!(error = %e, "MIT-SHM unusable; capturing with GetImage");
            conn.shm = None;
            Ok(false)
        }
    }
}

fn check_region(conn: &Conn, r: Region) -> Result<(i16, i16, u16, u16), XError> {
    let inside = u64::from(r.x) + u64::from(r.width) <= u64::from(conn.width)
        && u64::from(r.y) + u64::from(r.height) <= u64::from(conn.height);
    match (i16::try_from(r.x), i16::try_from(r.y), u16::try_from(r.width), u16::try_from(r.height))
    {
        (Ok(x), Ok(y), Ok(w), Ok(h)) if inside && w > 0 && h > 0 => Ok((x, y, w, h)),
        _ => Err(XError::Failed(format!(
            "region {r} is not inside the {}x{} screen",
            conn.width, conn.height
        ))),
    }
}

/// Captures `region` of the screen, with the pointer position, and the
/// pointer image when `with_cursor`.
pub fn capture(conn: &mut Conn, region: Region, with_cursor: bool) -> Result<Captured, XError> {
    let (x, y, w, h) = check_region(conn, region)?;
    let len = usize::from(w) * usize::from(h) * 4;
    let use_shm = ensure_segment(conn, len)?;
    // Send the pointer request first so both replies come back in one wait.
    let cursor_cookie =
        if with_cursor && conn.xfixes { Some(xfixes::get_cursor_image(&conn.c)?) } else { None };
    let pointer_cookie =
        if cursor_cookie.is_none() { Some(conn.c.query_pointer(conn.root)?) } else { None };
    let data = match (use_shm, &conn.shm) {
        (true, Some(Some(seg))) => {
            let reply = shm::get_image(
                &conn.c,
                conn.root,
                x,
                y,
                w,
                h,
                !0,
                ImageFormat::Z_PIXMAP.into(),
                seg.id,
                0,
            )?
            .reply()?;
            if reply.depth != 24 {
                return Err(XError::Unsupported(format!("depth {} image", reply.depth)));
            }
            seg.bytes(len).to_vec()
        }
        _ => {
            let reply =
                conn.c.get_image(ImageFormat::Z_PIXMAP, conn.root, x, y, w, h, !0)?.reply()?;
            reply.data
        }
    };
    if data.len() < len {
        return Err(XError::Failed(format!("short image: {} of {len} bytes", data.len())));
    }
    let (pointer, cursor) = match (cursor_cookie, pointer_cookie) {
        (Some(c), _) => {
            let r = c.reply()?;
            let image = CursorImage {
                x: i32::from(r.x) - i32::from(r.xhot),
                y: i32::from(r.y) - i32::from(r.yhot),
                width: u32::from(r.width),
                height: u32::from(r.height),
                argb: r.cursor_image,
            };
            ((i32::from(r.x), i32::from(r.y)), Some(image))
        }
        (None, Some(p)) => {
            let r = p.reply()?;
            ((i32::from(r.root_x), i32::from(r.root_y)), None)
        }
        (None, None) => return Err(XError::Failed("no pointer request was sent".into())),
    };
    let mut data = data;
    data.truncate(len);
    Ok(Captured {
        frame: Frame { width: u32::from(w), height: u32::from(h), data },
        pointer,
        cursor,
    })
}

/// The hash of the whole screen's pixels, read in place from the segment
/// (no copy), for settling.
pub fn screen_hash(conn: &mut Conn) -> Result<u64, XError> {
    let (w, h) = (conn.width, conn.height);
    let len = usize::from(w) * usize::from(h) * 4;
    if ensure_segment(conn, len)?
        && let Some(Some(seg)) = &conn.shm
    {
        shm::get_image(
            &conn.c,
            conn.root,
            0,
            0,
            w,
            h,
            !0,
            ImageFormat::Z_PIXMAP.into(),
            seg.id,
            0,
        )?
        .reply()?;
        return Ok(crate::image::pixels_hash(seg.bytes(len)));
    }
    let reply = conn.c.get_image(ImageFormat::Z_PIXMAP, conn.root, 0, 0, w, h, !0)?.reply()?;
    Ok(crate::image::pixels_hash(&reply.data))
}
