//! The box image at Vercel: built on the Docker engine where the server
//! runs (the image a Docker box uses, cached there), pushed to Vercel
//! Container Registry as `<team-slug>/<project-slug>/holm-box:<name>`
//! with the team id as the user and the token as the password, and used
//! once VCR says the tag is `ready`. A later box (or another server) finds
//! the tag at VCR by its name, made of the image's content, and starts
//! from it without building.

use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::auth::DockerCredentials;
use bollard::query_parameters::{
    PushImageOptionsBuilder, RemoveImageOptionsBuilder, TagImageOptionsBuilder,
};
use futures_util::StreamExt;
use reqwest::Method;
use serde::Deserialize;

use super::{VENDOR, Vercel};
use crate::image::Progress;
use crate::runtime::remote::{Addresses, Recipe, Retry, VResult, VendorError};

/// The repository of box images in the project.
pub const REPOSITORY: &str = "holm-box";
/// How long VCR may take to prepare a pushed image.
const PREPARE_TIMEOUT: Duration = Duration::from_secs(1800);
const POLL: Duration = Duration::from_secs(1);

/// VCR's status of a tag: `preparing`, `ready`, `unoptimized`, or none (an
/// image index).
#[derive(Debug, Deserialize)]
pub(super) struct TagStatus {
    pub status: Option<String>,
    /// `image`, or `index` for a multi-platform index (or one with
    /// attestations), which VCR cannot prepare.
    #[serde(default)]
    pub kind: Option<String>,
}

/// What a tag's status at VCR means, as Vercel's own `vcr-action` reads it
/// (`src/wait-for-optimized-image/wait.ts`): `ready` is usable, an index
/// or a missing status fails at once (it never becomes ready), and
/// anything else is waited for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Ready,
    Wait,
    Fail(String),
}

pub(super) fn verdict(kind: Option<&str>, status: Option<&str>) -> Verdict {
    match (kind, status) {
        (Some("index"), _) | (_, None) => Verdict::Fail(
            "VCR has an image index, not a single linux/amd64 image, which it cannot prepare \
             for sandboxes (an engine with the containerd image store pushes one: push a \
             single-platform image, as `docker push` with `--provenance=false --sbom=false` \
             does)"
                .into(),
        ),
        (_, Some("ready")) => Verdict::Ready,
        (_, Some("unoptimized")) => Verdict::Fail(
            "VCR could not prepare it for sandboxes (unoptimized: not a linux/amd64 image)".into(),
        ),
        _ => Verdict::Wait,
    }
}

/// Why an engine cannot build an image for Vercel, which runs linux/amd64
/// images only (`@vercel/sandbox`'s README, `images/README.md`): holm
/// builds on the engine's own platform.
pub(super) fn platform_refusal(os: &str, arch: &str) -> Option<String> {
    (os != "linux" || !matches!(arch, "amd64" | "x86_64")).then(|| {
        format!(
            "Vercel runs linux/amd64 images only, and this Docker engine builds {os}/{arch}: \
             run the server on an amd64 host for the Vercel runtime"
        )
    })
}

#[derive(Deserialize)]
struct TagAnswer {
    tag: TagStatus,
}

/// The tag of a recipe: its content (the Dockerfile and the guest), not its
/// resources, which a Vercel sandbox sets itself.
pub(super) fn tag_of(recipe: &Recipe) -> String {
    let content = Recipe { memory_mib: 0, cpus: 0, ..recipe.clone() };
    content.name_for(&[recipe.dockerfile.as_bytes(), crate::image::guest_sha256().as_bytes()])
}

/// What holm reads of a Vercel team.
#[derive(Deserialize)]
struct Team {
    slug: String,
    #[serde(default)]
    billing: Option<Billing>,
}

/// A team's billing.
#[derive(Deserialize)]
struct Billing {
    #[serde(default)]
    plan: Option<String>,
}

impl Vercel {
    /// The tag's status at VCR, or `None` when there is no such tag.
    pub(super) async fn tag_status(&self, tag: &str) -> VResult<Option<TagStatus>> {
        let path = format!("/v1/vcr/repository/{REPOSITORY}/tags/{tag}");
        let answer = self
            .rest
            .json("read an image's status", Retry::Idempotent, |r| {
                self.scoped(r.request(Method::GET, &path))
                    .query(&[("projectId", self.options.project_id.as_str())])
            })
            .await;
        match answer {
            Ok(TagAnswer { tag }) => Ok(Some(tag)),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The team (`GET /v2/teams/{id}`).
    async fn team(&self) -> VResult<Team> {
        let team_id = self.options.team_id.clone();
        self.rest
            .json("read the team", Retry::Idempotent, |r| {
                self.scoped(r.request(Method::GET, &format!("/v2/teams/{team_id}")))
            })
            .await
    }

    /// The team's plan (`billing.plan` of `GET /v2/teams/{id}`: `hobby`,
    /// `pro` or `enterprise`); empty when Vercel names none.
    pub(super) async fn plan(&self) -> VResult<String> {
        Ok(self.team().await?.billing.and_then(|b| b.plan).unwrap_or_default())
    }

    /// `repo/path` of the project at VCR: `<team-slug>/<project-slug>`.
    async fn registry_path(&self) -> VResult<String> {
        #[derive(Deserialize)]
        struct Project {
            name: String,
        }
        let team = self.team().await?;
        let project_id = self.options.project_id.clone();
        let project: Project = self
            .rest
            .json("read the project", Retry::Idempotent, |r| {
                self.scoped(r.request(Method::GET, &format!("/v9/projects/{project_id}")))
            })
            .await?;
        Ok(format!("{}/{}", team.slug, project.name))
    }

    /// Builds the image on the local engine and pushes it to VCR as `tag`.
    pub(super) async fn build_and_push(
        &self,
        recipe: &Recipe,
        tag: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<()> {
        let fail = |what: &str, e: String| VendorError::answer(VENDOR, what, e);
        let docker = Docker::connect_with_defaults().map_err(|e| {
            fail("build the image", format!("the Vercel runtime builds on the local Docker engine, which cannot be reached: {e}"))
        })?;
        let engine = docker
            .version()
            .await
            .map_err(|e| fail("build the image", format!("the Docker engine's version: {e}")))?;
        let (os, arch) = (engine.os.unwrap_or_default(), engine.arch.unwrap_or_default());
        if let Some(why) = platform_refusal(&os, &arch) {
            return Err(fail("build the image", why));
        }
        let local = crate::image::ensure_image(&docker, &recipe.request, progress)
            .await
            .map_err(|e| fail("build the image", e.to_string()))?;
        let registry = self.registry_host();
        let repo = format!("{registry}/{}/{REPOSITORY}", self.registry_path().await?);
        let options = TagImageOptionsBuilder::default().repo(&repo).tag(tag).build();
        docker
            .tag_image(&local, Some(options))
            .await
            .map_err(|e| fail("tag the image for VCR", e.to_string()))?;
        progress(Progress::Status(format!(
            "pushing {REPOSITORY}:{tag} to Vercel Container Registry"
        )));
        let credentials = DockerCredentials {
            username: Some(self.options.team_id.clone()),
            password: Some(self.rest.key().get()),
            serveraddress: Some(registry.clone()),
            ..DockerCredentials::default()
        };
        check_registry(&registry, self.options.addresses)
            .await
            .map_err(|e| fail("push the image to VCR", e))?;
        let options = PushImageOptionsBuilder::default().tag(tag).build();
        let mut stream = docker.push_image(&repo, Some(options), Some(credentials));
        let mut failed = None;
        while let Some(item) = stream.next().await {
            match item {
                Ok(info) => {
                    if let Some(e) = info.error_detail.and_then(|d| d.message) {
                        failed = Some(e);
                    }
                }
                Err(e) => failed = Some(e.to_string()),
            }
        }
        // The engine keeps the image under its own tag; the registry's goes.
        let untag = RemoveImageOptionsBuilder::default().noprune(true).build();
        let _ = docker.remove_image(&format!("{repo}:{tag}"), Some(untag), None).await;
        match failed {
            Some(e) => Err(fail("push the image to VCR", e).scrub(&self.rest.key().get())),
            None => Ok(()),
        }
    }

    /// Waits until VCR has prepared `tag`.
    pub(super) async fn wait_ready(
        &self,
        tag: &str,
        progress: &mut (dyn FnMut(Progress) + Send),
    ) -> VResult<()> {
        let started = Instant::now();
        let mut last = String::new();
        loop {
            let answer = self.tag_status(tag).await?;
            let kind = answer.as_ref().and_then(|s| s.kind.clone());
            let status = answer.and_then(|s| s.status);
            let now = status.clone().unwrap_or_else(|| "none".into());
            if now != last {
                progress(Progress::Status(format!("VCR image {REPOSITORY}:{tag}: {now}")));
                last = now;
            }
            match verdict(kind.as_deref(), status.as_deref()) {
                Verdict::Ready => return Ok(()),
                Verdict::Fail(why) => {
                    return Err(VendorError::answer(VENDOR, "prepare the image", why));
                }
                Verdict::Wait if started.elapsed() > PREPARE_TIMEOUT => {
                    return Err(VendorError::answer(
                        VENDOR,
                        "prepare the image",
                        "VCR took longer than 30 minutes",
                    ));
                }
                Verdict::Wait => tokio::time::sleep(POLL).await,
            }
        }
    }
}

/// Refuses a registry (`host` or `host:port`) whose name resolves to an
/// address a public-only runtime may not reach, just before the engine
/// pushes to it with the token (the engine resolves the name again itself).
async fn check_registry(registry: &str, addresses: Addresses) -> Result<(), String> {
    if addresses == Addresses::Any {
        return Ok(());
    }
    let host = match registry.rsplit_once(':') {
        Some((h, port)) if port.parse::<u16>().is_ok() => h,
        _ => registry,
    };
    holm_client::address::resolve_public(host.trim_start_matches('[').trim_end_matches(']'))
        .await
        .map(drop)
        .map_err(|e| format!("registry_url: {e}"))
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_registry_at_a_private_address_is_refused_before_the_push_unless_allowed() {
        for registry in ["localhost:5000", "127.0.0.1", "[::1]:5000"] {
            let e = super::check_registry(registry, super::Addresses::Public).await.unwrap_err();
            assert!(e.contains("is not a public address"), "{registry}: {e}");
            super::check_registry(registry, super::Addresses::Any).await.unwrap();
        }
    }

    use super::*;

    #[test]
    fn an_index_or_no_status_fails_at_once_as_vcr_action_reads_it() {
        assert!(matches!(verdict(Some("index"), Some("preparing")), Verdict::Fail(_)));
        assert!(matches!(verdict(Some("image"), None), Verdict::Fail(_)));
        assert_eq!(verdict(Some("image"), Some("preparing")), Verdict::Wait);
        assert_eq!(verdict(Some("image"), Some("ready")), Verdict::Ready);
        assert!(matches!(verdict(None, Some("unoptimized")), Verdict::Fail(_)));
    }

    #[test]
    fn only_a_linux_amd64_engine_builds_for_vercel() {
        assert_eq!(platform_refusal("linux", "amd64"), None);
        assert_eq!(platform_refusal("linux", "x86_64"), None);
        let why = platform_refusal("linux", "arm64").expect("arm64 is refused");
        assert!(why.contains("linux/amd64") && why.contains("linux/arm64"), "{why}");
    }
}
