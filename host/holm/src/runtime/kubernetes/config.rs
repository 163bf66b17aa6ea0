//! Where the `kubernetes` runtime's cluster is and how a request proves
//! who sends it: a kubeconfig (the settings' file and context, else
//! `KUBECONFIG`, else `~/.kube/config`), or the in-cluster service account.
//!
//! A kubeconfig is YAML (read with `yaml-rust2`; JSON is YAML too). Of a
//! cluster it takes `server`, `certificate-authority(-data)` and
//! `insecure-skip-tls-verify`; of a user `token`, `tokenFile`,
//! `client-certificate(-data)` with `client-key(-data)`, and an `exec`
//! credential plugin that answers a token ([`ExecPlugin`]). Any other user
//! field (`auth-provider`, `username`, impersonation) and a
//! cluster's `proxy-url` or `tls-server-name` are refused by name rather
//! than ignored: a request without the credentials a config meant would
//! fail later, less clearly.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

/// The in-cluster service account's files.
const SERVICE_ACCOUNT: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The user fields this client understands (`extensions` is ignored).
const USER_FIELDS: &[&str] = &[
    "token",
    "tokenFile",
    "client-certificate",
    "client-certificate-data",
    "client-key",
    "client-key-data",
    "exec",
    "extensions",
];

/// How a request proves who sends it, besides a client certificate.
#[derive(Clone, PartialEq, Eq)]
pub enum Bearer {
    /// No `Authorization` header.
    None,
    /// A token given in the kubeconfig.
    Token(String),
    /// A token file, read at each request (service account tokens rotate).
    File(PathBuf),
    /// A token an exec credential plugin answers (kept until it expires).
    Exec(ExecPlugin),
}

/// A user's `exec` credential plugin (client-go's `ExecConfig`): a command
/// run without a terminal, with `KUBERNETES_EXEC_INFO` set, that prints an
/// `ExecCredential` whose `status.token` is the bearer token. Its `Debug`
/// shows the command only (arguments and environment may hold secrets).
#[derive(Clone, PartialEq, Eq)]
pub struct ExecPlugin {
    /// The `ExecCredential` version (`client.authentication.k8s.io/v1`).
    pub api_version: String,
    /// The program: by `PATH`, or relative to the kubeconfig if it has a `/`.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment, besides holmd's own.
    pub env: Vec<(String, String)>,
}

impl std::fmt::Debug for ExecPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecPlugin").field("command", &self.command).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Token(_) => f.write_str("Token(hidden)"),
            Self::File(p) => f.debug_tuple("File").field(p).finish(),
            Self::Exec(e) => f.debug_tuple("Exec").field(e).finish(),
        }
    }
}

/// What a client needs to reach a cluster. Its `Debug` shows neither the
/// token nor the client key.
#[derive(Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    /// The API server's URL, without a trailing `/`.
    pub server: String,
    /// The PEM certificates to trust instead of the system's.
    pub ca: Option<Vec<u8>>,
    /// `insecure-skip-tls-verify`.
    pub insecure: bool,
    /// The client certificate and its key, as one PEM.
    pub identity: Option<Vec<u8>>,
    /// The bearer token.
    pub bearer: Bearer,
}

impl std::fmt::Debug for ClusterConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConfig")
            .field("server", &self.server)
            .field("ca", &self.ca.is_some())
            .field("insecure", &self.insecure)
            .field("identity", &self.identity.as_ref().map(|_| "hidden"))
            .field("bearer", &self.bearer)
            .finish()
    }
}

/// The config the settings name: the file `kubeconfig` (else `KUBECONFIG`,
/// else `~/.kube/config`) at `context` (else its current context), else,
/// with no kubeconfig and no context, the in-cluster service account.
pub fn load(kubeconfig: Option<&Path>, context: Option<&str>) -> Result<ClusterConfig, String> {
    if let Some(path) = kubeconfig {
        return from_files(&[path.to_path_buf()], context);
    }
    if let Some(var) = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty()) {
        let paths: Vec<PathBuf> =
            std::env::split_paths(&var).filter(|p| !p.as_os_str().is_empty()).collect();
        return from_files(&paths, context);
    }
    if let Some(home) = std::env::var_os("HOME") {
        let path = Path::new(&home).join(".kube/config");
        if path.exists() {
            return from_files(&[path], context);
        }
    }
    if let Some(context) = context {
        return Err(format!(
            "context {context} was asked for but there is no kubeconfig (KUBECONFIG, ~/.kube/config)"
        ));
    }
    in_cluster(Path::new(SERVICE_ACCOUNT), |k| std::env::var(k).ok())
}

/// The in-cluster config: `KUBERNETES_SERVICE_HOST`/`_PORT` and the
/// service account's `token` and `ca.crt` in `dir`.
pub fn in_cluster(
    dir: &Path,
    env: impl Fn(&str) -> Option<String>,
) -> Result<ClusterConfig, String> {
    let (Some(host), Some(port)) = (env("KUBERNETES_SERVICE_HOST"), env("KUBERNETES_SERVICE_PORT"))
    else {
        return Err("no kubeconfig (KUBECONFIG, ~/.kube/config) and not in a cluster \
                    (KUBERNETES_SERVICE_HOST is not set)"
            .to_owned());
    };
    let host = if host.contains(':') { format!("[{host}]") } else { host };
    let ca = dir.join("ca.crt");
    let ca = std::fs::read(&ca).map_err(|e| format!("{}: {e}", ca.display()))?;
    Ok(ClusterConfig {
        server: format!("https://{host}:{port}"),
        ca: Some(ca),
        insecure: false,
        identity: None,
        bearer: Bearer::File(dir.join("token")),
    })
}

/// A named entry of a kubeconfig's list, with the directory of its file
/// (its relative paths are relative to it).
struct Entry {
    name: String,
    body: Value,
    dir: PathBuf,
}

/// One or more kubeconfig files, merged as kubectl merges them: the first
/// file to name a cluster, user or context, or a current context, wins.
#[derive(Default)]
struct Merged {
    current: Option<String>,
    clusters: Vec<Entry>,
    users: Vec<Entry>,
    contexts: Vec<Entry>,
}

impl Merged {
    fn add(&mut self, doc: &Value, dir: &Path) -> Result<(), String> {
        if self.current.is_none() {
            self.current =
                doc["current-context"].as_str().filter(|s| !s.is_empty()).map(Into::into);
        }
        for (key, list) in [
            ("clusters", &mut self.clusters),
            ("users", &mut self.users),
            ("contexts", &mut self.contexts),
        ] {
            let inner = &key[..key.len() - 1];
            for item in doc[key].as_array().into_iter().flatten() {
                let Some(name) = item["name"].as_str() else {
                    return Err(format!("an entry of {key} has no name"));
                };
                if list.iter().all(|e| e.name != name) {
                    let body = item[inner].clone();
                    list.push(Entry { name: name.to_owned(), body, dir: dir.to_path_buf() });
                }
            }
        }
        Ok(())
    }

    fn get<'a>(list: &'a [Entry], what: &str, name: &str) -> Result<&'a Entry, String> {
        list.iter().find(|e| e.name == name).ok_or_else(|| format!("no {what} named {name}"))
    }
}

/// The config of `context` (else the current one) in the kubeconfig
/// `paths` (those that do not exist are skipped, as kubectl skips them).
pub fn from_files(paths: &[PathBuf], context: Option<&str>) -> Result<ClusterConfig, String> {
    let mut merged = Merged::default();
    let mut read = 0;
    for path in paths {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && paths.len() > 1 => continue,
            Err(e) => return Err(format!("kubeconfig {}: {e}", path.display())),
        };
        let doc = parse(&text).map_err(|e| format!("kubeconfig {}: {e}", path.display()))?;
        merged.add(&doc, path.parent().unwrap_or(Path::new(".")))?;
        read += 1;
    }
    if read == 0 {
        return Err("none of the KUBECONFIG files exists".to_owned());
    }
    resolve(&merged, context)
}

/// A kubeconfig's text as JSON.
fn parse(text: &str) -> Result<Value, String> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    match docs.first() {
        Some(doc) => to_json(doc),
        None => Ok(Value::Null),
    }
}

fn to_json(y: &Yaml) -> Result<Value, String> {
    Ok(match y {
        Yaml::Real(s) | Yaml::String(s) => Value::String(s.clone()),
        Yaml::Integer(i) => Value::from(*i),
        Yaml::Boolean(b) => Value::Bool(*b),
        Yaml::Null => Value::Null,
        Yaml::Array(a) => Value::Array(a.iter().map(to_json).collect::<Result<_, _>>()?),
        Yaml::Hash(h) => {
            let mut m = serde_json::Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) | Yaml::Real(s) => s.clone(),
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    _ => return Err("a mapping key that is not a scalar".to_owned()),
                };
                m.insert(key, to_json(v)?);
            }
            Value::Object(m)
        }
        Yaml::Alias(_) | Yaml::BadValue => return Err("an unresolved alias".to_owned()),
    })
}

fn resolve(k: &Merged, context: Option<&str>) -> Result<ClusterConfig, String> {
    let name = context
        .map(str::to_owned)
        .or_else(|| k.current.clone())
        .ok_or("the kubeconfig has no current-context and none was asked for")?;
    let ctx = Merged::get(&k.contexts, "context", &name)?;
    let cluster_name = ctx.body["cluster"].as_str().ok_or("the context names no cluster")?;
    let cluster = Merged::get(&k.clusters, "cluster", cluster_name)?;
    let mut config = from_cluster(cluster)?;
    if let Some(user_name) = ctx.body["user"].as_str().filter(|s| !s.is_empty()) {
        from_user(Merged::get(&k.users, "user", user_name)?, &mut config)?;
    }
    Ok(config)
}

fn from_cluster(e: &Entry) -> Result<ClusterConfig, String> {
    let c = &e.body;
    for field in ["proxy-url", "tls-server-name"] {
        if !c[field].is_null() {
            return Err(format!("cluster {}: `{field}` is not supported", e.name));
        }
    }
    let server = c["server"].as_str().ok_or_else(|| format!("cluster {} has no server", e.name))?;
    Ok(ClusterConfig {
        server: server.trim_end_matches('/').to_owned(),
        ca: data_or_file(e, "certificate-authority")?,
        insecure: c["insecure-skip-tls-verify"].as_bool().unwrap_or(false),
        identity: None,
        bearer: Bearer::None,
    })
}

fn from_user(e: &Entry, config: &mut ClusterConfig) -> Result<(), String> {
    let fields = e.body.as_object().into_iter().flatten().map(|(k, _)| k.as_str());
    if let Some(field) = fields.into_iter().find(|f| !USER_FIELDS.contains(f)) {
        return Err(format!(
            "user {}: `{field}` is not supported (only token, tokenFile, exec and client \
             certificates)",
            e.name
        ));
    }
    if !e.body["exec"].is_null() {
        config.bearer = Bearer::Exec(exec_plugin(e)?);
    } else if let Some(token) = e.body["token"].as_str().filter(|t| !t.is_empty()) {
        config.bearer = Bearer::Token(token.to_owned());
    } else if let Some(file) = e.body["tokenFile"].as_str().filter(|t| !t.is_empty()) {
        config.bearer = Bearer::File(e.dir.join(file));
    }
    let cert = data_or_file(e, "client-certificate")?;
    let key = data_or_file(e, "client-key")?;
    config.identity = match (cert, key) {
        (Some(mut cert), Some(key)) => {
            cert.push(b'\n');
            cert.extend_from_slice(&key);
            Some(cert)
        }
        (None, None) => None,
        _ => {
            return Err(format!(
                "user {}: a client certificate needs both client-certificate and client-key",
                e.name
            ));
        }
    };
    Ok(())
}

/// A user's `exec` plugin. One that must talk to a person
/// (`interactiveMode: Always`) is refused: holmd has no terminal.
fn exec_plugin(e: &Entry) -> Result<ExecPlugin, String> {
    let x = &e.body["exec"];
    let name = &e.name;
    if x["interactiveMode"].as_str() == Some("Always") {
        return Err(format!("user {name}: exec with `interactiveMode: Always` is not supported"));
    }
    let command = x["command"].as_str().filter(|c| !c.is_empty());
    let command = command.ok_or_else(|| format!("user {name}: exec has no command"))?;
    let command = if command.contains('/') { e.dir.join(command) } else { PathBuf::from(command) };
    let args = x["args"].as_array().into_iter().flatten();
    let args = args.map(|a| a.as_str().map(str::to_owned)).collect::<Option<Vec<_>>>();
    let env = x["env"].as_array().into_iter().flatten().map(|v| {
        Some((v["name"].as_str()?.to_owned(), v["value"].as_str().unwrap_or_default().to_owned()))
    });
    Ok(ExecPlugin {
        api_version: x["apiVersion"]
            .as_str()
            .ok_or_else(|| format!("user {name}: exec has no apiVersion"))?
            .to_owned(),
        command,
        args: args.ok_or_else(|| format!("user {name}: exec's args are not strings"))?,
        env: env
            .collect::<Option<_>>()
            .ok_or_else(|| format!("user {name}: exec's env entries need a name"))?,
    })
}

/// The bytes of `FIELD-data` (base64) or of the file `FIELD` names.
fn data_or_file(e: &Entry, field: &str) -> Result<Option<Vec<u8>>, String> {
    if let Some(data) = e.body[format!("{field}-data")].as_str().filter(|d| !d.is_empty()) {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|err| format!("{}: {field}-data is not base64: {err}", e.name))?;
        return Ok(Some(bytes));
    }
    match e.body[field].as_str().filter(|f| !f.is_empty()) {
        Some(file) => {
            let path = e.dir.join(file);
            std::fs::read(&path).map(Some).map_err(|err| format!("{}: {err}", path.display()))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
