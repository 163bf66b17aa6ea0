//! [`ExecToken`]: the bearer token of a kubeconfig's `exec` credential
//! plugin ([`ExecPlugin`]), run when there is no token yet, when the last
//! one expires (`status.expirationTimestamp`, less a margin) and after
//! the API refused it (`401`).

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::config::ExecPlugin;

/// A token this close to its expiry is asked for again.
const MARGIN: Duration = Duration::from_secs(30);

/// A plugin and the token it last answered.
pub struct ExecToken {
    plugin: ExecPlugin,
    cached: tokio::sync::Mutex<Option<(String, Option<SystemTime>)>>,
}

impl std::fmt::Debug for ExecToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecToken").field("plugin", &self.plugin).finish_non_exhaustive()
    }
}

impl ExecToken {
    /// No token yet: the first request runs the plugin.
    pub fn new(plugin: ExecPlugin) -> Self {
        Self { plugin, cached: tokio::sync::Mutex::new(None) }
    }

    /// The token, from the plugin if none is kept or it expires.
    pub async fn get(&self) -> Result<String, String> {
        let mut cached = self.cached.lock().await;
        if let Some((token, until)) = cached.as_ref()
            && until.is_none_or(|t| t > SystemTime::now() + MARGIN)
        {
            return Ok(token.clone());
        }
        let fresh = self.run().await?;
        let token = fresh.0.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    /// Drops the kept token (the API refused it).
    pub async fn forget(&self) {
        *self.cached.lock().await = None;
    }

    async fn run(&self) -> Result<(String, Option<SystemTime>), String> {
        let p = &self.plugin;
        let shown = p.command.display();
        let info = json!({
            "apiVersion": p.api_version,
            "kind": "ExecCredential",
            "spec": { "interactive": false },
        });
        let output = tokio::process::Command::new(&p.command)
            .args(&p.args)
            .envs(p.env.iter().map(|(k, v)| (k, v)))
            .env("KUBERNETES_EXEC_INFO", info.to_string())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .map_err(|e| format!("the exec plugin {shown}: {e}"))?;
        if !output.status.success() {
            let err = String::from_utf8_lossy(&output.stderr);
            let err: String = err.trim().chars().take(300).collect();
            return Err(format!("the exec plugin {shown} failed ({}): {err}", output.status));
        }
        let v: Value = serde_json::from_slice(&output.stdout)
            .map_err(|e| format!("the exec plugin {shown} printed no ExecCredential: {e}"))?;
        let status = &v["status"];
        let Some(token) = status["token"].as_str().filter(|t| !t.is_empty()) else {
            return Err(format!(
                "the exec plugin {shown} answered no token (a client certificate from a \
                 plugin is not supported)"
            ));
        };
        let until =
            match status["expirationTimestamp"].as_str() {
                Some(t) => Some(humantime::parse_rfc3339_weak(t).map_err(|e| {
                    format!("the exec plugin {shown}: expirationTimestamp {t:?}: {e}")
                })?),
                None => None,
            };
        Ok((token.to_owned(), until))
    }
}
