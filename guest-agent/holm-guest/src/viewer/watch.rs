//! What a watch-only viewer receives: the VNC server's stream, read message
//! by message, with the box's clipboard (`ServerCutText`, RFB type 3, plain
//! or extended) left out (review L3). One VNC server per screen serves
//! watchers and the person in control alike, so the cut is made here.
//!
//! Framing a server's stream needs the length of every rectangle, which
//! depends on its encoding; a watcher may therefore ask only for the
//! encodings read here ([`WATCH_ENCODINGS`]: raw, CopyRect, Tight, ZRLE and
//! a few pseudo-encodings), and its `SetEncodings` is rewritten to those
//! ([`watch_encodings`]). Anything else the server sends ends the
//! connection: it fails closed.

use super::rfb::{MAX_MESSAGE, Refused};

/// The encodings a watcher may ask for: raw, CopyRect, Tight, ZRLE, the
/// pseudo-encodings DesktopSize, LastRect, Cursor and ExtendedDesktopSize,
/// and the quality and compression levels (which carry no data).
pub const WATCH_ENCODINGS: [i32; 8] = [0, 1, 7, 16, -223, -224, -239, -308];

/// Whether a watcher may ask for `encoding`.
fn allowed(encoding: i32) -> bool {
    WATCH_ENCODINGS.contains(&encoding)
        || (-32..=-23).contains(&encoding)
        || (-256..=-247).contains(&encoding)
}

/// A watcher's `SetEncodings` (type 2) with the encodings this reader does
/// not frame left out; any other message as it is.
pub fn watch_encodings(message: &[u8]) -> Vec<u8> {
    if message.first() != Some(&2) || message.len() < 4 {
        return message.to_vec();
    }
    let kept: Vec<[u8; 4]> = message[4..]
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .filter(|c| allowed(i32::from_be_bytes(*c)))
        .collect();
    let mut out = vec![2, 0];
    out.extend(u16::try_from(kept.len()).unwrap_or(0).to_be_bytes());
    out.extend(kept.into_iter().flatten());
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Version,
    Security,
    SecurityResult,
    Init,
    Messages,
}

/// The server's side of one watcher's connection.
#[derive(Debug)]
pub struct ServerStream {
    phase: Phase,
    buf: Vec<u8>,
    /// Bytes of the current payload still to pass (or drop).
    skip: usize,
    /// Whether the payload being skipped is dropped.
    dropping: bool,
    /// Rectangles left in the current framebuffer update.
    rects: u16,
    /// Bytes a pixel, from the ServerInit or the client's SetPixelFormat.
    pixel: usize,
    /// Bytes a Tight pixel: 3 at 32 bits a pixel of depth 24, else `pixel`.
    tpixel: usize,
    /// The RFB minor version the client chose.
    minor: Option<u16>,
}

impl Default for ServerStream {
    fn default() -> Self {
        Self::new()
    }
}

impl ServerStream {
    /// A stream before its first byte.
    pub fn new() -> Self {
        Self {
            phase: Phase::Version,
            buf: Vec::new(),
            skip: 0,
            dropping: false,
            rects: 0,
            pixel: 4,
            tpixel: 3,
            minor: None,
        }
    }

    /// What the client sent, as far as the server's framing needs it: its
    /// version (which says how the security handshake goes) and its pixel
    /// format (which sizes raw rectangles).
    pub fn client_sent(&mut self, message: &[u8]) {
        if let Some(v) = message.strip_prefix(b"RFB 003.") {
            self.minor =
                std::str::from_utf8(&v[..v.len().min(3)]).ok().and_then(|v| v.parse().ok());
        } else if message.len() == 20 && message[0] == 0 && self.phase == Phase::Messages {
            self.set_format(message[4], message[5]);
        }
    }

    /// Takes `data` from the server and answers what the watcher gets: all
    /// of it but the clipboard.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<u8>, Refused> {
        self.buf.extend_from_slice(data);
        let mut out = Vec::with_capacity(data.len());
        loop {
            if self.skip > 0 {
                let n = self.skip.min(self.buf.len());
                if n == 0 {
                    break;
                }
                let part = self.buf.drain(..n);
                if !self.dropping {
                    out.extend(part);
                }
                self.skip -= n;
                continue;
            }
            let Some((head, payload, drop)) = self.next()? else { break };
            let bytes: Vec<u8> = self.buf.drain(..head).collect();
            if !drop {
                out.extend(bytes);
            }
            self.skip = payload;
            self.dropping = drop;
        }
        Ok(out)
    }

    /// The next header's length, its payload's and whether both are
    /// dropped, once enough is here to tell; moves the phase on.
    fn next(&mut self) -> Result<Option<(usize, usize, bool)>, Refused> {
        let b = &self.buf;
        let need = |n: usize| b.len() >= n;
        let u32_at = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let bounded = |n: usize| {
            if n > 64 * MAX_MESSAGE {
                Err(Refused(format!("a server message of {n} bytes is over the limit")))
            } else {
                Ok(n)
            }
        };
        match self.phase {
            Phase::Version => {
                if !need(12) {
                    return Ok(None);
                }
                self.phase = Phase::Security;
                Ok(Some((12, 0, false)))
            }
            Phase::Security => {
                if b.is_empty() {
                    return Ok(None);
                }
                let Some(minor) = self.minor else {
                    return Err(Refused("the server went on before the client's version".into()));
                };
                if minor < 7 {
                    // RFB 3.3: the server names the type; None goes on.
                    if !need(4) {
                        return Ok(None);
                    }
                    self.phase = if u32_at(0) == 1 { Phase::Init } else { Phase::SecurityResult };
                    return Ok(Some((4, 0, false)));
                }
                if !need(1) || !need(1 + usize::from(b[0])) {
                    return Ok(None);
                }
                let n = 1 + usize::from(b[0]);
                self.phase = if minor >= 8 { Phase::SecurityResult } else { Phase::Init };
                Ok(Some((n, 0, false)))
            }
            Phase::SecurityResult => {
                if !need(4) {
                    return Ok(None);
                }
                if u32_at(0) != 0 {
                    return Err(Refused("the VNC server refused the security handshake".into()));
                }
                self.phase = Phase::Init;
                Ok(Some((4, 0, false)))
            }
            Phase::Init => {
                if !need(24) {
                    return Ok(None);
                }
                let (bits, depth) = (b[4], b[5]);
                let name = bounded(u32_at(20) as usize)?;
                self.set_format(bits, depth);
                self.phase = Phase::Messages;
                Ok(Some((24, name, false)))
            }
            Phase::Messages if self.rects > 0 => self.rect(),
            Phase::Messages => self.message(),
        }
    }

    /// The next message once the handshake is done, between updates.
    fn message(&mut self) -> Result<Option<(usize, usize, bool)>, Refused> {
        let b = &self.buf;
        let need = |n: usize| b.len() >= n;
        let u16_at = |i: usize| usize::from(u16::from_be_bytes([b[i], b[i + 1]]));
        let bounded = |n: usize| {
            if n > 64 * MAX_MESSAGE {
                Err(Refused(format!("a server message of {n} bytes is over the limit")))
            } else {
                Ok(n)
            }
        };
        let Some(&kind) = b.first() else { return Ok(None) };
        match kind {
            0 => {
                if !need(4) {
                    return Ok(None);
                }
                self.rects = u16::from_be_bytes([b[2], b[3]]);
                Ok(Some((4, 0, false)))
            }
            1 if need(6) => Ok(Some((6, 6 * u16_at(4), false))),
            2 | 150 => Ok(Some((1, 0, false))),
            3 if need(8) => {
                let n = i32::from_be_bytes([b[4], b[5], b[6], b[7]]).unsigned_abs();
                Ok(Some((8, bounded(n as usize)?, true)))
            }
            248 if need(9) => Ok(Some((9, usize::from(b[8]), false))),
            1 | 3 | 248 => Ok(None),
            other => Err(Refused(format!("server message type {other} is not known"))),
        }
    }

    fn set_format(&mut self, bits: u8, depth: u8) {
        self.pixel = usize::from(bits / 8).max(1);
        self.tpixel = if bits == 32 && depth == 24 { 3 } else { self.pixel };
    }

    /// The next rectangle of a framebuffer update.
    fn rect(&mut self) -> Result<Option<(usize, usize, bool)>, Refused> {
        let b = &self.buf;
        if b.len() < 12 {
            return Ok(None);
        }
        let (w, h) = (
            usize::from(u16::from_be_bytes([b[4], b[5]])),
            usize::from(u16::from_be_bytes([b[6], b[7]])),
        );
        let encoding = i32::from_be_bytes([b[8], b[9], b[10], b[11]]);
        let (head, payload) = match encoding {
            0 => (12, w * h * self.pixel),
            1 => (12, 4),
            7 => match tight(b, w, h, self.tpixel)? {
                Some(lengths) => lengths,
                None => return Ok(None),
            },
            16 => {
                if b.len() < 16 {
                    return Ok(None);
                }
                (16, u32::from_be_bytes([b[12], b[13], b[14], b[15]]) as usize)
            }
            -223 => (12, 0),
            -224 => {
                self.rects = 1;
                (12, 0)
            }
            -239 => (12, w * h * self.pixel + w.div_ceil(8) * h),
            -308 => {
                if b.len() < 13 {
                    return Ok(None);
                }
                (12, 4 + 16 * usize::from(b[12]))
            }
            other => return Err(Refused(format!("encoding {other} was not asked for"))),
        };
        if payload > 64 * MAX_MESSAGE {
            return Err(Refused(format!("a rectangle of {payload} bytes is over the limit")));
        }
        self.rects -= 1;
        Ok(Some((head, payload, false)))
    }
}

/// A Tight rectangle's header (its 12 bytes, the compression control, a
/// filter and palette, a compact length) and payload lengths, once the
/// whole header is here.
fn tight(b: &[u8], w: usize, h: usize, tpixel: usize) -> Result<Option<(usize, usize)>, Refused> {
    let Some(&control) = b.get(12) else { return Ok(None) };
    // A compact length: 1 to 3 bytes, 7 bits each but the third's 8.
    let compact = |at: usize| -> Option<(usize, usize)> {
        let mut value = 0usize;
        for i in 0..3 {
            let x = *b.get(at + i)?;
            let bits = if i == 2 { x } else { x & 0x7f };
            value |= usize::from(bits) << (7 * i);
            if i == 2 || x & 0x80 == 0 {
                return Some((at + i + 1, value));
            }
        }
        None
    };
    let mut at = 13;
    let (head, payload) = match control >> 4 {
        8 => (at, tpixel),
        9 => match compact(at) {
            Some(lengths) => lengths,
            None => return Ok(None),
        },
        0..=7 => {
            let mut size = w * h * tpixel;
            if control & 0x40 != 0 {
                let Some(&filter) = b.get(at) else { return Ok(None) };
                at += 1;
                match filter {
                    0 | 2 => {}
                    1 => {
                        let Some(&n) = b.get(at) else { return Ok(None) };
                        let colours = usize::from(n) + 1;
                        at += 1 + colours * tpixel;
                        size = if colours == 2 { w.div_ceil(8) * h } else { w * h };
                    }
                    other => return Err(Refused(format!("Tight filter {other} is not known"))),
                }
            }
            // Fewer than 12 bytes are sent as they are, without a length.
            if size < 12 {
                (at, size)
            } else {
                match compact(at) {
                    Some(lengths) => lengths,
                    None => return Ok(None),
                }
            }
        }
        other => return Err(Refused(format!("Tight compression {other} is not known"))),
    };
    Ok((b.len() >= head).then_some((head, payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RFB 3.8 handshake and a ServerInit of 32 bits a pixel named "x".
    fn handshake(s: &mut ServerStream) -> Vec<u8> {
        let mut all = b"RFB 003.008\n".to_vec();
        assert_eq!(s.feed(&all).unwrap(), all);
        s.client_sent(b"RFB 003.008\n");
        let mut rest = vec![1, 1, 0, 0, 0, 0];
        let mut init = vec![0, 4, 0, 2, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0];
        init.extend([0, 0, 0, 1, b'x']);
        rest.extend(init);
        assert_eq!(s.feed(&rest).unwrap(), rest);
        all.extend(rest);
        all
    }

    fn cut(text: &[u8]) -> Vec<u8> {
        let mut m = vec![3, 0, 0, 0];
        m.extend(u32::try_from(text.len()).unwrap().to_be_bytes());
        m.extend(text);
        m
    }

    #[test]
    fn the_clipboard_is_cut_out_and_everything_else_passes_whatever_the_framing() {
        let mut server = Vec::new();
        let mut want = Vec::new();
        // An update: a raw 2x1 rectangle, a CopyRect, a ZRLE of 3 bytes, a
        // cursor 1x1, an extended desktop size of one screen.
        let mut update = vec![0, 0, 0, 5];
        update.extend([0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0]);
        update.extend([9u8; 8]);
        update.extend([0, 0, 0, 0, 0, 2, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0]);
        update.extend([0, 0, 0, 0, 0, 4, 0, 2, 0, 0, 0, 16, 0, 0, 0, 3, 7, 7, 7]);
        update.extend([0, 0, 0, 0, 0, 1, 0, 1, 0xff, 0xff, 0xff, 0x11]);
        update.extend([5, 5, 5, 5, 0x80]);
        update.extend([0, 0, 0, 0, 0, 4, 0, 2, 0xff, 0xff, 0xfe, 0xcc, 1, 0, 0, 0]);
        update.extend([0u8; 16]);
        server.extend(&update);
        want.extend(&update);
        server.extend(cut(b"clipboard-S3CRET"));
        // A bell, an extended clipboard (negative length), a fence.
        server.push(2);
        want.push(2);
        let mut extended = vec![3, 0, 0, 0];
        extended.extend((-5i32).to_be_bytes());
        extended.extend([0, 0, 0, 1, b'S']);
        server.extend(extended);
        server.extend([248, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2]);
        want.extend([248, 0, 0, 0, 0, 0, 0, 0, 2, 1, 2]);
        // An update ended by LastRect.
        let last = [0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x20];
        server.extend(last);
        want.extend(last);
        server.extend(cut(b"again"));

        let mut s = ServerStream::new();
        handshake(&mut s);
        assert_eq!(s.feed(&server).unwrap(), want, "fed whole");
        let mut s = ServerStream::new();
        handshake(&mut s);
        let mut got = Vec::new();
        for b in &server {
            got.extend(s.feed(&[*b]).unwrap());
        }
        assert_eq!(got, want, "fed a byte at a time");
    }

    #[test]
    fn tight_rectangles_are_framed() {
        let head = |w: u8, h: u8| vec![0, 0, 0, 0, 0, w, 0, h, 0, 0, 0, 7];
        let mut update = vec![0, 0, 0, 5];
        // Fill: one 3-byte pixel.
        update.extend(head(8, 8));
        update.extend([0x80, 1, 2, 3]);
        // JPEG: a compact length of 200 (two bytes).
        update.extend(head(8, 8));
        update.extend([0x90, 0xc8, 0x01]);
        update.extend([5u8; 200]);
        // Basic with a palette of 2: 2x2 is 2 bytes, sent as they are.
        update.extend(head(2, 2));
        update.extend([0x40, 1, 1, 9, 9, 9, 8, 8, 8, 0xc0, 0x40]);
        // Basic, copy filter, 4x4 of 3 bytes: 48 bytes, zlib'd to 5.
        update.extend(head(4, 4));
        update.extend([0x40, 0, 5, 1, 2, 3, 4, 5]);
        // Basic, no filter, 1x1: 3 bytes as they are.
        update.extend(head(1, 1));
        update.extend([0x00, 7, 7, 7]);
        let mut server = update.clone();
        server.extend(cut(b"S"));
        server.push(2);
        let mut want = update;
        want.push(2);
        let mut s = ServerStream::new();
        handshake(&mut s);
        let mut got = Vec::new();
        for b in &server {
            got.extend(s.feed(&[*b]).unwrap());
        }
        assert_eq!(got, want);
        let mut s = ServerStream::new();
        handshake(&mut s);
        assert_eq!(s.feed(&server).unwrap(), want);
        let mut s = ServerStream::new();
        handshake(&mut s);
        let mut bad = vec![0, 0, 0, 1];
        bad.extend(head(1, 1));
        bad.push(0xb0);
        assert!(s.feed(&bad).is_err(), "compression 11 is not known");
    }

    #[test]
    fn a_pixel_format_the_client_sets_sizes_raw_rectangles() {
        let mut s = ServerStream::new();
        handshake(&mut s);
        let mut format = vec![0u8; 20];
        format[4] = 16;
        s.client_sent(&format);
        let mut update = vec![0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4];
        update.extend(cut(b"x"));
        assert_eq!(s.feed(&update).unwrap(), update[..20], "2 pixels of 2 bytes, then the cut");
    }

    #[test]
    fn rfb_33_and_37_handshakes_are_framed() {
        for (version, security) in
            [(&b"RFB 003.003\n"[..], &[0u8, 0, 0, 1][..]), (b"RFB 003.007\n", &[1, 1])]
        {
            let mut s = ServerStream::new();
            s.feed(b"RFB 003.008\n").unwrap();
            s.client_sent(version);
            let mut rest = security.to_vec();
            rest.extend([
                0, 1, 0, 1, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0, 0, 0, 0, 0,
            ]);
            assert_eq!(s.feed(&rest).unwrap(), rest);
            assert_eq!(s.feed(&cut(b"S")).unwrap(), Vec::<u8>::new(), "{version:?}");
            assert_eq!(s.feed(&[2]).unwrap(), [2]);
        }
    }

    #[test]
    fn what_is_not_framed_here_fails_closed_and_is_not_asked_for() {
        let mut s = ServerStream::new();
        handshake(&mut s);
        assert!(s.feed(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 5]).is_err(), "Hextile");
        let mut s = ServerStream::new();
        handshake(&mut s);
        assert!(s.feed(&[77]).is_err());
        // SetEncodings: Tight (7), TightPNG (-260), ZRLE (16), the extended
        // clipboard (0xc0a1e5ce), quality 6 (-26), raw (0): Tight, ZRLE,
        // quality and raw stay.
        let mut set = vec![2, 0, 0, 6];
        for e in [7i32, -260, 16, -1_063_131_698, -26, 0] {
            set.extend(e.to_be_bytes());
        }
        let mut want = vec![2, 0, 0, 4];
        for e in [7i32, 16, -26, 0] {
            want.extend(e.to_be_bytes());
        }
        assert_eq!(watch_encodings(&set), want);
        assert_eq!(watch_encodings(&[4, 1, 0, 0]), [4, 1, 0, 0], "other messages pass");
    }
}
