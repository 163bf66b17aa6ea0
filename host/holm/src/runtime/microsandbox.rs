//! The microsandbox runtime: boxes as libkrun microVMs through the `msb`
//! CLI (PyPI's `microsandbox` package bundles it with libkrun and its
//! kernel).
//!
//! - **Found** when `msb` answers (`program` in the runtimes file, else
//!   `msb` on the `PATH`).
//! - **Available** only when a trial microVM boots: a check of `/dev/kvm`
//!   would say yes on a host whose KVM cannot run a guest (a PVM host
//!   lets `KVM_CREATE_VM` succeed and fails every boot). The trial runs once
//!   per runtime, at the first [`Runtime::ping`] (about 16 to 40 seconds
//!   where it fails); its answer, with the hypervisor's own error, is every
//!   later ping's.
//! - **Images**: built on a host engine (`build_with`, default Docker) from
//!   the bundled Dockerfile, saved from it by id and handed to `msb load`
//!   once per tag ([`MicrosandboxRuntime::hand_over`]); later boxes start
//!   from msb's copy.
//! - **Machines**: `msb create` named `holm-<box id>`, with the guest as
//!   PID 1 (`--init`), the environment and labels in an owner-only
//!   configuration file (never on the command line, where `ps` shows it),
//!   and each port published on 127.0.0.1 at a port holm picks. No pause,
//!   fork or browser profile; stop and start keep the files.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::StreamExt;
use holm_proto::host::{Can, Environment, Place};
use tokio::io::AsyncWriteExt;

use super::docker::{DockerRuntime, container_name};
use super::{
    Endpoint, ImageSource, LABEL_BOX, Machine, MachineSpec, MachineState, Result, Runtime,
    RuntimeError,
};
use crate::image::{ImageRequest, Progress};

/// The longest a trial boot may take; a failing one on a PVM host ends
/// after about 16 seconds (30 on a loaded machine).
const TRIAL_LIMIT: Duration = Duration::from_secs(120);
/// The longest an `msb` call other than the trial and a load may take.
const CALL_LIMIT: Duration = Duration::from_secs(180);
/// Where the image puts the guest, which runs as the microVM's PID 1.
const GUEST_PATH: &str = "/usr/local/bin/holm-guest";

/// Boxes as microsandbox microVMs.
#[derive(Debug, Clone)]
pub struct MicrosandboxRuntime {
    name: String,
    program: PathBuf,
    builder: DockerRuntime,
    trial: Arc<tokio::sync::OnceCell<Result<(), String>>>,
    loaded: Arc<tokio::sync::Mutex<HashSet<String>>>,
}

/// Finds `msb`: the configured program, else `msb` on the `PATH`.
pub fn find_program(configured: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = configured {
        return if p.is_file() {
            Ok(p.to_owned())
        } else {
            Err(format!("program {} does not exist", p.display()))
        };
    }
    super::absent::on_path("msb").ok_or_else(|| {
        "msb is not installed: no `msb` on the PATH (install it with `pip install microsandbox`, \
         or name it with `program` in the runtimes file)"
            .to_owned()
    })
}

impl MicrosandboxRuntime {
    /// A runtime on `program`, building its images with `builder`. The trial
    /// boot runs at the first [`Runtime::ping`].
    pub fn new(name: &str, program: PathBuf, builder: DockerRuntime) -> Self {
        Self {
            name: name.to_owned(),
            program,
            builder,
            trial: Arc::new(tokio::sync::OnceCell::new()),
            loaded: Arc::new(tokio::sync::Mutex::new(HashSet::new())),
        }
    }

    /// The program it runs.
    pub fn program(&self) -> &Path {
        &self.program
    }

    fn unavailable(&self, reason: String) -> RuntimeError {
        RuntimeError::Unavailable { runtime: self.name.clone(), reason }
    }

    /// Runs `msb ARGS`, answering its standard output, or its error.
    async fn msb(&self, args: &[&str], limit: Duration) -> Result<String> {
        let run = tokio::process::Command::new(&self.program)
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(limit, run)
            .await
            .map_err(|_| RuntimeError::Engine(format!("msb {} took over {limit:?}", args[0])))?
            .map_err(|e| self.unavailable(format!("cannot run {}: {e}", self.program.display())))?;
        if out.status.success() {
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let text = err.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>();
        Err(RuntimeError::Engine(format!("msb {}: {}", args[0], text.join(" "))))
    }

    /// The trial boot's answer, made once.
    async fn trial(&self) -> Result<(), String> {
        self.trial.get_or_init(|| trial_boot(self.clone())).await.clone()
    }

    /// Hands the engine's image `tag` to msb once: saved from the engine by
    /// id (so the archive carries no other name), loaded with `msb load -t
    /// tag`. Answers whether it loaded (false: msb had it).
    pub async fn hand_over(&self, tag: &str) -> Result<bool> {
        let mut loaded = self.loaded.lock().await;
        if loaded.contains(tag) || self.msb(&["image", "inspect", tag], CALL_LIMIT).await.is_ok() {
            loaded.insert(tag.to_owned());
            return Ok(false);
        }
        let docker = self.builder.docker();
        let image =
            docker.inspect_image(tag).await.map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let id = image.id.unwrap_or_else(|| tag.to_owned());
        let dir = tempfile::tempdir().map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let tar = dir.path().join("image.tar");
        let mut file =
            tokio::fs::File::create(&tar).await.map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let mut stream = docker.export_image(&id);
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| RuntimeError::Engine(format!("save {tag}: {e}")))?;
            file.write_all(&chunk).await.map_err(|e| RuntimeError::Engine(e.to_string()))?;
        }
        file.flush().await.map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let path = tar.display().to_string();
        self.msb(&["load", "-q", "-i", &path, "-t", tag], Duration::from_secs(900)).await?;
        loaded.insert(tag.to_owned());
        Ok(true)
    }

    async fn inspect_json(&self, name: &str) -> Result<serde_json::Value> {
        let out = self.msb(&["inspect", name, "--format", "json"], CALL_LIMIT).await.map_err(
            |e| match e {
                RuntimeError::Engine(m) if m.contains("not found") => RuntimeError::NotFound(m),
                other => other,
            },
        )?;
        serde_json::from_str(&out).map_err(|e| RuntimeError::Engine(format!("msb inspect: {e}")))
    }
}

/// Boots a microVM of the guest binary alone and removes it: `Ok` when it
/// boots, else msb's error and the hypervisor's last error line.
async fn trial_boot(rt: MicrosandboxRuntime) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| format!("a trial boot needs a directory: {e}"))?;
    let rootfs = dir.path().join("rootfs");
    let guest = rootfs.join("holm-guest");
    let write = std::fs::create_dir_all(&rootfs)
        .and_then(|()| std::fs::write(&guest, crate::image::GUEST_BINARY))
        .and_then(|()| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&guest, std::fs::Permissions::from_mode(0o755))
        });
    write.map_err(|e| format!("a trial boot needs a rootfs: {e}"))?;
    // Named after this process, so a trial that a killed server left is
    // known as such (its process is gone) and removed by the next one.
    remove_abandoned_trials(&rt).await;
    let name = format!("{TRIAL_PREFIX}{}-{}", std::process::id(), &crate::ids::new_secret()[..8]);
    let root = rootfs.display().to_string();
    let booted = rt.msb(&["create", "-q", "-n", &name, &root], TRIAL_LIMIT).await;
    let result = match booted {
        Ok(_) => Ok(()),
        Err(e) => {
            let logs = rt.msb(&["logs", "--source", "system", &name], CALL_LIMIT).await;
            let said = logs
                .ok()
                .and_then(|l| l.lines().rev().find(|l| l.contains("ERROR")).map(str::to_owned))
                .map(|l| format!("; the hypervisor said: {}", l.trim()))
                .unwrap_or_default();
            Err(format!(
                "a trial microVM did not boot ({e}{said}); this host's KVM cannot run a guest"
            ))
        }
    };
    if let Err(e) = rt.msb(&["rm", "-f", "-q", &name], CALL_LIMIT).await {
        tracing::warn!(sandbox = %name, error = %e, "the trial sandbox stays");
    }
    result
}

/// The name of every trial sandbox starts so, then the process's id.
const TRIAL_PREFIX: &str = "holm-trial-";

/// Removes trial sandboxes whose process is gone (a server killed while
/// its trial ran).
async fn remove_abandoned_trials(rt: &MicrosandboxRuntime) {
    let Ok(out) = rt.msb(&["ls", "--format", "json"], CALL_LIMIT).await else { return };
    let Ok(all) = serde_json::from_str::<serde_json::Value>(&out) else { return };
    for name in all.as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()) {
        let Some(pid) = name.strip_prefix(TRIAL_PREFIX).and_then(|r| r.split('-').next()) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = rt.msb(&["rm", "-f", "-q", name], CALL_LIMIT).await;
        }
    }
}

/// A free port on 127.0.0.1, as the kernel picks it.
fn free_port() -> Result<u16> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| RuntimeError::Engine(format!("no free loopback port: {e}")))
}

/// A machine as `msb inspect --format json` reports it.
fn machine_of(name: &str, v: &serde_json::Value) -> Machine {
    let state = match v["status"].as_str().unwrap_or_default() {
        "Starting" | "Running" => MachineState::Running,
        "Paused" => MachineState::Paused,
        "Stopped" | "Crashed" | "Exited" => MachineState::Stopped,
        "Created" => MachineState::Created,
        _ => MachineState::Gone,
    };
    let config = &v["config"];
    let labels: BTreeMap<String, String> = config["labels"]
        .as_object()
        .map(|m| {
            m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().into())).collect()
        })
        .unwrap_or_default();
    let mut endpoints = BTreeMap::new();
    if state == MachineState::Running {
        for p in config["network"]["ports"].as_array().into_iter().flatten() {
            let (Some(guest), Some(host)) = (p["guest_port"].as_u64(), p["host_port"].as_u64())
            else {
                continue;
            };
            let (Ok(guest), Ok(host)) = (u16::try_from(guest), u16::try_from(host)) else {
                continue;
            };
            endpoints.insert(guest, Endpoint::loopback(([127, 0, 0, 1], host).into()));
        }
    }
    Machine {
        id: name.to_owned(),
        box_id: labels.get(LABEL_BOX).cloned(),
        state,
        endpoints,
        labels,
    }
}

#[async_trait]
impl Runtime for MicrosandboxRuntime {
    fn name(&self) -> &str {
        &self.name
    }

    fn provider(&self) -> &str {
        "microsandbox"
    }

    fn place(&self) -> Place {
        Place::Host
    }

    fn environment(&self) -> Environment {
        Environment::Microvm
    }

    fn can(&self) -> Can {
        Can {
            pause: false,
            stop: true,
            fork: false,
            browser_profile: false,
            screens: 6,
            wayland: false,
            resources: true,
        }
    }

    async fn ping(&self) -> Result<()> {
        self.msb(&["--version"], CALL_LIMIT).await?;
        self.trial().await.map_err(|reason| self.unavailable(reason))
    }

    fn image_source(&self) -> ImageSource {
        ImageSource::HostEngine { build_with: self.builder.provider().to_owned() }
    }

    async fn prepare_image(
        &self,
        request: &ImageRequest,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> Result<String> {
        let tag = self.builder.prepare_image(request, progress).await?;
        if self.hand_over(&tag).await? {
            progress(Progress::Status(format!("handed {tag} to microsandbox (msb load)")));
        }
        Ok(tag)
    }

    async fn create(&self, spec: &MachineSpec) -> Result<Machine> {
        // The environment (the secret) and labels go in an owner-only file.
        let mut labels = spec.labels.clone();
        labels.insert(LABEL_BOX.to_owned(), spec.box_id.clone());
        let env: BTreeMap<&str, &str> =
            spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let conf = serde_json::json!({ "env": env, "labels": labels });
        let dir = tempfile::tempdir().map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let path = dir.path().join("sandbox.json");
        std::fs::write(&path, conf.to_string()).map_err(|e| RuntimeError::Engine(e.to_string()))?;
        let name = container_name(&spec.box_id);
        let conf_path = path.display().to_string();
        let mut args: Vec<String> =
            ["create", "-q", "--replace", "-n", &name, "--conf", &conf_path]
                .map(str::to_owned)
                .to_vec();
        args.extend(["--init".into(), GUEST_PATH.into(), "-H".into(), "holm".into()]);
        for port in &spec.ports {
            args.extend(["-p".into(), format!("127.0.0.1:{}:{port}", free_port()?)]);
        }
        if let Some(m) = spec.memory_bytes {
            args.extend(["-m".into(), format!("{}M", m >> 20)]);
        }
        if let Some(c) = spec.nano_cpus {
            args.extend(["-c".into(), c.div_ceil(1_000_000_000).to_string()]);
        }
        args.push(spec.image.clone());
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        self.msb(&argv, CALL_LIMIT).await?;
        drop(dir);
        self.inspect(&name).await
    }

    async fn inspect(&self, id: &str) -> Result<Machine> {
        Ok(machine_of(id, &self.inspect_json(id).await?))
    }

    async fn remove(&self, id: &str) -> Result<()> {
        match self.msb(&["rm", "-f", "-q", id], CALL_LIMIT).await {
            Err(RuntimeError::Engine(m)) if m.contains("not found") => Ok(()),
            other => other.map(drop),
        }
    }

    async fn list(&self) -> Result<Vec<Machine>> {
        let out = self.msb(&["ls", "--format", "json"], CALL_LIMIT).await?;
        let all: serde_json::Value =
            serde_json::from_str(&out).map_err(|e| RuntimeError::Engine(format!("msb ls: {e}")))?;
        let mut machines = Vec::new();
        for name in all.as_array().into_iter().flatten().filter_map(|s| s["name"].as_str()) {
            match self.inspect(name).await {
                Ok(m) if m.box_id.is_some() => machines.push(m),
                Ok(_) | Err(RuntimeError::NotFound(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(machines)
    }

    async fn stop(&self, id: &str) -> Result<()> {
        self.msb(&["stop", "-q", "-t", "10", id], CALL_LIMIT).await.map(drop)
    }

    async fn start(&self, id: &str) -> Result<Machine> {
        self.msb(&["start", "-q", id], CALL_LIMIT).await?;
        self.inspect(id).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_is_read_from_msb_inspect() {
        let v = serde_json::json!({
            "status": "Running",
            "config": {
                "labels": {"holm.box": "box_1", "holm.server": "s"},
                "network": {"ports": [
                    {"guest_port": 8765, "host_bind": "127.0.0.1", "host_port": 40001, "protocol": "tcp"}
                ]}
            }
        });
        let m = machine_of("holm-box_1", &v);
        assert_eq!((m.state, m.box_id.as_deref()), (MachineState::Running, Some("box_1")));
        assert_eq!(m.guest().map(Endpoint::url), Some("http://127.0.0.1:40001"));
        let stopped = machine_of("holm-box_1", &serde_json::json!({"status": "Stopped"}));
        assert_eq!(stopped.state, MachineState::Stopped);
        assert!(stopped.endpoints.is_empty(), "a stopped machine is reached nowhere");
    }

    #[test]
    fn a_missing_program_says_how_to_install_it() {
        let e = find_program(Some(Path::new("/nonexistent/msb"))).unwrap_err();
        assert_eq!(e, "program /nonexistent/msb does not exist");
    }
}
