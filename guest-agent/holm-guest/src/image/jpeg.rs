//! JPEG on every core: the frame is cut into horizontal strips whose height
//! is a whole number of MCU rows, each strip is encoded on a thread of its
//! own (jpeg-encoder, AVX2 where the CPU has it), and the strips are joined
//! into one baseline JPEG with restart markers between them.
//!
//! This is the standard's own way to make independent pieces: at a restart
//! marker the decoder resets its DC predictions and starts on a byte
//! boundary, which is exactly how each strip's entropy-coded data begins
//! and ends when it is encoded as an image of its own (same quantization
//! and Huffman tables, since quality and sampling are the same). Each MCU
//! is transformed on its own, so the joined image decodes to the very
//! pixels one sequential encode gives. The header is the first strip's,
//! with the frame's full height and a `DRI` segment (the restart interval:
//! the MCUs of one strip).

use super::Frame;

/// Strips below this many rows are not worth a thread.
const MIN_STRIP_ROWS: usize = 128;

/// Encodes a `B, G, R, X` frame as a baseline JPEG of `quality`, on up to
/// `threads` threads.
pub fn encode(frame: &Frame, quality: u8, threads: usize) -> Result<Vec<u8>, String> {
    let (w, h) = dims(frame)?;
    // jpeg-encoder's default sampling: 4:2:0 below quality 90, else 4:4:4.
    let mcu = if quality < 90 { 16 } else { 8 };
    let mcus_per_row = usize::from(w).div_ceil(mcu);
    let rows = usize::from(h);
    let strips = threads.min(rows / MIN_STRIP_ROWS).max(1);
    let strip_rows = rows.div_ceil(strips).div_ceil(mcu) * mcu;
    let interval = u16::try_from(strip_rows / mcu * mcus_per_row).ok();
    let (Some(interval), true) = (interval, strips > 1) else {
        return encode_one(&frame.data, w, h, quality);
    };
    let stride = usize::from(w) * 4;
    let parts: Vec<Result<Vec<u8>, String>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = frame
                .data
                .chunks(strip_rows * stride)
                .skip(1)
                .map(|chunk| {
                    s.spawn(move || {
                        let rows = u16::try_from(chunk.len() / stride).unwrap_or(u16::MAX);
                        encode_one(chunk, w, rows, quality)
                    })
                })
                .collect();
            let first = frame.data.get(..strip_rows * stride).unwrap_or(&frame.data);
            let strip_h = u16::try_from(strip_rows).unwrap_or(h);
            let mut parts = vec![encode_one(first, w, strip_h, quality)];
            parts.extend(handles.into_iter().map(|t| {
                t.join().unwrap_or_else(|_| Err("jpeg: a strip's encoder panicked".into()))
            }));
            parts
        });
    let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    join(&parts, h, interval)
}

fn dims(frame: &Frame) -> Result<(u16, u16), String> {
    Ok((
        u16::try_from(frame.width).map_err(|_| "jpeg: wider than 65535".to_owned())?,
        u16::try_from(frame.height).map_err(|_| "jpeg: taller than 65535".to_owned())?,
    ))
}

/// One image: `data` is `h` rows of `w` `B, G, R, X` pixels.
fn encode_one(data: &[u8], w: u16, h: u16, quality: u8) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(data.len() / 16);
    jpeg_encoder::Encoder::new(&mut out, quality)
        .encode(data, w, h, jpeg_encoder::ColorType::Bgra)
        .map_err(|e| format!("jpeg: {e}"))?;
    Ok(out)
}

/// Where a strip's parts are: its frame header (`SOF0`), its scan header
/// (`SOS`), and the end of the scan header, after which its entropy-coded
/// data runs up to the closing `EOI`.
struct Layout {
    sof: usize,
    sos: usize,
    data: usize,
}

fn layout(jpeg: &[u8]) -> Result<Layout, String> {
    let bad = || "jpeg: a strip is not a baseline JPEG".to_owned();
    let ends = jpeg.len() >= 4 && jpeg[jpeg.len() - 2..] == [0xff, 0xd9];
    if jpeg.get(..2) != Some(&[0xff, 0xd8]) || !ends {
        return Err(bad());
    }
    let (mut p, mut sof) = (2, None);
    while let (Some(&0xff), Some(&marker), Some(len)) =
        (jpeg.get(p), jpeg.get(p + 1), jpeg.get(p + 2..p + 4))
    {
        let end = p + 2 + usize::from(u16::from_be_bytes([len[0], len[1]]));
        match marker {
            0xc0 => sof = Some(p),
            0xda if end <= jpeg.len() - 2 => {
                return Ok(Layout { sof: sof.ok_or_else(bad)?, sos: p, data: end });
            }
            _ => {}
        }
        p = end;
    }
    Err(bad())
}

/// Joins the strips' JPEGs into one of height `h` with restart interval
/// `interval`.
fn join(parts: &[Vec<u8>], h: u16, interval: u16) -> Result<Vec<u8>, String> {
    let first = parts.first().ok_or("jpeg: no strips")?;
    let head = layout(first)?;
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out = Vec::with_capacity(total + 6 + 2 * parts.len());
    // The tables and the frame header, with the full height in SOF0
    // (marker, length, precision, then the height); then the restart
    // interval and the scan header.
    out.extend_from_slice(&first[..head.sos]);
    out[head.sof + 5..head.sof + 7].copy_from_slice(&h.to_be_bytes());
    out.extend_from_slice(&[0xff, 0xdd, 0, 4]);
    out.extend_from_slice(&interval.to_be_bytes());
    out.extend_from_slice(&first[head.sos..head.data]);
    for (k, part) in parts.iter().enumerate() {
        let data = if k == 0 { head.data } else { layout(part)?.data };
        if k > 0 {
            out.extend_from_slice(&[0xff, 0xd0 + ((k - 1) % 8) as u8]);
        }
        out.extend_from_slice(&part[data..part.len() - 2]);
    }
    out.extend_from_slice(&[0xff, 0xd9]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Smooth colour with fine noise (photograph-like), of an odd size.
    fn photo(w: u32, h: u32) -> Frame {
        let mut data = Vec::with_capacity((w * h * 4) as usize);
        let mut seed = 0x2545_f491_u32;
        for y in 0..h {
            for x in 0..w {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                let n = (seed & 31) as u8;
                let r = ((x * 255 / w) as u8).wrapping_add(n);
                let g = ((y * 255 / h) as u8).wrapping_add(n / 2);
                let b = (((x + y) * 3) as u8) ^ n;
                data.extend_from_slice(&[b, g, r, 0]);
            }
        }
        Frame { width: w, height: h, data }
    }

    fn decode(jpeg: &[u8]) -> (u16, u16, Vec<u8>) {
        let mut d = jpeg_decoder::Decoder::new(std::io::Cursor::new(jpeg));
        let pixels = d.decode().unwrap();
        let info = d.info().unwrap();
        (info.width, info.height, pixels)
    }

    #[test]
    fn strips_decode_to_the_pixels_of_one_encode() {
        for (w, h, quality) in [(1280, 800, 80), (203, 517, 80), (640, 411, 95), (97, 300, 50)] {
            let f = photo(w, h);
            let one = decode(&encode_one(&f.data, w as u16, h as u16, quality).unwrap());
            for threads in [2, 3, 4] {
                let jpeg = encode(&f, quality, threads).unwrap();
                let strips = threads.min(h as usize / MIN_STRIP_ROWS).max(1);
                // Several strips are joined by restart markers.
                let markers = jpeg
                    .windows(2)
                    .filter(|p| p[0] == 0xff && (0xd0..=0xd7).contains(&p[1]))
                    .count();
                assert_eq!(markers, strips - 1, "{w}x{h} q{quality} on {threads}");
                let got = decode(&jpeg);
                assert_eq!((got.0, got.1), (w as u16, h as u16), "{w}x{h} on {threads}");
                assert!(got.2 == one.2, "{w}x{h} q{quality} on {threads}: pixels differ");
            }
        }
    }

    #[test]
    fn small_frames_are_one_strip() {
        let f = photo(64, 100);
        let jpeg = encode(&f, 80, 4).unwrap();
        assert_eq!(jpeg, encode_one(&f.data, 64, 100, 80).unwrap());
    }
}
