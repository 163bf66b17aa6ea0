//! The guest's HTTP API.
//!
//! [`app`] builds the router; tests drive it over a real socket. Every route
//! but `GET /health` and `GET /v1/openapi.json` is behind the bearer check:
//! the box secret, or an agent credential ([`agent`]) on any route but
//! those that manage credentials. The Chromium bridge on port
//! 9223 is a server of its own ([`crate::bridge`]); its credentials are set
//! here. Every response carries
//! `x-request-id`, and every error has the one shape of [`holm_proto::error`].

mod accessibility;
pub mod agent;
mod browser;
mod commands;
mod core;
mod desk;
pub mod error;
pub mod extract;
mod files;
mod processes;
mod recordings;
mod screens;
mod table;
mod terminal;
pub mod viewers;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::IntoResponse;

use holm_proto::agent::AgentRequest;
use holm_proto::contract;

use self::extract::StrictJson;
use self::table::Routes;

use crate::config::Config;
use crate::supervisor::Supervisor;

pub use self::error::Error;

/// Everything a handler can reach.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The configuration read at start.
    pub config: Arc<Config>,
    /// The desktop's components.
    pub supervisor: Arc<Supervisor>,
    /// When the guest started.
    pub started: Instant,
    /// Commands and background processes.
    pub processes: Arc<crate::exec::Processes>,
    /// The desktop: the X11 or the Wayland backend.
    pub desktop: Arc<dyn crate::display::Desktop>,
    /// The Chromium bridge's credentials.
    pub bridge: Arc<crate::bridge::Bridge>,
    /// Screen 0's browser, for the page tools.
    pub browser: Arc<crate::browser::Browser>,
    /// The viewers and the handoff between agent and person.
    pub viewers: Arc<crate::viewer::Viewers>,
    /// The client of the accessibility bus.
    pub a11y: Arc<crate::a11y::A11y>,
    /// The screens' recordings.
    pub recorder: Arc<crate::record::Recorder>,
    /// Each screen's last encoded screenshot.
    pub encoded: Arc<crate::image::LastEncoded>,
}

pub use holm_http::RequestId;

/// Builds the whole router.
pub fn app(state: AppState, secret: Arc<BoxSecret>) -> Router {
    let setter = Arc::clone(&secret);
    let agent = Arc::new(agent::AgentTokens::default());
    let (router, _) = routes(setter, Arc::clone(&agent)).into_parts();
    router
        .fallback(route_not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn_with_state(state.clone(), viewers::refuse_while_person))
        .with_state(state)
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            let digest = secret.current();
            let agent = Arc::clone(&agent);
            async move {
                // Only the routes the contract marks public (the health
                // check, the API's description) answer without a
                // credential; an unknown route is refused like a known one.
                let route = req
                    .extensions()
                    .get::<MatchedPath>()
                    .and_then(|m| table::matched(req.method(), m.as_str()));
                if route.is_some_and(|r| r.op.public) {
                    return next.run(req).await;
                }
                let path = req.uri().path();
                let Err(e) = holm_http::check_bearer_digest(&req, &digest, "the box secret") else {
                    return next.run(req).await;
                };
                let given = holm_http::bearer(&req).unwrap_or_default();
                if !given.starts_with(holm_proto::agent::AGENT_TOKEN_PREFIX.as_bytes()) {
                    return e.into_response();
                }
                match agent.check(given) {
                    agent::Check::Valid if route.is_some_and(agent::is_credential_route) => {
                        Error::from(agent::credential_route_refused(path)).into_response()
                    }
                    agent::Check::Valid => next.run(req).await,
                    agent::Check::Unknown => {
                        Error::from(agent::unknown_credential()).into_response()
                    }
                }
            }
        }))
        .layer(middleware::from_fn(holm_http::request_id))
}

/// The routes that manage credentials: the box secret and agent
/// credentials (the bridge's and the viewers' are with their routes). An
/// agent credential calls none of them.
fn credential_routes(setter: Arc<BoxSecret>, agent: Arc<agent::AgentTokens>) -> Routes {
    let (issuer, revoker) = (Arc::clone(&agent), agent);
    let set_secret = move |StrictJson(body): StrictJson<holm_proto::guest::BoxSecret>| {
        let setter = Arc::clone(&setter);
        async move { setter.replace(&body).map(|()| StatusCode::NO_CONTENT) }
    };
    let issue = move |StrictJson(body): StrictJson<AgentRequest>| {
        let issuer = Arc::clone(&issuer);
        async move { issuer.issue(&body).map(axum::Json).map_err(Error::from) }
    };
    let revoke = move || {
        let revoker = Arc::clone(&revoker);
        async move {
            revoker.revoke_all();
            StatusCode::NO_CONTENT
        }
    };
    Routes::default()
        .on(&contract::SECRET.route, set_secret)
        .on(&contract::AGENT_TOKEN.route, issue)
        .on(&contract::REVOKE_AGENT_TOKENS.route, revoke)
}

/// Every route, each as [`holm_proto::contract::GUEST_ROUTES`] declares
/// it; `/v1/openapi.json` answers the document made from that table.
fn routes(setter: Arc<BoxSecret>, agent: Arc<agent::AgentTokens>) -> Routes {
    let document = Arc::new(openapi());
    credential_routes(setter, agent)
        .on(&contract::OPENAPI.route, move || {
            let document = Arc::clone(&document);
            async move { axum::Json((*document).clone()) }
        })
        .merge(core::routes())
        .merge(commands::routes())
        .merge(processes::routes())
        .merge(files::routes())
        .merge(screens::routes())
        .merge(browser::routes())
        .on(&contract::TERMINAL, terminal::open)
        .merge(viewers::routes())
        .merge(desk::routes())
        .merge(accessibility::routes())
        .merge(recordings::routes())
}

/// The guest's OpenAPI 3.1 document: every route of the contract.
pub fn openapi() -> serde_json::Value {
    holm_proto::contract::guest_openapi(env!("CARGO_PKG_VERSION"))
}

/// The digest of the box secret, which `PUT /v1/secret` replaces: a request
/// is checked against the secret current when it arrived. The guest keeps
/// only the SHA-256 of a secret it is sent, never the secret itself.
pub struct BoxSecret(std::sync::RwLock<[u8; 32]>);

impl std::fmt::Debug for BoxSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BoxSecret(<hidden>)")
    }
}

impl BoxSecret {
    /// A secret whose SHA-256 is `digest`.
    pub fn new(digest: [u8; 32]) -> Self {
        Self(std::sync::RwLock::new(digest))
    }

    /// The SHA-256 of the secret in force.
    pub fn current(&self) -> [u8; 32] {
        *self.0.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts in force the secret `body` gives, or the digest it gives.
    fn replace(&self, body: &holm_proto::guest::BoxSecret) -> Result<(), Error> {
        use sha2::Digest;
        let digest: [u8; 32] = match (&body.secret, &body.secret_sha256) {
            (Some(secret), None) => {
                crate::bridge::check_secret(secret.expose())?;
                sha2::Sha256::digest(secret.expose().as_bytes()).into()
            }
            (None, Some(hex)) => crate::config::parse_digest(hex.expose())
                .ok_or_else(|| invalid("secret_sha256", "must be 64 hexadecimal digits"))?,
            _ => return Err(invalid("secret", "give exactly one of secret and secret_sha256")),
        };
        *self.0.write().unwrap_or_else(|e| e.into_inner()) = digest;
        tracing::info!("the box has a new secret; the old one is refused from now on");
        Ok(())
    }
}

fn invalid(path: &str, problem: &str) -> Error {
    let issue = holm_proto::Issue { path: path.into(), problem: problem.into() };
    Error::from(holm_proto::ApiError::invalid_fields(vec![issue]))
}

async fn route_not_found(req: Request) -> Error {
    holm_http::route_not_found(req.method(), req.uri().path())
}

async fn method_not_allowed(req: Request) -> Error {
    holm_http::method_not_allowed(req.method(), req.uri().path())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use holm_proto::contract::GUEST_ROUTES;

    use super::*;

    #[test]
    fn the_box_secret_is_replaced_by_a_secret_or_its_digest_and_bad_input_changes_nothing() {
        use holm_proto::guest::BoxSecret as Body;
        use sha2::Digest;
        let held = BoxSecret::new([7; 32]);
        let body = |secret: Option<&str>, digest: Option<&str>| Body {
            secret: secret.map(Into::into),
            secret_sha256: digest.map(Into::into),
        };
        let new = "a-new-box-secret-of-32-characters";
        let digest: [u8; 32] = sha2::Sha256::digest(new.as_bytes()).into();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        for bad in [
            body(None, None),
            body(Some(new), Some(&hex)),
            body(Some("short"), None),
            body(None, Some("zz")),
            body(None, Some(&"g".repeat(64))),
            body(None, Some(&"é".repeat(32))),
        ] {
            let e = held.replace(&bad).expect_err("refused");
            assert_eq!(e.0.code, holm_proto::ErrorCode::InvalidRequest, "{:?}", e.0);
            assert_eq!(held.current(), [7; 32], "a refused body changes nothing");
        }
        held.replace(&body(None, Some(&hex))).expect("a digest");
        assert_eq!(held.current(), digest);
        let held = BoxSecret::new([7; 32]);
        held.replace(&body(Some(new), None)).expect("a secret");
        assert_eq!(held.current(), digest, "the secret and its digest put the same in force");
    }

    fn served() -> Vec<&'static holm_proto::contract::GuestRoute> {
        let secret = Arc::new(BoxSecret::new([0; 32]));
        let (_, served) = routes(secret, Arc::default()).into_parts();
        served
    }

    #[test]
    fn the_guest_serves_exactly_the_contract() {
        let served: BTreeSet<_> = served().iter().map(|r| (r.method, r.path)).collect();
        let declared: BTreeSet<_> = GUEST_ROUTES.iter().map(|r| (r.method, r.path)).collect();
        let missing: Vec<_> = declared.difference(&served).collect();
        assert!(missing.is_empty(), "declared but not served: {missing:?}");
        assert_eq!(served.len(), declared.len());
    }

    #[test]
    fn the_credential_routes_are_tagged_and_only_the_health_and_the_document_are_public() {
        // What an agent credential cannot call: the routes that manage the
        // box's credentials, and no other.
        let credentials: BTreeSet<&str> =
            served().iter().filter(|r| agent::is_credential_route(r)).map(|r| r.path).collect();
        assert_eq!(
            credentials,
            BTreeSet::from([
                "/v1/secret",
                "/v1/bridge/secret",
                "/v1/bridge/tickets",
                "/v1/viewers/config",
                "/v1/agent/tokens"
            ])
        );
        let public: BTreeSet<&str> =
            served().iter().filter(|r| r.op.public).map(|r| r.path).collect();
        assert_eq!(public, BTreeSet::from(["/v1/openapi.json", "/health"]));
        let doc = openapi();
        assert_eq!(doc["info"]["title"], "holm-guest");
        for path in ["/v1/agent/tokens", "/v1/terminal", "/v1/files/content", "/v1/viewers/help"] {
            assert!(doc["paths"][path].is_object(), "{path}");
        }
    }
}
