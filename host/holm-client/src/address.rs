//! Which addresses a client may connect to, checked on every connection.
//!
//! A cloud vendor's API, and the endpoints it hands back (preview URLs,
//! proxies, upload URLs), are reached with [`Addresses::Public`] unless the
//! runtime explicitly allows private addresses: then a name is resolved
//! **at connect time** by [`client_builder`]'s resolver, which refuses the
//! whole name when any address it resolves to is not public (loopback,
//! private, link-local — cloud metadata at `169.254.169.254` and
//! `fd00:ec2::254` included —, shared (CGNAT), unique-local, unspecified,
//! multicast, documentation, benchmarking, NAT64), so a name that changes
//! its answer after it was checked (DNS rebinding) is caught on the
//! connection that uses it. An address written in a URL (`http://10.0.0.1`)
//! is never resolved, so it is checked where the URL is used
//! ([`check_url`]). Such a client takes no proxy from the environment (a
//! proxy would resolve the name itself, out of reach of the check).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Which addresses a client may connect to.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Addresses {
    /// Public unicast addresses only: the default for a cloud vendor.
    #[default]
    Public,
    /// Any address: a runtime whose operator allowed private addresses
    /// (a self-hosted vendor on a private network, the tests' stand-ins on
    /// loopback), and a host engine's loopback ports.
    Any,
}

/// Whether `ip` is a public unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b)) // shared (CGNAT)
                || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
                || (a == 198 && (b == 18 || b == 19)) // benchmarking
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local (fd00:ec2::254 too)
                || (first & 0xffc0) == 0xfe80 // link-local
                || (first & 0xffc0) == 0xfec0 // site-local
                || first == 0x2001 && v6.segments()[1] == 0x0db8 // documentation
                || first == 0x0064 && v6.segments()[1] == 0xff9b) // NAT64
        }
    }
}

/// The refusal of `host` at `ip`.
fn refusal(host: &str, ip: IpAddr) -> String {
    let at =
        if host == ip.to_string() { String::new() } else { format!(" resolves to {ip}, which") };
    format!(
        "{host}{at} is not a public address (loopback, private, link-local, shared or metadata \
         ranges are refused); a runtime reaches such addresses only when its table in the \
         runtimes file says allow_private_addresses = true"
    )
}

/// Checks the host of `url` when it is an IP address (a name is checked by
/// [`client_builder`]'s resolver on each connection). `Any` allows all.
pub fn check_url(url: &str, addresses: Addresses) -> Result<(), String> {
    if addresses == Addresses::Any {
        return Ok(());
    }
    let parsed = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(url::Host::Domain(_)) => return Ok(()),
        None => return Err(format!("{url:?} has no host")),
    };
    if is_public(ip) { Ok(()) } else { Err(refusal(&ip.to_string(), ip)) }
}

/// The resolver of [`Addresses::Public`]: the system's, refusing a name
/// any of whose addresses is not public.
#[derive(Debug, Clone, Copy)]
struct PublicOnly;

impl reqwest::dns::Resolve for PublicOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let addrs: reqwest::dns::Addrs = Box::new(resolve_public(&host).await?.into_iter());
            Ok(addrs)
        })
    }
}

/// Resolves `host` with the system's resolver, refusing it (permission
/// denied, with the reason) when any of its addresses is not public: the
/// check of [`Addresses::Public`] for a client that connects by itself (a
/// gRPC channel), at each connection.
pub async fn resolve_public(host: &str) -> std::io::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, 0)).await?.collect();
    if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            refusal(host, bad.ip()),
        ));
    }
    Ok(addrs)
}

/// [`crate::client_builder`] for a client that may connect to `addresses`:
/// for [`Addresses::Public`], with the checking resolver and no proxy.
pub fn client_builder(addresses: Addresses) -> reqwest::ClientBuilder {
    let builder = crate::client_builder();
    match addresses {
        Addresses::Any => builder,
        Addresses::Public => builder.dns_resolver(Arc::new(PublicOnly)).no_proxy(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_public_unicast_addresses_are_public() {
        for ok in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(is_public(ok.parse().unwrap()), "{ok}");
        }
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "::1",
            "::",
            "fd00:ec2::254",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "2001:db8::1",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(!is_public(bad.parse().unwrap()), "{bad}");
        }
    }

    #[test]
    fn an_address_in_a_url_is_checked_and_a_name_is_left_to_the_resolver() {
        for bad in ["http://127.0.0.1:8080", "https://169.254.169.254/x", "http://[fd00:ec2::254]"]
        {
            let e = check_url(bad, Addresses::Public).unwrap_err();
            assert!(e.contains("not a public address"), "{e}");
            assert!(check_url(bad, Addresses::Any).is_ok());
        }
        assert!(check_url("https://8.8.8.8", Addresses::Public).is_ok());
        assert!(check_url("https://api.e2b.app", Addresses::Public).is_ok());
    }

    /// A name that resolves to loopback (`localhost`) is refused on the
    /// connection by a public-only client, and the listener behind it is
    /// never reached; a client that allows any address reaches it.
    #[tokio::test]
    async fn a_name_that_resolves_to_loopback_is_refused_at_connect_time() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut buf = [0u8; 1024];
                let _ = s.read(&mut buf).await;
                let _ = s.write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n").await;
            }
        });
        let url = format!("http://localhost:{port}/");
        let public = client_builder(Addresses::Public).build().unwrap();
        let e = public.get(&url).send().await.unwrap_err();
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            text = format!("{text}: {s}");
            source = s.source();
        }
        assert!(e.is_connect(), "{text}");
        assert!(text.contains("localhost resolves to"), "{text}");
        assert!(text.contains("allow_private_addresses"), "{text}");
        let any = client_builder(Addresses::Any).no_proxy().build().unwrap();
        let r = any.get(&url).send().await.unwrap();
        assert_eq!(r.status(), 204);
        // The only connection the listener ever took is the second client's.
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    }
}
