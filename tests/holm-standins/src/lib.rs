//! Stand-ins of cloud vendors for holm's tests.
//!
//! The vendors cannot be reached from the test machines, so each gets a
//! stand-in here that implements the part of its public API holm uses,
//! faithfully: the same paths, auth headers, JSON field names, status
//! codes, error bodies, states and refusals, and limits, as the vendor's
//! OpenAPI and SDK sources say. The vendor's own SDK (pinned, from PyPI)
//! drives each stand-in unchanged but for its address, which proves the
//! contract ([`sdk`]). Each sandbox is a real container on the local Docker
//! engine running the real image, reached only through the stand-in's
//! proxy on loopback with the vendor's auth enforced, so the whole path
//! (holmd → vendor API → vendor proxy → guest) is exercised.
//!
//! - [`e2b::E2bStandin`]: E2B's API (templates, sandboxes), envd (the
//!   calls holm and the SDKs make) and its header-routed proxy.
//! - [`daytona::DaytonaStandin`]: Daytona's API (snapshots, sandboxes,
//!   preview URLs), its toolbox and its preview proxy.
//! - [`modal::ModalStandin`]: Modal's gRPC API (apps, images, sandboxes,
//!   tunnels) and a sandbox's command router, served with tonic.
//! - [`runtime_cloud::RuntimeCloudStandin`]: Runtime Cloud's API 0.2.0
//!   (sandboxes, `:exec`, files, previews and their proxy, images).
//! - [`vercel::VercelStandin`]: Vercel Sandbox's API (sandboxes, sessions,
//!   commands, files, routes) and Vercel Container Registry (a Docker
//!   Registry v2 and VCR's tag status).
//! - [`kube::KubeStandin`]: the Kubernetes API server (discovery, Pods,
//!   Services, Secrets, NetworkPolicies, watches, conflicts, field
//!   validation, `Status` errors), each Pod a container on the engine,
//!   and agent-sandbox's Sandbox, SandboxTemplate, SandboxWarmPool and
//!   SandboxClaim with their controllers; kubectl and the Python client
//!   prove it.
//!
//! Both share [`common`]: a clock tests can move (vendor deadlines without
//! waiting), injected failures (429 with `Retry-After`, 5xx), the keys the
//! vendor accepts (rotate and revoke), and a log of the calls made.
//!
//! What a stand-in does not do: bill, schedule across regions, or keep
//! paused sandboxes for 30 days. Their request ids are what a CDN in front
//! of the vendor adds (`cf-ray`); the vendors' own services set none.

// A handler's refusal is the response it answers: `Result<_, Response>` is
// axum's idiom, however large a response is.
#![allow(clippy::result_large_err)]

pub mod common;
pub mod daytona;
pub mod e2b;
pub mod engine;
pub mod forward;
pub mod kube;
pub mod modal;
pub mod runtime_cloud;
pub mod sdk;
pub mod trace;
pub mod vercel;

pub use common::{Call, Calls, Clock, Controls, Fault, Faults, Keys};
