//! What one server takes on: live boxes, image builds at once, how long the
//! records of removed boxes stay, and how much disk its box images may take.
//! Each refusal says the limit and where to change it.

use std::sync::Arc;

use holm::runtime::Runtime;
use holm_proto::{ApiError, ErrorCode};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::Service;
use super::errors::Error;

/// The server's limits (`HOLM_MAX_BOXES`, `HOLM_MAX_BUILDS`,
/// `HOLM_RECORD_RETENTION`, `HOLM_IMAGE_CACHE`, `HOLM_TIMELINE_SCREENSHOTS`,
/// `HOLM_TIMELINE_BYTES`, `HOLM_TIMELINES_KEPT`, `HOLM_RECORDINGS_KEPT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most live boxes (not removed or failed), boxes waiting in warm
    /// pools counted: the one box limit. `HOLM_MAX_BOXES` sets it; a
    /// runtimes file's `max_boxes` may lower it, never raise it.
    pub max_boxes: usize,
    /// The most image builds at once.
    pub max_builds: usize,
    /// How long the record of a removed or failed box is kept, in seconds.
    pub record_retention_secs: u64,
    /// The most bytes the box images may take (as their sizes add up,
    /// shared layers counted in each) before unused ones are pruned after a
    /// build; `None` never prunes.
    pub image_cache_bytes: Option<u64>,
    /// The most screenshots one box's timeline keeps (oldest dropped first).
    pub timeline_screenshots: usize,
    /// The most bytes of screenshots one box's timeline keeps (oldest
    /// dropped first).
    pub timeline_bytes: u64,
    /// The most bytes of timeline screenshots the removed (and failed)
    /// boxes keep together (`HOLM_TIMELINES_KEPT`); past it the records of
    /// the boxes that ended longest ago go, timelines included.
    pub timelines_kept_bytes: u64,
    /// The most bytes of removed boxes' recordings the server keeps
    /// (`HOLM_RECORDINGS_KEPT`); past it the oldest boxes' are dropped.
    pub recordings_bytes: u64,
    /// How often each running box's disk use is measured against its
    /// `placement.disk` (10 s; on docker and podman).
    pub disk_check: std::time::Duration,
    /// How long a new box's guest may take to give any answer before its
    /// machine is restarted once ([`holm::launch::FIRST_ANSWER_TIMEOUT`]).
    pub first_answer: std::time::Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_boxes: 64,
            max_builds: 2,
            record_retention_secs: 7 * 86_400,
            image_cache_bytes: Some(100 << 30),
            timeline_screenshots: 300,
            timeline_bytes: 100 << 20,
            timelines_kept_bytes: 2 << 30,
            recordings_bytes: 20 << 30,
            disk_check: std::time::Duration::from_secs(10),
            first_answer: holm::launch::FIRST_ANSWER_TIMEOUT,
        }
    }
}

impl Limits {
    /// The box limit once a runtimes file's `max_boxes` is read: the smaller
    /// of the two, so the file (which also sizes the warm pools) can lower
    /// what the environment allows but never raise it. A file that asks
    /// for more is logged.
    #[must_use]
    pub fn with_file_max_boxes(mut self, file: Option<usize>) -> Self {
        if let Some(n) = file {
            if n > self.max_boxes {
                tracing::warn!(
                    file = n,
                    env = self.max_boxes,
                    "the runtimes file's max_boxes is above HOLM_MAX_BOXES; the server holds at most HOLM_MAX_BOXES"
                );
            }
            self.max_boxes = self.max_boxes.min(n);
        }
        self
    }
}

/// The image builds that may run at once: a semaphore of
/// [`Limits::max_builds`] places (at least one). It holds no lock of its
/// own; a place is held for a whole build, by whoever builds.
#[derive(Debug)]
pub(super) struct Builds {
    /// The places, one per build that may run.
    places: Arc<Semaphore>,
    /// The limit as set, for refusals.
    max: usize,
}

impl Builds {
    /// `max` builds at once (at least one).
    pub(super) fn new(max: usize) -> Self {
        Self { places: Arc::new(Semaphore::new(max.max(1))), max }
    }

    /// A place, or a refusal when every place is taken.
    fn permit(&self) -> Result<OwnedSemaphorePermit, Error> {
        Arc::clone(&self.places).try_acquire_owned().map_err(|_| {
            let max = self.max;
            ApiError::new(
                ErrorCode::LimitReached,
                format!("{max} image builds already run on this server, its most at once"),
            )
            .with_hint("try again when one ends, or raise HOLM_MAX_BUILDS")
            .with_details(serde_json::json!({ "limit": max }))
            .into()
        })
    }

    /// A place, waited for.
    async fn place(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.places).acquire_owned().await.ok()
    }
}

impl Service {
    /// A place among the builds that may run at once, or a refusal when
    /// they all run: for builds a client asked for.
    pub fn build_permit(&self) -> Result<OwnedSemaphorePermit, Error> {
        self.builds.permit()
    }

    /// A place among the builds, waited for: for the image a new box needs.
    pub(super) async fn build_slot(&self) -> Option<OwnedSemaphorePermit> {
        self.builds.place().await
    }

    /// After a build that made an image: prunes unused box images on the
    /// runtime's engine while they take more than the limit.
    pub async fn prune_past_size(&self, runtime: &Arc<dyn Runtime>) {
        let Some(limit) = self.limits.image_cache_bytes else { return };
        let policy = holm::image::Prune { keep_under_bytes: Some(limit), ..Default::default() };
        match runtime.prune_images(&policy).await {
            Ok(pruned) if !pruned.is_empty() => {
                tracing::info!(
                    removed = pruned.len(),
                    limit,
                    "pruned unused box images past the size limit"
                );
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "cannot prune box images"),
        }
    }

    /// Deletes the records (and traces) of boxes removed or failed longer
    /// ago than the retention period. Answers how many went.
    pub async fn prune_records(&self) -> usize {
        let now = self.clock.now_secs();
        let retention = self.limits.record_retention_secs;
        let old: Vec<String> = self
            .boxes
            .records()
            .into_iter()
            .filter(|r| !r.state.is_live())
            .filter(|r| {
                // Records from before `ended_at` count from their end of life.
                let ended = r.ended_at.unwrap_or(r.expires_at.min(now));
                ended.saturating_add(retention) <= now
            })
            .map(|r| r.id)
            .collect();
        let mut n = 0;
        for id in old {
            match self.store.delete_box(&id).await {
                Ok(()) => {
                    self.boxes.remove(&id);
                    n += 1;
                }
                Err(e) => tracing::warn!(box_id = %id, error = %e, "cannot prune a box's record"),
            }
        }
        if n > 0 {
            tracing::info!(pruned = n, retention, "pruned the records of long-removed boxes");
        }
        n
    }

    /// Deletes the records of removed and failed boxes, those that ended
    /// longest ago first, with their timelines (traces and screenshots),
    /// while their timelines' screenshots together pass
    /// [`Limits::timelines_kept_bytes`]. Answers how many went.
    pub async fn prune_timelines(&self) -> usize {
        let max = self.limits.timelines_kept_bytes;
        let mut ended: Vec<(u64, String)> = self
            .boxes
            .records()
            .into_iter()
            .filter(|r| !r.state.is_live())
            .map(|r| (r.ended_at.unwrap_or(r.expires_at), r.id.to_string()))
            .collect();
        ended.sort();
        let mut sizes = Vec::with_capacity(ended.len());
        for (_, id) in &ended {
            let bytes = match self.store.shots(id).await {
                Ok(shots) => shots.iter().map(|(_, b)| b).sum(),
                Err(e) => {
                    tracing::warn!(box_id = %id, error = %e, "cannot list a box's screenshots");
                    0
                }
            };
            sizes.push(bytes);
        }
        let mut total: u64 = sizes.iter().sum();
        let mut n = 0;
        for ((_, id), bytes) in ended.iter().zip(sizes) {
            if total <= max {
                break;
            }
            match self.store.delete_box(id).await {
                Ok(()) => {
                    self.boxes.remove(id.as_str());
                    total -= bytes;
                    n += 1;
                }
                Err(e) => tracing::warn!(box_id = %id, error = %e, "cannot prune a box's record"),
            }
        }
        if n > 0 {
            tracing::info!(pruned = n, max, "pruned the oldest removed boxes' timelines");
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::Limits;

    #[test]
    fn the_runtimes_file_lowers_the_box_limit_and_never_raises_it() {
        let env = Limits { max_boxes: 10, ..Limits::default() };
        assert_eq!(env.with_file_max_boxes(None).max_boxes, 10, "no file: the environment's");
        assert_eq!(env.with_file_max_boxes(Some(4)).max_boxes, 4, "a smaller file wins");
        assert_eq!(env.with_file_max_boxes(Some(40)).max_boxes, 10, "a larger file does not");
        assert_eq!(Limits::default().with_file_max_boxes(None).max_boxes, 64);
    }
}
