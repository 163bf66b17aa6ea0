//! Live checks at the real vendors, for people with keys
//! (`cargo test -p holm-e2e --test live_vendors`): [`plan`] reads each
//! vendor's own variables as holmd's `HOLM_SERVER_SANDBOXES` does
//! ([`holmd::registry::env_sandboxes`], one place for their names) and
//! plans a vendor only when all of them are set; every other vendor gets a
//! line saying it was not run and which variable is missing. With no keys
//! (CI), nothing is planned and nothing beyond loopback is contacted.
//!
//! A planned vendor's server ([`server`]) offers the vendor's runtime from
//! those variables, and keeps a [`Sweeper`]: when the server is dropped,
//! also while a failing test unwinds, it removes at the vendor every
//! sandbox of the boxes that server made.

use std::sync::Arc;

use holm::runtime::Runtime;
use holmd::registry::EnvSandbox;

use crate::TestServer;
use crate::cloud::Cloud;

/// Every vendor, in the order the live check goes through them.
pub const ALL: [Cloud; 5] =
    [Cloud::E2b, Cloud::Daytona, Cloud::Modal, Cloud::RuntimeCloud, Cloud::Vercel];

/// What the live check does with one vendor.
#[derive(Debug)]
pub enum Planned {
    /// Its variables are all set: the suite runs against it.
    Run(Cloud, EnvSandbox),
    /// Not run, and why (the variable that is missing or wrong).
    NotRun(Cloud, String),
}

/// The plan for every vendor, reading variables through `get`.
pub fn plan(get: &dyn Fn(&str) -> Option<String>) -> Vec<Planned> {
    let get = |k: &str| get(k).filter(|v| !v.is_empty());
    ALL.iter()
        .map(|&cloud| match holmd::registry::env_sandboxes(cloud.name(), &get) {
            Ok(mut found) if found.len() == 1 => Planned::Run(cloud, found.remove(0)),
            Ok(_) => Planned::NotRun(cloud, "holmd read no runtime for it".into()),
            Err(why) => Planned::NotRun(cloud, why.replace("HOLM_SERVER_SANDBOXES names", "")),
        })
        .collect()
}

/// The plan from the process's environment.
pub fn plan_from_env() -> Vec<Planned> {
    plan(&|k| std::env::var(k).ok())
}

/// One line per vendor, for the test's output: run, or not run and why.
pub fn report(plan: &[Planned]) -> Vec<String> {
    plan.iter()
        .map(|p| match p {
            Planned::Run(cloud, _) => {
                format!("live {}: run against the real vendor", cloud.name())
            }
            Planned::NotRun(cloud, why) => {
                format!("live {}: NOT RUN: {}", cloud.name(), why.trim())
            }
        })
        .collect()
}

/// A server whose runtime named after `cloud` is the real vendor, from its
/// variables; fails the test, saying which is missing, when it is not
/// planned.
pub async fn server_from_env(cloud: Cloud) -> TestServer {
    for planned in plan_from_env() {
        match planned {
            Planned::Run(c, sandbox) if c == cloud => return server(sandbox, None).await,
            Planned::NotRun(c, why) if c == cloud => {
                panic!("live {}: its variables are not set: {why}", c.name())
            }
            _ => {}
        }
    }
    unreachable!("the plan names every vendor")
}

/// A server whose runtime named after the vendor is the real vendor, from
/// `sandbox` (its variables), keeping a [`Sweeper`] for the vendor. A
/// runtimes file (`runtimes_file`) can give the runtime's table, as
/// holmd's does (a test points it at a stand-in on loopback with it).
pub async fn server(sandbox: EnvSandbox, runtimes_file: Option<std::path::PathBuf>) -> TestServer {
    let name = sandbox.provider.clone();
    let key = sandbox.key.clone();
    let server = TestServer::start_without_image(move |c| {
        c.sandboxes = vec![sandbox];
        c.config_file = runtimes_file;
    })
    .await;
    let mut server = server;
    server.remember("the vendor key", &key);
    let offered = server.service.runtime(&name).unwrap_or_else(|e| {
        panic!("the server does not offer {name} from its variables: {e}");
    });
    let sweep = Sweep { service: Arc::clone(&server.service), runtime: offered.runtime, name };
    server.keep(Sweeper(Some(sweep)));
    server
}

/// Removes, when dropped, every sandbox at the vendor of the boxes its
/// server made: by the records' machines, and by the vendor's list (a
/// sandbox whose create answered late has no record of it yet).
#[derive(Debug)]
pub struct Sweeper(Option<Sweep>);

/// What a [`Sweeper`] sweeps with: its server's boxes and the vendor.
struct Sweep {
    service: Arc<holmd::service::Service>,
    runtime: Arc<dyn Runtime>,
    name: String,
}

impl std::fmt::Debug for Sweep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sweep").field("runtime", &self.name).finish_non_exhaustive()
    }
}

impl Sweep {
    async fn sweep(&self) -> Vec<String> {
        let records: Vec<_> =
            self.service.records().into_iter().filter(|r| r.runtime == self.name).collect();
        let boxes: Vec<String> = records.iter().map(|r| r.id.clone()).collect();
        let mut machines: Vec<String> =
            records.iter().filter_map(|r| r.machine_id.clone()).collect();
        match self.runtime.list().await {
            Ok(listed) => machines.extend(
                listed
                    .into_iter()
                    .filter(|m| m.box_id.as_ref().is_some_and(|b| boxes.contains(b)))
                    .map(|m| m.id),
            ),
            Err(e) => eprintln!("live {}: cannot list the vendor's sandboxes: {e}", self.name),
        }
        machines.sort();
        machines.dedup();
        let mut left = Vec::new();
        for id in machines {
            if let Err(e) = self.runtime.remove(&id).await {
                left.push(format!("{id}: {e}"));
            }
        }
        left
    }
}

impl Drop for Sweeper {
    fn drop(&mut self) {
        let Some(this) = self.0.take() else { return };
        let name = this.name.clone();
        // A runtime of its own: the test's may be gone or unwinding.
        // A vendor's calls are deep futures in a debug build: a big stack.
        let sweeping = std::thread::Builder::new().stack_size(64 << 20).spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build();
            let left = match rt {
                Ok(rt) => rt.block_on(Box::pin(this.sweep())),
                Err(e) => vec![format!("no runtime to remove sandboxes with: {e}")],
            };
            (this.name.clone(), left)
        });
        let left = match sweeping {
            Ok(thread) => thread.join(),
            Err(e) => Ok((name, vec![format!("no thread to sweep with: {e}")])),
        };
        match left {
            Ok((name, left)) if !left.is_empty() => {
                eprintln!("live {name}: REMOVE BY HAND, these sandboxes could not be removed:");
                for l in left {
                    eprintln!("  {l}");
                }
            }
            Ok(_) => {}
            Err(_) => eprintln!("live: the sweep panicked: check the vendor for sandboxes"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vendor_is_planned_only_with_all_its_variables() {
        let vars = |set: &'static [(&'static str, &'static str)]| {
            move |k: &str| set.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
        };
        let only_secret = vars(&[("MODAL_TOKEN_SECRET", "as-x"), ("VERCEL_TOKEN", "t")]);
        let lines = report(&plan(&only_secret));
        assert!(lines[2].contains("NOT RUN") && lines[2].contains("MODAL_TOKEN_ID"), "{lines:?}");
        assert!(lines[4].contains("NOT RUN") && lines[4].contains("VERCEL_TEAM_ID"), "{lines:?}");
        let e2b = vars(&[("E2B_API_KEY", "e2b_x"), ("DAYTONA_API_KEY", "")]);
        let planned = plan(&e2b);
        let first = &planned[0];
        assert!(matches!(first, Planned::Run(Cloud::E2b, s) if s.key == "e2b_x"), "{planned:?}");
        assert!(matches!(&planned[1], Planned::NotRun(Cloud::Daytona, _)), "an empty key is none");
    }
}
