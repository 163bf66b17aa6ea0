//! Finding the Docker engine the way the docker CLI does.
//!
//! Without a context named in the runtimes file: `DOCKER_HOST`, else
//! `DOCKER_CONTEXT`, else `currentContext` in `config.json`, else the local
//! socket. A named context is read from the CLI's context store:
//! `$DOCKER_CONFIG/contexts/meta/<sha256 of the name>/meta.json` (with
//! `DOCKER_CONFIG` defaulting to `~/.docker`), whose `Endpoints.docker.Host`
//! is the engine's address.

use std::path::PathBuf;

use sha2::{Digest, Sha256};

/// Where an engine listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EngineAddress {
    /// The defaults: `DOCKER_HOST` or the local socket.
    Defaults,
    /// A Unix socket.
    Unix(String),
    /// Plain HTTP over TCP, such as `tcp://10.0.0.5:2375`.
    Http(String),
}

/// Why an engine could not be found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContextError {
    /// No such context.
    #[error("there is no Docker context named {name:?} (looked for {path})")]
    Missing {
        /// The context's name.
        name: String,
        /// Where its metadata should be.
        path: String,
    },
    /// The context's files could not be read.
    #[error("the Docker context {name:?} cannot be read: {reason}")]
    Unreadable {
        /// The context's name.
        name: String,
        /// Why.
        reason: String,
    },
    /// The context points at an address holm cannot use yet.
    #[error("the Docker context {name:?} points at {host}, which holm cannot reach yet: {reason}")]
    Unsupported {
        /// The context's name.
        name: String,
        /// Its address.
        host: String,
        /// Why.
        reason: String,
    },
}

fn config_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    env("DOCKER_CONFIG")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| PathBuf::from(h).join(".docker")))
        .unwrap_or_else(|| PathBuf::from("/root/.docker"))
}

/// Resolves `context` (or, without one, what the CLI would use) to an endpoint.
pub fn resolve(context: Option<&str>) -> Result<EngineAddress, ContextError> {
    resolve_with(context, &|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
}

/// [`resolve`] with the environment given.
pub fn resolve_with(
    context: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<EngineAddress, ContextError> {
    let dir = config_dir(env);
    let name = match context {
        Some(name) => name.to_owned(),
        None => {
            if env("DOCKER_HOST").is_some() {
                return Ok(EngineAddress::Defaults);
            }
            let current = env("DOCKER_CONTEXT").or_else(|| {
                let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
                let v: serde_json::Value = serde_json::from_str(&text).ok()?;
                v.get("currentContext")?.as_str().map(str::to_owned)
            });
            match current {
                Some(c) => c,
                None => return Ok(EngineAddress::Defaults),
            }
        }
    };
    if name == "default" {
        return Ok(EngineAddress::Defaults);
    }
    let hash = hex::encode(Sha256::digest(name.as_bytes()));
    let meta = dir.join("contexts/meta").join(&hash).join("meta.json");
    let text = match std::fs::read_to_string(&meta) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ContextError::Missing { name, path: meta.display().to_string() });
        }
        Err(e) => return Err(ContextError::Unreadable { name, reason: e.to_string() }),
    };
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| ContextError::Unreadable { name: name.clone(), reason: e.to_string() })?;
    let host = v
        .pointer("/Endpoints/docker/Host")
        .and_then(|h| h.as_str())
        .ok_or_else(|| ContextError::Unreadable {
            name: name.clone(),
            reason: "it has no Endpoints.docker.Host".into(),
        })?
        .to_owned();
    let tls = dir.join("contexts/tls").join(&hash).join("docker");
    if let Some(path) = host.strip_prefix("unix://") {
        return Ok(EngineAddress::Unix(path.to_owned()));
    }
    if host.starts_with("tcp://") || host.starts_with("http://") {
        if tls.exists() {
            return Err(ContextError::Unsupported {
                name,
                host,
                reason: "it uses TLS client certificates; reach it through an SSH tunnel or a local socket".into(),
            });
        }
        return Ok(EngineAddress::Http(host.replacen("tcp://", "http://", 1)));
    }
    Err(ContextError::Unsupported {
        name,
        host,
        reason: "only unix:// and tcp:// addresses are supported".into(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn store(dir: &std::path::Path, name: &str, host: &str) {
        let hash = hex::encode(Sha256::digest(name.as_bytes()));
        let meta = dir.join("contexts/meta").join(hash);
        std::fs::create_dir_all(&meta).unwrap();
        let json = serde_json::json!({"Name": name, "Metadata": {}, "Endpoints": {"docker": {"Host": host, "SkipTLSVerify": false}}});
        std::fs::write(meta.join("meta.json"), json.to_string()).unwrap();
    }

    fn env(pairs: &[(&str, String)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn a_named_context_is_read_from_the_store() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), "gpu-1", "unix:///run/gpu/docker.sock");
        store(dir.path(), "remote", "tcp://10.1.2.3:2375");
        let e = env(&[("DOCKER_CONFIG", dir.path().display().to_string())]);
        assert_eq!(
            resolve_with(Some("gpu-1"), &e).unwrap(),
            EngineAddress::Unix("/run/gpu/docker.sock".into())
        );
        assert_eq!(
            resolve_with(Some("remote"), &e).unwrap(),
            EngineAddress::Http("http://10.1.2.3:2375".into())
        );
        assert_eq!(resolve_with(Some("default"), &e).unwrap(), EngineAddress::Defaults);
        let missing = resolve_with(Some("nope"), &e).unwrap_err();
        assert!(matches!(missing, ContextError::Missing { .. }), "{missing}");
    }

    #[test]
    fn without_a_name_the_cli_order_holds() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), "ctx-a", "unix:///a.sock");
        store(dir.path(), "ctx-b", "unix:///b.sock");
        std::fs::write(dir.path().join("config.json"), r#"{"currentContext": "ctx-b"}"#).unwrap();
        let cfg = dir.path().display().to_string();
        // DOCKER_HOST wins over everything.
        let e = env(&[
            ("DOCKER_CONFIG", cfg.clone()),
            ("DOCKER_HOST", "unix:///x".into()),
            ("DOCKER_CONTEXT", "ctx-a".into()),
        ]);
        assert_eq!(resolve_with(None, &e).unwrap(), EngineAddress::Defaults);
        // Then DOCKER_CONTEXT.
        let e = env(&[("DOCKER_CONFIG", cfg.clone()), ("DOCKER_CONTEXT", "ctx-a".into())]);
        assert_eq!(resolve_with(None, &e).unwrap(), EngineAddress::Unix("/a.sock".into()));
        // Then currentContext.
        let e = env(&[("DOCKER_CONFIG", cfg)]);
        assert_eq!(resolve_with(None, &e).unwrap(), EngineAddress::Unix("/b.sock".into()));
        // Then the defaults.
        let empty = tempfile::tempdir().unwrap();
        let e = env(&[("DOCKER_CONFIG", empty.path().display().to_string())]);
        assert_eq!(resolve_with(None, &e).unwrap(), EngineAddress::Defaults);
    }

    #[test]
    fn addresses_holm_cannot_reach_are_refused_with_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        store(dir.path(), "ssh", "ssh://me@host");
        store(dir.path(), "tls", "tcp://10.0.0.1:2376");
        let hash = hex::encode(Sha256::digest(b"tls"));
        std::fs::create_dir_all(dir.path().join("contexts/tls").join(hash).join("docker")).unwrap();
        let e = env(&[("DOCKER_CONFIG", dir.path().display().to_string())]);
        let err = resolve_with(Some("ssh"), &e).unwrap_err().to_string();
        assert!(err.contains("ssh://me@host") && err.contains("unix://"), "{err}");
        let err = resolve_with(Some("tls"), &e).unwrap_err().to_string();
        assert!(err.contains("TLS"), "{err}");
    }
}
