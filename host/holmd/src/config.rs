//! holmd's configuration, from the environment.
//!
//! The variables, their defaults and meanings are declared once, in
//! [`crate::vars`] (and `docs/config.md` is made from there).
//!
//! Without a token the server answers without a credential, and therefore
//! refuses to start when it would answer beyond loopback: a bind address
//! that is not loopback, or a `HOLM_PUBLIC_URL` (a proxy forwards the
//! internet to loopback). `HOLM_INSECURE_NO_TOKEN=1` or the
//! `--insecure-no-token` flag is the only way past ([`Exposure`]).

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

use crate::registry::EnvSandbox;
use crate::store::StoreConfig;

/// The server's configuration.
#[derive(Clone)]
pub struct ServerConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The bearer token, if any. Never logged.
    pub token: Option<String>,
    /// How far the server answers without a token.
    pub exposure: Exposure,
    /// Where records are kept.
    pub state_dir: PathBuf,
    /// The runtimes to offer, when limited.
    pub runtimes: Option<Vec<String>>,
    /// The public address, behind a proxy.
    pub public_url: Option<String>,
    /// Where records are kept.
    pub storage: StoreConfig,
    /// `HOLM_SHARED_STORE`: other replicas use the store too.
    pub shared_store: bool,
    /// The name on this server's boxes.
    pub server_name: String,
    /// `HOLM_SERVER_CONFIG`: the runtimes file.
    pub config_file: Option<PathBuf>,
    /// `HOLM_SERVER_SECRET_KEY`. Never logged.
    pub secret_key: Option<String>,
    /// `HOLM_SERVER_SECRET_FILE`.
    pub secret_file: Option<PathBuf>,
    /// `HOLM_SERVER_SANDBOXES`, with each vendor's settings and key.
    pub sandboxes: Vec<EnvSandbox>,
    /// `HOLM_MAX_BOXES`, `HOLM_MAX_BUILDS`, `HOLM_RECORD_RETENTION`,
    /// `HOLM_IMAGE_CACHE`, `HOLM_TIMELINE_SCREENSHOTS`, `HOLM_TIMELINE_BYTES`.
    pub limits: crate::service::Limits,
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("addr", &self.addr)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("exposure", &self.exposure)
            .field("state_dir", &self.state_dir)
            .field("runtimes", &self.runtimes)
            .field("public_url", &self.public_url)
            .field("storage", &self.storage)
            .field("server_name", &self.server_name)
            .field("config_file", &self.config_file)
            .field("secret_key", &self.secret_key.as_ref().map(|_| "<set>"))
            .field("secret_file", &self.secret_file)
            .field("sandboxes", &self.sandboxes)
            .field("limits", &self.limits)
            .finish()
    }
}

impl ServerConfig {
    /// Reads the configuration from the environment.
    pub fn from_env() -> Result<Self, String> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration from the environment and holmd's arguments
    /// (only [`INSECURE_NO_TOKEN_FLAG`] is known; anything else is refused).
    pub fn from_env_and_args(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut insecure = false;
        for a in args {
            if a == INSECURE_NO_TOKEN_FLAG {
                insecure = true;
            } else {
                return Err(format!(
                    "unknown argument {a:?}: holmd takes only {INSECURE_NO_TOKEN_FLAG}; \
                     everything else is set by environment variables (docs/config.md)"
                ));
            }
        }
        Self::from_lookup(|k| {
            if insecure && k == INSECURE_NO_TOKEN {
                return Some("1".to_owned());
            }
            std::env::var(k).ok()
        })
    }

    /// Reads the configuration through `get`.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let get = |k: &str| get(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let addr: SocketAddr = match get(crate::vars::SERVER_ADDR) {
            None => SocketAddr::from(([127, 0, 0, 1], 8080)),
            Some(v) => v.parse().map_err(|_| {
                format!("HOLM_SERVER_ADDR={v:?} is not HOST:PORT, such as 127.0.0.1:8080")
            })?,
        };
        let token = token(&get)?;
        let public_url = get(crate::vars::PUBLIC_URL).map(|u| u.trim_end_matches('/').to_owned());
        let insecure = match get(INSECURE_NO_TOKEN).as_deref() {
            None | Some("0") => false,
            Some("1") => true,
            Some(v) => return Err(format!("{INSECURE_NO_TOKEN}={v:?} is not 1 or 0")),
        };
        let exposure = exposure(token.is_some(), addr, public_url.as_deref(), insecure)?;
        let state_dir = match get(crate::vars::STATE_DIR) {
            Some(d) => PathBuf::from(d),
            None => match (get("XDG_STATE_HOME"), get("HOME")) {
                (Some(x), _) => PathBuf::from(x).join("holm"),
                (None, Some(h)) => PathBuf::from(h).join(".local/state/holm"),
                (None, None) => PathBuf::from("/var/lib/holm/state"),
            },
        };
        let runtimes = get(crate::vars::SERVER_RUNTIMES)
            .map(|v| v.split(',').map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect());
        let storage = match get(crate::vars::STORAGE_BACKEND).as_deref().unwrap_or("local") {
            "local" => StoreConfig::Local { dir: state_dir.clone() },
            "sqlite" => StoreConfig::Sqlite {
                path: get(crate::vars::SQLITE_PATH)
                    .map_or_else(|| state_dir.join("holm.db"), PathBuf::from),
            },
            "postgres" => StoreConfig::Postgres {
                url: get(crate::vars::DATABASE_URL).ok_or(
                    "HOLM_STORAGE_BACKEND=postgres needs HOLM_DATABASE_URL, such as postgres://holm:PASSWORD@127.0.0.1:5432/holm",
                )?,
            },
            "s3" => StoreConfig::S3(crate::store::s3::S3Config::from_lookup(&get)?),
            other => {
                return Err(format!(
                    "HOLM_STORAGE_BACKEND={other:?} is not one of local, sqlite, postgres, s3"
                ));
            }
        };
        let shared_store = shared_store(&get, &storage)?;
        let server_name = get(crate::vars::SERVER_NAME)
            .unwrap_or_else(|| crate::service::DEFAULT_SERVER_NAME.to_owned());
        if server_name.len() > 63
            || !server_name.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        {
            return Err(format!(
                "HOLM_SERVER_NAME={server_name:?} must be 1 to 63 letters, digits, '-', '_' or '.'"
            ));
        }
        let config_file = get(crate::vars::SERVER_CONFIG).map(PathBuf::from);
        let secret_key = get(crate::vars::SERVER_SECRET_KEY);
        if let Some(k) = &secret_key
            && k.len() < crate::registry::MIN_SECRET_KEY_LEN
        {
            return Err(format!(
                "HOLM_SERVER_SECRET_KEY is shorter than {} characters; make one with: openssl rand -hex 32",
                crate::registry::MIN_SECRET_KEY_LEN
            ));
        }
        let secret_file = get(crate::vars::SERVER_SECRET_FILE).map(PathBuf::from);
        let sandboxes = match get(crate::vars::SERVER_SANDBOXES) {
            Some(list) => crate::registry::env_sandboxes(&list, &get)?,
            None => Vec::new(),
        };
        let limits = limits(&get)?;
        Ok(Self {
            limits,
            addr,
            token,
            exposure,
            state_dir,
            runtimes,
            public_url,
            storage,
            shared_store,
            server_name,
            config_file,
            secret_key,
            secret_file,
            sandboxes,
        })
    }
}

pub use crate::vars::INSECURE_NO_TOKEN;
/// The command-line flag with the same meaning.
pub const INSECURE_NO_TOKEN_FLAG: &str = "--insecure-no-token";

/// How far a server answers without a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// A token guards every route but health and the OpenAPI document.
    Token,
    /// No token, and nothing but loopback clients reach it.
    LoopbackOnly,
    /// No token, beyond loopback, because the operator said so
    /// (`HOLM_INSECURE_NO_TOKEN=1` or `--insecure-no-token`).
    InsecureNoToken,
}

/// The token: `HOLM_SERVER_TOKEN`, else the file `HOLM_SERVER_TOKEN_FILE`
/// names, else systemd's credential `$CREDENTIALS_DIRECTORY/token` when it
/// is there. A file that is named but missing, unreadable or empty is an
/// error, never a server without a token.
fn token(get: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>, String> {
    let file = match (get(crate::vars::SERVER_TOKEN), get(crate::vars::SERVER_TOKEN_FILE)) {
        (Some(_), Some(_)) => {
            return Err("both HOLM_SERVER_TOKEN and HOLM_SERVER_TOKEN_FILE are set: set one".into());
        }
        (Some(t), None) => return check_token(t, "HOLM_SERVER_TOKEN").map(Some),
        (None, Some(f)) => Some((PathBuf::from(f), "HOLM_SERVER_TOKEN_FILE")),
        (None, None) => get("CREDENTIALS_DIRECTORY")
            .map(|d| PathBuf::from(d).join("token"))
            .filter(|p| p.exists())
            .map(|p| (p, "$CREDENTIALS_DIRECTORY/token")),
    };
    let Some((path, what)) = file else { return Ok(None) };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{what}: cannot read {}: {e}", path.display()))?;
    let t = text.trim();
    if t.is_empty() {
        return Err(format!(
            "{what}: {} is empty; write a token into it: openssl rand -hex 32",
            path.display()
        ));
    }
    check_token(t.to_owned(), what).map(Some)
}

fn check_token(t: String, what: &str) -> Result<String, String> {
    if t.len() < 16 {
        return Err(format!(
            "{what}: the token is shorter than 16 characters; make one with: openssl rand -hex 32"
        ));
    }
    Ok(t)
}

/// Whether the server may start: without a token it answers only loopback
/// clients, unless the operator opted out.
fn exposure(
    has_token: bool,
    addr: SocketAddr,
    public_url: Option<&str>,
    insecure: bool,
) -> Result<Exposure, String> {
    if has_token {
        if insecure {
            return Err(format!(
                "{INSECURE_NO_TOKEN} (or {INSECURE_NO_TOKEN_FLAG}) is set with a token: \
                 drop one of them"
            ));
        }
        return Ok(Exposure::Token);
    }
    if insecure {
        return Ok(Exposure::InsecureNoToken);
    }
    if !addr.ip().is_loopback() {
        return Err(format!(
            "HOLM_SERVER_ADDR={addr} is not a loopback address, and no token is set: \
             set HOLM_SERVER_TOKEN or HOLM_SERVER_TOKEN_FILE, or listen on 127.0.0.1 \
             ({INSECURE_NO_TOKEN}=1 answers everyone without a credential)"
        ));
    }
    if let Some(url) = public_url {
        return Err(format!(
            "HOLM_PUBLIC_URL={url} puts holmd behind a proxy, and no token is set: \
             set HOLM_SERVER_TOKEN or HOLM_SERVER_TOKEN_FILE, or unset HOLM_PUBLIC_URL \
             ({INSECURE_NO_TOKEN}=1 answers everyone without a credential)"
        ));
    }
    Ok(Exposure::LoopbackOnly)
}

/// The server's limits from the environment.
/// `HOLM_SHARED_STORE`: `1` or `0`; sharing needs a store other
/// processes can reach, `postgres` or `s3`.
fn shared_store(
    get: &dyn Fn(&str) -> Option<String>,
    storage: &StoreConfig,
) -> Result<bool, String> {
    let shared = match get(crate::vars::SHARED_STORE).as_deref().map(str::trim) {
        None | Some("" | "0" | "false") => false,
        Some("1" | "true") => true,
        Some(other) => return Err(format!("HOLM_SHARED_STORE={other:?} is not 1 or 0")),
    };
    if shared && !matches!(storage, StoreConfig::Postgres { .. } | StoreConfig::S3(_)) {
        return Err(format!(
            "HOLM_SHARED_STORE=1 needs a store replicas can share (HOLM_STORAGE_BACKEND=postgres \
             or s3), not {}",
            storage.backend()
        ));
    }
    Ok(shared)
}

fn limits(get: &dyn Fn(&str) -> Option<String>) -> Result<crate::service::Limits, String> {
    let mut l = crate::service::Limits::default();
    let count = |key: &str, default: usize| -> Result<usize, String> {
        match get(key) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=100_000).contains(n))
                .ok_or_else(|| format!("{key}={v:?} is not a number from 1 to 100000")),
        }
    };
    l.max_boxes = count("HOLM_MAX_BOXES", l.max_boxes)?;
    l.max_builds = count("HOLM_MAX_BUILDS", l.max_builds)?;
    if let Some(v) = get(crate::vars::RECORD_RETENTION) {
        l.record_retention_secs = crate::runtimes_file::parse_duration(&v)
            .map_err(|e| format!("HOLM_RECORD_RETENTION: {e}"))?;
    }
    l.timeline_screenshots = count("HOLM_TIMELINE_SCREENSHOTS", l.timeline_screenshots)?;
    if let Some(v) = get(crate::vars::TIMELINE_BYTES) {
        l.timeline_bytes =
            holm::spec::parse_memory(&v).map_err(|e| format!("HOLM_TIMELINE_BYTES: {e}"))?;
    }
    if let Some(v) = get(crate::vars::TIMELINES_KEPT) {
        l.timelines_kept_bytes =
            holm::spec::parse_memory(&v).map_err(|e| format!("HOLM_TIMELINES_KEPT: {e}"))?;
    }
    if let Some(v) = get(crate::vars::RECORDINGS_KEPT) {
        l.recordings_bytes =
            holm::spec::parse_memory(&v).map_err(|e| format!("HOLM_RECORDINGS_KEPT: {e}"))?;
    }
    if let Some(v) = get(crate::vars::IMAGE_CACHE) {
        l.image_cache_bytes = if v == "off" {
            None
        } else {
            Some(
                holm::spec::parse_memory(&v)
                    .map_err(|e| format!("HOLM_IMAGE_CACHE: {e}, or off"))?,
            )
        };
    }
    Ok(l)
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
    fn a_proxy_needs_a_token_and_only_the_opt_out_goes_past() {
        let public = ("HOLM_PUBLIC_URL", "https://boxes.example.com/");
        let e = cfg(&[public]).unwrap_err();
        assert!(e.contains("HOLM_PUBLIC_URL=https://boxes.example.com"), "{e}");
        let c = cfg(&[public, (INSECURE_NO_TOKEN, "1")]).unwrap();
        assert_eq!(c.exposure, Exposure::InsecureNoToken);
        let c = cfg(&[("HOLM_SERVER_ADDR", "0.0.0.0:1"), (INSECURE_NO_TOKEN, "1")]).unwrap();
        assert_eq!(c.exposure, Exposure::InsecureNoToken);
        assert_eq!(cfg(&[(INSECURE_NO_TOKEN, "0")]).unwrap().exposure, Exposure::LoopbackOnly);
        let c = cfg(&[public, ("HOLM_SERVER_TOKEN", "0123456789abcdef0123")]).unwrap();
        assert_eq!(c.exposure, Exposure::Token);
        assert!(cfg(&[(INSECURE_NO_TOKEN, "true")]).unwrap_err().contains(INSECURE_NO_TOKEN));
        let both = [("HOLM_SERVER_TOKEN", "0123456789abcdef0123"), (INSECURE_NO_TOKEN, "1")];
        assert!(cfg(&both).unwrap_err().contains(INSECURE_NO_TOKEN));
        let e = ServerConfig::from_env_and_args(["--open".to_owned()]).unwrap_err();
        assert!(e.contains(INSECURE_NO_TOKEN_FLAG), "{e}");
    }

    #[test]
    fn a_token_file_gives_the_token_or_stops_the_start() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good");
        std::fs::write(&good, "0123456789abcdef0123\n").unwrap();
        let good = good.to_str().unwrap();
        let c = cfg(&[("HOLM_SERVER_TOKEN_FILE", good)]).unwrap();
        assert_eq!(c.token.as_deref(), Some("0123456789abcdef0123"));
        let both =
            [("HOLM_SERVER_TOKEN_FILE", good), ("HOLM_SERVER_TOKEN", "0123456789abcdef0123")];
        assert!(cfg(&both).unwrap_err().contains("set one"));
        let creds = dir.path().to_str().unwrap();
        std::fs::write(dir.path().join("token"), "  ").unwrap();
        let e = cfg(&[("CREDENTIALS_DIRECTORY", creds)]).unwrap_err();
        assert!(e.contains("$CREDENTIALS_DIRECTORY/token") && e.contains("is empty"), "{e}");
        std::fs::write(dir.path().join("token"), "0123456789abcdef0123").unwrap();
        let c = cfg(&[("CREDENTIALS_DIRECTORY", creds)]).unwrap();
        assert_eq!(c.exposure, Exposure::Token);
        // A credentials directory without a token is no token (other
        // credentials may be passed), and the rules for none apply.
        let other = tempfile::tempdir().unwrap();
        let c = cfg(&[("CREDENTIALS_DIRECTORY", other.path().to_str().unwrap())]).unwrap();
        assert_eq!(c.exposure, Exposure::LoopbackOnly);
        let missing = dir.path().join("missing");
        let e = cfg(&[("HOLM_SERVER_TOKEN_FILE", missing.to_str().unwrap())]).unwrap_err();
        assert!(e.contains("HOLM_SERVER_TOKEN_FILE") && e.contains("cannot read"), "{e}");
    }

    #[test]
    fn bad_values_name_the_variable() {
        assert!(cfg(&[("HOLM_SERVER_ADDR", "here")]).unwrap_err().contains("HOLM_SERVER_ADDR"));
        assert!(cfg(&[("HOLM_SERVER_TOKEN", "short")]).unwrap_err().contains("HOLM_SERVER_TOKEN"));
    }

    #[test]
    fn storage_backends_and_their_settings() {
        let c = cfg(&[("HOLM_STATE_DIR", "/var/lib/holm")]).unwrap();
        assert_eq!(c.storage, StoreConfig::Local { dir: "/var/lib/holm".into() });
        assert_eq!(c.server_name, "holmd");
        let c = cfg(&[("HOLM_STATE_DIR", "/s"), ("HOLM_STORAGE_BACKEND", "sqlite")]).unwrap();
        assert_eq!(c.storage, StoreConfig::Sqlite { path: "/s/holm.db".into() });
        let e = cfg(&[("HOLM_STORAGE_BACKEND", "postgres")]).unwrap_err();
        assert!(e.contains("HOLM_DATABASE_URL"), "{e}");
        let c = cfg(&[
            ("HOLM_STORAGE_BACKEND", "postgres"),
            ("HOLM_DATABASE_URL", "postgres://holm:pw-hunter2@db/holm"),
        ])
        .unwrap();
        assert!(!format!("{c:?}").contains("hunter2"));
        assert_eq!(c.storage.describe(), "postgres://holm@db/holm");
        let e = cfg(&[("HOLM_STORAGE_BACKEND", "s3")]).unwrap_err();
        assert!(e.contains("HOLM_S3_BUCKET"), "{e}");
        let e = cfg(&[("HOLM_STORAGE_BACKEND", "mongo")]).unwrap_err();
        assert!(e.contains("local, sqlite, postgres, s3"), "{e}");
        assert!(cfg(&[("HOLM_SERVER_NAME", "a b")]).unwrap_err().contains("HOLM_SERVER_NAME"));
    }

    #[test]
    fn only_a_postgres_or_s3_store_is_shared_by_replicas() {
        let pg = [("HOLM_STORAGE_BACKEND", "postgres"), ("HOLM_DATABASE_URL", "postgres://db/h")];
        assert!(!cfg(&pg).unwrap().shared_store, "a store of its own unless said");
        let shared = cfg(&[pg[0], pg[1], ("HOLM_SHARED_STORE", "1")]).unwrap();
        assert!(shared.shared_store);
        let e = cfg(&[pg[0], pg[1], ("HOLM_SHARED_STORE", "yes")]).unwrap_err();
        assert!(e.contains("HOLM_SHARED_STORE"), "{e}");
        for local in [[("HOLM_STORAGE_BACKEND", "local")], [("HOLM_STORAGE_BACKEND", "sqlite")]] {
            let e = cfg(&[local[0], ("HOLM_SHARED_STORE", "1")]).unwrap_err();
            assert!(e.contains("postgres or s3"), "{e}");
        }
    }

    #[test]
    fn sandboxes_read_the_vendors_own_variables() {
        let c = cfg(&[
            ("HOLM_SERVER_SANDBOXES", "e2b,modal"),
            ("E2B_API_KEY", "e2b_secret_value"),
            ("MODAL_TOKEN_ID", "ak-1"),
            ("MODAL_TOKEN_SECRET", "as-secret-value"),
        ])
        .unwrap();
        assert_eq!(c.sandboxes.len(), 2);
        assert_eq!(c.sandboxes[1].fields["token_id"], "ak-1");
        assert_eq!(c.sandboxes[1].key, "as-secret-value");
        let shown = format!("{c:?}");
        assert!(!shown.contains("e2b_secret") && !shown.contains("as-secret"), "{shown}");
        let e = cfg(&[("HOLM_SERVER_SANDBOXES", "e2b")]).unwrap_err();
        assert!(e.contains("E2B_API_KEY"), "{e}");
        let e =
            cfg(&[("HOLM_SERVER_SANDBOXES", "modal"), ("MODAL_TOKEN_SECRET", "as-x")]).unwrap_err();
        assert!(e.contains("MODAL_TOKEN_ID"), "{e}");
        let e = cfg(&[("HOLM_SERVER_SANDBOXES", "docker")]).unwrap_err();
        assert!(e.contains("no vendor"), "{e}");
        let e = cfg(&[("HOLM_SERVER_SECRET_KEY", "short")]).unwrap_err();
        assert!(e.contains("HOLM_SERVER_SECRET_KEY"), "{e}");
    }

    #[test]
    fn limits_have_defaults_and_name_their_variable() {
        let c = cfg(&[]).unwrap();
        assert_eq!(c.limits, crate::service::Limits::default());
        let c = cfg(&[
            ("HOLM_MAX_BOXES", "3"),
            ("HOLM_MAX_BUILDS", "1"),
            ("HOLM_RECORD_RETENTION", "1h"),
            ("HOLM_IMAGE_CACHE", "off"),
        ])
        .unwrap();
        assert_eq!(
            (c.limits.max_boxes, c.limits.max_builds, c.limits.record_retention_secs),
            (3, 1, 3600)
        );
        assert_eq!(c.limits.image_cache_bytes, None);
        for (k, v) in [
            ("HOLM_MAX_BOXES", "0"),
            ("HOLM_MAX_BUILDS", "many"),
            ("HOLM_RECORD_RETENTION", "soon"),
            ("HOLM_IMAGE_CACHE", "big"),
        ] {
            assert!(cfg(&[(k, v)]).unwrap_err().contains(k), "{k}");
        }
    }

    #[test]
    fn runtimes_filter() {
        let c = cfg(&[("HOLM_SERVER_RUNTIMES", "docker, podman")]).unwrap();
        assert_eq!(c.runtimes.unwrap(), ["docker", "podman"]);
    }
}
