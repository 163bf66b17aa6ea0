//! The screenshot scale, and the mapping between screenshot and screen pixels.
//!
//! Models take images up to a size: a long edge of at most 1568 pixels and
//! about 1.15 megapixels (Anthropic's limits; others are looser). Larger
//! images are downscaled by the host anyway, and then the model's coordinates
//! no longer match the screen. So every screenshot MCP answers is downscaled
//! here to fit, **by a scale that is a function of the screen size alone**:
//! every screenshot of one screen has the same size, and coordinates a model
//! reads off any of them mean the same screen point. Input goes to the guest
//! with that scale as its `coordinate_space`, and the guest maps each point
//! back (`screen = point / scale`, rounded), so no state is kept between
//! calls, which the stateless 2026-07-28 protocol needs.

/// The longest edge of an image, in pixels.
pub const MAX_LONG_EDGE: u32 = 1568;

/// The most pixels of an image.
pub const MAX_PIXELS: u64 = 1_150_000;

/// The scale of every screenshot of a `width` x `height` screen: 1 when the
/// screen fits, else the largest scale (to six decimals, as the guest writes
/// it) whose image fits both limits.
pub fn scale_for(width: u32, height: u32) -> f64 {
    if width == 0 || height == 0 || fits(width, height) {
        return 1.0;
    }
    let long = f64::from(width.max(height));
    let area = f64::from(width) * f64::from(height);
    let ideal = (f64::from(MAX_LONG_EDGE) / long).min((MAX_PIXELS as f64 / area).sqrt());
    // Six decimals is what the guest's `x-holm-scale` carries; a scale that is
    // exactly representable there reads back the same from every screenshot.
    let mut micro = (ideal * 1e6).floor() as i64;
    // The guest rounds each edge, which can add a pixel; step down until the
    // rounded image fits too (a step or two at most).
    while micro > 1 {
        let s = micro as f64 / 1e6;
        let (w, h) = image_size(width, height, s);
        if fits(w, h) {
            return s;
        }
        micro -= 1;
    }
    1e-6
}

fn fits(width: u32, height: u32) -> bool {
    width.max(height) <= MAX_LONG_EDGE && u64::from(width) * u64::from(height) <= MAX_PIXELS
}

/// The size of the image the guest makes of a `width` x `height` screen at
/// `scale`: each edge rounded, at least 1, never more than the screen.
pub fn image_size(width: u32, height: u32, scale: f64) -> (u32, u32) {
    let edge = |len: u32| ((f64::from(len) * scale).round().max(1.0) as u32).min(len);
    (edge(width), edge(height))
}

/// A screen point in screenshot pixels (rounded).
pub fn to_image(x: i32, y: i32, scale: f64) -> (i32, i32) {
    ((f64::from(x) * scale).round() as i32, (f64::from(y) * scale).round() as i32)
}

/// A screenshot point in screen pixels, as the guest maps it through a
/// `coordinate_space` with this scale.
pub fn to_screen(x: i32, y: i32, scale: f64) -> (i32, i32) {
    ((f64::from(x) / scale).round() as i32, (f64::from(y) / scale).round() as i32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREENS: &[(u32, u32)] = &[
        (1280, 800),
        (1024, 768),
        (1280, 1024),
        (1366, 768),
        (1440, 900),
        (1600, 900),
        (1920, 1080),
        (1920, 1200),
        (2560, 1440),
        (2560, 1600),
        (3840, 2160),
        (5120, 2880),
        (1080, 1920),
        (800, 3000),
        (4000, 300),
        (1569, 10),
        (7, 9),
        (1, 1),
    ];

    #[test]
    fn screens_that_fit_are_not_scaled() {
        assert_eq!(scale_for(1280, 800), 1.0);
        assert_eq!(scale_for(1024, 768), 1.0);
        assert_eq!(scale_for(1568, 700), 1.0);
        assert_eq!(scale_for(1, 1), 1.0);
        assert_eq!(image_size(1280, 800, 1.0), (1280, 800));
    }

    #[test]
    fn every_image_fits_and_is_as_large_as_allowed() {
        for &(w, h) in SCREENS {
            let s = scale_for(w, h);
            assert!(s > 0.0 && s <= 1.0, "{w}x{h}: {s}");
            let (iw, ih) = image_size(w, h, s);
            assert!(iw.max(ih) <= MAX_LONG_EDGE, "{w}x{h} -> {iw}x{ih}");
            assert!(u64::from(iw) * u64::from(ih) <= MAX_PIXELS, "{w}x{h} -> {iw}x{ih}");
            if s < 1.0 {
                // One more pixel of scale would not fit: the image uses the budget.
                let bigger = image_size(w, h, s + 2e-3);
                assert!(
                    bigger.0.max(bigger.1) > MAX_LONG_EDGE
                        || u64::from(bigger.0) * u64::from(bigger.1) > MAX_PIXELS,
                    "{w}x{h}: {s} leaves room"
                );
            }
            // Six decimals, as the guest writes its scale header.
            assert_eq!((s * 1e6).round() / 1e6, s, "{w}x{h}: {s}");
        }
    }

    #[test]
    fn known_sizes() {
        let s = scale_for(1920, 1080);
        assert_eq!(image_size(1920, 1080, s), (1430, 804));
        let s = scale_for(3840, 2160);
        assert_eq!(image_size(3840, 2160, s), (1430, 804));
        // A tall thin screen is bound by its long edge.
        let s = scale_for(800, 3000);
        assert_eq!(image_size(800, 3000, s).1, 1568);
    }

    #[test]
    fn the_scale_depends_on_the_screen_size_alone() {
        for &(w, h) in SCREENS {
            assert_eq!(scale_for(w, h).to_bits(), scale_for(w, h).to_bits());
        }
    }

    #[test]
    fn image_corners_map_inside_the_screen_and_back() {
        for &(w, h) in SCREENS {
            let s = scale_for(w, h);
            let (iw, ih) = image_size(w, h, s);
            for (x, y) in
                [(0, 0), (iw as i32 - 1, 0), (0, ih as i32 - 1), (iw as i32 - 1, ih as i32 - 1)]
            {
                let (sx, sy) = to_screen(x, y, s);
                assert!(
                    sx >= 0 && sx < w as i32 && sy >= 0 && sy < h as i32,
                    "{w}x{h} at {s}: ({x},{y}) -> ({sx},{sy})"
                );
            }
            // Screen -> image -> screen moves a point by less than a screenshot pixel.
            for (x, y) in [(0, 0), (w as i32 / 3, h as i32 / 2), (w as i32 - 1, h as i32 - 1)] {
                let (ix, iy) = to_image(x, y, s);
                let (bx, by) = to_screen(ix, iy, s);
                let tolerance = (1.0 / s).ceil() as i32;
                assert!(
                    (bx - x).abs() <= tolerance && (by - y).abs() <= tolerance,
                    "{w}x{h}: ({x},{y})"
                );
            }
        }
    }

    #[test]
    fn image_size_mirrors_the_guest() {
        // The guest's own planning cases (holm-guest image.rs).
        assert_eq!(image_size(1280, 800, 0.5), (640, 400));
        assert_eq!(image_size(1280, 800, 0.78125), (1000, 625));
        assert_eq!(image_size(200, 100, 0.5), (100, 50));
        assert_eq!(image_size(1280, 800, 1.0 / 1280.0), (1, 1));
    }
}
