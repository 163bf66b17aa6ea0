//! The guest's router, built from the one table of its routes
//! ([`holm_proto::contract::GUEST_ROUTES`]): a handler is registered with
//! its route's record (such as `contract::SPAWN.route`), never a path of
//! its own, and a record the table does not list is refused when the
//! router is built, so the guest serves exactly the
//! contract (a test compares the two).

use axum::Router;
use axum::handler::Handler;
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use holm_proto::contract::{GUEST_ROUTES, GuestRoute, Method};

use super::AppState;

/// Routes being registered, and which.
#[derive(Debug, Default)]
pub(super) struct Routes {
    router: Router<AppState>,
    served: Vec<&'static GuestRoute>,
}

impl Routes {
    /// Serves `route`, a record of the table, with `handler`.
    pub(super) fn on<H: Handler<T, AppState>, T: 'static>(
        self,
        route: &'static GuestRoute,
        handler: H,
    ) -> Self {
        self.on_with(route, handler, |m| m)
    }

    /// Serves `route`, a record of the table, with `handler`, with `layer`
    /// around it.
    pub(super) fn on_with<H: Handler<T, AppState>, T: 'static>(
        mut self,
        route: &'static GuestRoute,
        handler: H,
        layer: impl FnOnce(MethodRouter<AppState>) -> MethodRouter<AppState>,
    ) -> Self {
        let route = declared(route.method, route.path);
        let handler = match route.method {
            Method::Get => get(handler),
            Method::Post => post(handler),
            Method::Put => put(handler),
            Method::Patch => patch(handler),
            Method::Delete => delete(handler),
        };
        self.router = self.router.route(route.path, layer(handler));
        self.served.push(route);
        self
    }

    /// Adds `other`'s routes.
    pub(super) fn merge(mut self, other: Self) -> Self {
        self.router = self.router.merge(other.router);
        self.served.extend(other.served);
        self
    }

    /// The router, and the routes it serves.
    pub(super) fn into_parts(self) -> (Router<AppState>, Vec<&'static GuestRoute>) {
        (self.router, self.served)
    }
}

/// The record of the route a request matched: its method and the path
/// template the router matched (`MatchedPath`), so what a route is (public,
/// managing credentials) is read from its record, never from the request's
/// path. `None` for a request no route took.
pub(super) fn matched(method: &axum::http::Method, template: &str) -> Option<&'static GuestRoute> {
    let method = match *method {
        axum::http::Method::GET => Method::Get,
        axum::http::Method::POST => Method::Post,
        axum::http::Method::PUT => Method::Put,
        axum::http::Method::PATCH => Method::Patch,
        axum::http::Method::DELETE => Method::Delete,
        _ => return None,
    };
    GUEST_ROUTES.iter().find(|r| r.method == method && r.path == template)
}

/// The table's record of `method` `path`.
///
/// # Panics
/// When the table has none: every guest route is listed in
/// `holm_proto::contract::GUEST_ROUTES`, so holmd forwards and documents it.
fn declared(method: Method, path: &str) -> &'static GuestRoute {
    GUEST_ROUTES.iter().find(|r| r.method == method && r.path == path).unwrap_or_else(|| {
        panic!("{method} {path} is not in holm_proto::contract::GUEST_ROUTES: declare it there")
    })
}
