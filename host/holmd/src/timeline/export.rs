//! A timeline written out: one self-contained HTML page (screenshots inline
//! as data URIs, no script or style from elsewhere) that plays the steps
//! back with their own timing, and JSONL, one line per step, each naming
//! its screenshot's file (`screenshots/<id>.png`) for a dataset.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::SystemTime;

use base64::Engine as _;
use holm_proto::timeline::{DatasetLine, Step};

fn time(s: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(s).ok()
}

/// Seconds from the first step to each step.
fn offsets(steps: &[Step]) -> Vec<f64> {
    let first = steps.first().and_then(|s| time(&s.at));
    steps
        .iter()
        .map(|s| match (first, time(&s.at)) {
            (Some(f), Some(t)) => t.duration_since(f).unwrap_or_default().as_secs_f64(),
            _ => 0.0,
        })
        .collect()
}

/// The JSONL export: one line per step; a screenshot is named when it is
/// kept.
pub fn jsonl(steps: &[Step]) -> String {
    let mut out = String::new();
    for (index, (s, t)) in steps.iter().zip(offsets(steps)).enumerate() {
        let line = DatasetLine {
            index,
            at: s.at.clone(),
            t: (t * 1000.0).round() / 1000.0,
            action: s.action.clone(),
            status: s.status,
            request_id: s.request_id.clone(),
            screenshot: s
                .screenshot
                .as_ref()
                .filter(|sh| sh.kept)
                .map(|sh| format!("screenshots/{}", sh.file)),
            recording: s.recording.clone(),
        };
        out.push_str(&serde_json::to_string(&line).unwrap_or_default());
        out.push('\n');
    }
    out
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:0;background:#f4f4f5;color:#18181b}\
header{position:sticky;top:0;background:#18181b;color:#fafafa;padding:8px 16px;display:flex;gap:12px;align-items:center;z-index:1}\
header button{font:inherit;padding:4px 12px}\
main{padding:12px 16px}\
.step{background:#fff;border:1px solid #d4d4d8;border-radius:6px;margin:8px 0;padding:8px 12px}\
.step.now{outline:3px solid #2563eb}\
.head{display:flex;gap:12px;flex-wrap:wrap;align-items:baseline}\
.kind{font-weight:600}.meta{color:#52525b;font-size:12px}\
.err{color:#b91c1c}\
pre{white-space:pre-wrap;word-break:break-all;background:#fafafa;margin:6px 0;padding:6px;font-size:12px}\
img{max-width:100%;border:1px solid #a1a1aa;display:block;margin-top:6px}";

const SCRIPT: &str = "(function(){\
var steps=[].slice.call(document.querySelectorAll('.step'));var i=-1,timer=null;\
var info=document.getElementById('now');\
function show(n){steps.forEach(function(s){s.classList.remove('now')});\
if(n<0||n>=steps.length){return}i=n;steps[n].classList.add('now');\
steps[n].scrollIntoView({block:'center'});info.textContent='step '+(n+1)+' of '+steps.length}\
function next(){if(i+1>=steps.length){stop();return}show(i+1);\
var gap=i+1<steps.length?(parseFloat(steps[i+1].dataset.t)-parseFloat(steps[i].dataset.t)):0;\
timer=setTimeout(next,Math.min(Math.max(gap*1000,300),3000))}\
function stop(){clearTimeout(timer);timer=null}\
document.getElementById('play').onclick=function(){stop();if(i+1>=steps.length){i=-1}next()};\
document.getElementById('pause').onclick=stop;\
document.getElementById('prev').onclick=function(){stop();show(Math.max(i-1,0))};\
document.getElementById('next').onclick=function(){stop();show(Math.min(i+1,steps.length-1))};\
})();";

/// The HTML export: one page, each step with its time, seconds since the
/// first step, its place in a recording, its action, status and request
/// id, and the screenshot after it inline; buttons play the steps back
/// with their own timing (gaps held between 0.3 and 3 seconds).
pub fn html(box_id: &str, steps: &[Step], images: &HashMap<String, Vec<u8>>) -> String {
    let title = format!("holm timeline of {}", escape(box_id));
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\
         <style>{STYLE}</style></head><body><header><strong>{title}</strong>\
         <span>{} steps</span><button id=\"play\">Play</button><button id=\"pause\">Pause</button>\
         <button id=\"prev\">Back</button><button id=\"next\">Next</button><span id=\"now\"></span>\
         </header><main>",
        steps.len()
    );
    for (n, (s, t)) in steps.iter().zip(offsets(steps)).enumerate() {
        step_html(&mut out, n, s, t, images);
    }
    let _ = write!(out, "</main><script>{SCRIPT}</script></body></html>");
    out
}

fn step_html(out: &mut String, n: usize, s: &Step, t: f64, images: &HashMap<String, Vec<u8>>) {
    let recording = s.recording.as_ref().map_or(String::new(), |r| {
        format!(" · recording of screen {} at {:.3} s", r.screen, r.seconds)
    });
    let status = if s.status >= 400 {
        format!(
            "<span class=\"err\">{} {}</span>",
            s.status,
            escape(s.code.as_deref().unwrap_or(""))
        )
    } else {
        s.status.to_string()
    };
    let _ = write!(
        out,
        "<section class=\"step\" id=\"step-{n}\" data-t=\"{t:.3}\"><div class=\"head\">\
         <span class=\"kind\">{}. {} {}</span><span class=\"meta\">{} · +{t:.3} s{recording}</span>\
         <span class=\"meta\">status {status} · {} ms · request {}</span></div>",
        n + 1,
        escape(s.action.kind.as_str()),
        escape(&s.action.name),
        escape(&s.at),
        s.duration_ms,
        escape(if s.request_id.is_empty() { "(seen by the box)" } else { &s.request_id }),
    );
    if !s.action.params.is_empty() {
        let params = serde_json::to_string_pretty(&s.action.params).unwrap_or_default();
        let _ = write!(out, "<pre>{}</pre>", escape(&params));
    }
    if let Some(shot) = &s.screenshot {
        match images.get(&shot.id) {
            Some(bytes) => {
                let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                let _ = write!(
                    out,
                    "<div class=\"meta\">screenshot after it, taken {} (request {})</div>\
                     <img alt=\"screenshot after step {}\" src=\"data:{};base64,{data}\">",
                    escape(&shot.at),
                    escape(&shot.request_id),
                    n + 1,
                    escape(&shot.media_type),
                );
            }
            None => {
                let _ = write!(
                    out,
                    "<div class=\"meta\">a screenshot was taken after it ({}); it is no longer kept</div>",
                    escape(&shot.at)
                );
            }
        }
    }
    out.push_str("</section>");
}
