//! The local Docker engine as a stand-in's machines: images built from the
//! Dockerfile a vendor was sent, and one container per sandbox, its ports
//! published on 127.0.0.1 only, labelled with the stand-in that owns it so
//! it is removed with it and never mistaken for one of holm's boxes.

use std::collections::HashMap;
use std::io::Write as _;

use bollard::Docker;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::models::{
    ContainerCreateBody, HostConfig, Mount, MountType, MountVolumeOptions, PortBinding, PortMap,
};
use bollard::query_parameters::{
    BuildImageOptionsBuilder, CreateContainerOptionsBuilder, DownloadFromContainerOptionsBuilder,
    InspectContainerOptions, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
    StopContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures_util::StreamExt;

/// The label every stand-in container carries: the stand-in's id.
pub const LABEL_OWNER: &str = "holm-standin";

/// What a sandbox's container runs.
#[derive(Debug, Clone, Default)]
pub struct RunSpec {
    /// The container's name.
    pub name: String,
    /// The image.
    pub image: String,
    /// The entrypoint instead of the image's, as a vendor's own agent is
    /// the first process of its sandboxes.
    pub entrypoint: Option<Vec<String>>,
    /// The command instead of the image's (`CMD`); `None`: none when
    /// `entrypoint` is given, else the image's.
    pub cmd: Option<Vec<String>>,
    /// `K=V` environment.
    pub env: Vec<String>,
    /// The ports to publish on 127.0.0.1.
    pub ports: Vec<u16>,
    /// The loopback address to publish `ports` on as themselves (a
    /// Kubernetes pod's address), instead of on 127.0.0.1 at ports the
    /// engine picks.
    pub host_ip: Option<String>,
    /// Memory in MiB.
    pub memory_mib: Option<u64>,
    /// Whole CPUs.
    pub cpus: Option<u64>,
    /// The sandbox's metadata (E2B) or labels (Daytona), as the container's
    /// labels, so a test can find the container of a sandbox by them.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Named volumes of this stand-in to mount, `(volume, path)`: made
    /// empty on first use (nothing of the image is copied in, as a
    /// Kubernetes PersistentVolume starts empty), kept until
    /// [`Engine::remove_volume`] or the stand-in goes.
    pub volumes: Vec<(String, String)>,
}

/// The local engine, for one stand-in.
#[derive(Debug, Clone)]
pub struct Engine {
    docker: Docker,
    owner: String,
}

fn err(what: &str) -> impl Fn(bollard::errors::Error) -> String + '_ {
    move |e| format!("{what}: {e}")
}

impl Engine {
    /// The engine the docker CLI would use, for the stand-in `owner`.
    pub fn connect(owner: &str) -> Self {
        let docker = Docker::connect_with_defaults().expect("the stand-ins need the Docker engine");
        Self { docker, owner: owner.to_owned() }
    }

    /// Whether the engine has `tag`.
    pub async fn image_exists(&self, tag: &str) -> bool {
        self.docker.inspect_image(tag).await.is_ok()
    }

    /// Builds `dockerfile` with `files` (path, bytes, mode) as its context
    /// and tags it `tag`, appending each line of output to `log`.
    pub async fn build(
        &self,
        dockerfile: &str,
        files: &[(String, Vec<u8>, u32)],
        tag: &str,
        log: &mut Vec<String>,
    ) -> Result<(), String> {
        let mut tar = tar::Builder::new(Vec::new());
        let mut add = |path: &str, data: &[u8], mode: u32| -> std::io::Result<()> {
            let mut h = tar::Header::new_gnu();
            h.set_size(data.len() as u64);
            h.set_mode(mode);
            h.set_mtime(0);
            h.set_cksum();
            tar.append_data(&mut h, path, data)
        };
        add("Dockerfile", dockerfile.as_bytes(), 0o644).map_err(|e| e.to_string())?;
        for (path, data, mode) in files {
            add(path, data, *mode).map_err(|e| e.to_string())?;
        }
        let context = tar.into_inner().map_err(|e| e.to_string())?;
        let options = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(tag)
            .rm(true)
            .forcerm(true)
            .build();
        let mut stream =
            self.docker.build_image(options, None, Some(bollard::body_full(context.into())));
        while let Some(item) = stream.next().await {
            match item {
                Ok(info) => {
                    if let Some(text) = info.stream.as_deref().or(info.status.as_deref()) {
                        log.extend(
                            text.lines()
                                .map(str::trim_end)
                                .filter(|l| !l.is_empty())
                                .map(str::to_owned),
                        );
                    }
                }
                Err(bollard::errors::Error::DockerStreamError { error }) => {
                    return Err(error.trim().to_owned());
                }
                Err(e) => return Err(e.to_string()),
            }
        }
        if self.image_exists(tag).await {
            Ok(())
        } else {
            Err(format!("the build made no image {tag}"))
        }
    }

    /// Creates and starts a container, and answers its id and the host
    /// port of each published port.
    pub async fn run(&self, spec: &RunSpec) -> Result<(String, HashMap<u16, u16>), String> {
        let mut bindings = PortMap::new();
        let mut exposed = Vec::new();
        for port in &spec.ports {
            let key = format!("{port}/tcp");
            bindings.insert(
                key.clone(),
                Some(vec![PortBinding {
                    host_ip: Some(spec.host_ip.clone().unwrap_or_else(|| "127.0.0.1".into())),
                    host_port: Some(if spec.host_ip.is_some() {
                        port.to_string()
                    } else {
                        String::new()
                    }),
                }]),
            );
            exposed.push(key);
        }
        let host = HostConfig {
            port_bindings: Some(bindings),
            memory: spec.memory_mib.and_then(|m| i64::try_from(m * 1024 * 1024).ok()),
            nano_cpus: spec.cpus.and_then(|c| i64::try_from(c * 1_000_000_000).ok()),
            // A microVM's /dev/shm is its memory; Chromium needs more than
            // Docker's 64 MiB.
            shm_size: Some(512 * 1024 * 1024),
            mounts: Some(spec.volumes.iter().map(|(v, path)| self.mount(v, path)).collect()),
            ..HostConfig::default()
        };
        #[allow(deprecated)]
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            entrypoint: spec.entrypoint.clone(),
            cmd: spec.cmd.clone().or_else(|| spec.entrypoint.as_ref().map(|_| Vec::new())),
            env: Some(spec.env.clone()),
            labels: Some(
                spec.labels
                    .clone()
                    .into_iter()
                    .chain([(LABEL_OWNER.to_owned(), self.owner.clone())])
                    .collect(),
            ),
            exposed_ports: Some(exposed),
            host_config: Some(host),
            hostname: Some("sandbox".into()),
            ..ContainerCreateBody::default()
        };
        let options = CreateContainerOptionsBuilder::default().name(&spec.name).build();
        let created = self
            .docker
            .create_container(Some(options), body)
            .await
            .map_err(err("create a container"))?;
        if let Err(e) = self.docker.start_container(&created.id, None).await {
            let _ = self.remove(&created.id).await;
            return Err(format!("start a container: {e}"));
        }
        let ports = self.host_ports(&created.id).await?;
        Ok((created.id, ports))
    }

    /// The host port of each published port of a container.
    pub async fn host_ports(&self, id: &str) -> Result<HashMap<u16, u16>, String> {
        let c = self
            .docker
            .inspect_container(id, None::<InspectContainerOptions>)
            .await
            .map_err(err("inspect a container"))?;
        let mut out = HashMap::new();
        for (key, bindings) in c.network_settings.and_then(|n| n.ports).unwrap_or_default() {
            let inner = key.strip_suffix("/tcp").and_then(|p| p.parse::<u16>().ok());
            let host = bindings
                .and_then(|b| b.into_iter().next())
                .and_then(|b| b.host_port)
                .and_then(|p| p.parse::<u16>().ok());
            if let (Some(inner), Some(host)) = (inner, host) {
                out.insert(inner, host);
            }
        }
        Ok(out)
    }

    /// Runs `cmd` in a container and waits for it: exit code, stdout,
    /// stderr.
    pub async fn exec(
        &self,
        id: &str,
        cmd: Vec<String>,
        env: Vec<String>,
        user: Option<&str>,
        workdir: Option<&str>,
    ) -> Result<(i64, Vec<u8>, Vec<u8>), String> {
        let options = CreateExecOptions {
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            cmd: Some(cmd),
            env: Some(env),
            user: user.map(str::to_owned),
            working_dir: workdir.map(str::to_owned),
            ..Default::default()
        };
        let exec =
            self.docker.create_exec(id, options).await.map_err(err("exec in a container"))?;
        let started = self
            .docker
            .start_exec(&exec.id, None::<StartExecOptions>)
            .await
            .map_err(err("exec in a container"))?;
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        if let StartExecResults::Attached { mut output, .. } = started {
            while let Some(item) = output.next().await {
                match item.map_err(err("read an exec's output"))? {
                    bollard::container::LogOutput::StdOut { message } => {
                        stdout.extend_from_slice(&message)
                    }
                    bollard::container::LogOutput::StdErr { message } => {
                        stderr.extend_from_slice(&message)
                    }
                    _ => {}
                }
            }
        }
        let code = self
            .docker
            .inspect_exec(&exec.id)
            .await
            .map_err(err("inspect an exec"))?
            .exit_code
            .unwrap_or(-1);
        Ok((code, stdout, stderr))
    }

    /// Writes `data` to `path` in a container.
    pub async fn put_file(
        &self,
        id: &str,
        path: &str,
        data: &[u8],
        mode: u32,
    ) -> Result<(), String> {
        let (dir, name) = path.rsplit_once('/').ok_or_else(|| format!("{path} is not absolute"))?;
        let dir = if dir.is_empty() { "/" } else { dir };
        let mut tar = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(mode);
        h.set_mtime(0);
        h.set_cksum();
        tar.append_data(&mut h, name, data).map_err(|e| e.to_string())?;
        let body = tar.into_inner().map_err(|e| e.to_string())?;
        let options = UploadToContainerOptionsBuilder::default().path(dir).build();
        self.docker
            .upload_to_container(id, Some(options), bollard::body_full(body.into()))
            .await
            .map_err(err("write a file into a container"))
    }

    /// Unpacks `tar` (uncompressed) into `dir` of a container, which
    /// exists.
    pub async fn put_tar(&self, id: &str, dir: &str, tar: Vec<u8>) -> Result<(), String> {
        let options = UploadToContainerOptionsBuilder::default().path(dir).build();
        self.docker
            .upload_to_container(id, Some(options), bollard::body_full(tar.into()))
            .await
            .map_err(err("write files into a container"))
    }

    /// Pulls `reference` from a registry with Basic credentials.
    pub async fn pull(&self, reference: &str, user: &str, password: &str) -> Result<(), String> {
        let options = bollard::query_parameters::CreateImageOptionsBuilder::default()
            .from_image(reference)
            .build();
        let credentials = bollard::auth::DockerCredentials {
            username: Some(user.to_owned()),
            password: Some(password.to_owned()),
            ..Default::default()
        };
        let mut stream = self.docker.create_image(Some(options), None, Some(credentials));
        while let Some(item) = stream.next().await {
            item.map_err(err("pull an image"))?;
        }
        Ok(())
    }

    /// Reads `path` from a container, or `None` when it is not there.
    pub async fn get_file(&self, id: &str, path: &str) -> Result<Option<Vec<u8>>, String> {
        let options = DownloadFromContainerOptionsBuilder::default().path(path).build();
        let mut stream = self.docker.download_from_container(id, Some(options));
        let mut tar_bytes = Vec::new();
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(b) => tar_bytes.write_all(&b).map_err(|e| e.to_string())?,
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => return Ok(None),
                Err(e) => return Err(format!("read a file from a container: {e}")),
            }
        }
        let mut archive = tar::Archive::new(tar_bytes.as_slice());
        for entry in archive.entries().map_err(|e| e.to_string())? {
            let mut entry = entry.map_err(|e| e.to_string())?;
            if entry.header().entry_type().is_file() {
                let mut out = Vec::new();
                std::io::copy(&mut entry, &mut out).map_err(|e| e.to_string())?;
                return Ok(Some(out));
            }
        }
        Ok(None)
    }

    /// Waits for a container to end and answers its exit code (`None`
    /// when it is gone or the engine cannot say).
    pub async fn wait(&self, id: &str) -> Option<i64> {
        let mut stream =
            self.docker.wait_container(id, None::<bollard::query_parameters::WaitContainerOptions>);
        match stream.next().await? {
            Ok(r) => Some(r.status_code),
            Err(bollard::errors::Error::DockerContainerWaitError { code, .. }) => Some(code),
            Err(_) => None,
        }
    }

    /// The id of an image on the engine (`sha256:…`).
    pub async fn image_id(&self, tag: &str) -> Option<String> {
        self.docker.inspect_image(tag).await.ok().and_then(|i| i.id)
    }

    /// Pauses a container (its memory kept).
    pub async fn pause(&self, id: &str) -> Result<(), String> {
        self.docker.pause_container(id).await.map_err(err("pause a container"))
    }

    /// Resumes a paused container.
    pub async fn unpause(&self, id: &str) -> Result<(), String> {
        self.docker.unpause_container(id).await.map_err(err("unpause a container"))
    }

    /// Starts a stopped container.
    pub async fn start(&self, id: &str) -> Result<(), String> {
        self.docker.start_container(id, None).await.map_err(err("start a container"))
    }

    /// Stops a container.
    pub async fn stop(&self, id: &str) -> Result<(), String> {
        let options = StopContainerOptionsBuilder::default().t(5).build();
        self.docker.stop_container(id, Some(options)).await.map_err(err("stop a container"))
    }

    /// Removes a container, running or not; a missing one is no error.
    pub async fn remove(&self, id: &str) -> Result<(), String> {
        let options = RemoveContainerOptionsBuilder::default().force(true).v(true).build();
        match self.docker.remove_container(id, Some(options)).await {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404 | 409,
                ..
            }) => Ok(()),
            Err(e) => Err(format!("remove a container: {e}")),
        }
    }

    /// The mount of this stand-in's volume `volume` at `path`, made empty
    /// and labelled with the stand-in on first use.
    fn mount(&self, volume: &str, path: &str) -> Mount {
        Mount {
            target: Some(path.to_owned()),
            source: Some(volume.to_owned()),
            typ: Some(MountType::VOLUME),
            volume_options: Some(MountVolumeOptions {
                no_copy: Some(true),
                labels: Some(HashMap::from([(LABEL_OWNER.to_owned(), self.owner.clone())])),
                ..MountVolumeOptions::default()
            }),
            ..Mount::default()
        }
    }

    /// Removes the volume `name`; a missing one is no error.
    pub async fn remove_volume(&self, name: &str) -> Result<(), String> {
        match self
            .docker
            .remove_volume(name, None::<bollard::query_parameters::RemoveVolumeOptions>)
            .await
        {
            Ok(())
            | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => {
                Ok(())
            }
            Err(e) => Err(format!("remove a volume: {e}")),
        }
    }

    /// Removes every container of this stand-in, then its volumes.
    pub async fn remove_all(&self) {
        let filters =
            HashMap::from([("label".to_owned(), vec![format!("{LABEL_OWNER}={}", self.owner)])]);
        let options = ListContainersOptionsBuilder::default().all(true).filters(&filters).build();
        if let Ok(list) = self.docker.list_containers(Some(options)).await {
            for c in list {
                if let Some(id) = c.id {
                    let _ = self.remove(&id).await;
                }
            }
        }
        let filters =
            HashMap::from([("label".to_owned(), vec![format!("{LABEL_OWNER}={}", self.owner)])]);
        let options = bollard::query_parameters::ListVolumesOptionsBuilder::default()
            .filters(&filters)
            .build();
        if let Ok(list) = self.docker.list_volumes(Some(options)).await {
            for v in list.volumes.into_iter().flatten() {
                let _ = self.remove_volume(&v.name).await;
            }
        }
    }

    /// Removes this stand-in's containers from a thread of its own (for
    /// `Drop`, where no runtime may be running).
    pub fn remove_all_blocking(&self) {
        let engine = self.clone();
        let _ = std::thread::spawn(move || {
            if let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() {
                rt.block_on(engine.remove_all());
            }
        })
        .join();
    }
}
