//! `holm runtime`: the runtimes the server offers, and the vendor runtimes
//! added with their keys.

use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use holm_client::Client;

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Runtimes.
    #[command(subcommand)]
    Runtime(RuntimeCmd),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Runtime(cmd) => runtime(c, cmd, json).await,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(super) enum RuntimeCmd {
    /// List the runtimes and what each can do.
    Ls,
    /// Show one runtime.
    Get {
        /// Its name.
        name: String,
    },
    /// Add a remote runtime: a cloud vendor account with a name. The key is
    /// read from standard input (--api-key) or a variable (--api-key-env),
    /// never from the command line.
    Add {
        /// Its name.
        name: String,
        /// The vendor: e2b, vercel, daytona, modal or runtime-cloud.
        #[arg(long)]
        provider: String,
        /// A setting, KEY=VALUE, such as team_id=team_... (repeat for more).
        #[arg(long = "field", value_name = "KEY=VALUE")]
        fields: Vec<String>,
        #[command(flatten)]
        key: KeyArgs,
    },
    /// Change a remote runtime's settings, or replace its key.
    Set {
        /// Its name.
        name: String,
        /// A setting to set, KEY=VALUE (repeat for more).
        #[arg(long = "field", value_name = "KEY=VALUE")]
        fields: Vec<String>,
        /// A setting to remove (repeat for more).
        #[arg(long = "unset", value_name = "KEY")]
        unset: Vec<String>,
        #[command(flatten)]
        key: KeyArgs,
    },
    /// Remove a remote runtime.
    Rm {
        /// Its name.
        name: String,
    },
}

/// Where a vendor key comes from: never the command line.
#[derive(Debug, Args)]
pub(super) struct KeyArgs {
    /// Read the key from standard input.
    #[arg(long, conflicts_with = "api_key_env")]
    api_key: bool,
    /// Read the key from this environment variable.
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
}

impl KeyArgs {
    /// The key, when one is asked for.
    fn read(&self) -> anyhow::Result<Option<String>> {
        if let Some(var) = &self.api_key_env {
            let key = std::env::var(var).with_context(|| format!("{var} is not set"))?;
            if key.trim().is_empty() {
                bail!("{var} is empty");
            }
            return Ok(Some(key.trim().to_owned()));
        }
        if self.api_key {
            use std::io::Read as _;
            let mut key = String::new();
            std::io::stdin()
                .read_to_string(&mut key)
                .context("read the key from standard input")?;
            if key.trim().is_empty() {
                bail!(
                    "no key on standard input: printf '%s' \"$KEY\" | holm runtime add ... --api-key"
                );
            }
            return Ok(Some(key.trim().to_owned()));
        }
        Ok(None)
    }
}

/// Parses KEY=VALUE settings: `true`/`false` and whole numbers as such,
/// anything else as text.
pub(super) fn parse_fields(
    fields: &[String],
) -> anyhow::Result<std::collections::BTreeMap<String, serde_json::Value>> {
    let mut out = std::collections::BTreeMap::new();
    for f in fields {
        let Some((k, v)) = f.split_once('=') else {
            bail!("--field {f:?} is not KEY=VALUE");
        };
        let value = match v {
            "true" => serde_json::Value::Bool(true),
            "false" => serde_json::Value::Bool(false),
            _ => v
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(v), serde_json::Value::from),
        };
        out.insert(k.trim().to_owned(), value);
    }
    Ok(out)
}

/// One runtime: its JSON with `--json`, else a line.
pub(super) fn print_runtime(r: &holm_proto::host::RuntimeInfo, json: bool) {
    if json {
        output::json(r);
    } else {
        output::line(&format!(
            "{} {} {}{}",
            r.name,
            r.provider,
            r.state,
            r.reason.as_deref().map(|w| format!(" ({w})")).unwrap_or_default()
        ));
    }
}

/// `holm runtime ...`.
pub(super) async fn runtime(
    client: &Client,
    cmd: RuntimeCmd,
    json: bool,
) -> anyhow::Result<ExitCode> {
    match cmd {
        RuntimeCmd::Ls => {
            let list = client.runtimes().await?;
            if json {
                output::json(&list);
            } else {
                let rows: Vec<Vec<String>> = list
                    .iter()
                    .map(|r| {
                        let mut can = Vec::new();
                        for (on, name) in [
                            (r.can.pause, "pause"),
                            (r.can.stop, "stop"),
                            (r.can.fork, "fork"),
                            (r.can.browser_profile, "browser_profile"),
                            (r.can.wayland, "wayland"),
                        ] {
                            if on {
                                can.push(name);
                            }
                        }
                        vec![
                            format!("{}{}", r.name, if r.default { " (default)" } else { "" }),
                            r.place.to_string(),
                            r.environment.to_string(),
                            r.state.to_string(),
                            can.join(","),
                        ]
                    })
                    .collect();
                output::table(&["NAME", "PLACE", "ENVIRONMENT", "STATE", "CAN"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCmd::Get { name } => {
            output::json(&client.runtime(&name).await?);
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCmd::Add { name, provider, fields, key } => {
            let api_key = key.read()?;
            if api_key.is_none() {
                bail!(
                    "a vendor runtime needs its key: give --api-key (from standard input) or --api-key-env VAR"
                );
            }
            let request = holm_proto::host::AddRuntime {
                name,
                provider,
                fields: parse_fields(&fields)?,
                api_key,
            };
            print_runtime(&client.add_runtime(&request).await?, json);
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCmd::Set { name, fields, unset, key } => {
            let mut fields = parse_fields(&fields)?;
            fields.extend(unset.into_iter().map(|k| (k, serde_json::Value::Null)));
            let request = holm_proto::host::ChangeRuntime { fields, api_key: key.read()? };
            print_runtime(&client.change_runtime(&name, &request).await?, json);
            Ok(ExitCode::SUCCESS)
        }
        RuntimeCmd::Rm { name } => {
            let removed = client.remove_runtime(&name).await?;
            if json {
                output::json(&removed);
            } else {
                output::line(&format!("removed {}", removed.name));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
