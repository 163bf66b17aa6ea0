//! The runtimes file at `HOLM_SERVER_CONFIG`, read once at start.
//!
//! ```toml
//! default = "hardened"
//!
//! [runtimes.docker]
//! memory = "4g"
//! lifetime = "1h"
//! max_lifetime = "8h"
//!
//! [runtimes.hardened]      # a second runtime on the same engine
//! provider = "docker"
//! isolation = "runsc"
//!
//! [runtimes.podman]
//! enabled = false
//!
//! [[runtimes.docker.pool]] # keep 2 boxes of this spec started and ready
//! size = 2
//! screens = 1
//! browser = true
//! ```
//!
//! `max_boxes` (top level) lowers the server's one box limit, the most live
//! boxes it holds, pooled ones counted: the limit is `HOLM_MAX_BOXES`
//! (default 64), or this when it is smaller (a larger one is logged and has
//! no effect). Pools refill only below the limit, and a create at it takes
//! the place of a waiting pooled box or is refused (`limit_reached`).
//!
//! `pids_limit`, `host_access`, `no_new_privileges`, `cap_add` and `seccomp`
//! widen or narrow how Docker and podman boxes are confined (see
//! docs/security.md); they sit beside `pool` in a runtime's table.
//!
//! A table without `provider` changes the runtime of that name; a table with
//! one adds a runtime on that engine. Every mistake stops the server at start
//! with an error that names the file, the table and the field.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use holm::runtime::kind::{self, RuntimeKind, Setting};

mod kube;

/// One `[runtimes.NAME]` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeTable {
    /// The table's name: the runtime's name.
    pub name: String,
    /// The engine or vendor: `provider`, or the name itself when it changes a
    /// runtime the server knows.
    pub kind: String,
    /// Whether the table adds a runtime (it has a `provider`).
    pub adds: bool,
    /// `enabled`.
    pub enabled: Option<bool>,
    /// `memory`, in bytes.
    pub memory: Option<u64>,
    /// `cpus`.
    pub cpus: Option<f64>,
    /// `lifetime`, in seconds.
    pub lifetime: Option<u64>,
    /// `max_lifetime`, in seconds.
    pub max_lifetime: Option<u64>,
    /// `isolation`: the OCI runtime, such as `runsc`.
    pub isolation: Option<String>,
    /// `context`: a Docker context.
    pub context: Option<String>,
    /// `program`: the hypervisor program.
    pub program: Option<PathBuf>,
    /// `build_with`: the engine that builds the image.
    pub build_with: Option<String>,
    /// `pids_limit`: the most processes and threads a box may have.
    pub pids_limit: Option<u32>,
    /// `host_access`: boxes may reach the host's and link-local addresses.
    pub host_access: Option<bool>,
    /// `no_new_privileges`: `false` lets set-user-id programs in a box work.
    pub no_new_privileges: Option<bool>,
    /// `cap_add`: capabilities boxes get beyond the ones the desktop needs.
    pub cap_add: Vec<String>,
    /// `seccomp`: `"unconfined"`, or the content of the profile file named.
    pub seccomp: Option<String>,
    /// A vendor's endpoints (`api_url`; E2B's `sandbox_url`; Modal's
    /// `server_url`; Vercel's `registry_url`), any URL: the
    /// file may name a self-hosted or local endpoint the API refuses.
    pub endpoints: BTreeMap<String, String>,
    /// `allow_private_addresses`: a vendor's API and the endpoints it
    /// answers may be at private addresses (loopback, private networks,
    /// link-local); without it only public addresses are reached, checked
    /// on each connection.
    pub allow_private_addresses: Option<bool>,
    /// `pool`: the warm pools, each a spec and a size.
    pub pools: Vec<crate::service::PoolSpec>,
    /// A Kubernetes runtime's cluster and pods (`context` is [`Self::context`]).
    pub kube: holm::runtime::kubernetes::KubeSettings,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimesFile {
    /// `default`: the runtime of a box that names none.
    pub default: Option<String>,
    /// The tables, by name.
    pub runtimes: BTreeMap<String, RuntimeTable>,
    /// `max_boxes`: the most live boxes the server holds.
    pub max_boxes: Option<usize>,
}

/// A mistake in the file: where it is, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileError {
    /// The file.
    pub file: PathBuf,
    /// The table, such as `runtimes.docker`, when the mistake is in one.
    pub table: Option<String>,
    /// The field, when the mistake is in one.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file.display())?;
        match (&self.table, &self.field) {
            (Some(t), Some(field)) => write!(f, "[{t}] {field}: ")?,
            (Some(t), None) => write!(f, "[{t}]: ")?,
            (None, Some(field)) => write!(f, "{field}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for FileError {}

/// Reads and checks the file at `path`.
pub fn read(path: &Path) -> Result<RuntimesFile, FileError> {
    let text = std::fs::read_to_string(path).map_err(|e| FileError {
        file: path.to_owned(),
        table: None,
        field: None,
        message: format!("cannot read it: {e}"),
    })?;
    parse(path, &text)
}

/// The capabilities `cap_add` may name (Linux's, without `CAP_`).
pub const CAPABILITIES: &[&str] = &[
    "AUDIT_CONTROL",
    "AUDIT_READ",
    "AUDIT_WRITE",
    "BLOCK_SUSPEND",
    "BPF",
    "CHECKPOINT_RESTORE",
    "CHOWN",
    "DAC_OVERRIDE",
    "DAC_READ_SEARCH",
    "FOWNER",
    "FSETID",
    "IPC_LOCK",
    "IPC_OWNER",
    "KILL",
    "LEASE",
    "LINUX_IMMUTABLE",
    "MAC_ADMIN",
    "MAC_OVERRIDE",
    "MKNOD",
    "NET_ADMIN",
    "NET_BIND_SERVICE",
    "NET_BROADCAST",
    "NET_RAW",
    "PERFMON",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_ADMIN",
    "SYS_BOOT",
    "SYS_CHROOT",
    "SYS_MODULE",
    "SYS_NICE",
    "SYS_PACCT",
    "SYS_PTRACE",
    "SYS_RAWIO",
    "SYS_RESOURCE",
    "SYS_TIME",
    "SYS_TTY_CONFIG",
    "SYSLOG",
    "WAKE_ALARM",
];

/// Every field a table may have: the settings, then the vendors' endpoints.
fn field_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = Setting::ALL.iter().map(|s| s.as_str()).collect();
    for k in kind::vendors() {
        for f in k.vendor().into_iter().flat_map(|v| v.fields) {
            if k.file_field(f.name).is_some() && !names.contains(&f.name) {
                names.push(f.name);
            }
        }
    }
    names
}

/// Parses and checks the text of a runtimes file.
pub fn parse(path: &Path, text: &str) -> Result<RuntimesFile, FileError> {
    let err = |table: Option<&str>, field: Option<&str>, message: String| FileError {
        file: path.to_owned(),
        table: table.map(|t| format!("runtimes.{t}")),
        field: field.map(str::to_owned),
        message,
    };
    let doc: toml::Table = toml::from_str(text)
        .map_err(|e| err(None, None, format!("not valid TOML: {}", e.message())))?;
    let mut out = RuntimesFile::default();
    for (key, value) in &doc {
        match key.as_str() {
            "default" => {
                let name = value.as_str().ok_or_else(|| {
                    err(None, Some("default"), "must be a runtime's name, in quotes".into())
                })?;
                out.default = Some(name.to_owned());
            }
            "max_boxes" => {
                let n = value
                    .as_integer()
                    .filter(|n| (1..=10_000).contains(n))
                    .ok_or_else(|| err(None, Some("max_boxes"), "must be 1 to 10000".into()))?;
                out.max_boxes = usize::try_from(n).ok();
            }
            "runtimes" => {
                let tables = value.as_table().ok_or_else(|| {
                    err(None, Some("runtimes"), "must be tables: [runtimes.NAME]".into())
                })?;
                for (name, table) in tables {
                    let table = table
                        .as_table()
                        .ok_or_else(|| err(Some(name), None, "must be a table of fields".into()))?;
                    out.runtimes.insert(name.clone(), parse_table(name, table, &err)?);
                }
            }
            other => {
                return Err(err(
                    None,
                    Some(other),
                    "unknown field; the file has `default`, `max_boxes` and [runtimes.NAME] tables"
                        .into(),
                ));
            }
        }
    }
    if let Some(default) = &out.default {
        let known = out.runtimes.contains_key(default) || kind::kind(default).is_some();
        if !known {
            return Err(err(
                None,
                Some("default"),
                format!(
                    "{default:?} is no runtime: name one this server offers, or add a [runtimes.{default}] table with a provider"
                ),
            ));
        }
    }
    Ok(out)
}

/// Builds a [`FileError`] for a table and a field.
type ErrFn<'a> = &'a dyn Fn(Option<&str>, Option<&str>, String) -> FileError;

fn parse_table(name: &str, table: &toml::Table, err: ErrFn<'_>) -> Result<RuntimeTable, FileError> {
    let valid_name = !name.is_empty()
        && name.len() <= 40
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if !valid_name {
        return Err(err(
            Some(name),
            None,
            "a runtime's name is 1 to 40 lowercase letters, digits, '-' or '_'".into(),
        ));
    }
    let provider = match table.get("provider") {
        None => None,
        Some(v) => {
            let p = v
                .as_str()
                .ok_or_else(|| err(Some(name), Some("provider"), "must be a string".into()))?;
            if kind::kind(p).is_some_and(RuntimeKind::is_vendor) {
                return Err(err(
                    Some(name),
                    Some("provider"),
                    format!(
                        "{p:?} is a cloud vendor: add it with `holm runtime add {name} --provider {p}` or HOLM_SERVER_SANDBOXES, which take its key safely"
                    ),
                ));
            }
            if kind::kind(p).is_none() {
                return Err(err(
                    Some(name),
                    Some("provider"),
                    format!("{p:?} is no engine; use one of: {}", kind::names(kind::hosts())),
                ));
            }
            if kind::kind(name).is_some_and(|k| k.found) {
                return Err(err(
                    Some(name),
                    Some("provider"),
                    format!(
                        "{name:?} is a runtime the server finds itself: drop `provider` to change it, or pick another name to add one"
                    ),
                ));
            }
            Some(p.to_owned())
        }
    };
    let kind = match &provider {
        Some(p) => p.clone(),
        None if kind::kind(name).is_some() => name.to_owned(),
        None => {
            return Err(err(
                Some(name),
                None,
                format!(
                    "no runtime is named {name:?}: to add one on an engine, give provider = one of: {}",
                    kind::names(kind::hosts())
                ),
            ));
        }
    };
    let mut t =
        RuntimeTable { name: name.to_owned(), kind: kind.clone(), ..RuntimeTable::default() };
    let k = kind::kind(&kind).expect("the kind was checked above");
    // A kind the server does not find (kubernetes) is added by its table.
    t.adds = provider.is_some() || !k.found;
    for (field, value) in table {
        let f = field.as_str();
        let bad = |what: &str| err(Some(name), Some(f), what.to_owned());
        if k.file_field(f).is_some() {
            t.endpoints.insert(f.to_owned(), endpoint(value).map_err(|e| bad(&e))?);
            continue;
        }
        let Some(setting) = Setting::parse(f) else {
            let message = if field_names().contains(&f) {
                format!("does not apply to {kind} runtimes")
            } else {
                format!("unknown field; the fields are: {}", field_names().join(", "))
            };
            return Err(bad(&message));
        };
        if !k.takes(setting) {
            return Err(bad(&format!("does not apply to {kind} runtimes")));
        }
        set(&mut t, setting, value).map_err(|e| bad(&e))?;
    }
    if let (Some(l), Some(m)) = (t.lifetime, t.max_lifetime)
        && l > m
    {
        return Err(err(
            Some(name),
            Some("lifetime"),
            format!("{l} seconds is above max_lifetime ({m} seconds)"),
        ));
    }
    Ok(t)
}

/// Sets `setting` of `t` from `value`, or says what is wrong with it.
fn set(t: &mut RuntimeTable, setting: Setting, value: &toml::Value) -> Result<(), String> {
    use Setting as S;
    let text = |what: &str| {
        value.as_str().filter(|s| !s.is_empty()).map(str::to_owned).ok_or_else(|| what.to_owned())
    };
    let flag = || value.as_bool().ok_or_else(|| "must be true or false".to_owned());
    match setting {
        S::Provider => {}
        S::Enabled => t.enabled = Some(flag()?),
        S::Memory => t.memory = Some(memory(value)?),
        S::Cpus => {
            let c = value
                .as_float()
                .or_else(|| value.as_integer().map(|i| i as f64))
                .ok_or("must be a number, such as 2 or 1.5")?;
            if !(c > 0.0 && c <= 256.0) {
                return Err("must be above 0 and at most 256".into());
            }
            t.cpus = Some(c);
        }
        S::Lifetime => t.lifetime = Some(lifetime(value)?),
        S::MaxLifetime => t.max_lifetime = Some(lifetime(value)?),
        S::Isolation => t.isolation = Some(text("must be a non-empty string")?),
        S::Context => t.context = Some(text("must be a non-empty string")?),
        S::BuildWith => {
            let engine = text("must be a non-empty string")?;
            let builders: Vec<&str> = kind::hosts().filter(|k| k.builds).map(|k| k.name).collect();
            if !builders.contains(&engine.as_str()) {
                let (last, rest) = builders.split_last().expect("some kinds build images");
                return Err(format!("must be {} or {last}", rest.join(", ")));
            }
            t.build_with = Some(engine);
        }
        S::Program => t.program = Some(PathBuf::from(text("must be a path")?)),
        S::PidsLimit => {
            let n = value
                .as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| (64..=4_194_304).contains(n))
                .ok_or("must be a whole number from 64 to 4194304")?;
            t.pids_limit = Some(n);
        }
        S::HostAccess => t.host_access = Some(flag()?),
        S::NoNewPrivileges => t.no_new_privileges = Some(flag()?),
        S::CapAdd => t.cap_add = capabilities(value)?,
        S::Seccomp => {
            let s = text("must be \"unconfined\" or the path of a profile file")?;
            t.seccomp = Some(if s == "unconfined" { s } else { profile(&s)? });
        }
        S::AllowPrivateAddresses => t.allow_private_addresses = Some(flag()?),
        S::Pool => t.pools = pools(value)?,
        S::Kubeconfig
        | S::Namespace
        | S::RuntimeClass
        | S::NodeSelector
        | S::Tolerations
        | S::Mode
        | S::WarmPool
        | S::VolumeSize
        | S::StorageClass
        | S::Images => {
            kube::set(&mut t.kube, setting, value)?;
        }
    }
    Ok(())
}

/// Reads `memory`: a size in quotes, from the 256m a desktop needs to the
/// most a box may have.
fn memory(value: &toml::Value) -> Result<u64, String> {
    let s = value.as_str().ok_or("must be a size in quotes, such as \"4g\"")?;
    let bytes = holm::spec::parse_memory(s)?;
    if bytes < 256 * 1024 * 1024 {
        return Err("is less than the 256m a desktop needs".into());
    }
    if bytes > holm::spec::MAX_MEMORY_BYTES {
        return Err("is more than the 64g (64 GiB) a box may have".into());
    }
    Ok(bytes)
}

/// Reads `lifetime` or `max_lifetime`: a duration within holm's bounds.
fn lifetime(value: &toml::Value) -> Result<u64, String> {
    let secs = duration(value)?;
    if secs < holm::spec::MIN_LIFETIME_SECS {
        return Err(format!("must be at least {} seconds", holm::spec::MIN_LIFETIME_SECS));
    }
    if secs > holm::spec::LONGEST_LIFETIME_SECS {
        return Err(format!(
            "{secs} seconds is above the longest lifetime holm allows, {} seconds (a year)",
            holm::spec::LONGEST_LIFETIME_SECS
        ));
    }
    Ok(secs)
}

/// Reads `cap_add`: capability names, with or without `CAP_`.
fn capabilities(value: &toml::Value) -> Result<Vec<String>, String> {
    let caps =
        value.as_array().ok_or("must be a list of capability names, such as [\"NET_RAW\"]")?;
    caps.iter()
        .map(|c| {
            c.as_str()
                .map(|s| s.trim_start_matches("CAP_").to_ascii_uppercase())
                .filter(|s| CAPABILITIES.contains(&s.as_str()))
                .ok_or_else(|| {
                    format!("{c} is not a capability; they are: {}", CAPABILITIES.join(", "))
                })
        })
        .collect()
}

/// Reads a seccomp profile file, which must be JSON.
fn profile(path: &str) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the profile {path}: {e}"))?;
    serde_json::from_str::<serde_json::Value>(&text)
        .map_err(|e| format!("the profile {path} is not JSON: {e}"))?;
    Ok(text)
}

/// Reads a vendor's endpoint: an http or https URL without a user.
fn endpoint(value: &toml::Value) -> Result<String, String> {
    let s = value.as_str().ok_or("must be a URL in quotes")?;
    let url = url::Url::parse(s).map_err(|e| format!("{s:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must be an http or https URL".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(
            "must not carry a user or password; the key is added with holm runtime add".into()
        );
    }
    Ok(s.to_owned())
}

/// Reads `pool`: an array of tables, each a `size` and the spec its boxes
/// have (`screens`, `screen_size`, `display`, `browser`, `apps`,
/// `packages`).
fn pools(value: &toml::Value) -> Result<Vec<crate::service::PoolSpec>, String> {
    let tables = value
        .as_array()
        .ok_or("must be [[runtimes.NAME.pool]] tables, each with a size and a spec")?;
    tables.iter().enumerate().map(|(i, t)| pool(t).map_err(|e| format!("pool {i}: {e}"))).collect()
}

fn pool(value: &toml::Value) -> Result<crate::service::PoolSpec, String> {
    let t = value.as_table().ok_or("must be a table")?;
    let mut spec = holm_proto::host::BoxSpec::default();
    let mut size = None;
    let strings = |v: &toml::Value, f: &str| -> Result<Vec<String>, String> {
        v.as_array()
            .and_then(|a| a.iter().map(|s| s.as_str().map(str::to_owned)).collect())
            .ok_or_else(|| format!("{f} must be a list of strings"))
    };
    for (field, v) in t {
        match field.as_str() {
            "size" => {
                let n = v.as_integer().filter(|n| (0..=64).contains(n));
                size = Some(n.ok_or("size must be 0 to 64")? as u32);
            }
            "screens" => {
                let n = v.as_integer().and_then(|n| u8::try_from(n).ok());
                spec.screens = Some(n.ok_or("screens must be a number of screens")?);
            }
            "screen_size" => {
                spec.screen_size = Some(v.as_str().ok_or("screen_size must be a string")?.into());
            }
            "display" => {
                let d = v.as_str().ok_or("display must be \"x11\" or \"wayland\"")?;
                spec.display = Some(
                    serde_json::from_value(serde_json::json!(d))
                        .map_err(|_| format!("display {d:?} is not x11 or wayland"))?,
                );
            }
            "browser" => spec.browser = Some(v.as_bool().ok_or("browser must be true or false")?),
            "apps" => spec.apps = strings(v, "apps")?,
            "packages" => spec.packages = strings(v, "packages")?,
            other => {
                return Err(format!(
                    "unknown field {other:?}; a pool has size, screens, screen_size, display, browser, apps, packages"
                ));
            }
        }
    }
    Ok(crate::service::PoolSpec { spec, size: size.ok_or("size is missing")? })
}

/// Reads `24h`, `90m`, `3600s` or a number of seconds.
pub fn duration(value: &toml::Value) -> Result<u64, String> {
    if let Some(n) = value.as_integer() {
        return u64::try_from(n).map_err(|_| format!("{n} is not a number of seconds"));
    }
    let s = value
        .as_str()
        .ok_or("must be a time such as \"24h\", \"90m\", \"3600s\" or a number of seconds")?;
    parse_duration(s)
}

/// Parses `24h`, `90m`, `3600s`, `2d` or `3600`.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || {
        format!("{s:?} is not a time such as \"24h\", \"90m\", \"3600s\" or a number of seconds")
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let mult = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        _ => return Err(bad()),
    };
    n.checked_mul(mult).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<RuntimesFile, String> {
        parse(Path::new("/etc/holm/runtimes.toml"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn pools_and_the_box_limit_parse() {
        let f = p(r#"
max_boxes = 12

[[runtimes.docker.pool]]
size = 2
screens = 2
screen_size = "1024x768"
display = "wayland"
browser = false
apps = ["gimp"]
"#)
        .unwrap();
        assert_eq!(f.max_boxes, Some(12));
        let pools = &f.runtimes["docker"].pools;
        assert_eq!(pools.len(), 1);
        assert_eq!(pools[0].size, 2);
        let spec = &pools[0].spec;
        assert_eq!((spec.screens, spec.screen_size.as_deref()), (Some(2), Some("1024x768")));
        assert_eq!(spec.display, Some(holm_proto::guest::Profile::Wayland));
        assert_eq!((spec.browser, spec.apps.clone()), (Some(false), vec!["gimp".to_owned()]));
        assert!(
            p("[runtimes.docker]\nmemory = \"1g\"").unwrap().runtimes["docker"].pools.is_empty()
        );
    }

    #[test]
    fn the_seeds_example_parses() {
        let f = p(r#"
default = "hardened"

[runtimes.docker]
memory = "4g"

[runtimes.smolvm]
program = "/opt/smolvm/bin/smolvm"
memory = "4g"

[runtimes.hardened]
provider = "docker"
isolation = "runsc"

[runtimes.gpu-host]
provider = "docker"
context = "gpu-1"

[runtimes.podman]
enabled = false

[runtimes.e2b]
lifetime = "4h"
max_lifetime = "24h"
"#)
        .unwrap();
        assert_eq!(f.default.as_deref(), Some("hardened"));
        assert_eq!(f.runtimes["docker"].memory, Some(4 << 30));
        assert_eq!(f.runtimes["hardened"].kind, "docker");
        assert!(f.runtimes["hardened"].adds);
        assert_eq!(f.runtimes["hardened"].isolation.as_deref(), Some("runsc"));
        assert_eq!(f.runtimes["gpu-host"].context.as_deref(), Some("gpu-1"));
        assert_eq!(f.runtimes["podman"].enabled, Some(false));
        assert_eq!(f.runtimes["e2b"].lifetime, Some(4 * 3600));
        assert_eq!(f.runtimes["e2b"].max_lifetime, Some(24 * 3600));
        assert_eq!(f.runtimes["smolvm"].program, Some(PathBuf::from("/opt/smolvm/bin/smolvm")));
    }

    #[test]
    fn times_in_every_form() {
        for (text, secs) in [
            ("\"24h\"", 86400),
            ("\"90m\"", 5400),
            ("\"3600s\"", 3600),
            ("7200", 7200),
            ("\"2d\"", 172800),
        ] {
            let f = p(&format!("[runtimes.docker]\nmax_lifetime = {text}\n")).unwrap();
            assert_eq!(f.runtimes["docker"].max_lifetime, Some(secs), "{text}");
        }
    }

    /// Every refusal, with the message it gives.
    #[test]
    fn every_mistake_names_the_file_the_table_and_the_field() {
        let cases: &[(&str, &str)] = &[
            ("defualt = \"docker\"", "/etc/holm/runtimes.toml: defualt: unknown field"),
            ("default = 3", "/etc/holm/runtimes.toml: default: must be a runtime's name"),
            (
                "default = \"nowhere\"",
                "/etc/holm/runtimes.toml: default: \"nowhere\" is no runtime",
            ),
            (
                "[runtimes.docker]\nmemroy = \"4g\"",
                "[runtimes.docker] memroy: unknown field; the fields are: provider, enabled",
            ),
            (
                "[runtimes.docker]\nmemory = \"4q\"",
                "[runtimes.docker] memory: \"4q\" has an unknown unit",
            ),
            ("[runtimes.docker]\nmemory = 4", "[runtimes.docker] memory: must be a size in quotes"),
            (
                "[runtimes.docker]\nmemory = \"100m\"",
                "[runtimes.docker] memory: is less than the 256m",
            ),
            ("[runtimes.docker]\ncpus = \"two\"", "[runtimes.docker] cpus: must be a number"),
            ("[runtimes.docker]\ncpus = 0", "[runtimes.docker] cpus: must be above 0"),
            (
                "[runtimes.docker]\nlifetime = \"1y\"",
                "[runtimes.docker] lifetime: \"1y\" is not a time",
            ),
            (
                "[runtimes.docker]\nlifetime = \"30s\"",
                "[runtimes.docker] lifetime: must be at least 60 seconds",
            ),
            (
                "[runtimes.docker]\nlifetime = \"2h\"\nmax_lifetime = \"1h\"",
                "[runtimes.docker] lifetime: 7200 seconds is above max_lifetime (3600 seconds)",
            ),
            (
                "[runtimes.docker]\nenabled = \"no\"",
                "[runtimes.docker] enabled: must be true or false",
            ),
            (
                "[runtimes.docker]\nprogram = \"/bin/x\"",
                "[runtimes.docker] program: does not apply to docker runtimes",
            ),
            (
                "[runtimes.docker]\nbuild_with = \"docker\"",
                "[runtimes.docker] build_with: does not apply to docker runtimes",
            ),
            (
                "[runtimes.podman]\ncontext = \"x\"",
                "[runtimes.podman] context: does not apply to podman runtimes",
            ),
            (
                "[runtimes.smolvm]\nisolation = \"runsc\"",
                "[runtimes.smolvm] isolation: does not apply to smolvm runtimes",
            ),
            (
                "[runtimes.smolvm]\nbuild_with = \"qemu\"",
                "[runtimes.smolvm] build_with: must be docker, podman or nerdctl",
            ),
            (
                "[runtimes.e2b]\nenabled = false",
                "[runtimes.e2b] enabled: does not apply to e2b runtimes",
            ),
            (
                "[runtimes.e2b]\nisolation = \"runsc\"",
                "[runtimes.e2b] isolation: does not apply to e2b runtimes",
            ),
            (
                "[runtimes.fast]\nmemory = \"4g\"",
                "[runtimes.fast]: no runtime is named \"fast\": to add one on an engine, give provider",
            ),
            (
                "[runtimes.fast]\nprovider = \"vmware\"",
                "[runtimes.fast] provider: \"vmware\" is no engine",
            ),
            (
                "[runtimes.fast]\nprovider = \"e2b\"",
                "[runtimes.fast] provider: \"e2b\" is a cloud vendor",
            ),
            (
                "[runtimes.docker]\nprovider = \"docker\"",
                "[runtimes.docker] provider: \"docker\" is a runtime the server finds itself",
            ),
            (
                "[runtimes.Fast]\nprovider = \"docker\"",
                "[runtimes.Fast]: a runtime's name is 1 to 40 lowercase",
            ),
            (
                "[runtimes.docker]\nisolation = \"\"",
                "[runtimes.docker] isolation: must be a non-empty string",
            ),
            ("runtimes = 3", "runtimes: must be tables"),
            ("[runtimes]\ndocker = 3", "[runtimes.docker]: must be a table of fields"),
            ("[runtimes.docker\n", "/etc/holm/runtimes.toml: not valid TOML"),
            (
                "[[runtimes.docker.pool]]\nscreens = 1",
                "[runtimes.docker] pool: pool 0: size is missing",
            ),
            (
                "[[runtimes.docker.pool]]\nsize = 99",
                "[runtimes.docker] pool: pool 0: size must be 0 to 64",
            ),
            (
                "[[runtimes.docker.pool]]\nsize = 1\nimage = \"x\"",
                "[runtimes.docker] pool: pool 0: unknown field \"image\"",
            ),
            ("[runtimes.e2b]\npool = []", "[runtimes.e2b] pool: does not apply to e2b runtimes"),
            ("max_boxes = 0", "max_boxes: must be 1 to 10000"),
        ];
        for (text, want) in cases {
            let got = p(text).unwrap_err();
            assert!(got.contains(want), "for {text:?}\n  got:  {got}\n  want: {want}");
            assert!(got.starts_with("/etc/holm/runtimes.toml: "), "{got}");
        }
    }
}
