//! A real Chromium on the host (headless), driven over the DevTools
//! protocol (CDP) on a WebSocket: the viewer page opened as a person's
//! browser opens it, and the moment its first frame is drawn read from the
//! page.

use std::time::Duration;

use anyhow::{Context, bail};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The host's Chromium (overridden by `CHROMIUM`, as the e2e tests do).
pub fn path() -> std::path::PathBuf {
    std::env::var_os("CHROMIUM").map_or_else(|| "/usr/bin/chromium".into(), Into::into)
}

/// The page hears its first frame (`holm-first-frame`, dispatched by the
/// viewer's live.js) in its own clock: ms since navigation began.
const HEAR_FIRST_FRAME: &str = "window.addEventListener('holm-first-frame', \
     () => { window.__holmFirstFrame = performance.now(); }, { once: true });";

/// The page's stages, as `[name, ms]` pairs (see [`Chromium::stages`]).
const STAGES: &str = r"(() => {
  const out = [];
  const nav = performance.getEntriesByType('navigation')[0];
  if (nav) out.push(['page answered', nav.responseEnd]);
  const res = performance.getEntriesByType('resource');
  const js = res.filter((e) => e.name.endsWith('.js') || e.name.endsWith('.css'));
  if (js.length) {
    out.push(['scripts and style loaded', Math.max(...js.map((e) => e.responseEnd))]);
    out.push(['files loaded (count)', js.length]);
    out.push(['files fetched, not cached (count)', js.filter((e) => e.transferSize > 0).length]);
  }
  const s = res.find((e) => e.name.endsWith('/session'));
  if (s) { out.push(['session asked', s.startTime]); out.push(['session answered', s.responseEnd]); }
  for (const m of ['holm-rfb-open', 'holm-rfb-connected']) {
    const e = performance.getEntriesByName(m)[0];
    if (e) out.push([m, e.startTime]);
  }
  return out;
})()";

/// One headless Chromium and one page in it.
pub struct Chromium {
    child: tokio::process::Child,
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    session: String,
    next: u64,
    _profile: tempfile::TempDir,
}

impl Chromium {
    /// Launches Chromium headless with a profile of its own and opens a page.
    pub async fn launch() -> anyhow::Result<Self> {
        let profile = tempfile::tempdir().context("a profile directory for Chromium")?;
        let mut child = tokio::process::Command::new(path())
            .args(["--headless=new", "--no-sandbox", "--remote-debugging-port=0"])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .args(["--no-first-run", "--window-size=1400,950", "about:blank"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("start {}", path().display()))?;
        let stderr = child.stderr.take().context("Chromium's stderr")?;
        let mut lines = BufReader::new(stderr).lines();
        let find = async {
            while let Some(line) = lines.next_line().await? {
                if let Some(url) = line.split("DevTools listening on ").nth(1) {
                    return anyhow::Ok(url.trim().to_owned());
                }
            }
            bail!("Chromium ended before it listened for DevTools")
        };
        let url = tokio::time::timeout(Duration::from_secs(30), find)
            .await
            .context("Chromium did not offer DevTools in 30 s")??;
        // Keep reading its stderr so it never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_tungstenite::connect_async(url.as_str())
            .await
            .context("connect to Chromium's DevTools")?;
        let mut c = Self { child, ws, session: String::new(), next: 0, _profile: profile };
        let target = c.call("Target.createTarget", json!({"url": "about:blank"})).await?;
        let target = target["targetId"].as_str().context("no target id")?.to_owned();
        let attached =
            c.call("Target.attachToTarget", json!({"targetId": target, "flatten": true})).await?;
        c.session = attached["sessionId"].as_str().context("no session id")?.to_owned();
        c.call("Page.enable", json!({})).await?;
        c.call("Page.addScriptToEvaluateOnNewDocument", json!({"source": HEAR_FIRST_FRAME}))
            .await?;
        Ok(c)
    }

    /// Calls `method` (on the page once attached) and answers its result.
    async fn call(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).await.context("write to DevTools")?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let m = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .with_context(|| format!("DevTools did not answer {method} in 20 s"))?
                .context("DevTools closed")??;
            let Message::Text(text) = m else { continue };
            let v: Value = serde_json::from_str(&text)?;
            if v["id"].as_u64() != Some(id) {
                continue; // an event
            }
            if let Some(e) = v.get("error") {
                bail!("DevTools {method}: {e}");
            }
            return Ok(v["result"].clone());
        }
    }

    /// Opens `url` and waits (up to 30 s) for the page's first frame; answers
    /// its time in ms since navigation began, in the page's clock.
    pub async fn first_frame(&mut self, url: &str) -> anyhow::Result<f64> {
        self.call("Page.navigate", json!({"url": "about:blank"})).await?;
        let nav = self.call("Page.navigate", json!({"url": url})).await?;
        if let Some(e) = nav.get("errorText") {
            bail!("Chromium could not open the viewer page: {e}");
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self
                .call(
                    "Runtime.evaluate",
                    json!({"expression": "window.__holmFirstFrame ?? null", "returnByValue": true}),
                )
                .await?;
            if let Some(ms) = r["result"]["value"].as_f64() {
                return Ok(ms);
            }
            if Instant::now() > deadline {
                bail!("the viewer page in Chromium drew no frame in 30 s");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Where the last [`Chromium::first_frame`]'s time went, from the page's
    /// own clock (ms since navigation began): the page's answer, its
    /// scripts (how many were fetched, not taken from the cache), the
    /// session call, and the marks live.js sets when it opens the stream
    /// and when the stream is connected (ServerInit read).
    pub async fn stages(&mut self) -> anyhow::Result<Vec<(String, f64)>> {
        let r = self
            .call("Runtime.evaluate", json!({"expression": STAGES, "returnByValue": true}))
            .await?;
        let v = &r["result"]["value"];
        let Some(o) = v.as_array() else { return Ok(Vec::new()) };
        Ok(o.iter().filter_map(|p| Some((p[0].as_str()?.to_owned(), p[1].as_f64()?))).collect())
    }

    /// Closes the browser.
    pub async fn close(mut self) {
        self.session.clear();
        let _ = self.call("Browser.close", json!({})).await;
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.kill().await;
    }
}
