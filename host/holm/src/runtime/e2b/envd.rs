//! The envd call holm makes: starting the guest once per boot
//! (`process.Process/Start`, a Connect server stream of JSON messages),
//! with the sandbox's envd token (`X-Access-Token`), as root
//! (`Authorization: Basic root:`).

use std::time::Duration;

use base64::Engine as _;
use reqwest::RequestBuilder;
use serde_json::{Value, json};

use crate::runtime::remote::{VResult, VendorError, request_id, start_script};

/// The Connect envelope flag of the stream's last message.
const END_STREAM: u8 = 0x02;
/// How many times a start is tried while E2B's proxy says the sandbox or
/// envd's port is not there yet (502).
const START_TRIES: u32 = 20;

/// envd in one sandbox, through E2B's proxy.
#[derive(Debug)]
pub struct Envd<'a> {
    client: &'a reqwest::Client,
    base: String,
    routing: Vec<(&'static str, String)>,
    token: Option<String>,
}

/// One Connect envelope: flags, the length (big-endian) and the message.
pub fn envelope(flags: u8, message: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(message.len() + 5);
    out.push(flags);
    out.extend_from_slice(&u32::try_from(message.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(message);
    out
}

/// Takes the whole envelopes off the front of `buf`.
pub fn take_envelopes(buf: &mut Vec<u8>) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    loop {
        if buf.len() < 5 {
            return out;
        }
        let len = u32::from_be_bytes([buf[1], buf[2], buf[3], buf[4]]) as usize;
        if buf.len() < 5 + len {
            return out;
        }
        let flags = buf[0];
        let message = buf[5..5 + len].to_vec();
        buf.drain(..5 + len);
        out.push((flags, message));
    }
}

impl<'a> Envd<'a> {
    /// envd at `base` (with `routing` headers, as E2B's proxy wants them).
    pub fn new(
        client: &'a reqwest::Client,
        base: &str,
        routing: Vec<(&'static str, String)>,
        token: Option<&str>,
    ) -> Self {
        Self {
            client,
            base: base.trim_end_matches('/').to_owned(),
            routing,
            token: token.map(str::to_owned),
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> RequestBuilder {
        let mut rb = self.client.request(method, format!("{}{path}", self.base));
        for (k, v) in &self.routing {
            rb = rb.header(*k, v);
        }
        if let Some(t) = &self.token {
            rb = rb.header("X-Access-Token", t);
        }
        let user = base64::engine::general_purpose::STANDARD.encode("root:");
        rb.header("Authorization", format!("Basic {user}"))
    }

    fn error(
        what: &str,
        status: Option<u16>,
        message: String,
        request_id: Option<String>,
    ) -> VendorError {
        let e = VendorError::answer("e2b", what, message).with_request_id(request_id);
        match status {
            Some(s) => e.with_status(s),
            None => e,
        }
    }

    /// Starts the guest with `env` and waits until the shell that started
    /// it ends.
    pub async fn start_guest(&self, env: &[(String, String)]) -> VResult<()> {
        const WHAT: &str = "start the guest through envd";
        let envs: serde_json::Map<String, Value> =
            env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
        let body = json!({
            "process": { "cmd": "/bin/sh", "args": ["-c", start_script("")], "envs": envs, "cwd": "/" },
            "stdin": false,
        });
        let message = serde_json::to_vec(&body).unwrap_or_default();
        let mut tries = 0;
        let response = loop {
            tries += 1;
            let sent = self
                .request(reqwest::Method::POST, "/process.Process/Start")
                .header("Content-Type", "application/connect+json")
                .header("Keepalive-Ping-Interval", "50")
                .timeout(Duration::from_secs(60))
                .body(envelope(0, &message))
                .send()
                .await;
            match sent {
                Ok(r) if r.status().is_success() => break r,
                Ok(r) if r.status().as_u16() == 502 && tries < START_TRIES => {}
                Ok(r) => {
                    let status = r.status().as_u16();
                    let id = request_id(&r);
                    let text = r.text().await.unwrap_or_default();
                    return Err(Self::error(
                        WHAT,
                        Some(status),
                        crate::runtime::remote::plain_message(status, text.as_bytes()),
                        id,
                    ));
                }
                Err(e) if e.is_connect() && tries < START_TRIES => {}
                Err(e) => return Err(VendorError::transport("e2b", WHAT, &e)),
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        };
        let id = request_id(&response);
        let mut stream = response;
        let mut buf = Vec::new();
        let mut output = String::new();
        let mut exit: Option<i64> = None;
        while let Some(chunk) =
            stream.chunk().await.map_err(|e| VendorError::transport("e2b", WHAT, &e))?
        {
            buf.extend_from_slice(&chunk);
            for (flags, message) in take_envelopes(&mut buf) {
                let v: Value = serde_json::from_slice(&message).unwrap_or(Value::Null);
                if flags & END_STREAM != 0 {
                    if let Some(err) = v.get("error") {
                        let m = err
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("the stream ended with an error");
                        return Err(Self::error(WHAT, None, m.to_owned(), id));
                    }
                    continue;
                }
                let event = &v["event"];
                for stream in ["stdout", "stderr"] {
                    if let Some(b64) = event["data"][stream].as_str()
                        && let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64)
                    {
                        output.push_str(&String::from_utf8_lossy(&bytes));
                    }
                }
                if event.get("end").is_some() {
                    // proto3 JSON leaves a zero exit code out.
                    exit = Some(event["end"]["exitCode"].as_i64().unwrap_or(0));
                }
            }
        }
        match exit {
            Some(0) => Ok(()),
            Some(code) => {
                Err(Self::error(WHAT, None, format!("exit code {code}: {}", output.trim()), id))
            }
            None => Err(Self::error(
                WHAT,
                None,
                "envd's stream ended without the process's end".into(),
                id,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_round_trip_and_wait_for_their_whole_message() {
        let mut buf = envelope(0, br#"{"a":1}"#);
        buf.extend(envelope(END_STREAM, b"{}"));
        let tail = buf.split_off(buf.len() - 3);
        let got = take_envelopes(&mut buf);
        assert_eq!(got, [(0, br#"{"a":1}"#.to_vec())]);
        buf.extend(tail);
        assert_eq!(take_envelopes(&mut buf), [(END_STREAM, b"{}".to_vec())]);
        assert!(buf.is_empty());
    }
}
