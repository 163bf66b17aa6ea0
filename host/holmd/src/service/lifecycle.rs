//! Changing a box: stop, start, pause, resume, extend, remove. Each change is
//! checked against the runtime's `can`, then against the state
//! ([`Admits::admit`]), under the box's operation lock.

use std::sync::Arc;

use holm::spec;
use holm_proto::host::{BoxInfo, BoxState};
use holm_proto::progress::Stage;
use holm_proto::{ApiError, ErrorCode, Issue};

use super::Service;
use super::create::OnTimeout;
use super::errors::Error;
use super::errors::runtime_error;
use super::state::{Admit, Admits, Entry, Move, Request};

/// Seconds since the epoch as a time.
pub(super) fn epoch(secs: u64) -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs)
}

impl Service {
    /// Stops a running box, keeping its files. Stopping a stopped box is
    /// not an error.
    pub async fn stop(&self, id: &str) -> Result<BoxInfo, Error> {
        self.stop_with(id, None).await
    }

    /// Stops a running box as [`Service::stop`] does; with a `reason` (why
    /// the server stopped it, kept in its record) at once, its processes
    /// killed ([`holm::runtime::Runtime::stop_now`]).
    pub(super) async fn stop_with(
        &self,
        id: &str,
        reason: Option<String>,
    ) -> Result<BoxInfo, Error> {
        let entry = self.get(id)?;
        let runtime = self.able(&entry.record(), |c| c.stop, "stop")?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        if Request::Stop.admit(id, r.state)? == Admit::Already {
            return Ok(r.info());
        }
        let Some(machine) = r.machine_id else {
            return Err(Error::NoMachine { id: id.to_owned() });
        };
        if reason.is_some() {
            runtime.stop_now(&machine).await.map_err(runtime_error)?;
        } else {
            runtime.stop(&machine).await.map_err(runtime_error)?;
        }
        let now = self.clock.now_secs();
        entry.transition(Move::STOP, |r| {
            r.reason = reason.clone();
            r.guest = None;
            r.bridge = None;
            r.viewer = None;
            r.last_activity = now;
        });
        self.save(&entry).await;
        tracing::info!(box_id = %id, reason = reason.as_deref().unwrap_or("asked"), "box stopped");
        Ok(entry.info())
    }

    /// Starts a stopped box: a new desktop, on new ports. The box is
    /// `starting` when this returns; [`Service::wait`] waits for it to run.
    pub async fn start(self: &Arc<Self>, id: &str) -> Result<Arc<Entry>, Error> {
        let entry = self.get(id)?;
        let runtime = self.able(&entry.record(), |c| c.stop, "start")?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        if Request::Start.admit(id, r.state)? == Admit::Already {
            return Ok(Arc::clone(&entry));
        }
        let Some(machine) = r.machine_id else {
            return Err(Error::NoMachine { id: id.to_owned() });
        };
        entry.progress.restart();
        entry
            .progress
            .stage(Stage::Container, format!("starting its machine on {}", runtime.name()));
        let m = runtime.start(&machine).await.map_err(runtime_error)?;
        let Some(guest) = m.guest().cloned() else {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                format!("box {id} started, but its runtime answered no endpoint for its guest"),
            )
            .into());
        };
        let now = self.clock.now_secs();
        entry.transition(Move::START, |r| {
            r.guest = Some(guest);
            r.bridge = m.bridge().cloned();
            r.viewer = m.viewer().cloned();
            r.last_activity = now;
        });
        self.save(&entry).await;
        let service = Arc::clone(self);
        let task_entry = Arc::clone(&entry);
        tokio::spawn(async move {
            service.await_desktop(&task_entry, &runtime, OnTimeout::Unreachable).await;
        });
        drop(_op);
        Ok(entry)
    }

    /// Pauses a running box, keeping its memory. Pausing a paused box is not
    /// an error.
    pub async fn pause(&self, id: &str) -> Result<BoxInfo, Error> {
        self.pause_or_resume(id, Request::Pause).await
    }

    /// Resumes a paused box: its processes go on where they were.
    pub async fn resume(&self, id: &str) -> Result<BoxInfo, Error> {
        self.pause_or_resume(id, Request::Resume).await
    }

    async fn pause_or_resume(&self, id: &str, request: Request) -> Result<BoxInfo, Error> {
        let entry = self.get(id)?;
        let (what, step) = if request == Request::Pause {
            ("pause", Move::PAUSE)
        } else {
            ("resume", Move::RESUME)
        };
        let runtime = self.able(&entry.record(), |c| c.pause, what)?;
        let _op = entry.op.lock().await;
        let r = entry.record();
        if request.admit(id, r.state)? == Admit::Already {
            return Ok(r.info());
        }
        let machine = r.machine_id.ok_or_else(|| Error::NoMachine { id: id.to_owned() })?;
        if request == Request::Pause {
            runtime.pause(&machine).await.map_err(runtime_error)?;
        } else {
            runtime.resume(&machine).await.map_err(runtime_error)?;
            // A vendor that ends machines itself resumes with a timeout of
            // its own choosing; the box's deadline is what counts.
            let deadline = entry.record().deadline().0;
            if let Err(e) = runtime.set_deadline(&machine, epoch(deadline)).await {
                tracing::warn!(box_id = %id, error = %e, "the box resumed, but its deadline could not be set at its runtime");
            }
        }
        let now = self.clock.now_secs();
        entry.transition(step, |r| r.last_activity = now);
        self.save(&entry).await;
        tracing::info!(box_id = %id, "box {what}d");
        Ok(entry.info())
    }

    /// Moves the end of a box's lifetime later, never past its runtime's
    /// maximum lifetime counted from the box's creation. A runtime that ends
    /// machines itself (a cloud vendor) is told the new deadline first.
    pub async fn extend(&self, id: &str, by_secs: u64) -> Result<BoxInfo, Error> {
        let entry = self.get(id)?;
        let r = entry.record();
        Request::Extend.admit(id, r.state)?;
        if by_secs < spec::MIN_LIFETIME_SECS {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "by_secs".into(),
                problem: format!(
                    "must be at least {} seconds, not {by_secs}",
                    spec::MIN_LIFETIME_SECS
                ),
            }])
            .into());
        }
        let offered = self.runtime(&r.runtime)?;
        let max = offered.lifetimes.max_secs;
        let lifetime = r.expires_at.saturating_sub(r.created_at);
        let wanted = lifetime.checked_add(by_secs);
        if wanted.is_none_or(|w| w > max) {
            let makes = wanted.map_or_else(String::new, |w| format!(" of {w} seconds"));
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "by_secs".into(),
                problem: format!(
                    "{by_secs} more seconds makes a lifetime{makes} above this runtime's \
                     maximum lifetime of {max} seconds; at most {} more",
                    max.saturating_sub(lifetime)
                ),
            }])
            .into());
        }
        let now = self.clock.now_secs();
        let mut next = r.clone();
        next.expires_at = next.expires_at.saturating_add(by_secs);
        next.last_activity = now;
        if let Some(machine) = &r.machine_id {
            offered
                .runtime
                .set_deadline(machine, epoch(next.deadline().0))
                .await
                .map_err(runtime_error)?;
            self.deadline_sent(id, next.deadline().0);
        }
        entry.update(|r| {
            r.expires_at = r.expires_at.saturating_add(by_secs);
            r.last_activity = now;
        });
        self.save(&entry).await;
        Ok(entry.info())
    }

    /// Removes a box: its machine goes, its record stays as `removed` with
    /// `reason`. Removing a removed box answers it again.
    pub async fn remove(&self, id: &str, reason: &str) -> Result<BoxInfo, Error> {
        let entry = self.get(id)?;
        self.remove_entry(&entry, reason).await
    }

    /// Removes a box, a pooled one too.
    pub(super) async fn remove_entry(&self, entry: &Entry, reason: &str) -> Result<BoxInfo, Error> {
        let id = entry.id();
        let _op = entry.op.lock().await;
        let record = entry.record();
        if record.state == BoxState::Removed {
            return Ok(record.info());
        }
        if record.state == BoxState::Running && record.pool.is_none() {
            self.recordings.keep_box(entry).await;
        }
        if let Some(machine) = &record.machine_id {
            let offered = self.runtime(&record.runtime)?;
            offered.runtime.remove(machine).await.map_err(runtime_error)?;
        }
        let now = self.clock.now_secs();
        entry.update(|r| {
            r.state = BoxState::Removed;
            r.reason = Some(reason.to_owned());
            r.guest = None;
            r.ended_at = Some(now);
        });
        self.save(entry).await;
        tracing::info!(box_id = %id, reason, "box removed");
        Ok(entry.info())
    }
}
