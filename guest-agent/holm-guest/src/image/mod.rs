//! Turning captured pixels into a screenshot: option checks, region and scale
//! arithmetic, the frame hash, the pointer overlay, downscaling and encoding.
//!
//! Nothing here knows about X11: a [`Frame`] is 32-bit little-endian `XRGB`
//! pixels (bytes `B, G, R, X`), which is what both an X server and a Wayland
//! compositor's screencopy hand out, so the Wayland profile reuses all of it.

pub mod jpeg;

use std::time::Instant;

use fast_image_resize as fir;
use holm_proto::Issue;
use holm_proto::guest::{ImageFormat, Region, ScreenshotOptions};

/// The default JPEG quality.
pub const DEFAULT_JPEG_QUALITY: u8 = 80;

/// Captured pixels: rows of `width` pixels, 4 bytes each (`B, G, R, X`), with
/// no padding between rows.
#[derive(Clone, PartialEq, Eq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub data: Vec<u8>,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frame").field("width", &self.width).field("height", &self.height).finish()
    }
}

impl Frame {
    /// The pixel at `(x, y)` as `(r, g, b)`.
    pub fn rgb(&self, x: u32, y: u32) -> (u8, u8, u8) {
        let i = (y as usize * self.width as usize + x as usize) * 4;
        (self.data[i + 2], self.data[i + 1], self.data[i])
    }
}

/// A screenshot request after its options were checked against the screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The part of the screen to capture, in screen pixels.
    pub region: Region,
    /// Image pixels per screen pixel, at most 1.
    pub scale: f64,
    /// The image's width.
    pub out_width: u32,
    /// The image's height.
    pub out_height: u32,
    /// The format.
    pub format: ImageFormat,
    /// The JPEG quality.
    pub quality: u8,
    /// Whether to draw the pointer.
    pub cursor: bool,
}

/// Checks screenshot options against a screen of `width` x `height` and works
/// out the region, the scale and the image size. Every wrong option is named,
/// with `prefix` before its name (such as `screenshot.`).
///
/// The scale is the smallest of `scale`, `max_width / region width`,
/// `max_height / region height` and 1: images are never upscaled.
pub fn plan(
    opts: &ScreenshotOptions,
    width: u32,
    height: u32,
    prefix: &str,
) -> Result<Plan, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut issue = |field: &str, problem: String| {
        issues.push(Issue { path: format!("{prefix}{field}"), problem })
    };
    let quality = opts.quality.unwrap_or(DEFAULT_JPEG_QUALITY);
    if !(1..=100).contains(&quality) {
        issue("quality", format!("{quality} is outside 1 to 100"));
    }
    if let Some(s) = opts.scale
        && !(s.is_finite() && s > 0.0 && s <= 1.0)
    {
        issue("scale", format!("{s} is not above 0 and at most 1 (images are never upscaled)"));
    }
    for (field, v) in [("max_width", opts.max_width), ("max_height", opts.max_height)] {
        if v == Some(0) {
            issue(field, "must be at least 1".into());
        }
    }
    let region = opts.region.unwrap_or(Region { x: 0, y: 0, width, height });
    if region.width == 0 || region.height == 0 {
        issue("region", format!("{region} is empty: width and height must be at least 1"));
    } else if u64::from(region.x) + u64::from(region.width) > u64::from(width)
        || u64::from(region.y) + u64::from(region.height) > u64::from(height)
    {
        issue(
            "region",
            format!(
                "{region} is not inside the screen, which is {width}x{height} (x,y,width,height)"
            ),
        );
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    let mut scale = opts.scale.unwrap_or(1.0);
    if let Some(mw) = opts.max_width {
        scale = scale.min(f64::from(mw) / f64::from(region.width));
    }
    if let Some(mh) = opts.max_height {
        scale = scale.min(f64::from(mh) / f64::from(region.height));
    }
    let scale = scale.min(1.0);
    let fit = |len: u32, max: Option<u32>| {
        let v = (f64::from(len) * scale).round().max(1.0) as u32;
        v.min(max.unwrap_or(u32::MAX)).min(len)
    };
    let out_width = fit(region.width, opts.max_width);
    let out_height = fit(region.height, opts.max_height);
    let scale = if out_width == region.width && out_height == region.height { 1.0 } else { scale };
    Ok(Plan {
        region,
        scale,
        out_width,
        out_height,
        format: opts.format.unwrap_or_default(),
        quality,
        cursor: opts.cursor.unwrap_or(false),
    })
}

/// Writes a scale for the `x-holm-scale` header: short, and exact enough to map
/// coordinates back to the screen.
pub fn format_scale(scale: f64) -> String {
    let s = format!("{scale:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() { "0".into() } else { s.to_owned() }
}

/// A hash of raw pixels (xxh3).
pub fn pixels_hash(data: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(data)
}

/// The frame tag (the `ETag`): the xxh3 of the captured pixels, seeded with
/// everything else that decides the image's bytes (size, format, quality,
/// image size). The same tag means the same image; computing it needs no
/// encoding.
pub fn frame_tag(frame: &Frame, plan: &Plan) -> u64 {
    let params = [
        u64::from(frame.width),
        u64::from(frame.height),
        plan.format as u64,
        u64::from(plan.quality),
        u64::from(plan.out_width),
        u64::from(plan.out_height),
    ];
    let mut bytes = Vec::with_capacity(params.len() * 8);
    for p in params {
        bytes.extend_from_slice(&p.to_le_bytes());
    }
    let seed = xxhash_rust::xxh3::xxh3_64(&bytes);
    xxhash_rust::xxh3::xxh3_64_with_seed(&frame.data, seed)
}

/// The last encoded screenshot of each screen, by its tag. A screen that
/// has not changed since its last screenshot (an agent polling, or a click
/// that changed nothing) is answered with the same bytes without encoding
/// again: the tag covers the pixels, the size, the format and the quality,
/// so equal tags mean equal images. One entry per screen bounds it.
#[derive(Debug, Default)]
pub struct LastEncoded {
    last: std::sync::Mutex<std::collections::HashMap<u8, (u64, bytes::Bytes)>>,
}

impl LastEncoded {
    /// The bytes of `screen`'s image with `tag`: the kept ones when the tag
    /// matches, else `render`'s, which are kept in their place.
    pub fn get_or_render<E>(
        &self,
        screen: u8,
        tag: u64,
        render: impl FnOnce() -> Result<Vec<u8>, E>,
    ) -> Result<bytes::Bytes, E> {
        let lock = || self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((t, b)) = lock().get(&screen)
            && *t == tag
        {
            return Ok(b.clone());
        }
        let fresh = bytes::Bytes::from(render()?);
        lock().insert(screen, (tag, fresh.clone()));
        Ok(fresh)
    }
}

/// The `ETag` header value of a tag.
pub fn etag(tag: u64) -> String {
    format!("\"{tag:016x}\"")
}

/// Whether an `If-None-Match` header value matches the tag.
pub fn if_none_match(header: &str, tag: u64) -> bool {
    let want = format!("{tag:016x}");
    header.split(',').map(str::trim).any(|t| {
        let t = t.strip_prefix("W/").unwrap_or(t);
        t == "*" || t.trim_matches('"') == want
    })
}

/// A pointer image: premultiplied `ARGB` pixels, placed with its top-left
/// corner at `(x, y)` in screen pixels.
#[derive(Debug, Clone)]
pub struct CursorImage {
    /// Left edge on the screen (the hotspot already subtracted).
    pub x: i32,
    /// Top edge on the screen.
    pub y: i32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Premultiplied `0xAARRGGBB`, row by row.
    pub argb: Vec<u32>,
}

/// Blends a pointer image into a frame that shows the screen from `origin`.
pub fn draw_cursor(frame: &mut Frame, origin: (u32, u32), cursor: &CursorImage) {
    let fw = i64::from(frame.width);
    let fh = i64::from(frame.height);
    for cy in 0..i64::from(cursor.height) {
        let y = i64::from(cursor.y) + cy - i64::from(origin.1);
        if !(0..fh).contains(&y) {
            continue;
        }
        for cx in 0..i64::from(cursor.width) {
            let x = i64::from(cursor.x) + cx - i64::from(origin.0);
            if !(0..fw).contains(&x) {
                continue;
            }
            let Some(&p) = cursor.argb.get((cy * i64::from(cursor.width) + cx) as usize) else {
                continue;
            };
            let a = p >> 24;
            if a == 0 {
                continue;
            }
            let i = ((y * fw + x) * 4) as usize;
            let inv = 255 - a;
            // The source is premultiplied: out = src + dst * (1 - alpha).
            for (c, shift) in [(0usize, 0u32), (1, 8), (2, 16)] {
                let s = (p >> shift) & 0xff;
                let d = u32::from(frame.data[i + c]);
                frame.data[i + c] = (s + (d * inv + 127) / 255).min(255) as u8;
            }
        }
    }
}

/// How long each step of [`render`] took, for the benchmark's breakdown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timings {
    /// Downscaling, in microseconds.
    pub resize_us: u64,
    /// Pixel conversion and encoding, in microseconds.
    pub encode_us: u64,
}

/// Downscales (when the plan says so) and encodes a frame.
pub fn render(frame: &Frame, plan: &Plan) -> Result<(Vec<u8>, Timings), String> {
    let mut timings = Timings::default();
    let t = Instant::now();
    let resized;
    let src = if plan.out_width != frame.width || plan.out_height != frame.height {
        resized = resize(frame, plan.out_width, plan.out_height)?;
        &resized
    } else {
        frame
    };
    timings.resize_us = t.elapsed().as_micros() as u64;
    let t = Instant::now();
    let bytes = match plan.format {
        ImageFormat::Png => encode_png(src)?,
        ImageFormat::Jpeg => encode_jpeg(src, plan.quality)?,
        ImageFormat::Webp => encode_webp(src)?,
    };
    timings.encode_us = t.elapsed().as_micros() as u64;
    Ok((bytes, timings))
}

/// Downscales with a Lanczos-3 convolution, which keeps small text legible;
/// the padding byte is treated as padding, not as alpha.
pub fn resize(frame: &Frame, width: u32, height: u32) -> Result<Frame, String> {
    let src =
        fir::images::ImageRef::new(frame.width, frame.height, &frame.data, fir::PixelType::U8x4)
            .map_err(|e| format!("resize source: {e}"))?;
    let mut dst = fir::images::Image::new(width, height, fir::PixelType::U8x4);
    let options = fir::ResizeOptions::new()
        .resize_alg(fir::ResizeAlg::Convolution(fir::FilterType::Lanczos3))
        .use_alpha(false);
    fir::Resizer::new().resize(&src, &mut dst, &options).map_err(|e| format!("resize: {e}"))?;
    Ok(Frame { width, height, data: dst.into_vec() })
}

/// `B, G, R, X` to `R, G, B`.
///
/// Each pixel is read as one little-endian word `0xXXRRGGBB`, byte-swapped
/// and shifted to `0x00BBGGRR`, and stored as four bytes whose last one the
/// next pixel overwrites: one load and one store per pixel instead of six
/// byte moves (about three times faster).
pub fn to_rgb(data: &[u8]) -> Vec<u8> {
    let pixels = data.len() / 4;
    let mut out = vec![0u8; pixels * 3 + 1];
    for (i, px) in data.chunks_exact(4).enumerate() {
        let p = u32::from_le_bytes([px[0], px[1], px[2], px[3]]);
        let o = i * 3;
        out[o..o + 4].copy_from_slice(&((p.swap_bytes() >> 8).to_le_bytes()));
    }
    out.truncate(pixels * 3);
    out
}

/// PNG with fdeflate's fast compression and the `Up` filter: about as fast as
/// PNG gets, and still small for screen content.
fn encode_png(frame: &Frame) -> Result<Vec<u8>, String> {
    let rgb = to_rgb(&frame.data);
    let mut out = Vec::with_capacity(rgb.len() / 4);
    let mut enc = png::Encoder::new(&mut out, frame.width, frame.height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    enc.set_compression(png::Compression::Fastest);
    let mut w = enc.write_header().map_err(|e| format!("png: {e}"))?;
    w.write_image_data(&rgb).map_err(|e| format!("png: {e}"))?;
    w.finish().map_err(|e| format!("png: {e}"))?;
    Ok(out)
}

/// JPEG in strips on every CPU the guest may use ([`jpeg`]).
fn encode_jpeg(frame: &Frame, quality: u8) -> Result<Vec<u8>, String> {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cpus =
        *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(4)));
    jpeg::encode(frame, quality, cpus)
}

fn encode_webp(frame: &Frame) -> Result<Vec<u8>, String> {
    let rgb = to_rgb(&frame.data);
    let mut out = Vec::with_capacity(rgb.len() / 4);
    image_webp::WebPEncoder::new(&mut out)
        .encode(&rgb, frame.width, frame.height, image_webp::ColorType::Rgb8)
        .map_err(|e| format!("webp: {e}"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(q: &str) -> ScreenshotOptions {
        holm_proto::strict::from_query(q).unwrap()
    }

    #[test]
    fn an_unchanged_screen_is_not_encoded_again_and_a_changed_one_is() {
        let kept = LastEncoded::default();
        let renders = std::cell::Cell::new(0);
        let get = |screen, tag, bytes: &[u8]| {
            kept.get_or_render(screen, tag, || {
                renders.set(renders.get() + 1);
                Ok::<_, ()>(bytes.to_vec())
            })
            .unwrap()
        };
        assert_eq!(get(0, 7, b"first"), &b"first"[..]);
        assert_eq!(get(0, 7, b"ignored"), &b"first"[..], "the same tag reuses the bytes");
        assert_eq!(get(1, 7, b"other screen"), &b"other screen"[..]);
        assert_eq!(get(0, 8, b"changed"), &b"changed"[..]);
        assert_eq!(get(0, 7, b"back"), &b"back"[..], "one entry per screen");
        assert_eq!(renders.get(), 4);
        let failed = kept.get_or_render(0, 9, || Err("no encoder"));
        assert_eq!(failed, Err("no encoder"));
        assert_eq!(
            kept.get_or_render(0, 7, || Err("kept")),
            Ok(bytes::Bytes::from_static(b"back"))
        );
    }

    #[test]
    fn plans_region_and_scale() {
        // (query, region, scale, out size)
        let cases: &[(&str, &str, f64, (u32, u32))] = &[
            ("", "0,0,1280,800", 1.0, (1280, 800)),
            ("scale=0.5", "0,0,1280,800", 0.5, (640, 400)),
            ("max_width=640", "0,0,1280,800", 0.5, (640, 400)),
            ("max_height=200", "0,0,1280,800", 0.25, (320, 200)),
            ("max_width=1000", "0,0,1280,800", 0.78125, (1000, 625)),
            ("max_width=4000", "0,0,1280,800", 1.0, (1280, 800)),
            ("scale=0.5&max_width=320", "0,0,1280,800", 0.25, (320, 200)),
            ("region=100,50,200,100", "100,50,200,100", 1.0, (200, 100)),
            ("region=100,50,200,100&scale=0.5", "100,50,200,100", 0.5, (100, 50)),
            ("region=0,0,1280,800&max_width=1", "0,0,1280,800", 1.0 / 1280.0, (1, 1)),
            ("region=1279,799,1,1", "1279,799,1,1", 1.0, (1, 1)),
            ("scale=1", "0,0,1280,800", 1.0, (1280, 800)),
        ];
        for (q, region, scale, size) in cases {
            let p = plan(&opts(q), 1280, 800, "").unwrap();
            assert_eq!(p.region.to_string(), *region, "{q}");
            assert!((p.scale - scale).abs() < 1e-9, "{q}: {}", p.scale);
            assert_eq!((p.out_width, p.out_height), *size, "{q}");
        }
    }

    #[test]
    fn refuses_bad_options_naming_each() {
        let cases: &[(&str, &[&str])] = &[
            ("quality=0", &["shot.quality"]),
            ("quality=101", &["shot.quality"]),
            ("scale=0", &["shot.scale"]),
            ("scale=1.5", &["shot.scale"]),
            ("scale=-0.5", &["shot.scale"]),
            ("scale=NaN", &["shot.scale"]),
            ("max_width=0", &["shot.max_width"]),
            ("region=1200,0,100,10", &["shot.region"]),
            ("region=0,0,0,10", &["shot.region"]),
            ("region=0,790,10,11", &["shot.region"]),
            ("quality=0&scale=2&region=0,0,9999,1", &["shot.quality", "shot.scale", "shot.region"]),
        ];
        for (q, paths) in cases {
            let err = plan(&opts(q), 1280, 800, "shot.").unwrap_err();
            let got: Vec<&str> = err.iter().map(|i| i.path.as_str()).collect();
            assert_eq!(got, *paths, "{q}");
        }
        let err = plan(&opts("region=1200,0,100,10"), 1280, 800, "").unwrap_err();
        assert!(err[0].problem.contains("1280x800"), "{}", err[0].problem);
    }

    #[test]
    fn scale_is_written_short() {
        assert_eq!(format_scale(1.0), "1");
        assert_eq!(format_scale(0.5), "0.5");
        assert_eq!(format_scale(0.78125), "0.78125");
        assert_eq!(format_scale(1.0 / 3.0), "0.333333");
    }

    fn pattern(w: u32, h: u32) -> Frame {
        let mut data = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            for x in 0..w {
                let (r, g, b) = if x < w / 2 { (255, 0, 0) } else { (0, 0, 255) };
                let g = if y < h / 2 { g } else { 255 };
                data.extend_from_slice(&[b, g, r, 0]);
            }
        }
        Frame { width: w, height: h, data }
    }

    #[test]
    fn tags_follow_pixels_and_options() {
        let f = pattern(64, 32);
        let p = plan(&ScreenshotOptions::default(), 64, 32, "").unwrap();
        let t = frame_tag(&f, &p);
        assert_eq!(t, frame_tag(&f.clone(), &p));
        let mut g = f.clone();
        g.data[100] ^= 1;
        assert_ne!(t, frame_tag(&g, &p));
        let jpeg = plan(&opts("format=jpeg"), 64, 32, "").unwrap();
        assert_ne!(t, frame_tag(&f, &jpeg));
        assert!(if_none_match(&etag(t), t));
        assert!(if_none_match(&format!("W/{}, \"x\"", etag(t)), t));
        assert!(if_none_match("*", t));
        assert!(!if_none_match("\"0000000000000000\"", t));
    }

    #[test]
    fn encodes_every_format_losslessly_where_promised() {
        let f = pattern(64, 32);
        for format in [ImageFormat::Png, ImageFormat::Webp, ImageFormat::Jpeg] {
            let mut p = plan(&ScreenshotOptions::default(), 64, 32, "").unwrap();
            p.format = format;
            let (bytes, _) = render(&f, &p).unwrap();
            match format {
                ImageFormat::Png => {
                    let dec = png::Decoder::new(std::io::Cursor::new(&bytes));
                    let mut r = dec.read_info().unwrap();
                    let mut buf = vec![0; r.output_buffer_size().unwrap()];
                    let info = r.next_frame(&mut buf).unwrap();
                    assert_eq!((info.width, info.height), (64, 32));
                    assert_eq!(&buf[..3], &[255, 0, 0]);
                    let last = ((31 * 64 + 63) * 3) as usize;
                    assert_eq!(&buf[last..last + 3], &[0, 255, 255]);
                }
                ImageFormat::Webp => {
                    let mut d = image_webp::WebPDecoder::new(std::io::Cursor::new(&bytes)).unwrap();
                    assert_eq!(d.dimensions(), (64, 32));
                    let mut buf = vec![0; d.output_buffer_size().unwrap()];
                    d.read_image(&mut buf).unwrap();
                    assert_eq!(&buf[..3], &[255, 0, 0]);
                }
                ImageFormat::Jpeg => assert_eq!(&bytes[..2], &[0xff, 0xd8]),
            }
        }
    }

    #[test]
    fn rgb_conversion_swaps_and_drops_padding() {
        let data = [1, 2, 3, 0xff, 4, 5, 6, 0, 7, 8, 9, 0xaa];
        assert_eq!(to_rgb(&data), vec![3, 2, 1, 6, 5, 4, 9, 8, 7]);
        assert!(to_rgb(&[]).is_empty());
    }

    #[test]
    fn downscale_keeps_flat_areas_exact() {
        // Lanczos rings near edges; away from them flat colours stay exact.
        let f = pattern(256, 128);
        let small = resize(&f, 64, 32).unwrap();
        assert_eq!(small.rgb(5, 5), (255, 0, 0));
        assert_eq!(small.rgb(58, 27), (0, 255, 255));
    }

    #[test]
    fn cursor_blends_premultiplied() {
        let mut f = pattern(8, 8);
        let c = CursorImage {
            x: 1,
            y: 1,
            width: 2,
            height: 1,
            // Opaque white, then half-transparent black over red.
            argb: vec![0xffff_ffff, 0x8000_0000],
        };
        draw_cursor(&mut f, (0, 0), &c);
        assert_eq!(f.rgb(1, 1), (255, 255, 255));
        assert_eq!(f.rgb(2, 1), (127, 0, 0));
        // The same pointer, seen from a region further right: clipped.
        let mut g = pattern(8, 8);
        draw_cursor(&mut g, (2, 0), &c);
        assert_eq!(g.rgb(0, 1), (127, 0, 0));
    }
}
