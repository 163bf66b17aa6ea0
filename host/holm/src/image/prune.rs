//! Pruning box images: each app set, package set and guest version is an
//! image of its own, so an engine that serves boxes for months fills its
//! disk unless old images go.
//!
//! Only images holm built (`holm.image=1`) that no container uses are ever
//! removed. Without a size, [`prune`] removes those made for another guest
//! (another holm version: new boxes never use them), or every unused one
//! with `all`. With a size ([`Prune::keep_under_bytes`]), it removes unused
//! ones, other guests' first and then the oldest, until the images holm
//! built take at most that much; holmd does this after each build that made
//! an image.

use std::collections::{HashMap, HashSet};

use bollard::Docker;
use bollard::query_parameters::{
    ListContainersOptionsBuilder, ListImagesOptionsBuilder, RemoveImageOptionsBuilder,
};

use super::{ImageError, LABEL_GUEST, LABEL_IMAGE, Result};

/// What [`prune`] removes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Prune {
    /// Also unused images made for this guest.
    pub all: bool,
    /// Remove only until the images take at most this many bytes.
    pub keep_under_bytes: Option<u64>,
    /// Say what would go, remove nothing.
    pub dry_run: bool,
    /// Only images that also carry this label (`key=value`): a test's own.
    pub only_label: Option<String>,
}

/// An image [`prune`] removed (or would remove).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pruned {
    /// Its tag, or its id when it has none.
    pub image: String,
    /// Its size in bytes, shared layers included.
    pub size: u64,
}

/// Removes box images no container uses, as `policy` says, and answers them.
pub async fn prune(docker: &Docker, policy: &Prune) -> Result<Vec<Pruned>> {
    let mut labels = vec![format!("{LABEL_IMAGE}=1")];
    labels.extend(policy.only_label.iter().cloned());
    let filters = HashMap::from([("label", labels)]);
    let options = ListImagesOptionsBuilder::default().filters(&filters).build();
    let images =
        docker.list_images(Some(options)).await.map_err(ImageError::engine("list images"))?;
    let options = ListContainersOptionsBuilder::default().all(true).build();
    let containers = docker
        .list_containers(Some(options))
        .await
        .map_err(ImageError::engine("list containers"))?;
    let used: HashSet<String> = containers.into_iter().filter_map(|c| c.image_id).collect();
    let current = super::guest_sha256();
    let mut total: u64 = images.iter().map(|i| u64::try_from(i.size).unwrap_or(0)).sum();
    let mut candidates: Vec<_> = images.into_iter().filter(|i| !used.contains(&i.id)).collect();
    // Other guests' images first, then the oldest.
    let other_guest = |i: &bollard::models::ImageSummary| {
        i.labels.get(LABEL_GUEST).map(String::as_str) != Some(current)
    };
    candidates.sort_by_key(|i| (!other_guest(i), i.created));
    let mut out = Vec::new();
    for image in candidates {
        let size = u64::try_from(image.size).unwrap_or(0);
        match policy.keep_under_bytes {
            Some(limit) if total <= limit => break,
            None if !policy.all && !other_guest(&image) => continue,
            _ => {}
        }
        let name = image
            .repo_tags
            .iter()
            .find(|t| t.starts_with(super::IMAGE_REPOSITORY))
            .cloned()
            .unwrap_or_else(|| image.id.clone());
        if !policy.dry_run {
            let options = RemoveImageOptionsBuilder::default().noprune(false).build();
            if let Err(e) = docker.remove_image(&image.id, Some(options), None).await {
                // Made into a container since the list, or a parent of one.
                tracing::info!(image = %name, error = %e, "an image stays");
                continue;
            }
            tracing::info!(image = %name, size, "removed an unused box image");
        }
        total = total.saturating_sub(size);
        out.push(Pruned { image: name, size });
    }
    Ok(out)
}
