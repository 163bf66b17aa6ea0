//! The busy screen: a page full of photographs and text in the box's
//! Chromium, served inside the box, and screenshots of it in PNG, JPEG and
//! WebP against `xwd | convert` of the same screen, in the same loop.
//!
//! An empty desktop compresses far better than real pages do (long flat
//! runs), so these rows say what an agent on a real page waits for. The
//! photographs are made in the box with ImageMagick (`plasma:fractal`, a
//! fixed seed each: smooth colour fields with fine noise, which compress
//! like photographs, not like drawings); the page is served by a few lines
//! of Perl (Debian's `perl-base`, in every image) on the box's loopback, so
//! the run needs no network and ships no images.

use std::time::Duration;

use anyhow::{Context, bail};
use holm_client::BoxClient;
use holm_proto::guest::{ImageFormat, ProcessStart, ScreenshotOptions};

use super::exec::Exec;
use super::latency::{PNG, Pair, Row, holm_first, shot, vary};

/// Where the page and its photographs are written in the box.
const DIR: &str = "/tmp/holm-bench-busy";
/// The port the page is served on, on the box's loopback (8765 is the guest's).
pub const PORT: u16 = 18080;
/// A light page beside it; each page is one link to the other.
pub const LIGHT: &str = "light.html";
/// A link over the top half of the page, to `href` (transparent: it
/// changes no pixel). The pointer leaves it after a click: Chromium shows a
/// link's address in a bubble while the pointer rests on it, and widens
/// the bubble after a second and a half, which would change the screen
/// long after the page settled.
fn link_over(href: &str) -> String {
    format!("<a href={href} style='position:fixed;left:0;top:0;width:100%;height:50%'></a>")
}
/// How many photographs the page shows.
const PHOTOS: usize = 16;

/// A one-connection-at-a-time HTTP/1.0 file server: enough for one page.
const SERVER: &str = r#"
use IO::Socket::INET;
my ($dir, $port) = @ARGV;
my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $port,
    Listen => 16, ReuseAddr => 1) or die "listen: $!";
while (my $c = $s->accept) {
    my $req = <$c> // "";
    while (my $l = <$c>) { last if $l =~ /^\r?\n$/ }
    my ($path) = $req =~ m{^GET /([A-Za-z0-9._-]*)};
    $path = "index.html" if !defined $path || $path eq "";
    if (open my $f, "<", "$dir/$path") {
        binmode $f; local $/; my $b = <$f>;
        my $t = $path =~ /\.html$/ ? "text/html; charset=utf-8" : "image/jpeg";
        print $c "HTTP/1.0 200 OK\r\nContent-Type: $t\r\nContent-Length: "
            . length($b) . "\r\nConnection: close\r\n\r\n$b";
    } else {
        print $c "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n";
    }
    close $c;
}
"#;

/// The page: a headline, a grid of the photographs with captions, and
/// paragraphs of text around them, as a news or shop page looks.
fn page() -> String {
    let words = "Harbour lights over the old town, a market at dawn, hills after rain: \
        photographs from the week, with notes on where each was taken, the light, \
        the lens and the people in it. Prices, opening hours and directions follow \
        each set; readers' comments are below.";
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=utf-8><title>holm bench: busy page</title>\
         <style>body{margin:12px;font:15px/1.35 'DejaVu Serif',serif;color:#222;background:#fafaf7}\
         h1{font:bold 28px 'DejaVu Sans',sans-serif;margin:4px 0 8px}\
         .grid{display:grid;grid-template-columns:repeat(4,1fr);gap:10px}\
         figure{margin:0}img{width:100%;display:block}\
         figcaption{font:12px 'DejaVu Sans',sans-serif;color:#555}\
         p{margin:6px 0}</style></head><body><h1>Photographs of the week</h1>",
    );
    html.push_str(&format!("<p>{words} {words}</p><div class=grid>"));
    for i in 1..=PHOTOS {
        html.push_str(&format!(
            "<figure><img src=p{i}.jpg alt=''><figcaption>Plate {i}: {}</figcaption></figure>",
            &words[..60 + i * 3]
        ));
    }
    html.push_str("</div>");
    for _ in 0..4 {
        html.push_str(&format!("<p>{words} {words} {words}</p>"));
    }
    html.push_str(&link_over(LIGHT));
    html.push_str("</body></html>");
    html
}

/// The light page: a headline and a paragraph, one link to the busy page.
fn light() -> String {
    format!(
        "<!doctype html><html><head><meta charset=utf-8><title>holm bench: light page</title>\
         </head><body style='font:15px sans-serif'><h1>Contents</h1>\
         <p>Photographs of the week, with notes.</p>{}</body></html>",
        link_over("index.html")
    )
}

/// Makes the page, serves it, closes the benchmark's terminal (it would
/// cover the browser) and loads the page in Chromium.
async fn open(b: &BoxClient) -> anyhow::Result<()> {
    let make = format!(
        "mkdir -p {DIR} && cd {DIR} && for i in $(seq 1 {PHOTOS}); do \
         convert -size 320x213 -seed $i plasma:fractal -blur 0x0.6 -quality 90 p$i.jpg || exit 1; done"
    );
    let r = b.exec(&["sh", "-c", &make]).await?;
    if r.exit_code != Some(0) {
        bail!("making the photographs failed: {}", r.stderr);
    }
    b.write_file(&format!("{DIR}/index.html"), page(), None).await?;
    b.write_file(&format!("{DIR}/{LIGHT}"), light(), None).await?;
    let server = ProcessStart {
        argv: Some(["perl", "-e", SERVER, DIR, &PORT.to_string()].map(str::to_owned).to_vec()),
        tag: Some("holm-bench-busy".into()),
        ..ProcessStart::default()
    };
    let server = b.start_process(&server).await.context("start the page's server")?;
    for p in b.processes().await? {
        if p.tag.as_deref() == Some("holm-bench") {
            b.signal(&p.id, "TERM").await?;
        }
    }
    let url = format!("http://127.0.0.1:{PORT}/");
    // The server may not listen yet: Chromium then shows its error page.
    let mut last = String::new();
    for _ in 0..50 {
        let title = match b.navigate(&url).await {
            Ok(_) => b.evaluate("document.title").await.map(|r| r.value),
            Err(e) => Err(e),
        };
        match title {
            Ok(t) if t.as_str().is_some_and(|t| t.contains("busy page")) => {
                last.clear();
                break;
            }
            Ok(t) => last = format!("its title is {t}"),
            Err(e) => last = e.to_string(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    if !last.is_empty() {
        let out = b.output(&server.id, 0, 0).await.map(|o| o.data).unwrap_or_default();
        let state = b.process(&server.id).await.map(|p| format!("{:?}", p.state));
        bail!("the busy page did not load: {last}; its server is {state:?}, said {out:?}");
    }
    // Every photograph decoded and drawn, not only loaded.
    let all = "Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)";
    for _ in 0..100 {
        if b.evaluate(all).await?.value == serde_json::Value::Bool(true) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("the busy page's photographs did not load in 5 seconds")
}

fn as_format(f: ImageFormat) -> ScreenshotOptions {
    ScreenshotOptions { format: Some(f), ..ScreenshotOptions::default() }
}

/// The busy screen's rows: PNG, JPEG (q80) and WebP through holmd, each
/// against `xwd | convert` to the same format, `n` runs each.
pub async fn run(
    through: &BoxClient,
    guest: &BoxClient,
    exec: &Exec,
    n: usize,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Vec<Row>> {
    progress("busy screen: a page of photographs and text in Chromium");
    open(guest).await?;
    let png = as_format(ImageFormat::Png);
    let sides: [(&'static str, &str, ScreenshotOptions, &str, &str); 3] = [
        (
            "busy_screenshot_png_vs_xwd_convert",
            "busy screen (photographs and text in Chromium): screenshot 1280x800 PNG",
            png,
            "holmd GET screenshot",
            "xwd -root | convert xwd:- png:-",
        ),
        (
            "busy_screenshot_jpeg_vs_xwd_convert",
            "busy screen: screenshot 1280x800 JPEG q80",
            as_format(ImageFormat::Jpeg),
            "holmd GET screenshot?format=jpeg",
            "xwd -root | convert xwd:- -quality 80 jpeg:-",
        ),
        (
            "busy_screenshot_webp_vs_xwd_convert",
            "busy screen: screenshot 1280x800 WebP (lossless)",
            as_format(ImageFormat::Webp),
            "holmd GET screenshot?format=webp",
            "xwd -root | convert xwd:- -define webp:lossless=true webp:-",
        ),
    ];
    // Warm-up: the page is drawn, the segment is there, the tools are cached.
    for (.., base) in &sides {
        shot(through, PNG).await?;
        exec.screenshot(&["sh", "-c", base]).await?;
    }
    let mut rows = Vec::new();
    for (id, operation, options, holm, base) in sides {
        let mut pair = Pair::new(id, operation, holm, &format!("docker exec sh -c '{base}'"));
        for i in 0..n {
            let argv = ["sh", "-c", base];
            if holm_first(i) {
                vary(guest, i).await?;
                let h = shot(through, &options).await?;
                pair.push(h, exec.screenshot(&argv).await?);
            } else {
                let b = exec.screenshot(&argv).await?;
                vary(guest, i).await?;
                pair.push(shot(through, &options).await?, b);
            }
        }
        rows.push(pair.row());
    }
    Ok(rows)
}
