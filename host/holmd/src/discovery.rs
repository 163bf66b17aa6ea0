//! The host runtimes a server offers: each kind it finds at start, and the
//! ones its runtimes file adds, with the file's settings.
//!
//! A found runtime is offered when its engine answers a ping (`docker`,
//! `podman`) or its program is there (`microsandbox`'s `msb`, whose
//! availability a trial boot decides; `nerdctl` and `smolvm`, which have
//! no adapter yet and say so); one that `HOLM_SERVER_RUNTIMES` names, or that the file adds with a
//! `provider`, is offered even when it does not answer now (it shows
//! `unavailable` with the reason), because the operator asked for it. An
//! `isolation` is checked against the OCI runtimes the engine has when the
//! engine answers, so a name it does not know stops the server at start,
//! naming the file, the table and the field.

use std::collections::BTreeMap;
use std::sync::Arc;

use std::path::PathBuf;

use holm::runtime::Runtime;
use holm::runtime::absent::{self, AbsentRuntime};
use holm::runtime::docker::{DockerRuntime, Hardening};
use holm::runtime::microsandbox::{self, MicrosandboxRuntime};

use crate::runtimes_file::{RuntimeTable, RuntimesFile};
use crate::service::Offered;

/// Makes the error for a table and a field of the runtimes file.
pub(crate) type FileErr<'a> = &'a dyn Fn(Option<&str>, Option<&str>, String) -> anyhow::Error;

/// The host runtimes to offer: found ones and the file's, filtered by
/// `wanted` (`HOLM_SERVER_RUNTIMES`, or all when `None`).
pub(crate) async fn host_runtimes(
    file: &RuntimesFile,
    wanted: Option<&[String]>,
    file_err: FileErr<'_>,
) -> anyhow::Result<BTreeMap<String, Offered>> {
    let named = |name: &str| wanted.is_some_and(|w| w.iter().any(|n| n == name));
    let allowed = |name: &str| wanted.is_none() || named(name);
    let mut out = BTreeMap::new();
    for kind in holm::runtime::kind::KINDS.iter().filter(|k| k.found).map(|k| k.name) {
        let table = file.runtimes.get(kind);
        if !allowed(kind) || table.and_then(|t| t.enabled) == Some(false) {
            continue;
        }
        if let Some(offered) = offer(kind, kind, table, named(kind), file_err).await? {
            out.insert(kind.to_owned(), offered);
        }
    }
    for t in file.runtimes.values().filter(|t| t.adds) {
        if t.enabled == Some(false) || !allowed(&t.name) {
            continue;
        }
        if let Some(offered) = offer(&t.kind, &t.name, Some(t), true, file_err).await? {
            out.insert(t.name.clone(), offered);
        }
    }
    Ok(out)
}

/// The runtime `name` of `kind` with its table's settings, if it is to be
/// offered: it answers, or `always` (named or added by the operator).
async fn offer(
    kind: &str,
    name: &str,
    table: Option<&RuntimeTable>,
    always: bool,
    file_err: FileErr<'_>,
) -> anyhow::Result<Option<Offered>> {
    use holm::runtime::kind::Driver;
    let Some(k) = holm::runtime::kind::kind(kind).filter(|k| !k.is_vendor()) else {
        anyhow::bail!("{kind:?} is no host kind; the runtimes file adds only host runtimes")
    };
    let runtime: Arc<dyn Runtime> = match k.driver {
        Driver::Engine => {
            let engine = engine_runtime(kind, name, table, file_err)?;
            match engine.ping().await {
                Ok(()) => check_isolation(&engine, table, file_err).await?,
                Err(e) if always => {
                    tracing::warn!(runtime = name, error = %e, "does not answer now; offered because it was asked for");
                }
                Err(e) => {
                    tracing::info!(runtime = name, error = %e, "does not answer; not offered");
                    return Ok(None);
                }
            }
            Arc::new(engine)
        }
        Driver::Microsandbox => match microsandbox(name, table, file_err)? {
            Ok(rt) => Arc::new(rt),
            Err(_) if !always => return Ok(None),
            Err(reason) => Arc::new(AbsentRuntime::with_reason(name, "microsandbox", reason)),
        },
        Driver::Planned => {
            let program = program(kind, table, file_err)?;
            if program.is_none() && !always {
                return Ok(None);
            }
            Arc::new(AbsentRuntime::new(name, k.name, program.as_deref()))
        }
        Driver::Kubernetes => kubernetes(name, table, file_err)?,
        Driver::Vendor(_) => anyhow::bail!("{kind:?} is a vendor; it is not offered from the file"),
    };
    let mut offered = Offered::new(runtime);
    if let Some(t) = table {
        offered = offered
            .with_lifetimes(t.lifetime, t.max_lifetime)
            .map_err(|(field, message)| file_err(Some(name), Some(field), message))?;
        offered.memory_bytes = t.memory;
        offered.nano_cpus = t.cpus.map(|c| (c * 1e9).round() as u64);
        for pool in &t.pools {
            offered.check_pool(pool).map_err(|e| file_err(Some(name), Some("pool"), e))?;
        }
        offered.pools.clone_from(&t.pools);
    }
    Ok(Some(offered))
}

/// A Kubernetes runtime of the table's cluster and pods, its images built
/// on the local Docker engine; or, in a build without the `kubernetes`
/// feature, an unavailable one saying so. Offered whether or not the
/// cluster answers now (a table asked for it): `ping` says why not.
fn kubernetes(
    name: &str,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<Arc<dyn Runtime>> {
    #[cfg(feature = "kubernetes")]
    {
        let mut settings = table.map(|t| t.kube.clone()).unwrap_or_default();
        settings.context = table.and_then(|t| t.context.clone());
        let builder = engine_runtime("docker", "docker", None, file_err)?;
        Ok(Arc::new(holm::runtime::kubernetes::KubernetesRuntime::new(name, settings, builder)))
    }
    #[cfg(not(feature = "kubernetes"))]
    {
        let _ = (table, file_err);
        let reason = "this build of holmd lacks the kubernetes feature: build it with `--features kubernetes`";
        Ok(Arc::new(AbsentRuntime::with_reason(name, "kubernetes", reason.into())))
    }
}

/// The program of a runtime: its table's `program` (which must exist), else
/// `default` on the `PATH`.
fn program(
    default: &str,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<Option<PathBuf>> {
    match table.and_then(|t| t.program.as_deref()) {
        Some(p) if p.is_file() => Ok(Some(p.to_owned())),
        Some(p) => Err(file_err(
            table.map(|t| t.name.as_str()),
            Some("program"),
            format!("{} does not exist", p.display()),
        )),
        None => Ok(absent::on_path(default)),
    }
}

/// The microsandbox runtime, or why there is none (msb is missing), with
/// its images built on `build_with` (default Docker).
fn microsandbox(
    name: &str,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<Result<MicrosandboxRuntime, String>> {
    let Some(msb) = program("msb", table, file_err)? else {
        return Ok(Err(microsandbox::find_program(None).unwrap_err()));
    };
    let build_with = table.and_then(|t| t.build_with.as_deref()).unwrap_or("docker");
    if !holm::runtime::container_engines().contains(&build_with) {
        return Err(file_err(
            Some(name),
            Some("build_with"),
            format!("{build_with} cannot build images in this build of holm; use docker or podman"),
        ));
    }
    let builder = engine_runtime(build_with, build_with, None, file_err)?;
    // The trial boot runs at the first look (a runtime listing, a box), not
    // here: a start must not wait for it, nor share msb's locks with it
    // while it takes its boxes back.
    Ok(Ok(MicrosandboxRuntime::new(name, msb, builder)))
}

/// A runtime on Docker or podman, with its table's context and isolation.
fn engine_runtime(
    kind: &str,
    name: &str,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<DockerRuntime> {
    let context = table.and_then(|t| t.context.as_deref());
    let engine = match kind {
        "podman" => holm::runtime::podman::connect(name),
        _ => DockerRuntime::connect_context(name, context),
    };
    let engine = engine.map_err(|e| match context {
        Some(_) => {
            let why = match e {
                holm::runtime::RuntimeError::Unavailable { reason, .. } => reason,
                other => other.to_string(),
            };
            file_err(Some(name), Some("context"), why)
        }
        None => anyhow::Error::new(e),
    })?;
    Ok(engine
        .with_isolation(table.and_then(|t| t.isolation.clone()))
        .with_hardening(hardening(table)))
}

/// How a Docker or podman runtime's boxes are confined: the defaults, with
/// what its table widens or narrows.
fn hardening(table: Option<&RuntimeTable>) -> Hardening {
    let mut h = Hardening::default();
    if let Some(t) = table {
        h.pids_limit = t.pids_limit.unwrap_or(h.pids_limit);
        h.host_access = t.host_access.unwrap_or(h.host_access);
        h.no_new_privileges = t.no_new_privileges.unwrap_or(h.no_new_privileges);
        h.cap_add.clone_from(&t.cap_add);
        h.seccomp.clone_from(&t.seccomp);
    }
    h
}

/// Refuses an `isolation` the engine has no OCI runtime for.
async fn check_isolation(
    engine: &DockerRuntime,
    table: Option<&RuntimeTable>,
    file_err: FileErr<'_>,
) -> anyhow::Result<()> {
    let (Some(isolation), Some(t)) = (engine.isolation(), table) else { return Ok(()) };
    let has = engine.oci_runtimes().await.map_err(anyhow::Error::new)?;
    if engine.provider() == "podman" && has.iter().any(|h| h == isolation) {
        // podman 4.3 ignores the OCI runtime a create asks for through its
        // API (the compat HostConfig.Runtime and libpod's oci_runtime alike)
        // and runs its default: a box would run on runc while its runtime
        // says runsc. Only a service whose default is the isolation will do.
        let default = engine.default_oci_runtime().await.map_err(anyhow::Error::new)?;
        if default.as_deref() == Some(isolation) {
            return Ok(());
        }
        return Err(file_err(
            Some(&t.name),
            Some("isolation"),
            format!(
                "podman's API runs every container on its service's default OCI runtime ({}), whatever a create asks for; \
                 start a podman service whose default is {isolation} (`podman --runtime {isolation} system service ...`) \
                 and point holm at it with CONTAINER_HOST",
                default.unwrap_or_default()
            ),
        ));
    }
    if has.iter().any(|h| h == isolation) {
        return Ok(());
    }
    let provider = engine.provider();
    let how = match provider {
        "podman" => "register it under [engine.runtimes] in containers.conf",
        _ => {
            "register it under \"runtimes\" in /etc/docker/daemon.json and reload dockerd (SIGHUP)"
        }
    };
    Err(file_err(
        Some(&t.name),
        Some("isolation"),
        format!(
            "the {provider} engine has no OCI runtime named {isolation:?}; it has: {}; {how}",
            has.join(", ")
        ),
    ))
}

#[cfg(all(test, not(feature = "kubernetes")))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_the_feature_a_kubernetes_runtime_is_offered_unavailable_naming_it() {
        let file_err: FileErr<'_> = &|_, _, message| anyhow::anyhow!(message);
        let table = crate::runtimes_file::parse(
            std::path::Path::new("runtimes.toml"),
            "[runtimes.k8s]\nprovider = \"kubernetes\"\n",
        )
        .unwrap();
        let offered = host_runtimes(&table, Some(&["k8s".to_owned()]), file_err).await.unwrap();
        let runtime = &offered["k8s"].runtime;
        assert_eq!(runtime.provider(), "kubernetes");
        let why = runtime.ping().await.expect_err("unavailable").to_string();
        assert!(why.contains("--features kubernetes"), "{why}");
    }
}
