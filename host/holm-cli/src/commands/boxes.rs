//! A box's life from the command line: `holm new`, `ls`, `get`, `stop`,
//! `start`, `pause`, `resume`, `fork`, `extend`, `traces` and `apps`, and
//! how boxes and their traces are printed.

use std::process::ExitCode;

use clap::Args;
use holm_client::Client;
use holm_proto::host::{BoxSpec, CreateBox, ForkBox, Placement};

use crate::output;

/// This group's commands, in the order `holm --help` lists them.
#[derive(Debug, clap::Subcommand)]
pub(super) enum Commands {
    /// Create a box and print its id once its desktop answers.
    New(NewArgs),
    /// List the boxes, or with BOX:/PATH a directory in a box.
    Ls(super::files::LsArgs),
    /// Show one box.
    Get(BoxArgs),
    /// Remove boxes (BOX...), or files in a box (BOX:/PATH... [-r]).
    Rm(super::files::RmArgs),
    /// Stop boxes, keeping their files.
    Stop(StopArgs),
    /// Start a stopped box: a new desktop on new ports.
    Start(StartArgs),
    /// Pause a box, keeping its memory.
    Pause(BoxArgs),
    /// Resume a paused box where it was.
    Resume(BoxArgs),
    /// Fork a box: a new box with a copy of its files. Prints the new id.
    Fork(ForkArgs),
    /// Move the end of a box's lifetime later.
    Extend(ExtendArgs),
    /// The requests through the server to a box, oldest first.
    Traces(BoxArgs),
}

impl Commands {
    /// Runs the command.
    pub(super) async fn run(self, c: &Client, json: bool) -> anyhow::Result<ExitCode> {
        match self {
            Self::New(a) => new(c, a, json).await,
            Self::Ls(super::files::LsArgs { target: Some(target), depth, .. }) => {
                super::files::ls_files(c, &target, depth, json).await
            }
            Self::Ls(a) => ls(c, a.all, json).await,
            Self::Get(a) => get(c, a).await,
            Self::Rm(a) => super::files::rm(c, a, json).await,
            Self::Stop(a) => stop(c, a, json).await,
            Self::Start(a) => start(c, a, json).await,
            Self::Pause(a) => pause(c, a, json).await,
            Self::Resume(a) => resume(c, a, json).await,
            Self::Fork(a) => fork(c, a, json).await,
            Self::Extend(a) => extend(c, a, json).await,
            Self::Traces(a) => traces(c, a, json).await,
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct NewArgs {
    /// The runtime (default: the server's default).
    #[arg(long)]
    runtime: Option<String>,
    /// Remove the box after this many minutes (default 60).
    #[arg(long, value_name = "MINUTES")]
    ttl: Option<u64>,
    /// Remove the box when no command came for this many minutes.
    #[arg(long, value_name = "MINUTES")]
    idle: Option<u64>,
    /// The most processes and threads the box may have (default 4096).
    #[arg(long)]
    pids: Option<u32>,
    /// How many screens, 1 to 6.
    #[arg(long)]
    screens: Option<u8>,
    /// The size of every screen, such as 1920x1080.
    #[arg(long)]
    size: Option<String>,
    /// An app from the catalogue (repeat for more).
    #[arg(long = "app")]
    apps: Vec<String>,
    /// A Debian package (repeat for more).
    #[arg(long = "package")]
    packages: Vec<String>,
    /// Run no browser.
    #[arg(long)]
    no_browser: bool,
    /// Answer once the desktop is usable, before Chromium is up (page tools
    /// answer `not_ready` until it is).
    #[arg(long)]
    ready_desktop: bool,
    /// Record every screen for the box's whole life (`holm recording ls`
    /// lists the files, also after the box is removed).
    #[arg(long)]
    record: bool,
    /// A Wayland desktop (headless sway) instead of X11.
    #[arg(long)]
    wayland: bool,
    /// Memory, such as 4g.
    #[arg(long)]
    memory: Option<String>,
    /// CPUs, such as 2.
    #[arg(long)]
    cpus: Option<f64>,
    /// The most the box may write to its disk, such as 2g (default 10g);
    /// past it the server stops the box.
    #[arg(long)]
    disk: Option<String>,
    /// A name of your own.
    #[arg(long)]
    name: Option<String>,
    /// Keep Chromium's user data in this named browser profile, which later
    /// boxes with the same profile reuse (one live box per profile).
    #[arg(long)]
    profile: Option<String>,
    /// Wait at most this many seconds for the desktop (the first box of a new
    /// image also waits for its build).
    #[arg(long, default_value_t = 900)]
    wait: u64,
    /// Makes the create safe to retry: the same key and options answer the
    /// same box for 24 hours.
    #[arg(long, value_name = "KEY")]
    idempotency_key: Option<String>,
}

/// One box: `holm get`, `pause`, `resume`, `traces`.
#[derive(Debug, Args)]
pub(super) struct BoxArgs {
    /// The box id.
    r#box: String,
}

/// `holm stop`.
#[derive(Debug, Args)]
pub(super) struct StopArgs {
    /// The box ids.
    #[arg(required = true)]
    boxes: Vec<String>,
}

/// `holm start`.
#[derive(Debug, Args)]
pub(super) struct StartArgs {
    /// The box id.
    r#box: String,
    /// Wait at most this many seconds for the desktop.
    #[arg(long, default_value_t = 300)]
    wait: u64,
}

/// `holm fork`.
#[derive(Debug, Args)]
pub(super) struct ForkArgs {
    /// The box id.
    r#box: String,
    /// Remove the copy after this many minutes (default: the runtime's).
    #[arg(long, value_name = "MINUTES")]
    pub(super) ttl: Option<u64>,
    /// Remove the copy when no command came for this many minutes
    /// (default: the original's).
    #[arg(long, value_name = "MINUTES")]
    idle: Option<u64>,
    /// A name of your own for the copy.
    #[arg(long)]
    name: Option<String>,
    /// Wait at most this many seconds for the copy's desktop.
    #[arg(long, default_value_t = 600)]
    wait: u64,
}

/// `holm extend`.
#[derive(Debug, Args)]
pub(super) struct ExtendArgs {
    /// The box id.
    r#box: String,
    /// How many minutes more.
    #[arg(long, value_name = "N")]
    pub(super) minutes: u64,
}

pub(super) async fn new(client: &Client, a: NewArgs, json: bool) -> anyhow::Result<ExitCode> {
    let request = CreateBox {
        spec: BoxSpec {
            name: a.name,
            screens: a.screens,
            screen_size: a.size,
            display: a.wayland.then_some(holm_proto::guest::Profile::Wayland),
            apps: a.apps,
            packages: a.packages,
            browser: a.no_browser.then_some(false),
            labels: Default::default(),
            profile: a.profile,
            policy: None,
            ready: a.ready_desktop.then_some(holm_proto::host::Ready::Desktop),
            record: a.record.then_some(true),
        },
        placement: Placement {
            runtime: a.runtime,
            memory: a.memory,
            cpus: a.cpus,
            disk: a.disk,
            expires_after_secs: a.ttl.map(|m| m.saturating_mul(60)),
            idle_timeout_secs: a.idle.map(|m| m.saturating_mul(60)),
            pids_limit: a.pids,
        },
    };
    let mut progress = crate::progress::Progress::new(json);
    // With a display, the create answers at once and the stages are shown
    // as they come; without one, the server waits, as it always did.
    let wait = (!progress.on()).then_some(a.wait);
    let mut info = match &a.idempotency_key {
        Some(key) => client.create_box_idempotent(&request, key, wait).await?,
        None => client.create_box(&request, wait).await?,
    };
    if progress.on() {
        info = crate::progress::follow_box(client, &info.id, a.wait, &mut progress).await?;
    }
    running_or_error(&info, json)
}

fn print_boxes(boxes: &[holm_proto::host::BoxInfo], json: bool) {
    if json {
        output::json(&boxes);
    } else {
        for b in boxes {
            output::line(&format!("{} {}", b.id, b.state));
        }
    }
}

/// Prints the id of a running box, or fails with its state and reason.
fn running_or_error(info: &holm_proto::host::BoxInfo, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        output::json(info);
    }
    match info.state {
        holm_proto::host::BoxState::Running => {
            if !json {
                output::line(&info.id);
            }
            Ok(ExitCode::SUCCESS)
        }
        other => {
            let reason = info.reason.clone().unwrap_or_else(|| "it did not start in time".into());
            Err(holm_proto::ApiError::new(
                holm_proto::ErrorCode::Unavailable,
                format!("box {} is {other}: {reason}", info.id),
            )
            .with_hint(format!("see `holm get {}`", info.id))
            .into())
        }
    }
}

/// A control trace's CODE column: what happened, to whom, and how control
/// came back (`taken carol`, `returned carol (disconnected)`).
fn control_summary(c: &holm_proto::viewer::ControlEvent) -> String {
    let mut s = c.kind.to_string();
    if let Some(who) = c.label.as_deref().or(c.grant.as_deref()) {
        s = format!("{s} {who}");
    }
    if let Some(by) = c.by {
        s = format!("{s} ({by})");
    }
    s
}

/// `holm ls`: the boxes.
pub(super) async fn ls(client: &Client, all: bool, json: bool) -> anyhow::Result<ExitCode> {
    let boxes = client.every_box(all).await?;
    if json {
        output::json(&boxes);
    } else {
        let rows: Vec<Vec<String>> = boxes
            .iter()
            .map(|b| {
                vec![
                    b.id.clone(),
                    b.runtime.clone(),
                    b.state.to_string(),
                    b.created_at.clone(),
                    b.expires_at.clone(),
                ]
            })
            .collect();
        output::table(&["ID", "RUNTIME", "STATE", "CREATED", "EXPIRES"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm fork`: a copy of a box, followed until it runs.
pub(super) async fn fork(client: &Client, a: ForkArgs, json: bool) -> anyhow::Result<ExitCode> {
    let request = ForkBox {
        name: a.name,
        expires_after_secs: a.ttl.map(|m| m.saturating_mul(60)),
        idle_timeout_secs: a.idle.map(|m| m.saturating_mul(60)),
    };
    let mut progress = crate::progress::Progress::new(json);
    let waited = (!progress.on()).then_some(a.wait);
    let mut info = client.fork_box(&a.r#box, &request, None, waited).await?;
    if progress.on() {
        info = crate::progress::follow_box(client, &info.id, a.wait, &mut progress).await?;
    }
    running_or_error(&info, json)
}

/// `holm get`: one box, as JSON.
pub(super) async fn get(client: &Client, a: BoxArgs) -> anyhow::Result<ExitCode> {
    let info = client.get_box(&a.r#box, None).await?;
    output::json(&info);
    Ok(ExitCode::SUCCESS)
}

/// `holm stop`: each box in turn.
pub(super) async fn stop(client: &Client, a: StopArgs, json: bool) -> anyhow::Result<ExitCode> {
    let mut stopped = Vec::new();
    for id in &a.boxes {
        stopped.push(client.stop_box(id).await?);
    }
    print_boxes(&stopped, json);
    Ok(ExitCode::SUCCESS)
}

/// `holm start`: a stopped box, until its desktop answers.
pub(super) async fn start(client: &Client, a: StartArgs, json: bool) -> anyhow::Result<ExitCode> {
    let info = client.start_box(&a.r#box, Some(a.wait)).await?;
    running_or_error(&info, json)
}

/// `holm pause`.
pub(super) async fn pause(client: &Client, a: BoxArgs, json: bool) -> anyhow::Result<ExitCode> {
    print_boxes(&[client.pause_box(&a.r#box).await?], json);
    Ok(ExitCode::SUCCESS)
}

/// `holm resume`.
pub(super) async fn resume(client: &Client, a: BoxArgs, json: bool) -> anyhow::Result<ExitCode> {
    print_boxes(&[client.resume_box(&a.r#box).await?], json);
    Ok(ExitCode::SUCCESS)
}

/// `holm extend`: the box's new end.
pub(super) async fn extend(client: &Client, a: ExtendArgs, json: bool) -> anyhow::Result<ExitCode> {
    let info = client.extend_box(&a.r#box, a.minutes.saturating_mul(60)).await?;
    if json {
        output::json(&info);
    } else {
        output::line(&format!("{} expires at {}", info.id, info.expires_at));
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm traces`: the requests a box served.
pub(super) async fn traces(client: &Client, a: BoxArgs, json: bool) -> anyhow::Result<ExitCode> {
    let traces = client.all_traces(&a.r#box).await?;
    if json {
        output::json(&traces);
    } else {
        let rows: Vec<Vec<String>> = traces
            .iter()
            .map(|t| {
                let path = if t.query.is_empty() {
                    t.path.clone()
                } else {
                    format!("{}?{}", t.path, t.query.join("&"))
                };
                vec![
                    t.at.clone(),
                    t.method.clone(),
                    path,
                    t.status.to_string(),
                    t.control
                        .as_ref()
                        .map_or_else(|| t.code.clone().unwrap_or_default(), control_summary),
                    format!("{} ms", t.duration_ms),
                ]
            })
            .collect();
        output::table(&["AT", "METHOD", "PATH", "STATUS", "CODE", "DURATION"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}

/// `holm apps`: the apps a box can be made with.
pub(super) async fn apps(client: &Client, json: bool) -> anyhow::Result<ExitCode> {
    let apps = client.apps().await?;
    if json {
        output::json(&apps);
    } else {
        let rows: Vec<Vec<String>> = apps
            .iter()
            .map(|a| {
                vec![
                    a.name.clone(),
                    a.description.clone(),
                    if a.third_party { "yes" } else { "" }.to_owned(),
                    if a.x11 { "Xwayland" } else { "" }.to_owned(),
                ]
            })
            .collect();
        output::table(&["APP", "DESCRIPTION", "THIRD-PARTY REPOSITORY", "ON WAYLAND"], &rows);
    }
    Ok(ExitCode::SUCCESS)
}
