//! How long the guest's encoders take on one frame, single-threaded and
//! on every core: PNG, JPEG (one strip, and strips on each CPU) and WebP.
//!
//! ```text
//! cargo run -p holm-guest --profile guest --example encoders -- [SHOT.png ...]
//! ```
//!
//! Each PNG given (a screenshot, such as the bench's busy screen) is
//! decoded and encoded again; without one, a 1280x800 desktop-like frame
//! (flat with text-like strokes) and a photograph-like one are made.

use std::time::Instant;

use holm_guest::image::{Frame, plan, render};
use holm_proto::guest::{ImageFormat, ScreenshotOptions};

fn load(path: &str) -> Frame {
    let file = std::fs::File::open(path).expect("open");
    let mut r = png::Decoder::new(std::io::BufReader::new(file)).read_info().expect("png");
    let mut buf = vec![0; r.output_buffer_size().expect("size")];
    let info = r.next_frame(&mut buf).expect("frame");
    let channels = info.color_type.samples();
    let mut data = Vec::with_capacity((info.width * info.height * 4) as usize);
    for px in buf[..info.buffer_size()].chunks_exact(channels) {
        data.extend_from_slice(&[px[2], px[1], px[0], 0]);
    }
    Frame { width: info.width, height: info.height, data }
}

fn made(photo: bool) -> Frame {
    let (w, h) = (1280u32, 800u32);
    let mut data = Vec::with_capacity((w * h * 4) as usize);
    let mut seed = 0x2545_f491_u32;
    for y in 0..h {
        for x in 0..w {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let px = if photo {
                let n = (seed & 31) as u8;
                [((x + y) * 3) as u8 ^ n, (y * 255 / h) as u8 + n / 2, (x * 255 / w) as u8 + n, 0]
            } else if y % 18 < 12 && x % 9 < 6 && seed.is_multiple_of(3) && y > 40 {
                [30, 30, 30, 0]
            } else {
                [250, 250, 250, 0]
            };
            data.extend_from_slice(&px);
        }
    }
    Frame { width: w, height: h, data }
}

fn time(label: &str, runs: usize, mut f: impl FnMut() -> usize) {
    let mut ms: Vec<f64> = Vec::with_capacity(runs);
    let mut bytes = 0;
    for _ in 0..runs {
        let t = Instant::now();
        bytes = f();
        ms.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "  {label:<28} p50 {:>7.2} ms  min {:>7.2} ms  {:>8} bytes",
        ms[runs / 2],
        ms[0],
        bytes
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let frames: Vec<(String, Frame)> = if args.is_empty() {
        vec![("made desktop".into(), made(false)), ("made photograph".into(), made(true))]
    } else {
        args.iter().map(|p| (p.clone(), load(p))).collect()
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (name, f) in &frames {
        println!("{name}: {}x{}", f.width, f.height);
        let runs = 30;
        for format in [ImageFormat::Png, ImageFormat::Jpeg, ImageFormat::Webp] {
            let opts = ScreenshotOptions { format: Some(format), ..ScreenshotOptions::default() };
            let p = plan(&opts, f.width, f.height, "").expect("plan");
            time(&format!("{format:?} (as served)"), runs, || {
                render(f, &p).expect("encode").0.len()
            });
        }
        for threads in [1, cpus] {
            time(&format!("JPEG q80, {threads} strip(s)"), runs, || {
                holm_guest::image::jpeg::encode(f, 80, threads).expect("jpeg").len()
            });
        }
    }
}
