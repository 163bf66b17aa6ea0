//! Building box images on a Docker engine, and listing them.
//!
//! The build context is a small tar made in memory (the rendered Dockerfile
//! and the guest binary, about 4 MB), sent to the engine's `/build` with the
//! classic builder, which every engine since 1.41 has without extra setup.

use std::collections::HashMap;

use bollard::Docker;
use bollard::query_parameters::{BuildImageOptionsBuilder, ListImagesOptionsBuilder};
use futures_util::StreamExt;

use super::base::{BASE_IMAGE, ensure_base_as, inspect_id};
use super::plan::{
    BuildPlan, IMAGE_REPOSITORY, LABEL_APPS, LABEL_DISPLAY, LABEL_IMAGE, LABEL_PACKAGES, plan,
};
use super::{
    GUEST_BINARY, ImageError, ImageRequest, Progress, Result, Tail, catalog, single_flight,
};

/// Lines of build output an error quotes.
const ERROR_TAIL_LINES: usize = 25;

/// One box image on the engine, for `holm image ls`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSummary {
    /// Its `holm-box:<hash>` tag, or `None` when the tag was moved or removed
    /// and only the image is left.
    pub tag: Option<String>,
    /// The engine's image id (`sha256:…`).
    pub id: String,
    /// Its apps.
    pub apps: Vec<String>,
    /// Its extra packages.
    pub packages: Vec<String>,
    /// Its display profile (`x11` for images from before the label).
    pub display: holm_proto::guest::Profile,
    /// Its size in bytes, layers shared with other images included.
    pub size: u64,
    /// When it was built, in seconds since the Unix epoch.
    pub created: i64,
}

/// Makes sure the box image for `request` exists on the engine, and returns
/// its tag.
///
/// Ensures the base first ([`super::ensure_base`]), then computes the tag. An
/// image with that tag is reused at once, with one inspect and no build
/// ([`Progress::Reused`]). Otherwise the image is built from an in-memory
/// context, with each line of the build's output sent as
/// [`Progress::Output`], then [`Progress::Built`]. A failing step fails with
/// [`ImageError::BuildFailed`], which carries the engine's message and the
/// last lines of output.
///
/// Concurrent calls for the same tag in this process build once: the later
/// callers wait and then reuse the first one's image.
pub async fn ensure_image(
    docker: &Docker,
    request: &ImageRequest,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<String> {
    // Refuse a bad request before touching the engine or the base.
    let request = request.normalized()?;
    let base_id = ensure_base_as(docker, BASE_IMAGE, progress).await?;
    let plan = plan(&request, GUEST_BINARY, &base_id)?;

    let lock = single_flight::lock_for(&plan.tag);
    let guard = match lock.try_lock() {
        Ok(guard) => guard,
        Err(_) => {
            progress(Progress::Status(format!("waiting for another build of {}", plan.tag)));
            lock.lock().await
        }
    };

    if inspect_id(docker, &plan.tag).await?.is_some() {
        progress(Progress::Reused { tag: plan.tag.clone() });
        return Ok(plan.tag);
    }
    progress(Progress::Status(format!("building {} ({})", plan.tag, describe(&request))));
    build(docker, &plan, progress).await?;
    drop(guard);
    progress(Progress::Built { tag: plan.tag.clone() });
    Ok(plan.tag)
}

/// The box images on the engine, newest first.
pub async fn list_images(docker: &Docker) -> Result<Vec<ImageSummary>> {
    let filters = HashMap::from([("label", vec![format!("{LABEL_IMAGE}=1")])]);
    let options = ListImagesOptionsBuilder::default().filters(&filters).build();
    let images =
        docker.list_images(Some(options)).await.map_err(ImageError::engine("list images"))?;
    let split = |labels: &HashMap<String, String>, key: &str| -> Vec<String> {
        labels
            .get(key)
            .map(|v| v.split(',').filter(|s| !s.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let prefix = format!("{IMAGE_REPOSITORY}:");
    let mut out: Vec<ImageSummary> = images
        .into_iter()
        .map(|image| ImageSummary {
            // podman answers `localhost/holm-box:…`; holm names it as built.
            tag: image
                .repo_tags
                .iter()
                .map(|t| crate::runtime::docker::short_image_name(t))
                .find(|t| t.starts_with(&prefix))
                .map(str::to_owned),
            apps: split(&image.labels, LABEL_APPS),
            packages: split(&image.labels, LABEL_PACKAGES),
            display: match image.labels.get(LABEL_DISPLAY).map(String::as_str) {
                Some("wayland") => holm_proto::guest::Profile::Wayland,
                _ => holm_proto::guest::Profile::X11,
            },
            size: u64::try_from(image.size).unwrap_or(0),
            created: image.created,
            id: image.id,
        })
        .collect();
    out.sort_by(|a, b| b.created.cmp(&a.created).then_with(|| a.tag.cmp(&b.tag)));
    Ok(out)
}

/// "apps: a, b; packages: c", or "the plain desktop".
fn describe(request: &ImageRequest) -> String {
    let display = request.display;
    if request.is_default() {
        return format!("the plain {display} desktop");
    }
    let list = |v: &[String]| if v.is_empty() { "none".to_owned() } else { v.join(", ") };
    format!("{display}; apps: {}; packages: {}", list(&request.apps), list(&request.packages))
}

/// Runs the build of `plan` on the engine.
async fn build(
    docker: &Docker,
    plan: &BuildPlan,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<()> {
    let context = build_context(&plan.dockerfile, GUEST_BINARY)?;
    let labels: HashMap<&str, &str> =
        plan.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&plan.tag)
        .labels(&labels)
        // Remove intermediate containers even when a step fails, so a failed
        // build leaves no stopped containers behind.
        .rm(true)
        .forcerm(true)
        .build();
    let mut stream = docker.build_image(options, None, Some(bollard::body_full(context.into())));

    let mut tail = Tail::new(ERROR_TAIL_LINES);
    let mut partial = String::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                // The engine sends output in chunks that need not end at a
                // line break; report whole lines.
                if let Some(text) = info.stream.as_deref().or(info.status.as_deref()) {
                    partial.push_str(text);
                    while let Some(end) = partial.find('\n') {
                        let line: String = partial.drain(..=end).collect();
                        emit_line(&line, &mut tail, progress);
                    }
                }
            }
            Err(err) => {
                emit_line(&std::mem::take(&mut partial), &mut tail, progress);
                return Err(match err {
                    bollard::errors::Error::DockerStreamError { error } => {
                        ImageError::BuildFailed {
                            tag: plan.tag.clone(),
                            message: error.trim().to_owned(),
                            hint: repository_hint(&plan.request),
                            output: tail.joined(),
                        }
                    }
                    other => {
                        ImageError::Engine { action: format!("build {}", plan.tag), source: other }
                    }
                });
            }
        }
    }
    emit_line(&partial, &mut tail, progress);

    // A stream that ended without an error but without an image would be an
    // engine bug; say so rather than hand out a tag that does not exist.
    if inspect_id(docker, &plan.tag).await?.is_none() {
        return Err(ImageError::BuildFailed {
            tag: plan.tag.clone(),
            message: "the engine finished the build but has no image with that tag".into(),
            hint: String::new(),
            output: tail.joined(),
        });
    }
    Ok(())
}

fn emit_line(line: &str, tail: &mut Tail, progress: &mut (dyn FnMut(Progress) + Send)) {
    let line = strip_ansi(line);
    let line = line.trim_end();
    if !line.trim().is_empty() {
        tail.push(line);
        progress(Progress::Output(line.to_owned()));
    }
}

/// Removes terminal escape sequences. The classic builder colours what a
/// step writes to stderr (`ESC[91m` … `ESC[0m`), often around every few
/// characters, which would make the lines unreadable in a log or an error.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            // A CSI sequence: parameters and intermediates, then one final
            // byte in '@'..='~'.
            chars.next();
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        } else {
            // A two-character escape.
            chars.next();
        }
    }
    out
}

/// For a failed build with apps from third-party repositories: which
/// repositories had to be reachable, the most likely cause of the failure.
fn repository_hint(request: &ImageRequest) -> String {
    let repos: Vec<String> = request
        .apps
        .iter()
        .filter_map(|name| catalog().get(name))
        .filter_map(|app| app.repository.as_ref().map(|repo| format!("{} from {repo}", app.name)))
        .collect();
    if repos.is_empty() {
        String::new()
    } else {
        format!(
            "; the build needs these third-party repositories to be reachable from the engine: {}",
            repos.join(", ")
        )
    }
}

/// The build context: the Dockerfile and the guest binary (mode 0755), as an
/// uncompressed tar. The engine is local or on the same network, so
/// compressing 4 MB would cost more time than it saves.
fn build_context(dockerfile: &str, guest: &[u8]) -> Result<Vec<u8>> {
    let mut tar = tar::Builder::new(Vec::with_capacity(guest.len() + dockerfile.len() + 4096));
    let mut add = |name: &str, mode: u32, data: &[u8]| {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_entry_type(tar::EntryType::Regular);
        // A fixed time keeps the context identical for identical inputs, so
        // the engine's cache check of the COPY sees no change.
        header.set_mtime(0);
        header.set_cksum();
        tar.append_data(&mut header, name, data)
    };
    add("Dockerfile", 0o644, dockerfile.as_bytes())
        .and_then(|()| add("holm-guest", 0o755, guest))
        .and_then(|()| tar.into_inner())
        .map_err(ImageError::io("make the build context"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_holds_the_dockerfile_and_an_executable_guest() {
        let bytes = build_context("FROM scratch\n", b"guest").unwrap();
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut seen = Vec::new();
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let path = entry.path().unwrap().display().to_string();
            let mode = entry.header().mode().unwrap();
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut data).unwrap();
            seen.push((path, mode, data));
        }
        assert_eq!(
            seen,
            [
                ("Dockerfile".to_owned(), 0o644, b"FROM scratch\n".to_vec()),
                ("holm-guest".to_owned(), 0o755, b"guest".to_vec()),
            ]
        );
    }

    #[test]
    fn ansi_colours_are_removed() {
        assert_eq!(
            strip_ansi("\x1b[91mc\x1b[0m\x1b[91mu\x1b[0m\x1b[91mrl: (6)\x1b[0m done"),
            "curl: (6) done"
        );
        assert_eq!(strip_ansi("plain ünïcode"), "plain ünïcode");
        assert_eq!(strip_ansi("cut \x1b["), "cut ");
    }

    #[test]
    fn hint_names_third_party_repositories() {
        let plain = ImageRequest::new(["jq"], [] as [&str; 0]).unwrap();
        assert_eq!(repository_hint(&plain), "");
        let vscode = ImageRequest::new(["vscode", "jq"], [] as [&str; 0]).unwrap();
        assert!(
            repository_hint(&vscode)
                .contains("vscode from https://packages.microsoft.com/repos/code")
        );
    }
}
