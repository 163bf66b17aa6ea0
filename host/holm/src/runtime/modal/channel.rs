//! The gRPC channel to Modal's API. For a public-only runtime its connector
//! resolves the API's name itself and refuses a private, loopback,
//! link-local or metadata address at each connection
//! ([`holm_client::address::resolve_public`]), as the REST clients'
//! resolver does; a literal address is checked before (`check_url`).

use std::time::Duration;

use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use tonic::transport::{Channel, Endpoint};

use super::super::remote::Addresses;

/// A lazy channel to `endpoint`, connecting only to what `addresses` allows.
pub fn open(endpoint: &Endpoint, addresses: Addresses) -> Channel {
    match addresses {
        Addresses::Any => endpoint.connect_lazy(),
        Addresses::Public => {
            let mut http = HttpConnector::new_with_resolver(PublicResolver);
            http.enforce_http(false);
            http.set_keepalive(Some(Duration::from_secs(30)));
            endpoint.connect_with_connector_lazy(http)
        }
    }
}

/// The gRPC channel's resolver for a public-only runtime
/// ([`holm_client::address::resolve_public`]).
#[derive(Debug, Clone, Copy)]
struct PublicResolver;

impl tonic::codegen::Service<Name> for PublicResolver {
    type Response = std::vec::IntoIter<std::net::SocketAddr>;
    type Error = std::io::Error;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, Self::Error>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let host = name.as_str().to_owned();
        Box::pin(async move { Ok(holm_client::address::resolve_public(&host).await?.into_iter()) })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::runtime::modal::api::ModalApi;
    use crate::runtime::remote::Key;

    /// A Modal API named `localhost` is refused at connect time for a
    /// public-only runtime, and the listener there accepts nothing; allowed,
    /// the same name is reached.
    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_unless_allowed() {
        let api = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = api.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        tokio::spawn(async move {
            while let Ok((s, _)) = api.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                drop(s);
            }
        });
        let url = format!("http://localhost:{port}");
        let modal = |addresses| ModalApi::new(&url, "ak-1", Key::new("as-secret-1"), addresses);
        let e = modal(Addresses::Public).unwrap().hello().await.unwrap_err();
        let text = format!("{e} {e:?}");
        assert!(text.contains("is not a public address"), "{text}");
        assert!(!text.contains("as-secret-1"), "{text}");
        assert_eq!(accepted.load(Ordering::SeqCst), 0, "a refused API was reached");
        // Allowed, the name is connected to (the listener answers no gRPC,
        // so the call fails, after a connection).
        let _ = modal(Addresses::Any).unwrap().hello().await;
        assert!(accepted.load(Ordering::SeqCst) >= 1, "an allowed API was not reached");
    }
}
