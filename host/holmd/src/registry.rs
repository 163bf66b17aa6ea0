//! The registry of remote runtimes: cloud vendor accounts with names.
//!
//! - What each vendor takes ([`vendor`]): its fields, which are required, its
//!   environment and what it can do. Unknown fields are refused, every wrong
//!   field named at once; a field naming a host program, socket or engine is
//!   unknown for every vendor, so the API cannot reach the host through it.
//! - A self-hosted endpoint given through the API must be `https` at a public
//!   address ([`check_public_endpoint`]).
//! - Keys are sealed with ChaCha20-Poly1305 under the server key
//!   ([`SecretKey`]), with a random nonce per seal and the runtime's name and
//!   the secret's name as associated data, so a sealed value cannot be moved
//!   to another runtime. The store never sees a key in the clear.

use std::collections::BTreeMap;
use std::fmt;
use std::net::IpAddr;
use std::path::Path;

use base64::Engine as _;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use holm::runtime::kind::{self, Field, FieldType, LIFETIME_FIELDS, VendorKind};
use holm_proto::Issue;
use serde_json::Value;

/// The server key that seals vendor keys. Never logged.
#[derive(Clone)]
pub struct SecretKey {
    key: [u8; 32],
    /// Where it came from, for messages.
    source: String,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretKey").field("source", &self.source).finish_non_exhaustive()
    }
}

/// The shortest server key accepted, in characters.
pub const MIN_SECRET_KEY_LEN: usize = 32;
/// The prefix of a sealed value: the format's version. `c20p2` binds the
/// key version into the associated data; `c20p1` (which did not) is no
/// longer opened.
const SEALED_PREFIX: &str = "c20p2:";
/// The prefix of the format before key versions were bound.
const OLD_SEALED_PREFIX: &str = "c20p1:";

impl SecretKey {
    /// Makes the key from a secret string (`HOLM_SERVER_SECRET_KEY`, or the
    /// file's content): its SHA-256.
    pub fn from_secret(secret: &str, source: &str) -> Result<Self, String> {
        let secret = secret.trim();
        if secret.len() < MIN_SECRET_KEY_LEN {
            return Err(format!(
                "{source} is shorter than {MIN_SECRET_KEY_LEN} characters; make one with: openssl rand -hex 32"
            ));
        }
        use sha2::Digest;
        let key: [u8; 32] = sha2::Sha256::digest(secret.as_bytes()).into();
        Ok(Self { key, source: source.to_owned() })
    }

    /// The key from `HOLM_SERVER_SECRET_KEY` (`value`), else from the file at
    /// `HOLM_SERVER_SECRET_FILE`, which is made with a new random key and
    /// owner-only permissions when it does not exist. `None` with neither.
    pub fn from_config(value: Option<&str>, file: Option<&Path>) -> Result<Option<Self>, String> {
        if let Some(v) = value {
            return Self::from_secret(v, "HOLM_SERVER_SECRET_KEY").map(Some);
        }
        let Some(path) = file else { return Ok(None) };
        let source = format!("HOLM_SERVER_SECRET_FILE ({})", path.display());
        match std::fs::read_to_string(path) {
            Ok(text) => {
                use std::os::unix::fs::PermissionsExt as _;
                let mode = std::fs::metadata(path)
                    .map_err(|e| format!("{source}: cannot read it: {e}"))?
                    .permissions()
                    .mode();
                if mode & 0o077 != 0 {
                    return Err(format!(
                        "{source} can be read by its group or by others (mode {:o}); only its \
                         owner may: chmod 600 {}",
                        mode & 0o777,
                        path.display()
                    ));
                }
                Self::from_secret(&text, &source).map(Some)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                use std::io::Write as _;
                use std::os::unix::fs::OpenOptionsExt as _;
                let secret = format!("{}{}", holm::ids::new_secret(), holm::ids::new_secret());
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("{source}: cannot make its directory: {e}"))?;
                }
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(path)
                    .map_err(|e| format!("{source}: cannot make it: {e}"))?;
                f.write_all(format!("{secret}\n").as_bytes())
                    .and_then(|()| f.sync_all())
                    .map_err(|e| format!("{source}: cannot write it: {e}"))?;
                tracing::info!(file = %path.display(), "made a new server key file; keep a backup of it");
                Self::from_secret(&secret, &source).map(Some)
            }
            Err(e) => Err(format!("{source}: cannot read it: {e}")),
        }
    }

    /// The key box secrets are derived with ([`holm::ids::derived_secret`]):
    /// its own, made from the server key, so neither use can stand for the
    /// other.
    pub fn box_key(&self) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::new()
            .chain_update(b"holm box secrets\0")
            .chain_update(self.key)
            .finalize()
            .into()
    }

    fn cipher(&self) -> ChaCha20Poly1305 {
        ChaCha20Poly1305::new(Key::from_slice(&self.key))
    }

    /// Seals `plain`, version `version` of the secret `secret` of runtime
    /// `runtime`: it opens only as that runtime's secret at that version, so
    /// an older sealed key put back in the store is refused.
    pub fn seal(&self, runtime: &str, secret: &str, version: u64, plain: &str) -> String {
        let nonce = ChaCha20Poly1305::generate_nonce(&mut OsRng);
        let aad = aad(runtime, secret, version);
        let sealed = self
            .cipher()
            .encrypt(&nonce, Payload { msg: plain.as_bytes(), aad: aad.as_bytes() })
            .expect("ChaCha20-Poly1305 seals any message under 256 GiB");
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        format!("{SEALED_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(out))
    }

    /// Opens a value [`SecretKey::seal`] made for `version`. The error says
    /// why, never what.
    pub fn open(
        &self,
        runtime: &str,
        secret: &str,
        version: u64,
        sealed: &str,
    ) -> Result<String, String> {
        if sealed.starts_with(OLD_SEALED_PREFIX) {
            return Err(format!(
                "its stored {secret} was sealed by an older holmd without its key version; \
                 set the key again with `holm runtime set {runtime} --api-key`"
            ));
        }
        let bytes = sealed
            .strip_prefix(SEALED_PREFIX)
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .filter(|b| b.len() > 12)
            .ok_or_else(|| format!("its stored {secret} is not in a form this server reads"))?;
        let (nonce, msg) = bytes.split_at(12);
        let aad = aad(runtime, secret, version);
        let plain = self
            .cipher()
            .decrypt(Nonce::from_slice(nonce), Payload { msg, aad: aad.as_bytes() })
            .map_err(|_| {
                format!(
                    "its stored {secret} (key version {version}) cannot be decrypted with this \
                     server's key ({}); was the server key changed, or the stored key replaced? \
                     Set the key again with `holm runtime set {runtime} --api-key`",
                    self.source
                )
            })?;
        String::from_utf8(plain).map_err(|_| format!("its stored {secret} is not text"))
    }
}

/// What a sealed value is bound to: its runtime, which secret, which version.
fn aad(runtime: &str, secret: &str, version: u64) -> String {
    format!("holm-runtime\0{runtime}\0{secret}\0{version}")
}

/// The vendor `provider` names, from its runtime-kind descriptor.
pub fn vendor(provider: &str) -> Option<&'static VendorKind> {
    kind::kind(provider).and_then(|k| k.vendor())
}

/// The provider names of every vendor, for messages.
pub fn vendor_names() -> String {
    kind::names(kind::vendors())
}

/// The name of a vendor's one secret.
pub const API_KEY: &str = "api_key";

/// The longest lifetime a vendor's sandboxes can have, where the vendor
/// ends them itself.
pub fn hard_max_secs(provider: &str) -> Option<u64> {
    vendor(provider).and_then(|v| v.facts.hard_max_secs)
}

/// Checks a runtime's name: 1 to 40 lowercase letters, digits, `-` or `_`.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a runtime name: use 1 to 40 lowercase letters, digits, '-' or '_'"
        ))
    }
}

/// Checks `fields` for `vendor`, turning text into the field's type, and
/// answers them in their stored form. `from_api`: endpoints must be `https`
/// at a public address. Every wrong field is named at once, under
/// `fields.NAME`.
pub fn check_fields(
    vendor: &VendorKind,
    fields: &BTreeMap<String, Value>,
    from_api: bool,
) -> Result<serde_json::Map<String, Value>, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut out = serde_json::Map::new();
    let all: Vec<&Field> = vendor.fields.iter().chain(LIFETIME_FIELDS).collect();
    for (name, value) in fields {
        let path = format!("fields.{name}");
        let Some(field) = all.iter().find(|f| f.name == name) else {
            let names: Vec<&str> = all.iter().map(|f| f.name).collect();
            issues.push(Issue {
                path,
                problem: format!(
                    "{} takes no field {name:?}; it takes: {}",
                    vendor.facts.provider,
                    names.join(", ")
                ),
            });
            continue;
        };
        match check_value(field.ty, value, from_api) {
            Ok(v) => {
                out.insert(name.clone(), v);
            }
            Err(problem) => issues.push(Issue { path, problem }),
        }
    }
    for field in vendor.fields.iter().filter(|f| f.required) {
        if !out.contains_key(field.name) {
            issues.push(Issue {
                path: format!("fields.{}", field.name),
                problem: format!("{} needs it", vendor.facts.provider),
            });
        }
    }
    if let Some(hard) = hard_max_secs(vendor.facts.provider) {
        for field in ["lifetime_secs", "max_lifetime_secs"] {
            if let Some(secs) = out.get(field).and_then(Value::as_u64).filter(|s| *s > hard) {
                issues.push(Issue {
                    path: format!("fields.{field}"),
                    problem: format!(
                        "{secs} seconds is more than {} allows: its sandboxes live at most {hard} seconds",
                        vendor.facts.provider
                    ),
                });
            }
        }
    }
    if let (Some(l), Some(m)) = (
        out.get("lifetime_secs").and_then(Value::as_u64),
        out.get("max_lifetime_secs").and_then(Value::as_u64),
    ) && l > m
    {
        issues.push(Issue {
            path: "fields.lifetime_secs".into(),
            problem: format!("{l} seconds is above max_lifetime_secs ({m} seconds)"),
        });
    }
    if issues.is_empty() { Ok(out) } else { Err(issues) }
}

fn check_value(kind: FieldType, value: &Value, from_api: bool) -> Result<Value, String> {
    match kind {
        FieldType::Text => match value {
            Value::String(s) if !s.trim().is_empty() => Ok(Value::String(s.trim().to_owned())),
            Value::Number(n) => Ok(Value::String(n.to_string())),
            _ => Err("must be a non-empty string".into()),
        },
        FieldType::Endpoint => {
            let s = value.as_str().ok_or("must be a URL in quotes, such as \"https://…\"")?;
            if from_api {
                check_public_endpoint(s)?;
            } else {
                reqwest::Url::parse(s).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
            }
            Ok(Value::String(s.to_owned()))
        }
        FieldType::Bool => match value {
            Value::Bool(b) => Ok(Value::Bool(*b)),
            Value::String(s) if s == "true" || s == "false" => Ok(Value::Bool(s == "true")),
            _ => Err("must be true or false".into()),
        },
        FieldType::Secs => {
            let secs = match value {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => crate::runtimes_file::parse_duration(s).ok(),
                _ => None,
            }
            .ok_or("must be a number of seconds, or a time such as \"24h\"")?;
            if secs < holm::spec::MIN_LIFETIME_SECS {
                return Err(format!(
                    "must be at least {} seconds, not {secs}",
                    holm::spec::MIN_LIFETIME_SECS
                ));
            }
            if secs > holm::spec::LONGEST_LIFETIME_SECS {
                return Err(format!(
                    "{secs} seconds is above the longest lifetime holm allows, {} seconds (a year)",
                    holm::spec::LONGEST_LIFETIME_SECS
                ));
            }
            Ok(Value::from(secs))
        }
    }
}

/// Checks that an endpoint given through the API is `https` at a public
/// address: no `localhost`, and no loopback, private, link-local, shared,
/// unspecified, multicast or documentation IP address.
pub fn check_public_endpoint(s: &str) -> Result<(), String> {
    let url = reqwest::Url::parse(s).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
    if url.scheme() != "https" {
        return Err(format!("{s:?} must use https"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not carry a user or password; give the key as api_key".into());
    }
    let not_public = || {
        format!(
            "{s:?} is not a public address; the API takes only public vendor endpoints (the runtimes file can name any)"
        )
    };
    match url.host() {
        None => Err(format!("{s:?} has no host")),
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d == "localhost" || d.ends_with(".localhost") || !d.contains('.') {
                return Err(not_public());
            }
            Ok(())
        }
        Some(url::Host::Ipv4(ip)) => {
            if is_public(IpAddr::V4(ip)) {
                Ok(())
            } else {
                Err(not_public())
            }
        }
        Some(url::Host::Ipv6(ip)) => {
            if is_public(IpAddr::V6(ip)) {
                Ok(())
            } else {
                Err(not_public())
            }
        }
    }
}

pub use holm_client::address::is_public;

/// A runtime from `HOLM_SERVER_SANDBOXES`, named after its vendor, with its
/// settings and key from the vendor's own environment variables. Its key is
/// held in memory only, never stored.
#[derive(Clone, PartialEq)]
pub struct EnvSandbox {
    /// The vendor, which is also the runtime's name.
    pub provider: String,
    /// Its settings.
    pub fields: BTreeMap<String, Value>,
    /// Its key. Never logged.
    pub key: String,
}

impl fmt::Debug for EnvSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvSandbox")
            .field("provider", &self.provider)
            .field("fields", &self.fields)
            .finish_non_exhaustive()
    }
}

/// Reads `HOLM_SERVER_SANDBOXES` (`list`) and each vendor's variables
/// through `get`. A missing key or required setting names its variable.
pub fn env_sandboxes(
    list: &str,
    get: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<EnvSandbox>, String> {
    let mut out: Vec<EnvSandbox> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let v = vendor(name).ok_or_else(|| {
            format!(
                "HOLM_SERVER_SANDBOXES names {name:?}, which is no vendor; use some of: {}",
                vendor_names()
            )
        })?;
        if out.iter().any(|s| s.provider == name) {
            continue;
        }
        let key = get(v.key_env).ok_or_else(|| {
            format!("HOLM_SERVER_SANDBOXES names {name}, which needs {} to be set", v.key_env)
        })?;
        let mut fields = BTreeMap::new();
        for field in v.fields {
            let Some(var) = field.env else { continue };
            match get(var) {
                Some(value) => {
                    fields.insert(field.name.to_owned(), Value::String(value));
                }
                None if field.required => {
                    return Err(format!(
                        "HOLM_SERVER_SANDBOXES names {name}, which needs {var} to be set"
                    ));
                }
                None => {}
            }
        }
        check_fields(v, &fields, false).map_err(|issues| {
            let why: Vec<String> =
                issues.iter().map(|i| format!("{}: {}", i.path, i.problem)).collect();
            format!("HOLM_SERVER_SANDBOXES: {name}: {}", why.join("; "))
        })?;
        out.push(EnvSandbox { provider: name.to_owned(), fields, key });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_keys_open_only_with_the_same_key_and_runtime() {
        let k = SecretKey::from_secret(&"k".repeat(40), "test").unwrap();
        let sealed = k.seal("cloud", API_KEY, 1, "e2b_live_secret");
        assert!(!sealed.contains("e2b_live_secret"));
        assert_ne!(
            sealed,
            k.seal("cloud", API_KEY, 1, "e2b_live_secret"),
            "a random nonce each time"
        );
        assert_eq!(k.open("cloud", API_KEY, 1, &sealed).unwrap(), "e2b_live_secret");
        let e = k.open("other", API_KEY, 1, &sealed).unwrap_err();
        assert!(e.contains("cannot be decrypted"), "{e}");
        let other = SecretKey::from_secret(&"j".repeat(40), "test").unwrap();
        let e = other.open("cloud", API_KEY, 1, &sealed).unwrap_err();
        assert!(e.contains("cannot be decrypted") && !e.contains("e2b_live"), "{e}");
        assert!(k.open("cloud", API_KEY, 1, "plain").unwrap_err().contains("not in a form"));
        // Bound to its version: an old key put back under a newer version
        // does not open, nor does a value sealed without its version.
        let e = k.open("cloud", API_KEY, 2, &sealed).unwrap_err();
        assert!(e.contains("key version 2"), "{e}");
        let unversioned = sealed.replacen("c20p2:", "c20p1:", 1);
        let e = k.open("cloud", API_KEY, 1, &unversioned).unwrap_err();
        assert!(e.contains("without its key version"), "{e}");
        assert!(SecretKey::from_secret("short", "X").unwrap_err().contains("shorter than 32"));
        assert!(!format!("{k:?}").contains("kkkk"));
    }

    #[test]
    fn a_key_file_others_can_read_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secret.key");
        std::fs::write(&path, "k".repeat(40)).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o660] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let e = SecretKey::from_config(None, Some(&path)).unwrap_err();
            assert!(e.contains("chmod 600") && e.contains(&format!("{mode:o}")), "{e}");
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            assert!(SecretKey::from_config(None, Some(&path)).unwrap().is_some());
        }
    }

    #[test]
    fn a_missing_key_file_is_made_owner_only() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/secret.key");
        let a = SecretKey::from_config(None, Some(&path)).unwrap().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let b = SecretKey::from_config(None, Some(&path)).unwrap().unwrap();
        assert_eq!(a.key, b.key, "the same file gives the same key");
        assert!(SecretKey::from_config(None, None).unwrap().is_none());
        let c = SecretKey::from_config(Some(&"x".repeat(32)), Some(&path)).unwrap().unwrap();
        assert_ne!(a.key, c.key, "the variable wins");
    }

    #[test]
    fn endpoints_through_the_api_are_https_and_public() {
        for ok in ["https://api.e2b.example.com", "https://8.8.8.8/x", "https://[2606:4700::1111]/"]
        {
            assert!(check_public_endpoint(ok).is_ok(), "{ok}");
        }
        for (bad, want) in [
            ("http://api.example.com", "must use https"),
            ("https://localhost:8443", "not a public address"),
            ("https://api.localhost", "not a public address"),
            ("https://127.0.0.1", "not a public address"),
            ("https://10.1.2.3", "not a public address"),
            ("https://172.16.0.1", "not a public address"),
            ("https://192.168.1.1", "not a public address"),
            ("https://169.254.169.254/latest", "not a public address"),
            ("https://100.64.0.1", "not a public address"),
            ("https://0.0.0.0", "not a public address"),
            ("https://[::1]", "not a public address"),
            ("https://[fe80::1]", "not a public address"),
            ("https://[fd00::1]", "not a public address"),
            ("https://[::ffff:127.0.0.1]", "not a public address"),
            ("https://intranet", "not a public address"),
            ("https://u:p@api.example.com", "must not carry a user"),
            ("unix:///var/run/docker.sock", "must use https"),
            ("nonsense", "is not a URL"),
        ] {
            let e = check_public_endpoint(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }

    #[test]
    fn fields_are_checked_by_vendor_and_every_wrong_one_named() {
        let fields = |pairs: &[(&str, Value)]| -> BTreeMap<String, Value> {
            pairs.iter().map(|(k, v)| ((*k).to_owned(), v.clone())).collect()
        };
        let vercel = vendor("vercel").unwrap();
        let ok = check_fields(
            vercel,
            &fields(&[
                ("team_id", "team_1".into()),
                ("project_id", "prj_1".into()),
                ("max_lifetime_secs", "86400".into()),
            ]),
            true,
        )
        .unwrap();
        assert_eq!(ok["max_lifetime_secs"], 86400);
        let issues = check_fields(
            vercel,
            &fields(&[
                ("program", "/bin/sh".into()),
                ("socket", "/var/run/docker.sock".into()),
                ("lifetime_secs", 5.into()),
            ]),
            true,
        )
        .unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "fields.lifetime_secs",
                "fields.program",
                "fields.socket",
                "fields.team_id",
                "fields.project_id"
            ]
        );
        let e2b = vendor("e2b").unwrap();
        let issues = check_fields(e2b, &fields(&[("api_url", "https://127.0.0.1".into())]), true)
            .unwrap_err();
        assert!(issues[0].problem.contains("not a public address"), "{issues:?}");
        assert!(
            check_fields(e2b, &fields(&[("api_url", "http://127.0.0.1".into())]), false).is_ok()
        );
        let issues =
            check_fields(e2b, &fields(&[("public_traffic", "maybe".into())]), true).unwrap_err();
        assert_eq!(issues[0].problem, "must be true or false");
    }
}
