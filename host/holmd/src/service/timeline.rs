//! The timeline of a box, read from its traces: each action a step, the
//! screenshot after it folded in; and the images, written with the traces
//! and kept within the server's bounds per box.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::SystemTime;

use holm_proto::guest::Page;
use holm_proto::host::{BoxState, Trace};
use holm_proto::timeline::{ExportFormat, Step, StepAction, StepScreenshot};
use holm_proto::{ApiError, ErrorCode};

use super::errors::{Error, store_error};
use super::traces::check_page;
use super::{Limits, Service};
use crate::store::Store;
use crate::timeline::Shots;
use crate::timeline::export;
use crate::timeline::recording::{self, Recorded};
use crate::traces::Tracer;

/// Traces read from the store at a time while steps are gathered.
const BATCH: usize = 1000;

/// The timeline's queues: the traces and screenshots of requests, taken on
/// the request's path and written to the store each second, and the
/// screenshots each box keeps within the server's bounds.
///
/// Locks, in the order they nest: `flushing` (a tokio mutex, held for a
/// whole [`Timeline::write`], awaits inside), then the screenshots' `kept`
/// lists (held while one image's box is bounded). The trace queue's and the
/// image queue's own locks are held for a push or a take only.
#[derive(Debug)]
pub(super) struct Timeline {
    /// Traces waiting for the store, and the last trace id given.
    tracer: Tracer,
    /// The images waiting for the store, and what each box keeps.
    shots: Arc<Shots>,
    /// Held for a whole write: writes run one at a time, so a read's flush
    /// waits for one in flight (whose traces and images it took from the
    /// queues) before the read lists the store.
    flushing: tokio::sync::Mutex<()>,
    /// Where traces and images are written.
    store: Arc<dyn Store>,
    /// The most screenshots one box keeps.
    max_count: usize,
    /// The most bytes of screenshots one box keeps.
    max_bytes: u64,
}

impl Timeline {
    /// Empty queues writing to `store`, each box keeping its screenshots
    /// within `limits`.
    pub(super) fn new(store: Arc<dyn Store>, limits: &Limits) -> Self {
        Self {
            tracer: Tracer::default(),
            shots: Arc::default(),
            flushing: tokio::sync::Mutex::new(()),
            store,
            max_count: limits.timeline_screenshots,
            max_bytes: limits.timeline_bytes,
        }
    }

    /// A new trace id.
    pub(super) fn next_id(&self, now: SystemTime) -> String {
        self.tracer.next_id(now)
    }

    /// Queues a trace, linked to the action before it when it is a
    /// screenshot ([`Shots::link`]).
    pub(super) fn push(&self, mut trace: Trace) {
        self.shots.link(&mut trace);
        self.tracer.push(trace);
    }

    /// The images waiting for the store.
    pub(super) fn shots(&self) -> &Arc<Shots> {
        &self.shots
    }

    /// Writes the queued traces and images, one write at a time: a write
    /// that finds the queues empty waits while another still writes what
    /// it took from them. Traces the store refuses go back to the queue.
    pub(super) async fn write(&self) {
        let _one = self.flushing.lock().await;
        let traces = self.tracer.take();
        if !traces.is_empty()
            && let Err(e) = self.store.append_traces(&traces).await
        {
            tracing::warn!(error = %e, n = traces.len(), "cannot write traces; will retry");
            self.tracer.put_back(traces);
        }
        self.write_shots().await;
    }

    /// Writes the queued images, then drops each box's oldest beyond its
    /// bounds. An image the store refuses is dropped with a warning (its
    /// step says it was not kept).
    async fn write_shots(&self) {
        for p in self.shots.take() {
            if let Err(e) = self.store.put_shot(&p.box_id, &p.id, &p.image).await {
                tracing::warn!(box_id = %p.box_id, error = %e, "cannot keep a screenshot");
                continue;
            }
            self.bound_shots(&p.box_id, &p.id, p.image.len() as u64).await;
        }
    }

    async fn bound_shots(&self, box_id: &str, id: &str, bytes: u64) {
        let mut kept = self.shots.kept.lock().await;
        let list = match kept.get_mut(box_id) {
            Some(list) => {
                list.push_back((id.to_owned(), bytes));
                list
            }
            None => {
                let stored = match self.store.shots(box_id).await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::warn!(box_id, error = %e, "cannot list a box's screenshots");
                        return;
                    }
                };
                kept.entry(box_id.to_owned()).or_insert_with(|| VecDeque::from(stored))
            }
        };
        let (max_count, max_bytes) = (self.max_count, self.max_bytes);
        let mut total: u64 = list.iter().map(|(_, b)| b).sum();
        while list.len() > max_count || total > max_bytes {
            let Some((old, size)) = list.pop_front() else { break };
            total -= size;
            if let Err(e) = self.store.delete_shot(box_id, &old).await {
                tracing::warn!(box_id, error = %e, "cannot drop an old screenshot");
            }
        }
    }
}

impl Service {
    /// One page of a box's timeline, oldest first.
    pub async fn timeline(
        &self,
        id: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Step>, Error> {
        self.get(id)?;
        check_page(cursor, limit)?;
        self.flush().await;
        let kept: std::collections::HashSet<String> = self
            .store
            .shots(id)
            .await
            .map_err(|e| store_error(&e))?
            .into_iter()
            .map(|s| s.0)
            .collect();
        let mut steps: Vec<Step> = Vec::new();
        // `read` pages through the store; `last` is where this page ends.
        let mut read = cursor.map(str::to_owned);
        let mut last = read.clone();
        let mut more = false;
        'read: loop {
            let batch =
                self.store.traces(id, read.as_deref(), BATCH).await.map_err(|e| store_error(&e))?;
            let done = batch.len() < BATCH;
            read = batch.last().map(|t| t.id.clone()).or(read);
            for t in batch {
                let Some(action) = t.action.clone() else {
                    // A read: not a step, but the page moves past it.
                    if steps.len() < limit as usize {
                        last = Some(t.id.clone());
                    }
                    continue;
                };
                if fold(&mut steps, &t, &kept) {
                    last = Some(t.id.clone());
                    continue;
                }
                if steps.len() == limit as usize {
                    more = true;
                    break 'read;
                }
                last = Some(t.id.clone());
                steps.push(step(t, action, &kept));
            }
            if done {
                break;
            }
        }
        recording::apply(&mut steps, &self.recordings(id).await);
        Ok(Page { data: steps, next_cursor: if more { last } else { None } })
    }

    /// Every step of a box's timeline, oldest first.
    pub async fn whole_timeline(&self, id: &str) -> Result<Vec<Step>, Error> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.timeline(id, cursor.as_deref(), 1000).await?;
            all.extend(page.data);
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => return Ok(all),
            }
        }
    }

    /// One image of a box's timeline, while it is kept.
    pub async fn timeline_shot(&self, id: &str, shot: &str) -> Result<Vec<u8>, Error> {
        self.get(id)?;
        if shot.is_empty() || shot.len() > 20 || !shot.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ApiError::invalid(format!("{shot:?} is not a screenshot id"))
                .with_hint("screenshot ids are the digits a step's screenshot.id gives")
                .into());
        }
        self.flush().await;
        self.store.shot(id, shot).await.map_err(|e| store_error(&e))?.ok_or_else(|| {
            ApiError::new(ErrorCode::NotFound, format!("box {id} keeps no screenshot {shot}"))
                .with_hint("the oldest screenshots are dropped past the server's bounds")
                .into()
        })
    }
}

/// Folds a screenshot taken after the last step into it; answers whether
/// it did.
fn fold(steps: &mut [Step], t: &Trace, kept: &std::collections::HashSet<String>) -> bool {
    let Some(prev) = steps.last_mut() else { return false };
    if t.after.as_deref() != Some(prev.id.as_str()) || prev.screenshot.is_some() {
        return false;
    }
    prev.screenshot = screenshot_of(t, kept);
    prev.screenshot.is_some()
}

fn screenshot_of(t: &Trace, kept: &std::collections::HashSet<String>) -> Option<StepScreenshot> {
    let shot = t.screenshot.as_ref()?;
    Some(StepScreenshot {
        id: shot.id.clone(),
        at: t.at.clone(),
        request_id: t.request_id.clone(),
        media_type: shot.media_type.clone(),
        bytes: shot.bytes,
        file: shot.file_name(),
        kept: kept.contains(&shot.id),
    })
}

fn step(t: Trace, action: StepAction, kept: &std::collections::HashSet<String>) -> Step {
    let screenshot = screenshot_of(&t, kept);
    Step {
        action,
        id: t.id,
        at: t.at,
        method: t.method,
        path: t.path,
        status: t.status,
        code: t.code,
        duration_ms: t.duration_ms,
        request_id: t.request_id,
        screenshot,
        recording: None,
    }
}

/// An export of a timeline: its media type and body.
#[derive(Debug)]
pub struct Export {
    /// `text/html; charset=utf-8` or `application/x-ndjson`.
    pub media_type: &'static str,
    /// The page or the lines.
    pub body: String,
}

/// Where each recording ran, for the steps' places in them.
fn recorded(listed: Vec<holm_proto::recording::Recording>) -> Vec<Recorded> {
    listed
        .into_iter()
        .map(|r| Recorded { screen: r.screen, started_at: r.started_at, ended_at: r.ended_at })
        .collect()
}

/// How long an export waits for a running box's list of recordings.
const RECORDINGS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Service {
    /// The box's recordings, for each step's place in them: the guest's
    /// listing while the box runs, what the server kept once it is removed,
    /// none otherwise (a stopped box's guest is not there to ask). The
    /// export never fails for want of them.
    async fn recordings(&self, id: &str) -> Vec<Recorded> {
        let Ok(entry) = self.get(id) else {
            return recorded(self.kept_recordings(id).unwrap_or_default());
        };
        let record = entry.record();
        let listed = match (&record.state, record.guest.as_ref()) {
            (BoxState::Running, Some(guest)) => {
                let client = holm_client::BoxClient::at(guest, &record.secret);
                let ask = tokio::time::timeout(RECORDINGS_WAIT, client.recordings()).await;
                match ask {
                    Ok(Ok(listed)) => listed,
                    Ok(Err(e)) => {
                        tracing::debug!(box_id = id, error = %e, "no recordings for the timeline");
                        Vec::new()
                    }
                    Err(_) => Vec::new(),
                }
            }
            (BoxState::Removed, _) => self.kept_recordings(id).unwrap_or_default(),
            _ => Vec::new(),
        };
        recorded(listed)
    }

    /// A box's whole timeline written out as `format`.
    pub async fn export_timeline(&self, id: &str, format: ExportFormat) -> Result<Export, Error> {
        let mut steps = self.whole_timeline(id).await?;
        recording::apply(&mut steps, &self.recordings(id).await);
        Ok(match format {
            ExportFormat::Jsonl => {
                Export { media_type: "application/x-ndjson", body: export::jsonl(&steps) }
            }
            ExportFormat::Html => {
                let mut images = std::collections::HashMap::new();
                for shot in steps.iter().filter_map(|s| s.screenshot.as_ref()).filter(|s| s.kept) {
                    if let Some(bytes) =
                        self.store.shot(id, &shot.id).await.map_err(|e| store_error(&e))?
                    {
                        images.insert(shot.id.clone(), bytes);
                    }
                }
                Export {
                    media_type: "text/html; charset=utf-8",
                    body: export::html(id, &steps, &images),
                }
            }
        })
    }
}
