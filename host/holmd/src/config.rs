//! holmd's configuration, from the environment.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `HOLM_SERVER_ADDR` | `127.0.0.1:8080` | where to listen |
//! | `HOLM_SERVER_TOKEN` | unset | the bearer token every route but `/v1/health` and `/v1/openapi.json` needs |
//! | `HOLM_STATE_DIR` | `$XDG_STATE_HOME/holm`, else `~/.local/state/holm` | where box records live |
//! | `HOLM_SERVER_RUNTIMES` | every runtime found | offer only these, such as `docker` |
//! | `HOLM_PUBLIC_URL` | unset | the address clients use, behind a proxy |
//! | `RUST_LOG` | `holmd=info,holm=info` | log levels |
//!
//! Without `HOLM_SERVER_TOKEN` the server answers without a credential, and
//! therefore refuses to listen on anything but a loopback address.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

/// The server's configuration.
#[derive(Clone)]
pub struct ServerConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token, if any. Never logged.
    pub token: Option<String>,
    /// Where records are kept.
    pub state_dir: PathBuf,
    /// The runtimes to offer, when limited.
    pub runtimes: Option<Vec<String>>,
    /// The public address, behind a proxy.
    pub public_url: Option<String>,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("state_dir", &self.state_dir)
            .field("runtimes", &self.runtimes)
            .field("public_url", &self.public_url)
            .finish()
    }
}

impl ServerConfig {
    /// Reads the configuration from the environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let get = |k: &str| get(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let addr: SocketAddr = match get("HOLM_SERVER_ADDR") {
            None => SocketAddr::from(([127, 0, 0, 1], 8080)),
            Some(v) => v.parse().map_err(|_| {
                format!("HOLM_SERVER_ADDR={v:?} is not HOST:PORT, such as 127.0.0.1:8080")
            })?,
        };
        let token = get("HOLM_SERVER_TOKEN");
        if let Some(t) = &token {
            if t.len() < 16 {
                return Err("HOLM_SERVER_TOKEN is shorter than 16 characters; make one with: openssl rand -hex 32".into());
            }
        } else if !addr.ip().is_loopback() {
            return Err(format!(
                "HOLM_SERVER_ADDR={addr} is not a loopback address, and HOLM_SERVER_TOKEN is not set: \
                 set a token, or listen on 127.0.0.1"
            ));
        }
        let state_dir = match get("HOLM_STATE_DIR") {
            Some(d) => PathBuf::from(d),
            None => match (get("XDG_STATE_HOME"), get("HOME")) {
                (Some(x), _) => PathBuf::from(x).join("holm"),
                (None, Some(h)) => PathBuf::from(h).join(".local/state/holm"),
                (None, None) => PathBuf::from("/var/lib/holm/state"),
            },
        };
        let runtimes = get("HOLM_SERVER_RUNTIMES")
            .map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect());
        let public_url = get("HOLM_PUBLIC_URL").map(|u| u.trim_end_matches('/').to_owned());
        Ok(Self { addr, token, state_dir, runtimes, public_url })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(pairs: &[(&str, &str)]) -> Result<ServerConfig, String> {
        let map: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        ServerConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn defaults_listen_on_loopback_without_a_token() {
        let c = cfg(&[("HOME", "/home/u")]).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:8080");
        assert!(c.token.is_none());
        assert_eq!(c.state_dir, PathBuf::from("/home/u/.local/state/holm"));
    }

    #[test]
    fn a_public_address_needs_a_token() {
        let e = cfg(&[("HOLM_SERVER_ADDR", "0.0.0.0:8080")]).unwrap_err();
        assert!(e.contains("HOLM_SERVER_TOKEN"), "{e}");
        let c = cfg(&[
            ("HOLM_SERVER_ADDR", "0.0.0.0:8080"),
            ("HOLM_SERVER_TOKEN", "0123456789abcdef0123"),
        ])
        .unwrap();
        assert!(c.token.is_some());
        assert!(!format!("{c:?}").contains("0123456789abcdef"));
    }

    #[test]
    fn bad_values_name_the_variable() {
        assert!(cfg(&[("HOLM_SERVER_ADDR", "here")]).unwrap_err().contains("HOLM_SERVER_ADDR"));
        assert!(cfg(&[("HOLM_SERVER_TOKEN", "short")]).unwrap_err().contains("HOLM_SERVER_TOKEN"));
    }

    #[test]
    fn runtimes_filter() {
        let c = cfg(&[("HOLM_SERVER_RUNTIMES", "docker, podman")]).unwrap();
        assert_eq!(c.runtimes.unwrap(), ["docker", "podman"]);
    }
}
