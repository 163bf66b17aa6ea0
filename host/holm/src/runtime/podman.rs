//! Finding podman's Docker-compatible service, which the docker runtime's
//! code ([`super::docker::DockerRuntime`]) drives unchanged.
//!
//! The service is `podman system service`: rootful at
//! `/run/podman/podman.sock` (Debian's `podman.socket` unit, or started by
//! hand), rootless at `$XDG_RUNTIME_DIR/podman/podman.sock`. podman's own
//! `CONTAINER_HOST` (`unix:///path`) wins over both. A rootless service
//! differs: its boxes' ports are forwarded by `rootlessport` instead of
//! iptables (still only on 127.0.0.1), and on cgroup v1 it can neither
//! limit memory and CPUs nor pause (see [`super::docker::can`]).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use bollard::Docker;

use super::docker::{DockerRuntime, Engine};
use super::{Result, RuntimeError};

/// Where a rootful podman service listens.
pub const ROOT_SOCKET: &str = "/run/podman/podman.sock";

/// Where podman's service is, from the environment: `CONTAINER_HOST`,
/// else root's socket for root, else the user's.
pub fn socket_path(env: &dyn Fn(&str) -> Option<String>, root: bool) -> Result<PathBuf, String> {
    if let Some(host) = env("CONTAINER_HOST").filter(|h| !h.is_empty()) {
        return host.strip_prefix("unix://").map(PathBuf::from).ok_or_else(|| {
            format!(
                "CONTAINER_HOST={host} is not a unix:// socket, the one kind holm reaches podman at"
            )
        });
    }
    if root {
        return Ok(PathBuf::from(ROOT_SOCKET));
    }
    let runtime_dir = env("XDG_RUNTIME_DIR")
        .unwrap_or_else(|| format!("/run/user/{}", rustix::process::geteuid().as_raw()));
    Ok(Path::new(&runtime_dir).join("podman/podman.sock"))
}

/// The command that starts the service at `socket`.
fn start_hint(socket: &Path, rootless: bool) -> String {
    let unit = if rootless { "systemctl --user" } else { "systemctl" };
    format!(
        "`podman system service --time=0 unix://{}` in the background, or `{unit} enable --now podman.socket`",
        socket.display()
    )
}

/// Connects to podman's service (nothing is sent until the first call).
pub fn connect(name: &str) -> Result<DockerRuntime> {
    let env = |k: &str| std::env::var(k).ok();
    let root = rustix::process::geteuid().is_root();
    let socket = socket_path(&env, root)
        .map_err(|reason| RuntimeError::Unavailable { runtime: name.to_owned(), reason })?;
    // A service run by a user owns its socket; root's is owned by root.
    let rootless = match socket.metadata() {
        Ok(m) => m.uid() != 0,
        Err(_) => !root,
    };
    let cgroup2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    let path = socket.display().to_string();
    let docker =
        Docker::connect_with_unix(&path, 120, bollard::API_DEFAULT_VERSION).map_err(|e| {
            RuntimeError::Unavailable {
                runtime: name.to_owned(),
                reason: format!("cannot connect to podman at unix://{path}: {e}"),
            }
        })?;
    Ok(DockerRuntime::on_engine(
        name,
        docker,
        Engine::Podman { rootless, cgroup2 },
        format!("podman's service at unix://{path}"),
        Some(start_hint(&socket, rootless)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn the_socket_is_container_host_then_roots_then_the_users() {
        let e =
            env(&[("CONTAINER_HOST", "unix:///tmp/p.sock"), ("XDG_RUNTIME_DIR", "/run/user/7")]);
        assert_eq!(socket_path(&e, true).unwrap(), PathBuf::from("/tmp/p.sock"));
        let e = env(&[("XDG_RUNTIME_DIR", "/run/user/7")]);
        assert_eq!(socket_path(&e, true).unwrap(), PathBuf::from(ROOT_SOCKET));
        assert_eq!(
            socket_path(&e, false).unwrap(),
            PathBuf::from("/run/user/7/podman/podman.sock")
        );
        let e = env(&[("CONTAINER_HOST", "ssh://me@host/run/podman/podman.sock")]);
        assert!(socket_path(&e, true).unwrap_err().contains("not a unix:// socket"));
    }

    #[test]
    fn a_rootless_podman_on_cgroup_v1_cannot_pause_or_limit() {
        let can =
            |rootless, cgroup2| super::super::docker::can(Engine::Podman { rootless, cgroup2 });
        assert!(can(false, false).pause && can(false, false).resources);
        assert!(can(true, true).pause && can(true, true).resources);
        assert!(!can(true, false).pause && !can(true, false).resources);
        assert!(can(true, false).stop && can(true, false).fork && can(true, false).browser_profile);
    }
}
