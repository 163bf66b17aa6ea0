//! Leases as the deadline. A Runtime Cloud lease ends at most an hour
//! ahead (`timeoutSeconds` at most 3600; `:extend` adds to it), and the
//! sandbox stops when it ends, with or without a server. A box whose
//! deadline is further away has its lease renewed by this process: each
//! minute, a lease ending within [`RENEW_WITHIN_SECS`] is moved toward the
//! box's deadline, at most an hour ahead. With no server up, nothing
//! renews, and the vendor stops the sandbox at most an hour after the last
//! renewal — never later than the box's deadline.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::Method;
use serde::Deserialize;
use serde_json::json;

use super::{MAX_LEASE_SECS, epoch_of, idempotency_key};
use crate::runtime::remote::{Rest, Retry, VResult};

/// A lease ending sooner than this is renewed.
const RENEW_WITHIN_SECS: u64 = 20 * 60;
/// How often leases are looked at.
const EVERY: Duration = Duration::from_secs(60);

/// Seconds since the epoch.
pub(super) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

/// Each sandbox's deadline (seconds since the epoch), and the task that
/// renews their leases.
#[derive(Debug, Default)]
pub(super) struct Leases {
    deadlines: Mutex<HashMap<String, u64>>,
    task: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Drop for Leases {
    fn drop(&mut self) {
        if let Some(t) = self.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            t.abort();
        }
    }
}

impl Leases {
    /// Sets a sandbox's deadline.
    pub fn set(&self, id: &str, at: u64) {
        self.deadlines.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned(), at);
    }

    /// Makes a sandbox's deadline at least `at` (a box found again: its
    /// lifetime's end from its label).
    pub fn at_least(&self, id: &str, at: u64) {
        let mut all = self.deadlines.lock().unwrap_or_else(|e| e.into_inner());
        let d = all.entry(id.to_owned()).or_insert(at);
        *d = (*d).max(at);
    }

    /// Stops renewing a sandbox's lease.
    pub fn forget(&self, id: &str) {
        self.deadlines.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    /// Starts the renewing task, once, on this Tokio runtime.
    pub fn start(self: &Arc<Self>, rest: &Rest) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        if task.as_ref().is_some_and(|t| !t.is_finished()) {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let weak = Arc::downgrade(self);
        let rest = rest.clone();
        *task = Some(handle.spawn(renew_forever(weak, rest)));
    }
}

async fn renew_forever(leases: Weak<Leases>, rest: Rest) {
    loop {
        tokio::time::sleep(EVERY).await;
        let Some(leases) = leases.upgrade() else { return };
        let now = now();
        let due: Vec<(String, u64)> = leases
            .deadlines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, at)| **at > now)
            .map(|(id, at)| (id.clone(), *at))
            .collect();
        drop(leases);
        for (id, at) in due {
            if let Err(e) = renew_if_due(&rest, &id, at - now).await {
                tracing::warn!(vendor = "runtime-cloud", sandbox = %id, error = %e, "cannot renew a sandbox's lease; trying again in a minute");
            }
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Lease {
    state: String,
    expires_at: Option<String>,
}

async fn lease(rest: &Rest, id: &str) -> VResult<Lease> {
    rest.json("read a sandbox", Retry::Idempotent, |r| {
        r.request(Method::GET, &format!("/v1/sandboxes/{id}"))
    })
    .await
}

/// Renews a running sandbox's lease if it ends within
/// [`RENEW_WITHIN_SECS`] and the deadline is later.
async fn renew_if_due(rest: &Rest, id: &str, secs: u64) -> VResult<()> {
    let l = lease(rest, id).await?;
    let ends = l.expires_at.as_deref().and_then(epoch_of).unwrap_or(0);
    if l.state != "running" || ends > now() + RENEW_WITHIN_SECS {
        return Ok(());
    }
    extend(rest, id, ends, secs).await
}

/// Moves a sandbox's lease so it ends `secs` from now, or an hour from now
/// when that is sooner. `:extend` only adds, so a lease already ending
/// later is left as it is.
pub(super) async fn renew(rest: &Rest, id: &str, secs: u64) -> VResult<()> {
    let l = lease(rest, id).await?;
    let ends = l.expires_at.as_deref().and_then(epoch_of).unwrap_or_else(now);
    extend(rest, id, ends, secs).await
}

async fn extend(rest: &Rest, id: &str, ends: u64, secs: u64) -> VResult<()> {
    let want = now() + secs.min(MAX_LEASE_SECS);
    if want <= ends {
        return Ok(());
    }
    let more = (want - ends).min(MAX_LEASE_SECS);
    let key = idempotency_key();
    rest.send("extend a sandbox's lease", Retry::Idempotent, |r| {
        r.request(Method::POST, &format!("/v1/sandboxes/{id}:extend"))
            .header("idempotency-key", &key)
            .json(&json!({ "seconds": more }))
    })
    .await
    .map(drop)
}
