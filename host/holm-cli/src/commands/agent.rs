//! `holm agent BOX`: how to reach a box's guest API straight from this host,
//! with a short-lived credential that opens that box's guest only (prints
//! it, like `holm bridge`); `--curl` prints a ready `curl` line, `--revoke`
//! revokes every such credential of the box.

use std::process::ExitCode;

use clap::Args;
use holm_client::Client;
use holm_proto::agent::AgentAccess;
use serde::Serialize;

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// How to reach a box's guest API straight from this host, to debug it (prints a
    /// short-lived credential for that box only); `--curl [PATH]` prints a ready curl line,
    /// `--revoke` revokes every such credential of the box.
    Agent(AgentArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Agent(a) => agent(c, a, json).await,
        }
    }
}

/// `holm agent BOX`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The box id.
    r#box: String,
    /// How long the credential opens the guest, in seconds (1 to 3600).
    #[arg(long, default_value_t = holm_proto::agent::DEFAULT_AGENT_TTL_SECS)]
    ttl: u32,
    /// Print a ready `curl` line for the guest's PATH (default /v1/info);
    /// with `--data`, a POST of that JSON.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "/v1/info")]
    curl: Option<String>,
    /// The JSON body of the `--curl` line (makes it a POST).
    #[arg(long, value_name = "JSON", requires = "curl")]
    data: Option<String>,
    /// Revoke every agent credential of the box instead.
    #[arg(long, conflicts_with_all = ["curl", "data", "ttl"])]
    revoke: bool,
}

/// `--json` with `--curl`: the access and the line.
#[derive(Serialize)]
struct WithCurl<'a> {
    #[serde(flatten)]
    access: &'a AgentAccess,
    curl: String,
}

/// `holm agent BOX`: prints how to reach the box's guest, with a credential.
pub async fn agent(client: &Client, a: AgentArgs, json: bool) -> anyhow::Result<ExitCode> {
    let b = client.boxed(&a.r#box);
    if a.revoke {
        b.revoke_agent().await?;
        if json {
            output::json(&serde_json::json!({ "box_id": a.r#box, "revoked": true }));
        } else {
            output::line(&format!("revoked every agent credential of {}", a.r#box));
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &a.curl
        && !path.starts_with('/')
    {
        return Err(holm_proto::ApiError::invalid_fields(vec![holm_proto::Issue {
            path: "curl".into(),
            problem: format!(
                "must be a path on the guest that starts with /, such as /v1/info, not {path:?}"
            ),
        }])
        .into());
    }
    let access = b.agent(Some(a.ttl)).await?;
    match (&a.curl, json) {
        (Some(path), true) => {
            output::json(&WithCurl {
                access: &access,
                curl: curl_line(&access, path, a.data.as_deref()),
            });
        }
        (Some(path), false) => output::line(&curl_line(&access, path, a.data.as_deref())),
        (None, true) => output::json(&access),
        (None, false) => {
            output::line(&format!("url          {}", access.url));
            output::line(&format!("openapi_url  {}", access.openapi_url));
            for (k, v) in &access.headers {
                output::line(&format!("header       {k}: {v}"));
            }
            output::line(&format!("expires_at   {}", access.expires_at));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A `curl` line for `path` on the guest: GET, or with `data` a JSON POST.
/// Every word is quoted for a POSIX shell.
fn curl_line(access: &AgentAccess, path: &str, data: Option<&str>) -> String {
    let mut words = vec!["curl".to_owned(), "-sS".to_owned(), "--fail-with-body".to_owned()];
    for (k, v) in &access.headers {
        words.push("-H".to_owned());
        words.push(quote(&format!("{k}: {v}")));
    }
    if let Some(body) = data {
        words.push("-H".to_owned());
        words.push(quote("Content-Type: application/json"));
        words.push("--data".to_owned());
        words.push(quote(body));
    }
    words.push(quote(&format!("{}{path}", access.url.trim_end_matches('/'))));
    words.join(" ")
}

/// `s` in single quotes, each `'` in it as `'\''`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use holm_proto::agent::AgentAccess;

    use super::curl_line;

    #[test]
    fn the_curl_line_quotes_every_word() {
        let access = AgentAccess {
            box_id: "box_a".into(),
            url: "http://127.0.0.1:49153".into(),
            openapi_url: "http://127.0.0.1:49153/v1/openapi.json".into(),
            headers: [("Authorization".to_owned(), "Bearer hag_1".to_owned())].into(),
            expires_at: "2026-01-01T00:00:00Z".into(),
        };
        assert_eq!(
            curl_line(&access, "/v1/info", None),
            "curl -sS --fail-with-body -H 'Authorization: Bearer hag_1' 'http://127.0.0.1:49153/v1/info'"
        );
        assert_eq!(
            curl_line(&access, "/v1/commands/run", Some(r#"{"argv":["echo","it's"]}"#)),
            "curl -sS --fail-with-body -H 'Authorization: Bearer hag_1' -H 'Content-Type: application/json' \
             --data '{\"argv\":[\"echo\",\"it'\\''s\"]}' 'http://127.0.0.1:49153/v1/commands/run'"
        );
    }
}
