//! Reading what a viewer sends to the VNC server (RFB 3.3 to 3.8, RFC 6143,
//! with the extensions noVNC uses), message by message, so the proxy can drop
//! every input message of a watch-only viewer where the stream is served.
//!
//! The handshake is checked too: only the `None` security type passes (the
//! box's VNC servers listen on loopback without a password; the viewer token
//! is the credential), and every viewer joins as a shared client, so one
//! viewer never disconnects another. Anything this reader does not know ends
//! the connection: it fails closed.

/// The largest message accepted (a clipboard text); larger ends the
/// connection.
pub const MAX_MESSAGE: usize = 4 * 1024 * 1024;

/// What a client message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Part of the handshake, or a message that only asks for pixels
    /// (pixel format, encodings, update requests, fences).
    Stream,
    /// Input: a key, the pointer, clipboard text, a desktop resize or a
    /// power action.
    Input,
}

/// A whole message and its kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Its bytes, to pass on as they are.
    pub bytes: Vec<u8>,
    /// Its kind.
    pub kind: Kind,
}

/// Why a client stream was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Version,
    Security,
    ClientInit,
    Messages,
}

/// The client's side of one connection.
#[derive(Debug)]
pub struct ClientStream {
    phase: Phase,
    /// RFB 3.3: the server picks the security type; the client sends none.
    v33: bool,
    buf: Vec<u8>,
}

impl Default for ClientStream {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientStream {
    /// A stream before its first byte.
    pub fn new() -> Self {
        Self { phase: Phase::Version, v33: false, buf: Vec::new() }
    }

    /// Takes `data` from the client and answers the whole messages it
    /// completes, in order; a partial message waits for more.
    pub fn feed(&mut self, data: &[u8]) -> Result<Vec<Message>, Refused> {
        self.buf.extend_from_slice(data);
        let mut out = Vec::new();
        while let Some(len) = self.next_len()? {
            if len > MAX_MESSAGE {
                return Err(Refused(format!("a message of {len} bytes is over the limit")));
            }
            if self.buf.len() < len {
                break;
            }
            let mut bytes: Vec<u8> = self.buf.drain(..len).collect();
            let kind = self.advance(&mut bytes)?;
            out.push(Message { bytes, kind });
        }
        Ok(out)
    }

    /// The length of the next message, once enough of it is here to tell.
    fn next_len(&self) -> Result<Option<usize>, Refused> {
        let b = &self.buf;
        let need = |n: usize| b.len() >= n;
        let u16_at = |i: usize| usize::from(u16::from_be_bytes([b[i], b[i + 1]]));
        Ok(match self.phase {
            Phase::Version => Some(12),
            Phase::Security | Phase::ClientInit => Some(1),
            Phase::Messages => {
                let Some(&kind) = b.first() else { return Ok(None) };
                match kind {
                    0 => Some(20),
                    2 => need(4).then(|| 4 + 4 * u16_at(2)),
                    3 | 150 => Some(10),
                    4 => Some(8),
                    5 => Some(6),
                    6 => need(8).then(|| {
                        let n = i32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                        8 + usize::try_from(n.unsigned_abs()).unwrap_or(usize::MAX - 8)
                    }),
                    248 => need(9).then(|| 9 + usize::from(b[8])),
                    250 => Some(4),
                    251 => need(8).then(|| 8 + 16 * usize::from(b[6])),
                    255 => match b.get(1) {
                        None => None,
                        Some(0) => Some(12),
                        Some(sub) => {
                            return Err(Refused(format!("QEMU client message {sub} is not known")));
                        }
                    },
                    other => {
                        return Err(Refused(format!("client message type {other} is not known")));
                    }
                }
            }
        })
    }

    /// Moves past one whole message, and says what it was.
    fn advance(&mut self, bytes: &mut [u8]) -> Result<Kind, Refused> {
        match self.phase {
            Phase::Version => {
                let version = std::str::from_utf8(bytes).unwrap_or("");
                let minor = version
                    .strip_prefix("RFB 003.")
                    .and_then(|v| v.strip_suffix('\n'))
                    .and_then(|v| v.parse::<u16>().ok())
                    .ok_or_else(|| Refused("the client did not send an RFB version".into()))?;
                self.v33 = minor < 7;
                self.phase = if self.v33 { Phase::ClientInit } else { Phase::Security };
                Ok(Kind::Stream)
            }
            Phase::Security => {
                if bytes[0] != 1 {
                    return Err(Refused(format!(
                        "security type {} is not offered: the viewer token is the credential",
                        bytes[0]
                    )));
                }
                self.phase = Phase::ClientInit;
                Ok(Kind::Stream)
            }
            Phase::ClientInit => {
                // Shared: a viewer never disconnects the others.
                bytes[0] = 1;
                self.phase = Phase::Messages;
                Ok(Kind::Stream)
            }
            Phase::Messages => Ok(match bytes[0] {
                4 | 5 | 6 | 250 | 251 | 255 => Kind::Input,
                _ => Kind::Stream,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake(s: &mut ClientStream) {
        let m = s.feed(b"RFB 003.008\n").unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(s.feed(&[1]).unwrap()[0].kind, Kind::Stream);
        // An exclusive ClientInit is made shared.
        assert_eq!(s.feed(&[0]).unwrap()[0].bytes, vec![1]);
    }

    #[test]
    fn input_is_told_from_the_stream_whatever_the_framing() {
        let mut s = ClientStream::new();
        handshake(&mut s);
        let mut all = Vec::new();
        // SetPixelFormat, SetEncodings (2), update request, key, pointer,
        // clipboard "hi", fence with 3 bytes, QEMU key, resize with 1 screen.
        all.extend([0u8; 20]);
        all.extend([2, 0, 0, 2, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0x21]);
        all.extend([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);
        all.extend([4, 1, 0, 0, 0, 0, 0, 0x61]);
        all.extend([5, 1, 0, 10, 0, 20]);
        all.extend([6, 0, 0, 0, 0, 0, 0, 2, b'h', b'i']);
        all.extend([248, 0, 0, 0, 0, 0, 0, 1, 3, 9, 9, 9]);
        all.extend([255, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 30]);
        let mut resize = vec![251, 0, 5, 0, 3, 32, 1, 0];
        resize.extend([0u8; 16]);
        all.extend(resize);
        let expect = [
            Kind::Stream,
            Kind::Stream,
            Kind::Stream,
            Kind::Input,
            Kind::Input,
            Kind::Input,
            Kind::Stream,
            Kind::Input,
            Kind::Input,
        ];
        // Fed whole, and fed a byte at a time: the same messages.
        let whole: Vec<Kind> = s.feed(&all).unwrap().iter().map(|m| m.kind).collect();
        assert_eq!(whole, expect);
        let mut s = ClientStream::new();
        handshake(&mut s);
        let mut kinds = Vec::new();
        let mut bytes = Vec::new();
        for b in &all {
            for m in s.feed(&[*b]).unwrap() {
                kinds.push(m.kind);
                bytes.extend(m.bytes);
            }
        }
        assert_eq!(kinds, expect);
        assert_eq!(bytes, all, "messages pass on unchanged");
    }

    #[test]
    fn extended_clipboard_lengths_are_negative() {
        let mut s = ClientStream::new();
        handshake(&mut s);
        let mut m = vec![6, 0, 0, 0];
        m.extend((-4i32).to_be_bytes());
        m.extend([1, 2, 3, 4, 3]);
        let out = s.feed(&m).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].bytes.len(), 12);
        assert_eq!(out[0].kind, Kind::Input);
    }

    #[test]
    fn rfb_33_has_no_security_choice() {
        let mut s = ClientStream::new();
        s.feed(b"RFB 003.003\n").unwrap();
        assert_eq!(s.feed(&[0]).unwrap()[0].bytes, vec![1], "the ClientInit comes next");
        assert_eq!(s.feed(&[5, 0, 0, 1, 0, 1]).unwrap()[0].kind, Kind::Input);
    }

    #[test]
    fn the_unknown_fails_closed() {
        let mut s = ClientStream::new();
        assert!(s.feed(b"HTTP/1.1 200\n").is_err());
        let mut s = ClientStream::new();
        s.feed(b"RFB 003.008\n").unwrap();
        assert!(s.feed(&[2]).unwrap_err().0.contains("security type 2"), "VNC auth is refused");
        let mut s = ClientStream::new();
        handshake(&mut s);
        assert!(s.feed(&[77]).is_err());
        let mut s = ClientStream::new();
        handshake(&mut s);
        assert!(s.feed(&[255, 1]).is_err());
        let mut s = ClientStream::new();
        handshake(&mut s);
        assert!(s.feed(&[6, 0, 0, 0, 0x7f, 0, 0, 0]).is_err(), "a huge clipboard is refused");
    }
}
