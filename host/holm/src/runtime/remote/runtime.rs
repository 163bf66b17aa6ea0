//! [`Remote`]: a [`Vendor`] as a [`Runtime`].

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use holm_proto::Issue;
use holm_proto::guest::{BRIDGE_PORT, DEFAULT_GUEST_PORT};
use holm_proto::host::{Can, Environment, Place};

use super::{
    Addresses, Backoff, Idle, NewSandbox, Recipe, RemoteRuntime, Resources, Sandbox, Vendor,
    VendorError,
};
use crate::image::{ImageRequest, Progress};
use crate::runtime::{
    ImageSource, LABEL_BOX, LifetimeLimits, Machine, MachineSpec, MachineState, Result, Runtime,
    RuntimeError,
};
use crate::spec::{Lifetimes, Resolved};

/// The label listing the ports a box's machine makes reachable, so a
/// machine found again (inspect, a restart's scan) answers the same
/// endpoints.
pub const LABEL_PORTS: &str = "holm.ports";

/// How often a create that failed with a 5xx is tried, after looking for
/// what the failed try may have made.
const CREATE_TRIES: u32 = 3;
/// How often the list is looked in for what a failed create made, with
/// backoff between: a vendor's list may lag a create (Daytona's is
/// eventually consistent), and E2B and Modal would make a second sandbox.
const LIST_LOOKS: u32 = 4;

/// A cloud vendor's account as a runtime.
#[derive(Debug)]
pub struct Remote<V: Vendor> {
    name: String,
    vendor: V,
    /// Each machine's deadline (seconds since the epoch) as last set, for a
    /// resume, which the vendor wants a timeout for.
    deadlines: Mutex<HashMap<String, u64>>,
    /// Images made or found in this process, by recipe.
    images: Mutex<HashMap<String, String>>,
}

impl<V: Vendor> Remote<V> {
    /// The runtime `name` on `vendor`.
    pub fn new(name: &str, vendor: V) -> Self {
        Self {
            name: name.to_owned(),
            vendor,
            deadlines: Mutex::default(),
            images: Mutex::default(),
        }
    }

    /// The vendor adapter.
    pub fn vendor(&self) -> &V {
        &self.vendor
    }

    fn err(&self, e: VendorError) -> RuntimeError {
        if e.is_not_found() {
            RuntimeError::NotFound(e.to_string())
        } else {
            RuntimeError::Vendor { runtime: self.name.clone(), error: e }
        }
    }

    fn resources(&self, memory_bytes: Option<u64>, nano_cpus: Option<u64>) -> Result<Resources> {
        let facts = self.vendor.facts();
        facts.resources.apply(facts.provider, memory_bytes, nano_cpus).map_err(|issues| {
            let why: Vec<String> =
                issues.iter().map(|i| format!("{}: {}", i.path, i.problem)).collect();
            RuntimeError::Unsupported { runtime: self.name.clone(), what: why.join("; ") }
        })
    }

    /// The image for `request` with `resources`, made once per process and
    /// recipe (concurrent callers wait for one build).
    async fn image(
        &self,
        request: &ImageRequest,
        resources: Resources,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let recipe = Recipe::new(request, resources.memory_mib, resources.cpus)?;
        let key = recipe
            .name_for(&[recipe.dockerfile.as_bytes(), crate::image::guest_sha256().as_bytes()]);
        let lock = crate::image::single_flight_lock(&format!("{}:{key}", self.name));
        let _one = lock.lock().await;
        if let Some(image) = self.images.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            progress(Progress::Reused { tag: image.clone() });
            return Ok(image.clone());
        }
        let image = self.vendor.image(&recipe, progress).await.map_err(|e| self.err(e))?;
        self.images.lock().unwrap_or_else(|e| e.into_inner()).insert(key, image.clone());
        Ok(image)
    }

    /// Seconds from now until `deadline`, at least one, within the vendor's
    /// longest lifetime.
    fn secs_until(&self, deadline: SystemTime) -> u64 {
        let secs = deadline.duration_since(SystemTime::now()).unwrap_or_default().as_secs().max(1);
        match self.vendor.facts().hard_max_secs {
            Some(max) => secs.min(max),
            None => secs,
        }
    }

    fn remember(&self, id: &str, secs: u64) {
        let at = now_secs() + secs;
        self.deadlines.lock().unwrap_or_else(|e| e.into_inner()).insert(id.to_owned(), at);
    }

    /// Makes the sandbox, trying again after a 5xx only when a look for it
    /// finds nothing the failed try made: by its name where the vendor's
    /// names are unique (a consistent read), else by its box label in the
    /// list, looked in again over a few seconds because a vendor's list may
    /// lag a create. A second try refused as a duplicate name (409) means
    /// the first made it: it is looked for again, not failed.
    async fn create_sandbox(&self, new: &NewSandbox) -> Result<Sandbox> {
        let backoff = Backoff::default();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let e = match self.vendor.create(new).await {
                Ok(s) => return Ok(s),
                Err(e) if e.status.is_some_and(|s| s >= 500) || e.status.is_none() => e,
                Err(e) if attempt > 1 && e.status == Some(409) => e,
                Err(e) => return Err(self.err(e)),
            };
            match self.settled_sandbox_of(&new.box_id).await {
                Ok(Some(s)) => {
                    tracing::info!(runtime = %self.name, box_id = %new.box_id, "a failed create made the sandbox anyway; using it");
                    return Ok(s);
                }
                Ok(None) if attempt < CREATE_TRIES => {
                    tracing::info!(runtime = %self.name, box_id = %new.box_id, error = %e, "creating the sandbox failed; trying again");
                    tokio::time::sleep(backoff.wait(attempt)).await;
                }
                _ => return Err(self.err(e)),
            }
        }
    }

    /// The sandbox of `box_id` after a failed create: by name, else in the
    /// list, looked in [`LIST_LOOKS`] times with backoff between.
    async fn settled_sandbox_of(
        &self,
        box_id: &str,
    ) -> std::result::Result<Option<Sandbox>, VendorError> {
        if let Some(s) = self.vendor.by_name(box_id).await? {
            return Ok(Some(s));
        }
        let backoff = Backoff { first: std::time::Duration::from_secs(1), ..Backoff::default() };
        for look in 1..=LIST_LOOKS {
            if let Some(s) = self.sandbox_of(box_id).await? {
                return Ok(Some(s));
            }
            if look < LIST_LOOKS {
                tokio::time::sleep(backoff.wait(look)).await;
            }
        }
        Ok(None)
    }

    /// The sandbox of `box_id`, found by its label.
    async fn sandbox_of(&self, box_id: &str) -> std::result::Result<Option<Sandbox>, VendorError> {
        let all = self.vendor.list(&self.name).await?;
        Ok(all.into_iter().find(|s| s.labels.get(LABEL_BOX).map(String::as_str) == Some(box_id)))
    }

    async fn machine(&self, s: Sandbox) -> Result<Machine> {
        let endpoints = if s.state == MachineState::Running {
            let ports = ports_of(&s.labels);
            let mut endpoints = self.vendor.endpoints(&s, &ports).await.map_err(|e| self.err(e))?;
            if self.vendor.addresses() == Addresses::Public {
                for e in endpoints.values_mut() {
                    *e = e.clone().public_only().map_err(|e| {
                        self.err(VendorError::answer(
                            self.vendor.facts().provider,
                            &format!("reach sandbox {}", s.id),
                            e.to_string(),
                        ))
                    })?;
                }
            }
            endpoints
        } else {
            BTreeMap::new()
        };
        Ok(Machine {
            id: s.id,
            box_id: s.labels.get(LABEL_BOX).cloned(),
            state: s.state,
            endpoints,
            labels: s.labels,
        })
    }
}

/// The ports a machine's labels list, or the guest's and the bridge's.
pub fn ports_of(labels: &BTreeMap<String, String>) -> Vec<u16> {
    labels
        .get(LABEL_PORTS)
        .map(|v| v.split(',').filter_map(|p| p.trim().parse().ok()).collect::<Vec<u16>>())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| vec![DEFAULT_GUEST_PORT, BRIDGE_PORT])
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

#[async_trait]
impl<V: Vendor> Runtime for Remote<V> {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        self.vendor.facts().provider
    }

    fn place(&self) -> Place {
        Place::Remote
    }

    fn environment(&self) -> Environment {
        self.vendor.facts().environment
    }

    fn can(&self) -> Can {
        self.vendor.facts().can
    }

    fn lifetimes(&self) -> LifetimeLimits {
        let hard = self.vendor.facts().hard_max_secs;
        let max = hard.unwrap_or(Lifetimes::default().max_secs);
        LifetimeLimits {
            offered: Lifetimes {
                default_secs: Lifetimes::default().default_secs.min(max),
                max_secs: max,
            },
            hard_max_secs: hard,
        }
    }

    fn check(&self, resolved: &Resolved) -> std::result::Result<(), Vec<Issue>> {
        let facts = self.vendor.facts();
        let mut issues = match facts.resources.apply(
            facts.provider,
            resolved.memory_bytes,
            resolved.nano_cpus,
        ) {
            Ok(_) => Vec::new(),
            Err(issues) => issues,
        };
        if resolved.disk_bytes.is_some() {
            issues.push(Issue {
                path: "placement.disk".into(),
                problem: format!(
                    "a box on {} has the vendor's disk; placement.disk is for docker and podman",
                    facts.provider
                ),
            });
        }
        if issues.is_empty() { Ok(()) } else { Err(issues) }
    }

    async fn ping(&self) -> Result<()> {
        self.vendor.ping().await.map_err(|e| RuntimeError::Unavailable {
            runtime: self.name.clone(),
            reason: e.to_string(),
        })
    }

    fn image_source(&self) -> ImageSource {
        ImageSource::Vendor
    }

    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let resources = self.resources(None, None)?;
        self.image(request, resources, progress).await
    }

    async fn prepare_image_for(
        &self,
        request: &ImageRequest,
        resolved: &Resolved,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let resources = self.resources(resolved.memory_bytes, resolved.nano_cpus)?;
        self.vendor.admit(resolved.lifetime_secs).await.map_err(|e| self.err(e))?;
        self.image(request, resources, progress).await
    }

    async fn create(&self, spec: &MachineSpec) -> Result<Machine> {
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_BOX.to_owned(), spec.box_id.clone());
        let ports: Vec<String> = spec.ports.iter().map(u16::to_string).collect();
        labels.insert(LABEL_PORTS.to_owned(), ports.join(","));
        let deadline_secs = match spec.deadline {
            Some(at) => self.secs_until(at),
            None => self.lifetimes().offered.default_secs,
        };
        let new = NewSandbox {
            box_id: spec.box_id.clone(),
            image: spec.image.clone(),
            env: spec.env.clone(),
            labels,
            deadline_secs,
            idle: spec.idle_timeout_secs.map(|idle_secs| Idle {
                idle_secs,
                lifetime_secs: spec.expires_at.map_or(deadline_secs, |at| self.secs_until(at)),
            }),
            resources: self.resources(spec.memory_bytes, spec.nano_cpus)?,
        };
        let sandbox = self.create_sandbox(&new).await?;
        self.remember(&sandbox.id, deadline_secs);
        if let Err(e) = self.vendor.boot(&sandbox, &new).await {
            if let Err(gone) = self.vendor.delete(&sandbox.id).await {
                tracing::warn!(runtime = %self.name, sandbox = %sandbox.id, error = %gone, "cannot delete a sandbox whose guest did not start");
            }
            return Err(self.err(e));
        }
        self.machine(sandbox).await
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        let s = self.vendor.get(id).await.map_err(|e| self.err(e))?;
        self.machine(s).await
    }

    async fn remove(&self, id: &str) -> Result<()> {
        self.deadlines.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        match self.vendor.delete(id).await {
            Ok(()) => Ok(()),
            Err(e) if e.is_not_found() => Ok(()),
            Err(e) => Err(self.err(e)),
        }
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        let all = self.vendor.list(&self.name).await.map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(all.len());
        for s in all {
            match self.machine(s).await {
                Ok(m) => out.push(m),
                Err(RuntimeError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    async fn find(&self, box_id: &str) -> Result<Option<Machine>> {
        match self.sandbox_of(box_id).await.map_err(|e| self.err(e))? {
            Some(s) => Ok(Some(self.machine(s).await?)),
            None => Ok(None),
        }
    }

    async fn guest_ended(&self, id: &str) -> Option<String> {
        match self.vendor.guest_ended(id).await {
            Ok(why) => why,
            Err(e) => {
                tracing::debug!(runtime = %self.name, sandbox = %id, error = %e, "cannot tell whether the guest runs");
                None
            }
        }
    }

    async fn set_deadline(&self, id: &str, deadline: SystemTime) -> Result<()> {
        let secs = self.secs_until(deadline);
        self.vendor.set_deadline(id, secs).await.map_err(|e| self.err(e))?;
        self.remember(id, secs);
        Ok(())
    }

    async fn pause(&self, id: &str) -> Result<()> {
        match self.vendor.pause(id).await {
            // Paused already: what was asked is so.
            Err(e) if e.is_conflict() => Ok(()),
            other => other.map_err(|e| self.err(e)),
        }
    }

    async fn resume(&self, id: &str) -> Result<()> {
        let at = self.deadlines.lock().unwrap_or_else(|e| e.into_inner()).get(id).copied();
        let secs = at.map_or(self.lifetimes().offered.default_secs, |at| {
            at.saturating_sub(now_secs()).max(60)
        });
        self.vendor.resume(id, secs).await.map_err(|e| self.err(e))
    }
}

impl<V: Vendor> RemoteRuntime for Remote<V> {
    fn set_key(&self, key: &str) {
        self.vendor.key().set(key);
        tracing::info!(runtime = %self.name, "the runtime's key was replaced; its boxes use the new one");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::remote::{Key, VResult};

    /// A vendor whose one running sandbox is reached at `url`.
    #[derive(Debug)]
    struct Answers {
        url: &'static str,
        addresses: Addresses,
        key: Key,
    }

    #[async_trait]
    impl Vendor for Answers {
        fn facts(&self) -> &'static super::super::VendorFacts {
            &super::super::E2B
        }
        fn addresses(&self) -> Addresses {
            self.addresses
        }
        fn key(&self) -> &Key {
            &self.key
        }
        async fn ping(&self) -> VResult<()> {
            Ok(())
        }
        async fn image(&self, _: &Recipe, _: &mut (dyn FnMut(Progress) + Send)) -> VResult<String> {
            unreachable!("not asked")
        }
        async fn create(&self, _: &NewSandbox) -> VResult<Sandbox> {
            unreachable!("not asked")
        }
        async fn get(&self, id: &str) -> VResult<Sandbox> {
            let labels = BTreeMap::new();
            Ok(Sandbox { id: id.into(), state: MachineState::Running, labels, ends_at: None })
        }
        async fn list(&self, _: &str) -> VResult<Vec<Sandbox>> {
            Ok(Vec::new())
        }
        async fn set_deadline(&self, _: &str, _: u64) -> VResult<()> {
            Ok(())
        }
        async fn delete(&self, _: &str) -> VResult<()> {
            Ok(())
        }
        async fn endpoints(
            &self,
            _: &Sandbox,
            ports: &[u16],
        ) -> VResult<BTreeMap<u16, crate::runtime::Endpoint>> {
            let e = crate::runtime::Endpoint::new(self.url).unwrap();
            Ok(ports.iter().map(|p| (*p, e.clone())).collect())
        }
    }

    /// An endpoint a vendor answers at a loopback or metadata address is
    /// refused with the reason unless the runtime allows private
    /// addresses; a public one is kept, marked public-only (so every
    /// connection to it is checked).
    #[tokio::test]
    async fn endpoints_a_vendor_answers_pass_the_address_check() {
        let remote =
            |url, addresses| Remote::new("v", Answers { url, addresses, key: Key::new("k") });
        for url in ["http://127.0.0.1:6080", "http://169.254.169.254", "http://[fd00:ec2::254]"] {
            let e = remote(url, Addresses::Public).inspect("sbx").await.unwrap_err().to_string();
            assert!(e.contains("is not a public address"), "{url}: {e}");
            let m = remote(url, Addresses::Any).inspect("sbx").await.unwrap();
            assert!(m.endpoints.values().all(|e| e.addresses() == Addresses::Any), "{url}");
        }
        let m = remote("https://8765-sbx.e2b.app", Addresses::Public).inspect("sbx").await.unwrap();
        assert!(!m.endpoints.is_empty());
        assert!(m.endpoints.values().all(|e| e.addresses() == Addresses::Public));
    }

    #[test]
    fn ports_come_from_the_label_or_default_to_the_guest_and_bridge() {
        let mut labels = BTreeMap::new();
        assert_eq!(ports_of(&labels), [DEFAULT_GUEST_PORT, BRIDGE_PORT]);
        labels.insert(LABEL_PORTS.to_owned(), "8765,9223,6080".to_owned());
        assert_eq!(ports_of(&labels), [8765, 9223, 6080]);
    }
}
