//! The viewer page and everything it runs, carried in the binary: the page,
//! its script (`app.js`, `live.js`) and style, and the part of noVNC it
//! imports (vendored from Debian's `novnc` 1.3.0 under `viewer/novnc/`; its
//! README names the version and licences). holmd serves these itself, never
//! what a box serves, and the guest serves the same bytes on its own port
//! (`bind: any`), never files from the box's disk.
//!
//! | path (under a viewer's root) | what |
//! |---|---|
//! | `{screen}/view`, `{screen}/takeover` | [`PAGE`], under [`PAGE_CSP`] |
//! | `assets/{app.js,live.js,app.css}` | the page's script and style |
//! | `novnc/core/...`, `novnc/vendor/...` | noVNC's modules |

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::Response;

/// The viewer page: no inline script or style, only its own assets.
pub const PAGE: &str = include_str!("../viewer/page.html");

/// The page's content security policy: its own scripts, styles and
/// connections only; nothing inline, no plugins, no forms, no framing by
/// other origins.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'self'";

/// The policy of a static asset or a JSON answer: nothing runs in it when it
/// is opened as a document.
pub const STATIC_CSP: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// The noVNC release vendored under `viewer/novnc/`.
pub const NOVNC_VERSION: &str = "1.3.0 (Debian 1:1.3.0-1)";

const JS: &str = "text/javascript; charset=utf-8";

macro_rules! novnc {
    ($path:literal) => {
        (
            concat!("novnc/", $path),
            JS,
            include_bytes!(concat!("../viewer/novnc/", $path)).as_slice(),
        )
    };
}

/// Every asset: its path under a viewer's root, its type and its bytes.
pub const ASSETS: &[(&str, &str, &[u8])] = &[
    ("assets/app.js", JS, include_bytes!("../viewer/app.js")),
    ("assets/live.js", JS, include_bytes!("../viewer/live.js")),
    ("assets/app.css", "text/css; charset=utf-8", include_bytes!("../viewer/app.css")),
    novnc!("core/base64.js"),
    novnc!("core/decoders/copyrect.js"),
    novnc!("core/decoders/hextile.js"),
    novnc!("core/decoders/raw.js"),
    novnc!("core/decoders/rre.js"),
    novnc!("core/decoders/tight.js"),
    novnc!("core/decoders/tightpng.js"),
    novnc!("core/deflator.js"),
    novnc!("core/des.js"),
    novnc!("core/display.js"),
    novnc!("core/encodings.js"),
    novnc!("core/inflator.js"),
    novnc!("core/input/domkeytable.js"),
    novnc!("core/input/fixedkeys.js"),
    novnc!("core/input/gesturehandler.js"),
    novnc!("core/input/keyboard.js"),
    novnc!("core/input/keysym.js"),
    novnc!("core/input/keysymdef.js"),
    novnc!("core/input/util.js"),
    novnc!("core/input/vkeys.js"),
    novnc!("core/input/xtscancodes.js"),
    novnc!("core/rfb.js"),
    novnc!("core/util/browser.js"),
    novnc!("core/util/cursor.js"),
    novnc!("core/util/element.js"),
    novnc!("core/util/events.js"),
    novnc!("core/util/eventtarget.js"),
    novnc!("core/util/int.js"),
    novnc!("core/util/logging.js"),
    novnc!("core/util/strings.js"),
    novnc!("core/websock.js"),
    novnc!("vendor/pako/lib/utils/common.js"),
    novnc!("vendor/pako/lib/zlib/adler32.js"),
    novnc!("vendor/pako/lib/zlib/crc32.js"),
    novnc!("vendor/pako/lib/zlib/deflate.js"),
    novnc!("vendor/pako/lib/zlib/inffast.js"),
    novnc!("vendor/pako/lib/zlib/inflate.js"),
    novnc!("vendor/pako/lib/zlib/inftrees.js"),
    novnc!("vendor/pako/lib/zlib/messages.js"),
    novnc!("vendor/pako/lib/zlib/trees.js"),
    novnc!("vendor/pako/lib/zlib/zstream.js"),
];

/// The asset at `path` (`assets/app.js`, `novnc/core/rfb.js`): its type and
/// bytes.
pub fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    ASSETS.iter().find(|(p, _, _)| *p == path).map(|(_, mime, body)| (*mime, *body))
}

/// Headers every viewer response carries: never sniffed, never sent as a
/// referrer.
pub fn secure_headers(response: &mut Response) {
    let h = response.headers_mut();
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
}

/// The page, as served.
pub fn page_response() -> Response {
    let mut r = Response::new(Body::from(PAGE));
    secure_headers(&mut r);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PAGE_CSP));
    r
}

/// The asset at `path`, as served. Assets may be loaded from another
/// origin: an MCP Apps view imports the live screen's module (`live.js`).
pub fn asset_response(path: &str) -> Option<Response> {
    let (mime, body) = asset(path)?;
    let mut r = Response::new(Body::from(body));
    secure_headers(&mut r);
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(mime));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300"));
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(STATIC_CSP));
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The relative module specifiers a script imports.
    fn imports(src: &str) -> Vec<String> {
        let mut out = Vec::new();
        for line in src.lines() {
            let line = line.trim_start();
            if !(line.starts_with("import ") || line.starts_with("export ")) {
                continue;
            }
            for quote in ['\'', '"'] {
                let mut parts = line.split(quote);
                let (Some(_), Some(spec)) = (parts.next(), parts.next()) else { continue };
                if spec.starts_with("./") || spec.starts_with("../") {
                    out.push(spec.to_owned());
                }
            }
        }
        out
    }

    fn resolve(from: &str, spec: &str) -> String {
        let mut parts: Vec<&str> = from.split('/').collect();
        parts.pop();
        for p in spec.split('/') {
            match p {
                "." => {}
                ".." => {
                    parts.pop();
                }
                p => parts.push(p),
            }
        }
        parts.join("/")
    }

    #[test]
    fn every_module_a_script_imports_is_embedded() {
        let mut checked = 0;
        for (path, mime, body) in ASSETS {
            if *mime != JS {
                continue;
            }
            let src = std::str::from_utf8(body).unwrap();
            for spec in imports(src) {
                let target = resolve(path, &spec);
                assert!(asset(&target).is_some(), "{path} imports {spec} ({target}), not embedded");
                checked += 1;
            }
        }
        assert!(checked > 40, "only {checked} imports seen");
        assert_eq!(resolve("assets/live.js", "../novnc/core/rfb.js"), "novnc/core/rfb.js");
    }

    #[test]
    fn paths_are_unique_and_the_page_loads_only_its_own_assets() {
        let mut paths: Vec<&str> = ASSETS.iter().map(|(p, _, _)| *p).collect();
        paths.sort_unstable();
        paths.dedup();
        assert_eq!(paths.len(), ASSETS.len());
        assert!(!PAGE.contains("<script>") && !PAGE.contains("style="), "nothing inline");
        assert!(PAGE.contains("src=\"../assets/app.js\""));
        assert!(asset("novnc/core/../../etc/passwd").is_none());
        assert!(asset("novnc/app/ui.js").is_none());
    }

    #[test]
    fn responses_carry_their_policies() {
        let p = page_response();
        assert_eq!(p.headers()[header::CONTENT_SECURITY_POLICY], PAGE_CSP);
        assert_eq!(p.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let a = asset_response("novnc/core/rfb.js").unwrap();
        assert_eq!(a.headers()[header::CONTENT_TYPE], JS);
        assert_eq!(a.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(asset_response("nothing.js").is_none());
    }
}
