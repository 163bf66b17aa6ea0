//! Each cloud vendor's part of its runtime-kind descriptor
//! ([`VendorKind`](crate::runtime::kind::VendorKind)): its facts, the
//! fields an account takes, its key's variable, and its adapter where this
//! build has the vendor's cargo feature.

use crate::runtime::kind::{Connect, Field, FieldType::*, VendorKind};
#[cfg(any(
    feature = "e2b",
    feature = "daytona",
    feature = "modal",
    feature = "runtime-cloud",
    feature = "vercel"
))]
use {super::Account, super::Remote, super::RemoteRuntime, std::sync::Arc};

/// The adapter of a vendor whose feature is on: `Some(the function)`.
macro_rules! connect {
    ($feature:literal, $f:ident) => {{
        #[cfg(feature = $feature)]
        let c: Option<Connect> = Some($f);
        #[cfg(not(feature = $feature))]
        let c: Option<Connect> = None;
        c
    }};
}

/// E2B.
pub const E2B: VendorKind = VendorKind {
    facts: &super::E2B,
    fields: &[
        Field::new("api_url", Endpoint, false, Some("E2B_API_URL")),
        Field::new("sandbox_url", Endpoint, false, Some("E2B_SANDBOX_URL")),
        Field::new("public_traffic", Bool, false, None),
    ],
    key_env: "E2B_API_KEY",
    connect: connect!("e2b", e2b),
};

/// Vercel Sandbox.
pub const VERCEL: VendorKind = VendorKind {
    facts: &super::VERCEL,
    fields: &[
        Field::new("team_id", Text, true, Some("VERCEL_TEAM_ID")),
        Field::new("project_id", Text, true, Some("VERCEL_PROJECT_ID")),
        Field::new("api_url", Endpoint, false, Some("VERCEL_API_URL")),
        Field::new("registry_url", Endpoint, false, Some("VERCEL_REGISTRY_URL")),
    ],
    key_env: "VERCEL_TOKEN",
    connect: connect!("vercel", vercel),
};

/// Daytona.
pub const DAYTONA: VendorKind = VendorKind {
    facts: &super::DAYTONA,
    fields: &[
        Field::new("api_url", Endpoint, false, Some("DAYTONA_API_URL")),
        Field::new("target", Text, false, Some("DAYTONA_TARGET")),
    ],
    key_env: "DAYTONA_API_KEY",
    connect: connect!("daytona", daytona),
};

/// Modal.
pub const MODAL: VendorKind = VendorKind {
    facts: &super::MODAL,
    fields: &[
        Field::new("token_id", Text, true, Some("MODAL_TOKEN_ID")),
        Field::new("server_url", Endpoint, false, Some("MODAL_SERVER_URL")),
        Field::new("environment", Text, false, Some("MODAL_ENVIRONMENT")),
    ],
    key_env: "MODAL_TOKEN_SECRET",
    connect: connect!("modal", modal),
};

/// Runtime Cloud.
pub const RUNTIME_CLOUD: VendorKind = VendorKind {
    facts: &super::RUNTIME_CLOUD,
    fields: &[Field::new("api_url", Endpoint, false, Some("RUNTIME_API_URL"))],
    key_env: "RUNTIME_API_KEY",
    connect: connect!("runtime-cloud", runtime_cloud),
};

#[cfg(feature = "e2b")]
fn e2b(a: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    use crate::runtime::e2b;
    let options = e2b::Options {
        api_url: a.text(&E2B, "api_url"),
        sandbox_url: a.text(&E2B, "sandbox_url"),
        public_traffic: a.flag(&E2B, "public_traffic"),
        addresses: a.addresses(),
    };
    Ok(Arc::new(Remote::new(a.name, e2b::E2b::new(a.key, options)?)))
}

#[cfg(feature = "daytona")]
fn daytona(a: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    use crate::runtime::daytona;
    let options = daytona::Options {
        api_url: a.text(&DAYTONA, "api_url"),
        target: a.text(&DAYTONA, "target"),
        addresses: a.addresses(),
    };
    Ok(Arc::new(Remote::new(a.name, daytona::Daytona::new(a.key, options)?)))
}

#[cfg(feature = "modal")]
fn modal(a: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    use crate::runtime::modal;
    let options = modal::Options {
        server_url: a.text(&MODAL, "server_url"),
        environment: a.text(&MODAL, "environment"),
        addresses: a.addresses(),
    };
    let token_id = a.text(&MODAL, "token_id").unwrap_or_default();
    Ok(Arc::new(Remote::new(a.name, modal::Modal::new(&token_id, a.key, options)?)))
}

#[cfg(feature = "runtime-cloud")]
fn runtime_cloud(a: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    use crate::runtime::runtime_cloud;
    let options = runtime_cloud::Options {
        api_url: a.text(&RUNTIME_CLOUD, "api_url"),
        addresses: a.addresses(),
    };
    Ok(Arc::new(Remote::new(a.name, runtime_cloud::RuntimeCloud::new(a.key, options)?)))
}

#[cfg(feature = "vercel")]
fn vercel(a: &Account<'_>) -> Result<Arc<dyn RemoteRuntime>, String> {
    use crate::runtime::vercel;
    let options = vercel::Options {
        team_id: a.text(&VERCEL, "team_id").unwrap_or_default(),
        project_id: a.text(&VERCEL, "project_id").unwrap_or_default(),
        api_url: a.text(&VERCEL, "api_url"),
        registry_url: a.text(&VERCEL, "registry_url"),
        addresses: a.addresses(),
    };
    Ok(Arc::new(Remote::new(a.name, vercel::Vercel::new(a.key, options)?)))
}
