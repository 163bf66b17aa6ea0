//! The environment variables holmd reads: one table, the only place each is
//! declared. [`crate::config`] and the stores read them through these
//! constants; the table of `docs/config.md` is made from [`VARS`] (a test
//! keeps it equal, and writes it with `HOLM_UPDATE_SNAPSHOTS=1`), and a test
//! refuses a `HOLM_` name in holmd's sources that is not here.

/// One environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// What holmd does without it.
    pub default: &'static str,
    /// What it sets.
    pub meaning: &'static str,
}

macro_rules! vars {
    ($($id:ident = $name:literal, $default:literal, $meaning:literal;)*) => {
        $(
            #[doc = concat!("`", $name, "`: ", $meaning)]
            pub const $id: &str = $name;
        )*
        /// Every variable holmd reads, in the order the docs list them.
        pub const VARS: &[Var] = &[$(Var { name: $name, default: $default, meaning: $meaning }),*];
    };
}

vars! {
    SERVER_ADDR = "HOLM_SERVER_ADDR", "`127.0.0.1:8080`",
        "where holmd listens";
    SERVER_TOKEN = "HOLM_SERVER_TOKEN", "unset",
        "the bearer token for every route but `/v1/health` and `/v1/openapi.json`";
    SERVER_TOKEN_FILE = "HOLM_SERVER_TOKEN_FILE", "`$CREDENTIALS_DIRECTORY/token` when systemd passes one",
        "a file holding the token (with `LoadCredential=token:…`, systemd's credential); missing, unreadable, empty or short stops the start";
    INSECURE_NO_TOKEN = "HOLM_INSECURE_NO_TOKEN", "unset",
        "`1` (or `holmd --insecure-no-token`): start without a token although holmd answers beyond loopback; warned on every start";
    STORAGE_BACKEND = "HOLM_STORAGE_BACKEND", "`local`",
        "where records live: `local`, `sqlite`, `postgres`, `s3` (see [Deploy and configure](deploy.md#storage))";
    STATE_DIR = "HOLM_STATE_DIR", "`$XDG_STATE_HOME/holm`, else `~/.local/state/holm`",
        "the `local` store (owner-only files), and where `sqlite` puts `holm.db`";
    SQLITE_PATH = "HOLM_SQLITE_PATH", "`$HOLM_STATE_DIR/holm.db`",
        "the `sqlite` database file";
    DATABASE_URL = "HOLM_DATABASE_URL", "needed for `postgres`",
        "the `postgres` database, such as `postgres://holm:PASSWORD@127.0.0.1:5432/holm`";
    S3_BUCKET = "HOLM_S3_BUCKET", "needed for `s3`",
        "the `s3` store's bucket, made when missing";
    S3_ENDPOINT = "HOLM_S3_ENDPOINT", "AWS for the region",
        "an S3-compatible endpoint (MinIO, Ceph, R2, ...), an `http(s)` URL";
    S3_REGION = "HOLM_S3_REGION", "`us-east-1`",
        "the bucket's region";
    S3_PREFIX = "HOLM_S3_PREFIX", "none",
        "a prefix for every object holmd writes";
    S3_PATH_STYLE = "HOLM_S3_PATH_STYLE", "`true` with an endpoint, else `false`",
        "path-style bucket addresses (`true` or `false`)";
    S3_ACCESS_KEY_ID = "HOLM_S3_ACCESS_KEY_ID", "`AWS_ACCESS_KEY_ID`",
        "the `s3` store's access key id";
    S3_SECRET_ACCESS_KEY = "HOLM_S3_SECRET_ACCESS_KEY", "`AWS_SECRET_ACCESS_KEY`",
        "the `s3` store's secret key";
    S3_SESSION_TOKEN = "HOLM_S3_SESSION_TOKEN", "`AWS_SESSION_TOKEN`",
        "the `s3` store's session token, for temporary credentials";
    SHARED_STORE = "HOLM_SHARED_STORE", "`0`",
        "`1`: other holmd replicas use this `postgres` or `s3` store too, and all serve its boxes (see [Deploy and configure](deploy.md#replicas))";
    SERVER_NAME = "HOLM_SERVER_NAME", "`holmd`",
        "the name on this server's boxes (label `holm.server`): give each server that shares an engine its own";
    SERVER_RUNTIMES = "HOLM_SERVER_RUNTIMES", "all found",
        "offer only these runtimes (host runtimes found or added by the runtimes file)";
    SERVER_CONFIG = "HOLM_SERVER_CONFIG", "unset",
        "the runtimes file, read at start (see [Runtimes](runtimes.md))";
    SERVER_SECRET_KEY = "HOLM_SERVER_SECRET_KEY", "unset",
        "the server key (32 characters or more) that encrypts vendor keys";
    SERVER_SECRET_FILE = "HOLM_SERVER_SECRET_FILE", "unset",
        "a file holding the server key; made with a new random key (mode 0600) when missing";
    SERVER_SANDBOXES = "HOLM_SERVER_SANDBOXES", "unset",
        "vendors to offer from their own variables, such as `e2b` with `E2B_API_KEY`";
    PUBLIC_URL = "HOLM_PUBLIC_URL", "unset",
        "the address clients use behind a proxy, such as `https://boxes.example.com`; every route accepts its host name and pages from it";
    MAX_BOXES = "HOLM_MAX_BOXES", "`64`",
        "the most live boxes (not removed or failed), pooled ones counted; more are refused (429 `limit_reached`). The runtimes file's `max_boxes` may lower it, never raise it";
    MAX_BUILDS = "HOLM_MAX_BUILDS", "`2`",
        "the most image builds at once; a build asked for beyond it is refused, a new box's waits";
    RECORD_RETENTION = "HOLM_RECORD_RETENTION", "`7d`",
        "how long a removed box's record (and its traces) is kept (`24h`, `90m`, seconds)";
    RECORDINGS_KEPT = "HOLM_RECORDINGS_KEPT", "`20g`",
        "the most bytes of removed boxes' recordings kept in `<HOLM_STATE_DIR>/recordings`; past it the oldest boxes' are dropped";
    IMAGE_CACHE = "HOLM_IMAGE_CACHE", "`100g`",
        "past this total size (as `holm image ls` adds up), unused box images are pruned after each build; `off` never";
    TIMELINE_SCREENSHOTS = "HOLM_TIMELINE_SCREENSHOTS", "`300`",
        "the most screenshots one box's timeline keeps; past it the oldest are dropped";
    TIMELINE_BYTES = "HOLM_TIMELINE_BYTES", "`100m`",
        "the most bytes of screenshots one box's timeline keeps; past it the oldest are dropped";
    TIMELINES_KEPT = "HOLM_TIMELINES_KEPT", "`2g`",
        "the most bytes of screenshots the timelines of removed (and failed) boxes keep together, checked hourly; past it the records of the boxes that ended longest ago are deleted, timelines included, before their retention ends";
    RUST_LOG = "RUST_LOG", "`holmd=info,holm=info`",
        "log levels; `rmcp` (the MCP library, which logs a tool call's arguments at `debug`) stays at `info` or quieter whatever it says (docs/security.md)";
}

/// `HOLM_` names holmd's sources may mention that are not its own settings:
/// the test suite's switch for rewriting snapshots.
pub const NOT_SETTINGS: &[&str] = &["HOLM_UPDATE_SNAPSHOTS"];

/// The table of `docs/config.md`, as Markdown.
pub fn markdown() -> String {
    let mut out = String::from("| variable | default | meaning |\n|---|---|---|\n");
    for v in VARS {
        out.push_str(&format!("| `{}` | {} | {} |\n", v.name, v.default, v.meaning));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::{Path, PathBuf};

    use super::*;

    fn crate_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    /// `docs/config.md`'s table is [`markdown`]'s, byte for byte.
    #[test]
    fn docs_config_md_lists_every_variable() {
        let doc = crate_dir().join("../../docs/config.md");
        holm_proto::docgen::check_section(&doc, "vars", &markdown(), "holmd").unwrap();
    }

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Every `HOLM_` name holmd's sources mention is in [`VARS`] (or
    /// [`NOT_SETTINGS`]): a variable read but not documented fails here.
    #[test]
    fn every_variable_named_in_the_sources_is_in_the_table() {
        let known: BTreeSet<&str> =
            VARS.iter().map(|v| v.name).chain(NOT_SETTINGS.iter().copied()).collect();
        let mut files = Vec::new();
        sources(&crate_dir().join("src"), &mut files);
        let mut unknown = BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut rest = text.as_str();
            while let Some(i) = rest.find("HOLM_") {
                let name: String = rest[i..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                rest = &rest[i + name.len()..];
                // A prefix (`HOLM_S3_*`) names the variables it starts.
                let prefix = name.ends_with('_') && known.iter().any(|k| k.starts_with(&name));
                if !prefix && !known.contains(name.as_str()) {
                    unknown.insert(format!("{name} ({})", file.display()));
                }
            }
        }
        assert!(unknown.is_empty(), "named but not in VARS: {unknown:?}");
    }

    #[test]
    fn names_are_unique() {
        let names: BTreeSet<&str> = VARS.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), VARS.len());
    }
}
