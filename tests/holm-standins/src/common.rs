//! What every stand-in shares: time, injected failures, accepted keys, the
//! calls made, and ids.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// The vendor's clock: real time plus an offset a test moves, so vendor
/// deadlines can pass without waiting.
#[derive(Debug, Clone, Default)]
pub struct Clock(Arc<AtomicU64>);

impl Clock {
    /// Seconds since the epoch, as the vendor sees them.
    pub fn now(&self) -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
            + self.0.load(Ordering::SeqCst)
    }

    /// Moves the vendor's time `secs` forward.
    pub fn advance(&self, secs: u64) {
        self.0.fetch_add(secs, Ordering::SeqCst);
    }

    /// RFC 3339 of `secs`.
    pub fn rfc3339(secs: u64) -> String {
        humantime::format_rfc3339_seconds(UNIX_EPOCH + std::time::Duration::from_secs(secs))
            .to_string()
    }
}

/// A failure to answer instead of handling a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The method it applies to (`None`: any).
    pub method: Option<String>,
    /// The start of the paths it applies to.
    pub path_prefix: String,
    /// The status to answer.
    pub status: u16,
    /// `Retry-After`, in seconds.
    pub retry_after: Option<u64>,
    /// How many matching requests get it.
    pub times: u32,
    /// Whether the request is handled first (its work done) and the status
    /// answered instead of its result, as a gateway that timed out answers.
    pub after_handling: bool,
}

impl Fault {
    /// `status` for the next `times` requests to paths starting with
    /// `prefix`, with any method.
    pub fn new(prefix: &str, status: u16, times: u32) -> Self {
        Self {
            method: None,
            path_prefix: prefix.to_owned(),
            status,
            retry_after: None,
            times,
            after_handling: false,
        }
    }

    /// Only for `method`.
    #[must_use]
    pub fn method(mut self, method: &str) -> Self {
        self.method = Some(method.to_owned());
        self
    }

    /// After the request was handled (where a stand-in supports it:
    /// Daytona's, E2B's and Vercel's).
    #[must_use]
    pub fn after_handling(mut self) -> Self {
        self.after_handling = true;
        self
    }

    /// With `Retry-After: secs`.
    #[must_use]
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs);
        self
    }
}

/// Failures waiting for their requests.
#[derive(Debug, Clone, Default)]
pub struct Faults(Arc<Mutex<Vec<Fault>>>);

impl Faults {
    /// Adds a failure.
    pub fn inject(&self, fault: Fault) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(fault);
    }

    /// The failure answered instead of handling this request, if one
    /// waits for it.
    pub fn take(&self, method: &str, path: &str) -> Option<Fault> {
        self.take_when(method, path, false)
    }

    /// The failure answered after this request was handled
    /// ([`Fault::after_handling`]), if one waits for it.
    pub fn take_after(&self, method: &str, path: &str) -> Option<Fault> {
        self.take_when(method, path, true)
    }

    fn take_when(&self, method: &str, path: &str, after: bool) -> Option<Fault> {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let i = all.iter().position(|f| {
            f.times > 0
                && f.after_handling == after
                && path.starts_with(&f.path_prefix)
                && f.method.as_deref().is_none_or(|m| m.eq_ignore_ascii_case(method))
        })?;
        all[i].times -= 1;
        let f = all[i].clone();
        all.retain(|f| f.times > 0);
        Some(f)
    }
}

/// A request the stand-in answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Call {
    /// Its method.
    pub method: String,
    /// Its path (without the query).
    pub path: String,
    /// The status answered.
    pub status: u16,
    /// What it carried that the contract fixes, where the stand-in's gate
    /// records it (E2B's, Daytona's, Runtime Cloud's and Vercel's APIs, and
    /// Modal's gRPC services).
    pub trace: Option<crate::trace::Trace>,
}

/// The calls a stand-in answered, in order.
#[derive(Debug, Clone, Default)]
pub struct Calls(Arc<Mutex<Vec<Call>>>);

impl Calls {
    /// Records a call.
    pub fn push(&self, call: Call) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(call);
    }

    /// Every call so far.
    pub fn all(&self) -> Vec<Call> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The calls with `method` to a path starting with `prefix`.
    pub fn to(&self, method: &str, prefix: &str) -> Vec<Call> {
        self.all()
            .into_iter()
            .filter(|c| c.method == method && c.path.starts_with(prefix))
            .collect()
    }
}

/// The replacement `routes` name for the route of `call`: each entry is a
/// method, a route (`{}` for any one segment) and what replaces it.
pub(crate) fn replaced(
    routes: &'static [(&'static str, &'static str, &'static str)],
    call: &Call,
) -> Option<&'static str> {
    let segments: Vec<&str> = call.path.split('/').collect();
    routes.iter().find_map(|(method, route, instead)| {
        let pattern: Vec<&str> = route.split('/').collect();
        let same = *method == call.method
            && pattern.len() == segments.len()
            && pattern.iter().zip(&segments).all(|(p, s)| *p == "{}" || p == s);
        same.then_some(*instead)
    })
}

/// The API keys a vendor accepts now.
#[derive(Debug, Clone, Default)]
pub struct Keys(Arc<Mutex<BTreeSet<String>>>);

impl Keys {
    /// Accepts `key`.
    pub fn add(&self, key: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(key.to_owned());
    }

    /// Stops accepting `key`.
    pub fn revoke(&self, key: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(key);
    }

    /// Whether `key` is accepted.
    pub fn accepts(&self, key: &str) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).contains(key)
    }
}

/// What a test controls of a stand-in: the key it was started with, the
/// keys it accepts, its clock, failures to inject, and the calls it
/// answered. A stand-in dereferences to it.
#[derive(Debug, Clone)]
pub struct Controls {
    /// A key the stand-in accepts, made at its start.
    pub key: String,
    /// The keys it accepts: add and revoke some.
    pub keys: Keys,
    /// Its time: move it to pass deadlines.
    pub clock: Clock,
    /// Failures to answer instead of handling requests.
    pub faults: Faults,
    /// The API calls it answered.
    pub calls: Calls,
    /// How long a new sandbox stays out of the list, in milliseconds (an
    /// eventually consistent list; where a stand-in supports it:
    /// Daytona's, E2B's `/v2/sandboxes` and Vercel's). 0: listed at once.
    pub list_lag_ms: Arc<AtomicU64>,
}

impl Controls {
    /// New controls, with one key: `prefix` and 32 hex digits (the form the
    /// vendor's keys have).
    pub fn new(prefix: &str) -> Self {
        let key = format!("{prefix}{}", token());
        let keys = Keys::default();
        keys.add(&key);
        Self {
            key,
            keys,
            clock: Clock::default(),
            faults: Faults::default(),
            calls: Calls::default(),
            list_lag_ms: Arc::default(),
        }
    }
}

/// `n` random bytes from the kernel.
fn random_bytes(n: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the kernel's random source is readable");
    bytes
}

/// A random id of `n` lowercase letters and digits.
pub fn random_id(n: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    random_bytes(n).iter().map(|b| CHARS[usize::from(*b) % CHARS.len()] as char).collect()
}

/// A random token of 32 hex digits.
pub fn token() -> String {
    random_bytes(16).iter().map(|b| format!("{b:02x}")).collect()
}

/// A request id as a CDN in front of a vendor adds it (`cf-ray`).
pub fn ray() -> String {
    format!("{}-LHR", &token()[..16])
}

/// A stand-in's background work (its API, proxies, reaper, per-sandbox
/// tasks), stopped all at once when the stand-in is dropped.
#[derive(Debug, Default)]
pub(crate) struct Tasks(Mutex<Vec<tokio::task::JoinHandle<()>>>);

impl Tasks {
    /// Keeps `tasks` to stop with the rest.
    pub fn add(&self, tasks: impl IntoIterator<Item = tokio::task::JoinHandle<()>>) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend(tasks);
    }

    /// Stops every task.
    pub fn abort_all(&self) {
        for t in self.0.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            t.abort();
        }
    }
}

/// A loopback listener for a stand-in's API, and its `http://` origin.
pub(crate) async fn listen() -> (tokio::net::TcpListener, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the API");
    let origin = format!("http://{}", listener.local_addr().expect("the API's address"));
    (listener, origin)
}

/// Serves an axum app on `listener` until the task is stopped.
pub(crate) fn serve(
    listener: tokio::net::TcpListener,
    app: axum::Router,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    })
}

/// What every stand-in's state and handle repeat. The state (with fields
/// `controls`, `engine`, `tasks: Tasks` and `inner: Mutex<$inner>`) reads
/// as its [`Controls`] and locks its `inner`; the handle (with `controls`
/// and `state: Arc<$state>`) reads as its [`Controls`] and, once dropped,
/// stops the tasks and removes the sandboxes' containers.
macro_rules! standin_parts {
    ($handle:ty, $state:ty, $inner:ty) => {
        impl std::ops::Deref for $state {
            type Target = $crate::common::Controls;

            fn deref(&self) -> &$crate::common::Controls {
                &self.controls
            }
        }

        impl $state {
            pub fn lock(&self) -> std::sync::MutexGuard<'_, $inner> {
                self.inner.lock().unwrap_or_else(|e| e.into_inner())
            }
        }

        impl std::ops::Deref for $handle {
            type Target = $crate::common::Controls;

            fn deref(&self) -> &$crate::common::Controls {
                &self.controls
            }
        }

        impl Drop for $handle {
            fn drop(&mut self) {
                self.state.tasks.abort_all();
                self.state.engine.remove_all_blocking();
            }
        }
    };
}
pub(crate) use standin_parts;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_match_their_requests_and_run_out() {
        let f = Faults::default();
        f.inject(Fault::new("/sandboxes", 429, 2).method("POST").retry_after(1));
        assert_eq!(f.take("GET", "/sandboxes"), None);
        assert_eq!(f.take("POST", "/sandboxes").unwrap().retry_after, Some(1));
        assert!(f.take("post", "/sandboxes/x").is_some());
        assert_eq!(f.take("POST", "/sandboxes"), None);
    }

    #[test]
    fn the_clock_moves_on_request() {
        let c = Clock::default();
        let before = c.now();
        c.advance(3600);
        assert!(c.now() >= before + 3600);
    }
}
