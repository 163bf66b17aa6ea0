//! One descriptor per runtime kind ([`RuntimeKind`]): its provider name,
//! whether the server looks for it at start, the settings a runtimes-file
//! table of it takes ([`Setting`]), and, for a cloud vendor, its
//! [`VendorKind`]: facts, account fields, key variable and how to connect.
//!
//! Every kind is in [`KINDS`], and nothing else lists them: holmd checks
//! the runtimes file, the registry of vendor accounts and
//! `HOLM_SERVER_SANDBOXES` against these descriptors, and offers what
//! they say. To add a kind, write its descriptor and add it to [`KINDS`]
//! (docs/design/runtime-kinds.md).

use std::sync::Arc;

use super::remote::{self, Account, RemoteRuntime, VendorFacts};

/// A field of a runtimes-file table that is not a vendor account's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// `provider`: the kind of a table that adds a runtime.
    Provider,
    /// `enabled`: `false` leaves a runtime the server would find unoffered.
    Enabled,
    /// `memory`: a box's memory unless it asks.
    Memory,
    /// `cpus`: a box's CPUs unless it asks.
    Cpus,
    /// `lifetime`: a box's lifetime unless it asks.
    Lifetime,
    /// `max_lifetime`: the longest a box may live.
    MaxLifetime,
    /// `isolation`: the OCI runtime, such as `runsc`.
    Isolation,
    /// `context`: a Docker context.
    Context,
    /// `program`: the hypervisor program.
    Program,
    /// `build_with`: the engine that builds a microVM's image.
    BuildWith,
    /// `pids_limit`: the most processes and threads of a box.
    PidsLimit,
    /// `host_access`: boxes may reach the host's and link-local addresses.
    HostAccess,
    /// `no_new_privileges`: `false` lets set-user-id programs work.
    NoNewPrivileges,
    /// `cap_add`: capabilities beyond the desktop's.
    CapAdd,
    /// `seccomp`: `"unconfined"`, or a profile file.
    Seccomp,
    /// `pool`: warm pools.
    Pool,
    /// `allow_private_addresses`: a vendor's API may be at a private address.
    AllowPrivateAddresses,
    /// `kubeconfig`: the kubeconfig file of a Kubernetes runtime.
    Kubeconfig,
    /// `namespace`: the Kubernetes namespace of the boxes.
    Namespace,
    /// `runtime_class`: the pods' `runtimeClassName` (gVisor, Kata).
    RuntimeClass,
    /// `node_selector`: the pods' node selector.
    NodeSelector,
    /// `tolerations`: the pods' tolerations.
    Tolerations,
    /// `mode`: a Kubernetes runtime's boxes as plain pods or agent-sandbox claims.
    Mode,
    /// `warm_pool`: how many ready boxes an agent-sandbox warm pool keeps.
    WarmPool,
    /// `volume_size`: an agent-sandbox box's volume at `/root`, kept while
    /// the box is stopped (`Suspended`).
    VolumeSize,
    /// `storage_class`: the storage class of that volume.
    StorageClass,
    /// `images`: prebuilt box images by display profile, which a runtime
    /// that cannot build (holmd in a cluster) runs.
    Images,
}

impl Setting {
    /// Every setting, in the order the docs list them.
    pub const ALL: &'static [Self] = &[
        Self::Provider,
        Self::Enabled,
        Self::Memory,
        Self::Cpus,
        Self::Lifetime,
        Self::MaxLifetime,
        Self::Isolation,
        Self::Context,
        Self::Program,
        Self::BuildWith,
        Self::PidsLimit,
        Self::HostAccess,
        Self::NoNewPrivileges,
        Self::CapAdd,
        Self::Seccomp,
        Self::Pool,
        Self::AllowPrivateAddresses,
        Self::Kubeconfig,
        Self::Namespace,
        Self::RuntimeClass,
        Self::NodeSelector,
        Self::Tolerations,
        Self::Mode,
        Self::WarmPool,
        Self::VolumeSize,
        Self::StorageClass,
        Self::Images,
    ];

    /// The settings every kind takes.
    pub const COMMON: &'static [Self] =
        &[Self::Provider, Self::Memory, Self::Cpus, Self::Lifetime, Self::MaxLifetime];

    /// Its name in a runtimes file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Enabled => "enabled",
            Self::Memory => "memory",
            Self::Cpus => "cpus",
            Self::Lifetime => "lifetime",
            Self::MaxLifetime => "max_lifetime",
            Self::Isolation => "isolation",
            Self::Context => "context",
            Self::Program => "program",
            Self::BuildWith => "build_with",
            Self::PidsLimit => "pids_limit",
            Self::HostAccess => "host_access",
            Self::NoNewPrivileges => "no_new_privileges",
            Self::CapAdd => "cap_add",
            Self::Seccomp => "seccomp",
            Self::Pool => "pool",
            Self::AllowPrivateAddresses => "allow_private_addresses",
            Self::Kubeconfig => "kubeconfig",
            Self::Namespace => "namespace",
            Self::RuntimeClass => "runtime_class",
            Self::NodeSelector => "node_selector",
            Self::Tolerations => "tolerations",
            Self::Mode => "mode",
            Self::WarmPool => "warm_pool",
            Self::VolumeSize => "volume_size",
            Self::StorageClass => "storage_class",
            Self::Images => "images",
        }
    }

    /// The setting of that name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|s| s.as_str() == name)
    }
}

/// The type of a vendor account's field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// Text.
    Text,
    /// A URL: `https` at a public address when given through the API; the
    /// runtimes file may name any (a self-hosted or local endpoint).
    Endpoint,
    /// `true` or `false`.
    Bool,
    /// Seconds, at least a minute.
    Secs,
}

/// One field a vendor account takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub ty: FieldType,
    /// Whether an account needs it.
    pub required: bool,
    /// The vendor's own environment variable for it, read for
    /// `HOLM_SERVER_SANDBOXES`.
    pub env: Option<&'static str>,
}

impl Field {
    /// A field.
    pub const fn new(
        name: &'static str,
        ty: FieldType,
        required: bool,
        env: Option<&'static str>,
    ) -> Self {
        Self { name, ty, required, env }
    }
}

/// The lifetime fields every vendor account takes besides its own.
pub const LIFETIME_FIELDS: &[Field] = &[
    Field::new("lifetime_secs", FieldType::Secs, false, None),
    Field::new("max_lifetime_secs", FieldType::Secs, false, None),
];

/// Makes the runtime of a checked vendor account.
pub type Connect = fn(&Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String>;

/// What a cloud vendor kind adds to its descriptor.
#[derive(Debug, Clone, Copy)]
pub struct VendorKind {
    /// What holm knows of it without asking it.
    pub facts: &'static VendorFacts,
    /// The fields an account takes besides the lifetimes.
    pub fields: &'static [Field],
    /// The vendor's own environment variable for its key.
    pub key_env: &'static str,
    /// Its adapter, when this build has the vendor's cargo feature.
    pub connect: Option<Connect>,
}

/// What makes the runtimes of a kind.
#[derive(Debug, Clone, Copy)]
pub enum Driver {
    /// An OCI engine holm drives through its API (Docker, podman).
    Engine,
    /// microsandbox's server.
    Microsandbox,
    /// A Kubernetes cluster's API (`holm::runtime::kubernetes`, with the
    /// `kubernetes` cargo feature).
    Kubernetes,
    /// A kind holm names but does not drive yet: its runtime is offered as
    /// unavailable, saying so.
    Planned,
    /// A cloud vendor.
    Vendor(VendorKind),
}

/// One kind of runtime.
#[derive(Debug, Clone, Copy)]
pub struct RuntimeKind {
    /// The provider name, as a runtimes file's `provider` and the API say it.
    pub name: &'static str,
    /// Whether the server looks for it at start (a runtime of this name is
    /// offered when it answers); otherwise only a table adds it.
    pub found: bool,
    /// Whether it is an OCI engine that builds images (`build_with`).
    pub builds: bool,
    /// The settings a runtimes-file table of it takes beyond
    /// [`Setting::COMMON`].
    pub settings: &'static [Setting],
    /// What makes its runtimes.
    pub driver: Driver,
}

impl RuntimeKind {
    /// Whether a runtimes-file table of this kind takes `setting`.
    pub fn takes(&self, setting: Setting) -> bool {
        Setting::COMMON.contains(&setting) || self.settings.contains(&setting)
    }

    /// A cloud vendor's part of it.
    pub fn vendor(&self) -> Option<&VendorKind> {
        match &self.driver {
            Driver::Vendor(v) => Some(v),
            _ => None,
        }
    }

    /// Whether its boxes run at a cloud vendor.
    pub fn is_vendor(&self) -> bool {
        self.vendor().is_some()
    }

    /// A vendor field of this kind that a runtimes file may set: its
    /// endpoints.
    pub fn file_field(&self, name: &str) -> Option<&'static Field> {
        let v = self.vendor()?;
        v.fields.iter().find(|f| f.name == name && f.ty == FieldType::Endpoint)
    }
}

use Setting as S;

const ENGINE: &[Setting] =
    &[S::Enabled, S::Isolation, S::PidsLimit, S::NoNewPrivileges, S::CapAdd, S::Seccomp, S::Pool];
const MICROVM: &[Setting] = &[S::Enabled, S::Program, S::BuildWith, S::Pool];

/// Docker (the default): a local or remote engine by context.
pub const DOCKER: RuntimeKind = RuntimeKind {
    name: "docker",
    found: true,
    builds: true,
    settings: &[
        S::Enabled,
        S::Isolation,
        S::Context,
        S::PidsLimit,
        S::HostAccess,
        S::NoNewPrivileges,
        S::CapAdd,
        S::Seccomp,
        S::Pool,
    ],
    driver: Driver::Engine,
};

/// Podman: its boxes join podman's own network, never holm's, so no
/// `host_access`.
pub const PODMAN: RuntimeKind = RuntimeKind {
    name: "podman",
    found: true,
    builds: true,
    settings: ENGINE,
    driver: Driver::Engine,
};

/// nerdctl (containerd): named, not yet driven.
pub const NERDCTL: RuntimeKind = RuntimeKind {
    name: "nerdctl",
    found: true,
    builds: true,
    settings: &[S::Enabled, S::Isolation, S::Pool],
    driver: Driver::Planned,
};

/// smolvm microVMs.
pub const SMOLVM: RuntimeKind = RuntimeKind {
    name: "smolvm",
    found: true,
    builds: false,
    settings: MICROVM,
    driver: Driver::Planned,
};

/// microsandbox microVMs.
pub const MICROSANDBOX: RuntimeKind = RuntimeKind {
    name: "microsandbox",
    found: true,
    builds: false,
    settings: MICROVM,
    driver: Driver::Microsandbox,
};

/// Kubernetes: a box is a Pod, or an agent-sandbox claim, in one namespace
/// of a cluster. Not found: a runtimes-file table adds it.
pub const KUBERNETES: RuntimeKind = RuntimeKind {
    name: "kubernetes",
    found: false,
    builds: false,
    settings: &[
        S::Enabled,
        S::Kubeconfig,
        S::Context,
        S::Namespace,
        S::RuntimeClass,
        S::NodeSelector,
        S::Tolerations,
        S::Pool,
        S::Mode,
        S::WarmPool,
        S::VolumeSize,
        S::StorageClass,
        S::Images,
    ],
    driver: Driver::Kubernetes,
};

const fn vendor(v: VendorKind) -> RuntimeKind {
    RuntimeKind {
        name: v.facts.provider,
        found: false,
        builds: false,
        settings: &[S::AllowPrivateAddresses],
        driver: Driver::Vendor(v),
    }
}

/// Every kind, machines' first, then the vendors as the seeds name them.
pub const KINDS: &[RuntimeKind] = &[
    DOCKER,
    PODMAN,
    NERDCTL,
    SMOLVM,
    MICROSANDBOX,
    KUBERNETES,
    vendor(remote::vendors::E2B),
    vendor(remote::vendors::VERCEL),
    vendor(remote::vendors::DAYTONA),
    vendor(remote::vendors::MODAL),
    vendor(remote::vendors::RUNTIME_CLOUD),
];

/// The kind named `name`.
pub fn kind(name: &str) -> Option<&'static RuntimeKind> {
    KINDS.iter().find(|k| k.name == name)
}

/// The kinds on the server's machine.
pub fn hosts() -> impl Iterator<Item = &'static RuntimeKind> {
    KINDS.iter().filter(|k| !k.is_vendor())
}

/// The cloud vendors' kinds.
pub fn vendors() -> impl Iterator<Item = &'static RuntimeKind> {
    KINDS.iter().filter(|k| k.is_vendor())
}

/// The names of `kinds`, for messages.
pub fn names(kinds: impl Iterator<Item = &'static RuntimeKind>) -> String {
    kinds.map(|k| k.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_settings_known() {
        for (i, k) in KINDS.iter().enumerate() {
            assert!(KINDS[..i].iter().all(|o| o.name != k.name), "{} twice", k.name);
            assert_eq!(kind(k.name).map(|f| f.name), Some(k.name));
            for s in k.settings {
                assert_eq!(Setting::parse(s.as_str()), Some(*s));
            }
        }
        assert!(kind("kvm").is_none());
    }

    #[test]
    fn a_vendor_kind_is_its_facts_provider_and_its_endpoints_are_file_fields() {
        let e2b = kind("e2b").unwrap();
        assert!(e2b.is_vendor() && !e2b.found);
        assert!(e2b.file_field("api_url").is_some());
        assert!(e2b.file_field("public_traffic").is_none(), "a flag is not an endpoint");
        assert!(!e2b.takes(Setting::Pool));
        assert!(kind("docker").unwrap().takes(Setting::HostAccess));
        assert!(!kind("podman").unwrap().takes(Setting::HostAccess));
    }
}
