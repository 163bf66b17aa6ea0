//! Making boxes: create and fork record the box, then a task brings it up
//! (image, machine, desktop) and moves it to running or failed.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use holm::launch::{self, Extra, Launched};
use holm::runtime::{LABEL_EXPIRES, LABEL_FORKED_FROM, LABEL_IDLE, LABEL_SERVER, Runtime};
use holm::spec;
use holm_client::BoxClient;
use holm_proto::host::{BoxSpec, BoxState, CreateBox, ForkBox, Placement};
use holm_proto::progress::{BoxEvent, Stage};
use holm_proto::{ApiError, ErrorCode};

use super::Service;
use super::errors::Error;
use super::errors::store_error;
use super::idempotency::fingerprint;
use super::runtimes::Planned;
use super::state::{Admits, Entry, Move, Request};
use crate::store::{BoxRecord, rfc3339};

/// How long a new desktop may take to answer. Generous: under gVisor on
/// the ptrace platform a desktop's programs start many times slower than
/// under runc, and slower still beside other boxes starting.
const READY_TIMEOUT: Duration = Duration::from_secs(600);

/// How often a start asks the runtime whether the box's guest ended.
const GUEST_WATCH: Duration = Duration::from_secs(1);

/// Answers why, once the runtime says the guest of `machine` ended; never,
/// where the runtime cannot tell ([`Runtime::guest_ended`]).
async fn guest_ended(runtime: &dyn Runtime, machine: &str) -> String {
    loop {
        if let Some(why) = runtime.guest_ended(machine).await {
            return format!("the box's guest ended before its desktop was ready: {why}");
        }
        tokio::time::sleep(GUEST_WATCH).await;
    }
}

/// What happens when a desktop does not answer in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnTimeout {
    /// A new box: remove its machine, and the box has failed.
    Fail,
    /// A box that ran before: keep it, marked unreachable.
    Unreachable,
}

/// Refuses a box on a runtime that cannot run one now (its engine is down;
/// a hypervisor that cannot boot a guest), before anything is recorded or
/// made, with the runtime's own reason.
pub(super) async fn answers(plan: &Planned) -> Result<(), Error> {
    plan.offered.runtime.ping().await.map_err(|e| {
        super::errors::runtime_error(e).with_hint(format!(
            "`holm runtime get {}` (GET /v1/runtimes/{}) says what it can do; pick another runtime",
            plan.runtime, plan.runtime
        ))
    })?;
    Ok(())
}

impl Service {
    /// Checks a request and starts making the box. The box is recorded (and
    /// the record written) before this returns, in `creating`;
    /// [`Service::wait`] waits for it to run. With an idempotency key, a
    /// repeated request answers the first box again (`true`: replayed).
    pub async fn create(
        self: &Arc<Self>,
        request: CreateBox,
        idempotency_key: Option<&str>,
    ) -> Result<(Arc<Entry>, bool), Error> {
        let fingerprint = fingerprint("POST /v1/boxes", &request);
        let plan = self.plan(request.spec, request.placement)?;
        // A claim asks no engine: its guest answering the new secret shows
        // the box runs (a claim that fails asks before it goes cold).
        let taken = self.take_pooled(&plan);
        if taken.is_none() {
            answers(&plan).await?;
        }
        self.create_from_pool(taken, plan, idempotency_key, fingerprint).await
    }

    /// Makes a new box with a copy of this box's files, on the same runtime.
    /// The copy is `creating` when this returns.
    pub async fn fork(
        self: &Arc<Self>,
        id: &str,
        request: ForkBox,
        idempotency_key: Option<&str>,
    ) -> Result<(Arc<Entry>, bool), Error> {
        let source = self.get(id)?;
        let src = source.record();
        self.able(&src, |c| c.fork, "fork")?;
        Request::Fork.admit(id, src.state)?;
        // A browser profile belongs to one box at a time: the copy starts
        // with the copied files and no kept profile.
        let spec = BoxSpec { name: request.name.clone(), profile: None, ..src.spec.clone() };
        let placement = Placement {
            runtime: Some(src.runtime.clone()),
            memory: src.placement.memory.clone(),
            cpus: src.placement.cpus,
            disk: src.placement.disk.clone(),
            expires_after_secs: request.expires_after_secs,
            idle_timeout_secs: request.idle_timeout_secs.or(src.idle_timeout_secs),
            pids_limit: src.placement.pids_limit,
        };
        let mut plan = self.plan(spec, placement)?;
        answers(&plan).await?;
        plan.forked_from = Some(id.to_owned());
        let fingerprint = fingerprint(&format!("POST /v1/boxes/{id}/fork"), &request);
        self.idempotent(idempotency_key, fingerprint, None, |new_id| self.insert_new(new_id, plan))
            .await
    }

    /// Records box `id` (written before it is answered) and starts bringing
    /// it up. At the server's box limit, a waiting pooled box makes room.
    pub(super) async fn insert_new(
        self: &Arc<Self>,
        id: String,
        plan: Planned,
    ) -> Result<Arc<Entry>, Error> {
        if self.boxes.room() == 0 && !self.evict_pooled().await {
            return Err(self.boxes.at_limit().into());
        }
        let created = self.clock.now_secs();
        let record = BoxRecord {
            secret: self.new_box_secret(&id),
            id,
            runtime: plan.runtime,
            machine_id: None,
            guest: None,
            spec: plan.spec,
            placement: plan.placement,
            state: BoxState::Creating,
            reason: None,
            image: None,
            screens: Vec::new(),
            created_at: created,
            expires_at: created.saturating_add(plan.resolved.lifetime_secs),
            idle_timeout_secs: plan.resolved.idle_timeout_secs,
            last_activity: created,
            forked_from: plan.forked_from,
            bridge: None,
            bridge_secret: Some(holm::ids::new_secret()),
            viewer: None,
            viewer_key: None,
            viewer_grants: Vec::new(),
            control_seen: None,
            pool: None,
            guest_proto: None,
            ended_at: None,
            rev: 0,
        };
        self.launch_recorded(record, plan.offered.runtime, plan.resolved).await
    }

    /// Records a box (written before it is answered) and starts bringing it
    /// up.
    pub(super) async fn launch_recorded(
        self: &Arc<Self>,
        record: BoxRecord,
        runtime: Arc<dyn Runtime>,
        resolved: spec::Resolved,
    ) -> Result<Arc<Entry>, Error> {
        let entry = Entry::new(record.clone());
        // Checked and taken under one lock, so two requests cannot both
        // get a profile.
        self.boxes.admit(Arc::clone(&entry), |boxes| {
            if let Some(profile) = &record.spec.profile
                && let Some(holder) = boxes.iter().find(|r| {
                    r.state.is_live()
                        && r.runtime == record.runtime
                        && r.spec.profile.as_ref() == Some(profile)
                })
            {
                return Err(ApiError::new(
                    ErrorCode::Conflict,
                    format!("the browser profile {profile:?} is in use by box {}", holder.id),
                )
                .with_hint("one box at a time may keep a profile; remove that box first, or use another profile")
                .with_details(serde_json::json!({ "profile": profile, "box_id": holder.id })).into());
            }
            Ok(())
        })?;
        // Written before it is answered: an answered box is never lost.
        if let Err(e) = self.store.put_box(&record).await {
            self.boxes.remove(&record.id);
            return Err(store_error(&e).into());
        }
        let service = Arc::clone(self);
        let task_entry = Arc::clone(&entry);
        tokio::spawn(async move { service.bring_up(task_entry, runtime, resolved).await });
        Ok(entry)
    }

    /// The labels a box's machine carries: never a secret.
    fn labels(&self, r: &BoxRecord) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::from([
            (LABEL_SERVER.to_owned(), self.server_name.clone()),
            (LABEL_EXPIRES.to_owned(), rfc3339(r.expires_at)),
        ]);
        if let Some(idle) = r.idle_timeout_secs {
            labels.insert(LABEL_IDLE.to_owned(), idle.to_string());
        }
        if let Some(from) = &r.forked_from {
            labels.insert(LABEL_FORKED_FROM.to_owned(), from.clone());
        }
        labels
    }

    /// Marks a box that could not be made as failed, with why.
    pub(super) async fn fail(&self, entry: &Arc<Entry>, reason: String) {
        let now = self.clock.now_secs();
        let failed = entry.transition(Move::FAILED, |r| {
            r.reason = Some(reason.clone());
            r.ended_at = Some(now);
        });
        if failed {
            tracing::warn!(box_id = %entry.id(), reason, "box failed");
            self.save(entry).await;
        }
    }

    /// Makes the box's machine (from its image, or a copy of the box it was
    /// forked from) and waits for its desktop.
    pub(super) async fn bring_up(
        self: Arc<Self>,
        entry: Arc<Entry>,
        runtime: Arc<dyn Runtime>,
        resolved: spec::Resolved,
    ) {
        let record = entry.record();
        let mut extra = Extra {
            labels: self.labels(&record),
            image: None,
            created: Some(UNIX_EPOCH + Duration::from_secs(record.created_at)),
            deadline: Some(UNIX_EPOCH + Duration::from_secs(record.deadline().0)),
            expires_at: Some(UNIX_EPOCH + Duration::from_secs(record.expires_at)),
        };
        entry.progress.restart();
        if let Some(from) = &record.forked_from {
            entry.progress.stage(Stage::Image, format!("copying the files of box {from}"));
            let Ok(source) = self.get(from) else {
                return self
                    .fail(&entry, format!("the box {from} it was forked from is gone"))
                    .await;
            };
            // The source's own changes wait while its files are copied.
            let _op = source.op.lock().await;
            let Some(machine) =
                source.record().machine_id.filter(|_| source.record().state.is_live())
            else {
                return self
                    .fail(&entry, format!("the box {from} it was forked from is gone"))
                    .await;
            };
            match runtime.fork(&machine, &record.id).await {
                Ok(image) => extra.image = Some(image),
                Err(e) => return self.fail(&entry, format!("cannot copy box {from}: {e}")).await,
            }
        } else {
            entry.progress.stage(Stage::Image, "preparing the box image");
            let id = record.id.clone();
            let log = &entry.progress;
            let mut built = false;
            let mut progress = |p: holm::image::Progress| {
                built |= matches!(p, holm::image::Progress::Built { .. });
                tracing::info!(box_id = %id, "image: {p:?}");
                log.push(BoxEvent::build(p.into_line()));
            };
            let request = holm::image::ImageRequest {
                apps: resolved.apps.clone(),
                packages: resolved.packages.clone(),
                display: resolved.display,
            };
            // Among the builds that may run at once (a made image is one
            // look at the engine).
            let slot = self.build_slot().await;
            match runtime.prepare_image_for(&request, &resolved, &mut progress).await {
                Ok(image) => extra.image = Some(image),
                Err(e) => return self.fail(&entry, e.to_string()).await,
            }
            drop(slot);
            if built {
                self.prune_past_size(&runtime).await;
            }
        }
        entry.progress.stage(Stage::Container, format!("making its machine on {}", runtime.name()));
        let spec_label = serde_json::to_string(&record.spec).unwrap_or_default();
        let mut progress = |_: holm::image::Progress| {};
        let launched = launch::launch_with(
            &*runtime,
            &record.id,
            &resolved,
            &spec_label,
            &record.secret,
            &extra,
            &mut progress,
        )
        .await;
        let launched: Launched = match launched {
            Ok(l) => l,
            Err(e) => {
                if let Some(image) = &extra.image {
                    tracing::debug!(image, "the fork's image stays until its box is removed");
                }
                return self.fail(&entry, e.to_string()).await;
            }
        };
        let started = entry.transition(Move::LAUNCHED, |r| {
            r.machine_id = Some(launched.machine.id.clone());
            r.guest = Some(launched.guest.clone());
            r.bridge.clone_from(&launched.bridge);
            r.viewer.clone_from(&launched.viewer);
            r.image = Some(launched.image.clone());
        });
        if !started {
            // Removed while it was being made: take the machine down too.
            let _ = runtime.remove(&launched.machine.id).await;
            return;
        }
        self.save(&entry).await;
        self.restart_if_silent(&entry, &runtime).await;
        self.await_desktop(&entry, &runtime, OnTimeout::Fail).await;
    }

    /// Restarts a new box's machine once when its guest gives no answer at
    /// all in [`Limits::first_answer`](super::Limits) (by default
    /// [`launch::FIRST_ANSWER_TIMEOUT`]): the machine hung in its own
    /// start (a gVisor sandbox did, once in CI), and a fresh start answers
    /// in seconds where waiting out the readiness deadline never would.
    /// The box stays `starting`, on the machine's new ports.
    async fn restart_if_silent(&self, entry: &Arc<Entry>, runtime: &Arc<dyn Runtime>) {
        let r = entry.record();
        let (Some(endpoint), Some(machine)) = (r.guest.as_ref(), r.machine_id.clone()) else {
            return;
        };
        if !runtime.can().stop {
            return;
        }
        let guest = BoxClient::at(endpoint, &r.secret);
        let within = self.limits.first_answer;
        let Err(why) = launch::wait_answer(&guest, within).await else {
            return;
        };
        if entry.record().state != BoxState::Starting {
            return;
        }
        tracing::warn!(
            box_id = %r.id,
            error = %why,
            "the guest gave no answer in {} s: restarting its machine once",
            within.as_secs()
        );
        entry.progress.stage(Stage::Container, "restarting its machine: its guest did not answer");
        let _ = runtime.stop(&machine).await;
        match runtime.start(&machine).await {
            Ok(m) => {
                entry.update(|r| {
                    if let Some(guest) = m.guest() {
                        r.guest = Some(guest.clone());
                    }
                    r.bridge = m.bridge().cloned();
                    r.viewer = m.viewer().cloned();
                });
                self.save(entry).await;
            }
            Err(e) => tracing::warn!(box_id = %r.id, error = %e, "the restart failed"),
        }
    }

    /// Waits for the desktop of a box in `starting`, then marks it running.
    pub(super) async fn await_desktop(
        &self,
        entry: &Arc<Entry>,
        runtime: &Arc<dyn Runtime>,
        on: OnTimeout,
    ) {
        let r = entry.record();
        let (Some(endpoint), Some(machine)) = (r.guest.as_ref(), r.machine_id.clone()) else {
            return;
        };
        let guest = BoxClient::at(endpoint, &r.secret);
        entry.progress.stage(Stage::Desktop, "starting the desktop");
        let mut browser_said = false;
        let mut seen = |h: &holm_proto::guest::Health| {
            let waiting: Vec<&str> = h
                .components
                .iter()
                .filter(|c| !c.state.settled())
                .map(|c| c.name.as_str())
                .collect();
            // The browser's stage once the rest of the desktop is ready,
            // even when the browser was quicker than the rest and the same
            // answer shows it ready too (else that start skips the stage).
            let browser = h.components.iter().any(|c| {
                c.name == "chromium" && c.state != holm_proto::guest::ComponentState::Disabled
            });
            if !browser_said && browser && waiting.iter().all(|n| *n == "chromium") {
                browser_said = true;
                entry.progress.stage(Stage::Browser, "starting the browser");
            }
        };
        let ready = r.spec.ready.unwrap_or_default();
        let waited = tokio::select! {
            r = launch::wait_ready_with(&guest, READY_TIMEOUT, ready, &mut seen) => {
                r.map_err(|e| e.to_string())
            }
            why = guest_ended(runtime.as_ref(), &machine) => Err(why),
        };
        match waited {
            Ok(health) => {
                if let Err(why) = holm_proto::guest::proto_supported(health.proto) {
                    let _ = runtime.remove(&machine).await;
                    self.fail(entry, why).await;
                    return;
                }
                // A new desktop (a new box, a started or a taken-back one)
                // has a bridge with no secret until it is given one.
                self.arm_bridge(entry, &guest, false).await;
                // A new desktop: a new viewer key, so earlier URLs stop working.
                self.arm_viewers(entry, &guest, true).await;
                let screens = guest.screens().await.unwrap_or_default();
                // A warm pool's box waits in its pool until a create claims it.
                let step = if r.pool.is_some() { Move::POOLED } else { Move::READY };
                if entry.transition(step, |r| {
                    r.reason = None;
                    r.screens = screens;
                    r.guest_proto = Some(health.proto);
                }) {
                    if r.pool.is_some() {
                        self.pools.keep_client(&r.id, guest);
                    }
                    self.save(entry).await;
                    tracing::info!(box_id = %r.id, state = ?step.to, "box is ready");
                }
            }
            Err(e) => match on {
                OnTimeout::Fail => {
                    if entry.record().state == BoxState::Starting {
                        let _ = runtime.remove(&machine).await;
                    }
                    self.fail(entry, e).await;
                }
                OnTimeout::Unreachable => {
                    if entry.transition(Move::LOST, |r| r.reason = Some(e)) {
                        self.save(entry).await;
                    }
                }
            },
        }
    }
}
