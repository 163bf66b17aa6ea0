//! Turning a child's output bytes into text, one read at a time.
//!
//! A pipe hands out bytes in whatever pieces the kernel has, so a multi-byte
//! UTF-8 character can be split across two reads. [`Utf8Decoder`] holds the
//! unfinished tail of one read until the next one completes it, and replaces
//! bytes that can never be UTF-8 with U+FFFD. [`OutputStream`] adds the
//! per-stream byte limit of `output_limit`.

/// Decodes a byte stream as UTF-8 across arbitrary chunk boundaries.
#[derive(Debug, Default)]
pub struct Utf8Decoder {
    /// The start of a character whose remaining bytes have not arrived yet
    /// (at most 3 bytes).
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes `bytes`, keeping an incomplete character at the end for later.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut input: &[u8] = if self.pending.is_empty() {
            bytes
        } else {
            let mut v = std::mem::take(&mut self.pending);
            v.extend_from_slice(bytes);
            joined = v;
            &joined
        };
        let mut out = String::with_capacity(input.len());
        loop {
            match std::str::from_utf8(input) {
                Ok(text) => {
                    out.push_str(text);
                    return out;
                }
                Err(e) => {
                    let (valid, rest) = input.split_at(e.valid_up_to());
                    // `valid` is exactly the part the error said is valid.
                    out.push_str(&String::from_utf8_lossy(valid));
                    match e.error_len() {
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            input = &rest[bad..];
                        }
                        None => {
                            // The input ends inside a character: keep it.
                            self.pending = rest.to_vec();
                            return out;
                        }
                    }
                }
            }
        }
    }

    /// Ends the stream: an unfinished character becomes U+FFFD.
    pub fn finish(&mut self) -> String {
        if self.pending.is_empty() {
            String::new()
        } else {
            self.pending.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }

    /// Ends the stream after it was cut on purpose: an unfinished character
    /// is the cut's doing, not invalid input, so it is dropped.
    pub fn discard(&mut self) {
        self.pending.clear();
    }
}

/// One of a child's output streams: a byte limit in front of a decoder.
#[derive(Debug)]
pub struct OutputStream {
    decoder: Utf8Decoder,
    /// Bytes still allowed; `None` is no limit.
    remaining: Option<u64>,
    /// Some bytes were dropped because of the limit.
    pub truncated: bool,
}

impl OutputStream {
    /// A stream that keeps at most `limit` bytes (`None`: all of them).
    pub fn new(limit: Option<u64>) -> Self {
        Self { decoder: Utf8Decoder::default(), remaining: limit, truncated: false }
    }

    /// Takes a chunk read from the pipe and answers the text to keep, which
    /// may be empty. Bytes past the limit are dropped but still count as
    /// read, so the child never blocks on a full pipe.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        let keep = match &mut self.remaining {
            None => bytes,
            Some(left) => {
                let n = usize::try_from(*left).unwrap_or(usize::MAX).min(bytes.len());
                *left -= n as u64;
                if n < bytes.len() {
                    self.truncated = true;
                }
                &bytes[..n]
            }
        };
        if keep.is_empty() { String::new() } else { self.decoder.decode(keep) }
    }

    /// Ends the stream and answers what the decoder still held.
    pub fn finish(&mut self) -> String {
        if self.truncated {
            self.decoder.discard();
            String::new()
        } else {
            self.decoder.finish()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(bytes: &[u8], cuts: &[usize]) -> String {
        let mut d = Utf8Decoder::default();
        let mut out = String::new();
        let mut start = 0;
        for &cut in cuts {
            out.push_str(&d.decode(&bytes[start..cut]));
            start = cut;
        }
        out.push_str(&d.decode(&bytes[start..]));
        out.push_str(&d.finish());
        out
    }

    #[test]
    fn characters_split_across_reads_survive_every_split_point() {
        let text = "aé€𝄞z ünïcødé 文件";
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            assert_eq!(decode_in_pieces(bytes, &[i]), text, "split at {i}");
            for j in i..=bytes.len() {
                assert_eq!(decode_in_pieces(bytes, &[i, j]), text, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn one_byte_at_a_time() {
        let text = "𝄞€é";
        let cuts: Vec<usize> = (1..text.len()).collect();
        assert_eq!(decode_in_pieces(text.as_bytes(), &cuts), text);
    }

    #[test]
    fn invalid_bytes_are_replaced_and_decoding_goes_on() {
        let mut d = Utf8Decoder::default();
        assert_eq!(d.decode(b"a\xffb\xc3\x28c"), "a\u{FFFD}b\u{FFFD}(c");
        // A lone continuation byte, then a valid character split in two.
        assert_eq!(d.decode(b"\x80\xe2\x82"), "\u{FFFD}");
        assert_eq!(d.decode(b"\xac!"), "€!");
        assert_eq!(d.finish(), "");
    }

    #[test]
    fn an_unfinished_character_at_the_end_becomes_one_replacement() {
        let mut d = Utf8Decoder::default();
        assert_eq!(d.decode(b"x\xf0\x9d"), "x");
        assert_eq!(d.finish(), "\u{FFFD}");
        // The decoder is empty again afterwards.
        assert_eq!(d.decode(b"y"), "y");
    }

    #[test]
    fn the_limit_cuts_bytes_and_marks_truncation() {
        let mut s = OutputStream::new(Some(5));
        assert_eq!(s.push(b"abc"), "abc");
        assert!(!s.truncated);
        assert_eq!(s.push(b"defgh"), "de");
        assert!(s.truncated);
        assert_eq!(s.push(b"ijk"), "");
        assert_eq!(s.finish(), "");
    }

    #[test]
    fn a_character_cut_by_the_limit_is_dropped_not_replaced() {
        // "é" is two bytes; the limit keeps only its first.
        let mut s = OutputStream::new(Some(2));
        assert_eq!(s.push("aé".as_bytes()), "a");
        assert!(s.truncated);
        assert_eq!(s.finish(), "");
    }

    #[test]
    fn exactly_the_limit_is_not_truncation() {
        let mut s = OutputStream::new(Some(3));
        assert_eq!(s.push(b"abc"), "abc");
        assert!(!s.truncated);
        let mut s = OutputStream::new(Some(0));
        assert_eq!(s.push(b"a"), "");
        assert!(s.truncated);
        let mut s = OutputStream::new(None);
        assert_eq!(s.push(&[b'x'; 10_000]).len(), 10_000);
    }
}
