//! The machinery every cloud vendor shares: a vendor adapter implements
//! [`Vendor`] (its own calls, a few hundred lines), and [`Remote`] makes it
//! a [`Runtime`](super::Runtime) with everything vendors have in common:
//!
//! - **images**: one vendor image per box specification, built once and
//!   found again by a name made of its content ([`Recipe`]); concurrent
//!   boxes with one specification wait for one build;
//! - **the vendor-side deadline**: every sandbox is made with the box's
//!   deadline set at the vendor, so the vendor ends it even when no server
//!   is up, and [`Remote::set_deadline`](super::Runtime::set_deadline)
//!   moves it (extensions, and idle timeouts moved by commands);
//! - **labels as vendor metadata**, so a restarted server finds its boxes by
//!   listing the vendor (by the `holm.runtime` label);
//! - **limits before anything starts**: the vendor's rules for memory and
//!   CPUs ([`ResourceRules`]), its screens and what it `can`, and its
//!   longest lifetime;
//! - **errors** made [`VendorError`]s (status, the vendor's code and
//!   message, its request id; never the key), and **retries** with backoff
//!   on 429 and 5xx honouring `Retry-After` ([`Rest`]); a create that
//!   failed with a 5xx is looked for by its box label before it is made
//!   again, so a retry never makes two sandboxes;
//! - **the key** ([`Key`]), replaced in place when the runtime's key
//!   changes, so running boxes go on with the new one.
//!
//! A vendor's [`Vendor::endpoints`] say how each port of a sandbox is
//! reached: the vendor's proxy URL, the headers it wants (E2B's traffic
//! token, Daytona's preview token) and how WebSockets pass. Nothing in
//! holmd knows a vendor. [`connect`] makes the runtime of a vendor account
//! by its provider name, where this build has the vendor's cargo feature.

mod error;
mod limits;
mod recipe;
mod rest;
mod runtime;
pub mod vendors;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use holm_proto::host::{Can, Environment};

pub use self::error::{Detail, Retry, VendorError};
pub use self::limits::{ResourceRules, Resources};
pub use self::recipe::{
    GUEST_LOG, GUEST_PATH, Instruction, Recipe, VENDOR_BASE, env_pairs, instructions, start_script,
};
pub use self::rest::{
    Auth, Backoff, ErrorBody, Key, Rest, parse_retry_after, plain_message, request_id,
};
pub use self::runtime::{Remote, ports_of};
use super::{Endpoint, MachineState, Runtime};
use crate::image::Progress;
pub use holm_client::address::Addresses;

/// What holm knows of a vendor without asking it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorFacts {
    /// The provider name, such as `e2b`.
    pub provider: &'static str,
    /// What isolates its sandboxes.
    pub environment: Environment,
    /// What its boxes can do (the runtimes guide's lifecycle table).
    pub can: Can,
    /// The longest a sandbox can live at the vendor, where it ends them.
    pub hard_max_secs: Option<u64>,
    /// Its rules for memory and CPUs.
    pub resources: ResourceRules,
}

const fn can(pause: bool) -> Can {
    Can {
        pause,
        stop: false,
        fork: false,
        browser_profile: false,
        screens: 6,
        wayland: false,
        resources: true,
    }
}

/// E2B: Firecracker microVMs. Memory and CPUs belong to the template; a
/// sandbox lives at most 24 hours (Pro; Hobby teams get one hour, which
/// E2B itself refuses above).
pub const E2B: VendorFacts = VendorFacts {
    provider: "e2b",
    environment: Environment::Microvm,
    can: can(true),
    hard_max_secs: Some(24 * 3600),
    resources: ResourceRules {
        cpus_min: 1,
        cpus_max: 32,
        cpus_one_or_even: true,
        memory_min_mib: 256,
        memory_max_mib: None,
        memory_step_mib: 2,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: None,
    },
};

/// Daytona: containers. Memory in whole GiB; no pause or stop that holm
/// uses (a stop keeps files only, and holm deletes a stopped sandbox).
pub const DAYTONA: VendorFacts = VendorFacts {
    provider: "daytona",
    environment: Environment::Container,
    can: can(false),
    hard_max_secs: None,
    resources: ResourceRules {
        cpus_min: 1,
        cpus_max: 16,
        cpus_one_or_even: false,
        memory_min_mib: 1024,
        memory_max_mib: Some(64 * 1024),
        memory_step_mib: 1024,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: None,
    },
};

/// Modal: gVisor containers. 2 CPUs and 4 GB unless a box asks; a sandbox
/// lives at most 24 hours, Modal's limit.
pub const MODAL: VendorFacts = VendorFacts {
    provider: "modal",
    environment: Environment::Container,
    can: can(false),
    hard_max_secs: Some(24 * 3600),
    resources: ResourceRules {
        cpus_min: 1,
        cpus_max: 64,
        cpus_one_or_even: false,
        memory_min_mib: 512,
        memory_max_mib: Some(336 * 1024),
        memory_step_mib: 1,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: None,
    },
};

/// Runtime Cloud: Firecracker microVMs. A lease ends at most an hour
/// ahead and is renewed toward the deadline ([`Vendor::set_deadline`]), so
/// no limit on the lifetime but holm's own; pause keeps memory. Sizes are
/// the API's defaults and ranges holm chose where its documentation is
/// silent (docs/design/vendors.md): whole vCPUs 1 to 16, memory in MiB from 1 GiB.
pub const RUNTIME_CLOUD: VendorFacts = VendorFacts {
    provider: "runtime-cloud",
    environment: Environment::Microvm,
    can: can(true),
    hard_max_secs: None,
    resources: ResourceRules {
        cpus_min: 1,
        cpus_max: 16,
        cpus_one_or_even: false,
        memory_min_mib: 1024,
        memory_max_mib: Some(64 * 1024),
        memory_step_mib: 1,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: None,
    },
};

/// Vercel Sandbox: Firecracker microVMs. Memory is 2048 MB per vCPU, and
/// vCPUs are 1 or an even number up to 8 (the Pro plan's; Hobby's 4 and
/// Enterprise's 32 are Vercel's to refuse or allow); a sandbox lives at
/// most 24 hours (Pro and Enterprise; Hobby's 45 minutes Vercel refuses
/// above); at most 6 screens, as a sandbox publishes at most 14 ports.
pub const VERCEL: VendorFacts = VendorFacts {
    provider: "vercel",
    environment: Environment::Microvm,
    can: can(false),
    hard_max_secs: Some(24 * 3600),
    resources: ResourceRules {
        cpus_min: 1,
        cpus_max: 8,
        cpus_one_or_even: true,
        memory_min_mib: 2048,
        memory_max_mib: Some(16 * 1024),
        memory_step_mib: 2048,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: Some(2048),
    },
};

/// A vendor's sandbox, as its adapter reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sandbox {
    /// The vendor's id.
    pub id: String,
    /// Its state, in holm's terms.
    pub state: MachineState,
    /// Its metadata: holm's labels.
    pub labels: BTreeMap<String, String>,
    /// When the vendor ends it, in seconds since the epoch, if it says.
    pub ends_at: Option<u64>,
}

/// What [`Vendor::create`] makes.
#[derive(Clone)]
pub struct NewSandbox {
    /// The box it is.
    pub box_id: String,
    /// The image reference [`Vendor::image`] answered.
    pub image: String,
    /// The guest's environment. Holds the box secret: never log it.
    pub env: Vec<(String, String)>,
    /// Labels to keep as the vendor's metadata (never secrets).
    pub labels: BTreeMap<String, String>,
    /// Seconds from now until the vendor ends the sandbox.
    pub deadline_secs: u64,
    /// The box's idle timeout and the seconds until its lifetime ends,
    /// for a vendor that ends idle sandboxes itself but cannot move a
    /// deadline ([`MachineSpec::idle_timeout_secs`]).
    pub idle: Option<Idle>,
    /// Memory and CPUs.
    pub resources: Resources,
}

/// A box's idle timeout, for a vendor that ends idle sandboxes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Idle {
    /// Seconds without activity after which the sandbox ends.
    pub idle_secs: u64,
    /// Seconds from now until the box's lifetime ends.
    pub lifetime_secs: u64,
}

impl std::fmt::Debug for NewSandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let env: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("NewSandbox")
            .field("box_id", &self.box_id)
            .field("image", &self.image)
            .field("env", &env)
            .field("labels", &self.labels)
            .field("deadline_secs", &self.deadline_secs)
            .field("idle", &self.idle)
            .field("resources", &self.resources)
            .finish()
    }
}

/// A vendor result.
pub type VResult<T> = Result<T, VendorError>;

/// What a cloud vendor's adapter implements; [`Remote`] does the rest.
#[async_trait]
pub trait Vendor: Send + Sync + std::fmt::Debug + 'static {
    /// What holm knows of the vendor.
    fn facts(&self) -> &'static VendorFacts;
    /// Which addresses its API and the endpoints it answers may be at;
    /// [`Remote`] refuses an endpoint the vendor answers elsewhere.
    fn addresses(&self) -> Addresses;
    /// The key its calls carry (replaced in place on rotation).
    fn key(&self) -> &Key;
    /// Checks that the vendor answers and takes the key.
    async fn ping(&self) -> VResult<()>;
    /// Makes the vendor's image for `recipe` unless one with its name
    /// exists, and answers what [`Vendor::create`] is given.
    async fn image(
        &self,
        recipe: &Recipe,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<String>;
    /// Refuses, before any image is built, a box the account's plan cannot
    /// run: a lifetime above the plan's cap (Vercel Hobby's 45 minutes).
    /// The default takes every box the vendor's own limits allow.
    async fn admit(&self, lifetime_secs: u64) -> VResult<()> {
        let _ = lifetime_secs;
        Ok(())
    }
    /// Makes a sandbox and answers it once it runs. Called again only after
    /// [`Remote`] looked for the first one by its box label.
    async fn create(&self, new: &NewSandbox) -> VResult<Sandbox>;
    /// Starts the guest in a new sandbox, where the vendor's own agent is
    /// the sandbox's first process (E2B's envd, Daytona's daemon). The
    /// default does nothing: the image's entrypoint is the guest.
    async fn boot(&self, sandbox: &Sandbox, new: &NewSandbox) -> VResult<()> {
        let _ = (sandbox, new);
        Ok(())
    }
    /// Why the guest [`Vendor::boot`] started is no longer running (its
    /// exit and its log's end), where the vendor can tell it ended; `None`
    /// while it runs, or when the vendor cannot tell (the default).
    async fn guest_ended(&self, id: &str) -> VResult<Option<String>> {
        let _ = id;
        Ok(None)
    }
    /// The sandbox of a box by the name it was made with, for a vendor
    /// whose sandbox names are unique and readable at once (Daytona and
    /// Vercel name a sandbox after its box); `None` when there is none, or
    /// the vendor has no names (the default: the list is looked in).
    async fn by_name(&self, box_id: &str) -> VResult<Option<Sandbox>> {
        let _ = box_id;
        Ok(None)
    }
    /// A sandbox by id; a 404 when it is gone.
    async fn get(&self, id: &str) -> VResult<Sandbox>;
    /// The sandboxes whose `holm.runtime` label is `runtime`.
    async fn list(&self, runtime: &str) -> VResult<Vec<Sandbox>>;
    /// Ends the sandbox `secs` from now (replacing the deadline it had).
    async fn set_deadline(&self, id: &str, secs: u64) -> VResult<()>;
    /// Pauses with memory kept (where `can.pause`).
    async fn pause(&self, id: &str) -> VResult<()> {
        Err(VendorError::answer(
            self.facts().provider,
            &format!("pause {id}"),
            "the vendor cannot pause",
        ))
    }
    /// Resumes a paused sandbox, to end `secs` from now.
    async fn resume(&self, id: &str, secs: u64) -> VResult<()> {
        let _ = secs;
        Err(VendorError::answer(
            self.facts().provider,
            &format!("resume {id}"),
            "the vendor cannot pause",
        ))
    }
    /// Deletes a sandbox; a 404 when it is gone.
    async fn delete(&self, id: &str) -> VResult<()>;
    /// How each of `ports` of a running sandbox is reached.
    async fn endpoints(&self, sandbox: &Sandbox, ports: &[u16])
    -> VResult<BTreeMap<u16, Endpoint>>;
}

/// A remote runtime whose key can be replaced while its boxes run.
pub trait RemoteRuntime: Runtime {
    /// Replaces the key; every later call, for every box, uses it.
    fn set_key(&self, key: &str);
}

/// A vendor account to make a runtime of.
#[derive(Clone)]
pub struct Account<'a> {
    /// The runtime's name.
    pub name: &'a str,
    /// The vendor, such as `e2b`.
    pub provider: &'a str,
    /// The account's settings (`api_url`, `public_traffic`, ...), checked.
    pub fields: &'a serde_json::Map<String, serde_json::Value>,
    /// Its key. Never log it.
    pub key: &'a str,
}

impl std::fmt::Debug for Account<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("name", &self.name)
            .field("provider", &self.provider)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

impl Account<'_> {
    /// Its text field `name`, which `kind` declares.
    pub fn text(&self, kind: &super::kind::VendorKind, name: &str) -> Option<String> {
        debug_assert!(kind.fields.iter().any(|f| f.name == name), "{name} is not declared");
        self.fields.get(name).and_then(serde_json::Value::as_str).map(str::to_owned)
    }

    /// Its flag `name`, which `kind` declares; `false` when unset.
    pub fn flag(&self, kind: &super::kind::VendorKind, name: &str) -> bool {
        debug_assert!(kind.fields.iter().any(|f| f.name == name), "{name} is not declared");
        self.fields.get(name).and_then(serde_json::Value::as_bool).unwrap_or(false)
    }

    /// The addresses its runtime may reach: any with
    /// [`ALLOW_PRIVATE_FIELD`], else public ones only.
    pub fn addresses(&self) -> Addresses {
        match self.fields.get(ALLOW_PRIVATE_FIELD).and_then(serde_json::Value::as_bool) {
            Some(true) => Addresses::Any,
            _ => Addresses::Public,
        }
    }
}

/// The variable that lets a vendor account made from the environment
/// (each vendor's `from_env`) reach private addresses: `1`. Without it, its
/// API and the endpoints it answers must be at public addresses.
pub const ALLOW_PRIVATE_ENV: &str = "HOLM_ALLOW_PRIVATE_ADDRESSES";

/// The account field (a runtimes file's `allow_private_addresses`) that
/// lets a runtime reach private addresses.
pub const ALLOW_PRIVATE_FIELD: &str = "allow_private_addresses";

/// The addresses [`ALLOW_PRIVATE_ENV`] allows.
pub fn addresses_from_env() -> Addresses {
    if std::env::var(ALLOW_PRIVATE_ENV).is_ok_and(|v| v == "1") {
        Addresses::Any
    } else {
        Addresses::Public
    }
}

/// The facts of a vendor this crate knows, by provider name.
pub fn facts(provider: &str) -> Option<&'static VendorFacts> {
    super::kind::kind(provider).and_then(|k| k.vendor()).map(|v| v.facts)
}

/// The runtime of a vendor account, or why this build cannot make one.
pub fn connect(account: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    let p = account.provider;
    match super::kind::kind(p).and_then(|k| k.vendor()) {
        Some(v) => match v.connect {
            Some(connect) => connect(account),
            None => Err(format!(
                "this build of holm has no {p} adapter: build it with the `{p}` cargo feature (cargo build --features holm/{p})"
            )),
        },
        None => Err(format!(
            "no adapter for provider {p} in this build yet; boxes cannot be created on it"
        )),
    }
}
