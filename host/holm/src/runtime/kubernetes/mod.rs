//! The `kubernetes` runtime (issue 30), in one namespace of a cluster
//! reached through a kubeconfig (or in-cluster credentials), in one of two
//! modes ([`Mode`]):
//!
//! - **plain pods**: a box is a Pod of the box image with the guest as
//!   entrypoint, a headless Service and a Secret holding the digest of the
//!   box secret;
//! - **agent-sandbox** (kubernetes-sigs/agent-sandbox installed): a box is a
//!   `SandboxClaim` on a `SandboxWarmPool` of a `SandboxTemplate` holm makes
//!   from the box's image and settings ([`agent_sandbox`]); the pool's
//!   boxes are identity-free, and a claimed one is given its box secret
//!   through its guest.
//!
//! The settings ([`KubeSettings`]) are always compiled, so a server built
//! without the `kubernetes` cargo feature still checks a runtimes-file
//! table of this kind and says which feature to build with; the runtime
//! itself ([`KubernetesRuntime`], on a small client of the API of our
//! own: [`client`], [`config`], [`exec`], [`watch`]) needs the feature.
//! docs/runtimes.md ("Kubernetes") says what it does and what a real
//! cluster needs.

#[cfg(feature = "kubernetes")]
mod agent_sandbox;
#[cfg(feature = "kubernetes")]
mod client;
#[cfg(feature = "kubernetes")]
mod config;
#[cfg(feature = "kubernetes")]
mod exec;
#[cfg(feature = "kubernetes")]
mod objects;
#[cfg(feature = "kubernetes")]
mod runtime;
#[cfg(feature = "kubernetes")]
mod watch;

use std::collections::BTreeMap;
use std::path::PathBuf;

#[cfg(feature = "kubernetes")]
pub use agent_sandbox::{HOLMD_LABEL, POOL_SECRET_KEY, VOLUME, VOLUME_PATH};
#[cfg(feature = "kubernetes")]
pub use runtime::KubernetesRuntime;

/// The namespace a runtime uses unless its table names one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// A toleration of the box pods, as a runtimes file gives it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Toleration {
    /// The taint's key (none: every key, with `operator = "Exists"`).
    pub key: Option<String>,
    /// `Equal` (the default) or `Exists`.
    pub operator: Option<String>,
    /// The taint's value, for `Equal`.
    pub value: Option<String>,
    /// `NoSchedule`, `PreferNoSchedule` or `NoExecute` (none: all).
    pub effect: Option<String>,
}

/// How boxes are made on the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// agent-sandbox's claims when the cluster serves them
    /// (`extensions.agents.x-k8s.io/v1beta1`), else plain pods: asked once,
    /// at the runtime's first call.
    #[default]
    Auto,
    /// A Pod, a headless Service and a Secret per box.
    Pods,
    /// A `SandboxClaim` per box on a warm pool holm keeps.
    AgentSandbox,
}

impl Mode {
    /// Every mode, as a runtimes file names it.
    pub const ALL: &'static [(&'static str, Mode)] =
        &[("auto", Mode::Auto), ("pods", Mode::Pods), ("agent-sandbox", Mode::AgentSandbox)];

    /// The mode a runtimes file names `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }
}

/// The warm pool's size in agent-sandbox mode unless the table says.
pub const DEFAULT_WARM_POOL: u32 = 1;

/// How a `kubernetes` runtime reaches its cluster and shapes its pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeSettings {
    /// The kubeconfig file; none: `KUBECONFIG`, `~/.kube/config`, then the
    /// in-cluster service account.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context; none: its current context.
    pub context: Option<String>,
    /// The namespace of the boxes.
    pub namespace: String,
    /// The pods' `runtimeClassName` (gVisor's `gvisor`, Kata's `kata`).
    pub runtime_class: Option<String>,
    /// The pods' node selector.
    pub node_selector: BTreeMap<String, String>,
    /// The pods' tolerations.
    pub tolerations: Vec<Toleration>,
    /// Plain pods or agent-sandbox claims.
    pub mode: Mode,
    /// In agent-sandbox mode, how many ready boxes each warm pool keeps
    /// (`0`: every claim starts a box cold).
    pub warm_pool: u32,
    /// In agent-sandbox mode, the size of each box's volume at `/root`
    /// (`"10Gi"`), kept while the box is stopped; none: no volume, and no
    /// stop (a `Suspended` box keeps only its volumes).
    pub volume_size: Option<String>,
    /// The volume's storage class; none: the cluster's default.
    pub storage_class: Option<String>,
    /// Prebuilt box images by display profile: when any is named, boxes
    /// run these and nothing is built (a holmd in a cluster has no engine
    /// to build with); a box with apps or packages, or of a profile none
    /// is named for, is refused.
    pub images: BTreeMap<holm_proto::guest::Profile, String>,
}

impl Default for KubeSettings {
    fn default() -> Self {
        Self {
            kubeconfig: None,
            context: None,
            namespace: DEFAULT_NAMESPACE.to_owned(),
            runtime_class: None,
            node_selector: BTreeMap::new(),
            tolerations: Vec::new(),
            mode: Mode::Auto,
            warm_pool: DEFAULT_WARM_POOL,
            volume_size: None,
            storage_class: None,
            images: BTreeMap::new(),
        }
    }
}

/// The name of a box's Pod, Service and Secret: `holm-` and the box id,
/// lowercased, with every character a DNS label refuses (`_`) as `-`.
pub fn object_name(box_id: &str) -> String {
    let id: String = box_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
        .collect();
    format!("holm-{id}")
}

/// Whether `s` is a DNS-1123 label (a namespace's or runtime class's
/// name): lowercase letters, digits and `-`, at most 63, starting and
/// ending with a letter or digit.
pub fn is_dns_label(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !s.is_empty()
        && s.len() <= 63
        && s.chars().all(|c| ok(c) || c == '-')
        && s.starts_with(ok)
        && s.ends_with(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_are_dns_labels() {
        assert_eq!(object_name("box_7hq3k2m9x4ab"), "holm-box-7hq3k2m9x4ab");
        assert!(is_dns_label(&object_name("box_7hq3k2m9x4ab")));
        assert!(is_dns_label("holm-boxes"));
        for bad in ["", "Boxes", "-a", "a-", "a_b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad}");
        }
    }
}
