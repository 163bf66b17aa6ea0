//! `holm image`: box images built, listed and removed, on the server or on a
//! local engine.

use std::process::ExitCode;

use anyhow::bail;
use clap::Subcommand;
use futures_util::StreamExt;
use holm_client::Client;
use holm_proto::host::{BuildEvent, BuildImage};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Box images.
    #[command(subcommand)]
    Image(ImageCmd),
    /// The app catalogue for `--app`.
    Apps,
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::Image(cmd) => image(c, cmd, json).await,
            Self::Apps => super::boxes::apps(c, json).await,
        }
    }
}

#[derive(Debug, Subcommand)]
pub(super) enum ImageCmd {
    /// Build a box image (each set of apps and packages is its own image).
    Build {
        /// The runtime whose engine builds it (default: the default runtime).
        runtime: Option<String>,
        /// An app from the catalogue (repeat for more).
        #[arg(long = "app")]
        apps: Vec<String>,
        /// A Debian package (repeat for more).
        #[arg(long = "package")]
        packages: Vec<String>,
        /// The Wayland desktop's image instead of X11's.
        #[arg(long)]
        wayland: bool,
        /// Build on a local engine (the runtime named, docker or podman; default docker), without a server.
        #[arg(long)]
        local: bool,
    },
    /// Remove box images no box uses: those made for other holm versions,
    /// or with --all every unused one.
    Prune {
        /// The runtime whose engine is pruned (default: every runtime).
        runtime: Option<String>,
        /// Also unused images of this holm version.
        #[arg(long)]
        all: bool,
        /// Say what would go; remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// List the images holm built.
    Ls {
        /// Ask the local Docker engine, without a server.
        #[arg(long)]
        local: bool,
    },
    /// Make the base image (debian:bookworm-slim) with debootstrap if it is
    /// missing and cannot be pulled.
    Base {
        /// The runtime whose engine gets it (default: the default runtime).
        runtime: Option<String>,
        /// Use a local engine (the runtime named, docker or podman; default docker), without a server.
        #[arg(long)]
        local: bool,
    },
}

pub(super) async fn image(client: &Client, cmd: ImageCmd, json: bool) -> anyhow::Result<ExitCode> {
    match cmd {
        ImageCmd::Build { runtime, apps, packages, wayland, local: false } => {
            let display = wayland.then_some(holm_proto::guest::Profile::Wayland);
            let request = BuildImage { runtime, apps, packages, display };
            follow_build(client.build_image(&request).await?, json).await
        }
        ImageCmd::Base { runtime, local: false } => {
            follow_build(client.make_base(runtime.as_deref()).await?, json).await
        }
        ImageCmd::Prune { runtime, all, dry_run } => {
            let request = holm_proto::host::PruneImages { runtime, all, dry_run };
            let pruned = client.prune_images(&request).await?;
            if json {
                output::json(&pruned);
            } else {
                let rows: Vec<Vec<String>> = pruned
                    .iter()
                    .map(|p| {
                        vec![
                            p.image.clone(),
                            p.runtime.clone(),
                            format!("{} MB", p.size / 1_000_000),
                        ]
                    })
                    .collect();
                output::table(&["REMOVED", "RUNTIME", "SIZE"], &rows);
            }
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Ls { local: false } => {
            print_images(&client.images().await?, json);
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Build { runtime, apps, packages, wayland, local: true } => {
            let rt = local_engine(runtime.as_deref())?;
            let display = if wayland {
                holm_proto::guest::Profile::Wayland
            } else {
                holm_proto::guest::Profile::X11
            };
            let request = holm::image::ImageRequest::new(apps, packages)?.with_display(display);
            let mut progress = local_progress(json);
            let tag = holm::runtime::Runtime::prepare_image(&rt, &request, &mut progress).await?;
            if json {
                output::json(&serde_json::json!({ "image": tag }));
            } else {
                output::line(&tag);
            }
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Base { runtime, local: true } => {
            let rt = local_engine(runtime.as_deref())?;
            let mut progress = local_progress(json);
            holm::runtime::Runtime::make_base(&rt, &mut progress).await?;
            output::line(holm::image::BASE_IMAGE);
            Ok(ExitCode::SUCCESS)
        }
        ImageCmd::Ls { local: true } => {
            let rt = local_engine(None)?;
            print_images(&holm::runtime::Runtime::images(&rt).await?, json);
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reports a local build's progress: drawn at a terminal, else as lines.
pub(super) fn local_progress(json: bool) -> impl FnMut(holm::image::Progress) + Send {
    let mut bar = crate::progress::Progress::new(json);
    move |p: holm::image::Progress| {
        let line = p.into_line();
        if bar.on() { bar.build_line(&line) } else { eprintln_progress(&line, json) }
    }
}

/// The container engine a `--local` image command works on: the one named,
/// or Docker.
pub(super) fn local_engine(
    name: Option<&str>,
) -> anyhow::Result<holm::runtime::docker::DockerRuntime> {
    let name = name.unwrap_or("docker");
    match holm::runtime::container_engine(name) {
        Some(engine) => Ok(engine?),
        None => anyhow::bail!(
            "--local works on a container engine on this host: {}, not {name:?}",
            holm::runtime::container_engines().join(", ")
        ),
    }
}

#[allow(clippy::print_stderr)]
pub(super) fn eprintln_progress(line: &str, json: bool) {
    if json {
        eprintln!("{}", serde_json::json!({ "type": "progress", "message": line }));
    } else {
        eprintln!("{line}");
    }
}

pub(super) async fn follow_build(
    stream: impl futures_util::Stream<Item = holm_client::Result<BuildEvent>>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut stream = std::pin::pin!(stream);
    let mut progress = crate::progress::Progress::new(json);
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    loop {
        let event = tokio::select! {
            e = stream.next() => e,
            _ = tick.tick() => {
                progress.draw();
                continue;
            }
        };
        let Some(event) = event else { break };
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                progress.finish(false);
                return Err(e.into());
            }
        };
        match event {
            BuildEvent::Progress { message } if progress.on() => progress.build_line(&message),
            BuildEvent::Progress { message } => eprintln_progress(&message, json),
            BuildEvent::Error { error } => {
                progress.finish(false);
                return Err(error.into());
            }
            BuildEvent::Done { image, cached } => {
                progress.finish(true);
                if json {
                    output::json(&serde_json::json!({ "image": image, "cached": cached }));
                } else {
                    output::line(&image);
                }
                return Ok(ExitCode::SUCCESS);
            }
        }
    }
    progress.finish(false);
    bail!("the build's stream ended without a result")
}

pub(super) fn print_images(images: &[holm_proto::host::ImageInfo], json: bool) {
    if json {
        output::json(&images);
        return;
    }
    let rows: Vec<Vec<String>> = images
        .iter()
        .map(|i| {
            vec![
                i.image.clone(),
                i.runtime.clone(),
                i.display.to_string(),
                i.apps.join(","),
                i.packages.join(","),
                format!("{} MB", i.size / 1_000_000),
                i.created_at.clone().unwrap_or_default(),
            ]
        })
        .collect();
    output::table(&["IMAGE", "RUNTIME", "DISPLAY", "APPS", "PACKAGES", "SIZE", "CREATED"], &rows);
}
