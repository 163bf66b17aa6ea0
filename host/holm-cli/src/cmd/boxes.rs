//! A box's life from the command line: `holm new`, and how boxes and their
//! traces are printed.

use super::*;

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

pub(super) fn print_boxes(boxes: &[holm_proto::host::BoxInfo], json: bool) {
    if json {
        output::json(&boxes);
    } else {
        for b in boxes {
            output::line(&format!("{} {}", b.id, b.state));
        }
    }
}

/// Prints the id of a running box, or fails with its state and reason.
pub(super) fn running_or_error(
    info: &holm_proto::host::BoxInfo,
    json: bool,
) -> anyhow::Result<ExitCode> {
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
pub(super) fn control_summary(c: &holm_proto::viewer::ControlEvent) -> String {
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
pub(super) async fn ls_boxes(client: &Client, all: bool, json: bool) -> anyhow::Result<ExitCode> {
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
pub(super) async fn fork(
    client: &Client,
    r#box: &str,
    request: ForkBox,
    wait: u64,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let mut progress = crate::progress::Progress::new(json);
    let waited = (!progress.on()).then_some(wait);
    let mut info = client.fork_box(r#box, &request, None, waited).await?;
    if progress.on() {
        info = crate::progress::follow_box(client, &info.id, wait, &mut progress).await?;
    }
    running_or_error(&info, json)
}

/// `holm traces`: the requests a box served.
pub(super) async fn traces(client: &Client, r#box: &str, json: bool) -> anyhow::Result<ExitCode> {
    let traces = client.all_traces(r#box).await?;
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
