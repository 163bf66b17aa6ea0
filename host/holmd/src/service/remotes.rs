//! The registry of remote runtimes: vendor accounts added through the API
//! (their keys sealed before they are stored) or from
//! `HOLM_SERVER_SANDBOXES`. Changes are serialized by one lock.

use std::collections::BTreeMap;
use std::sync::Arc;

use holm::runtime::Runtime;
use holm::runtime::remote::{Account, RemoteRuntime};
use holm::spec::Lifetimes;
use holm_proto::host::{
    AddRuntime, ChangeRuntime, Place, ReplaceRuntime, RuntimeInfo, RuntimeState,
};
use holm_proto::{ApiError, ErrorCode, Issue};

use super::Service;
use super::errors::Error;
use super::errors::store_error;
use super::runtimes::{Offered, Runtimes, lifetimes_with};
use crate::registry::{self, EnvSandbox, SecretKey};
use crate::store::{RuntimeRecord, StoreError};

/// A remote runtime the server holds.
#[derive(Debug, Clone)]
pub(super) struct Remote {
    record: RuntimeRecord,
    /// From `HOLM_SERVER_SANDBOXES`: not stored, not changed through the API.
    from_env: bool,
    /// Why it takes no boxes, when it takes none: its key cannot be used,
    /// or this build has no adapter for its vendor.
    problem: Option<String>,
    lifetimes: Lifetimes,
    /// The runtime, when its key opened and this build has the vendor. One
    /// object for the runtime's life: a new key is set in it, so running
    /// boxes go on with the new key.
    adapter: Option<Arc<dyn RemoteRuntime>>,
}

impl Remote {
    /// The runtime as the server offers it, when it takes boxes.
    pub(super) fn offered(&self) -> Option<Offered> {
        let adapter = self.adapter.clone()?;
        let runtime: Arc<dyn Runtime> = adapter;
        Some(Offered {
            runtime,
            lifetimes: self.lifetimes,
            memory_bytes: None,
            nano_cpus: None,
            // A vendor keeps no warm pool: the runtimes file refuses one.
            pools: Vec::new(),
        })
    }
}

/// What the service needs for remote runtimes besides the store.
#[derive(Debug, Default, Clone)]
pub struct RemoteSetup {
    /// The key that seals vendor keys; without it no key is stored.
    pub secret_key: Option<SecretKey>,
    /// Runtimes from `HOLM_SERVER_SANDBOXES`.
    pub env: Vec<EnvSandbox>,
    /// Lifetimes the runtimes file sets, by runtime name.
    pub file_lifetimes: BTreeMap<String, (Option<u64>, Option<u64>)>,
    /// Endpoints the runtimes file sets (`api_url`, `sandbox_url`), by
    /// runtime name; they win over the stored fields.
    pub file_fields: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

/// What a write of a remote runtime does to its key.
enum KeyChange {
    /// Keep the stored key.
    Keep,
    /// Store this key (sealed) as the next version.
    New(String),
}

impl KeyChange {
    /// The change a request's `api_key` asks for: none, or a new key.
    fn of(key: Option<&str>) -> Result<Self, Error> {
        match key {
            Some(k) if !k.trim().is_empty() => Ok(Self::New(k.trim().to_owned())),
            Some(_) => Err(ApiError::invalid_fields(vec![Issue {
                path: "api_key".into(),
                problem: "is empty".into(),
            }])
            .into()),
            None => Ok(Self::Keep),
        }
    }
}

impl Service {
    /// Reads the stored remote runtimes and adds those from
    /// `HOLM_SERVER_SANDBOXES`. A stored key that cannot be decrypted leaves
    /// its runtime unavailable, with the reason.
    pub async fn load_remotes(&self) -> Result<usize, StoreError> {
        let stored = self.store.runtimes().await?;
        let mut remotes = BTreeMap::new();
        for record in stored {
            if self.runtimes.is_host(&record.name) {
                tracing::warn!(runtime = %record.name, "a stored remote runtime has a host runtime's name; the host runtime wins");
                continue;
            }
            let remote = self.runtimes.remote_from(record, false);
            if let Some(problem) = &remote.problem {
                tracing::warn!(runtime = %remote.record.name, reason = %problem, "a remote runtime is unavailable");
            }
            remotes.insert(remote.record.name.clone(), remote);
        }
        for env in &self.runtimes.setup().env {
            let record = RuntimeRecord {
                name: env.provider.clone(),
                provider: env.provider.clone(),
                fields: env.fields.clone().into_iter().collect(),
                sealed: BTreeMap::new(),
                created_at: self.clock.now_secs(),
                updated_at: self.clock.now_secs(),
                key_version: 1,
            };
            if remotes.contains_key(&record.name) {
                tracing::warn!(runtime = %record.name, "HOLM_SERVER_SANDBOXES names a runtime the store has too; the environment's wins");
            }
            remotes.insert(record.name.clone(), self.runtimes.remote_from(record, true));
        }
        let n = remotes.len();
        *self.runtimes.remotes_mut() = remotes;
        Ok(n)
    }
}

/// What a remote runtime is made of and how it is shown: read from the
/// runtimes' setup and the remote runtimes held, never the store.
impl Runtimes {
    /// The key of a runtime: from the vendor's variable (from the
    /// environment), or opened from the store; or why it cannot be used.
    fn plain_key(&self, record: &RuntimeRecord, from_env: bool) -> Result<String, String> {
        if from_env {
            return self
                .setup()
                .env
                .iter()
                .find(|e| e.provider == record.name)
                .map(|e| e.key.clone())
                .ok_or_else(|| format!("its {} is not in the environment", registry::API_KEY));
        }
        let Some(sealed) = record.sealed.get(registry::API_KEY) else {
            return Err(format!(
                "it has no {}; set one with `holm runtime set {} --api-key`",
                registry::API_KEY,
                record.name
            ));
        };
        match &self.setup().secret_key {
            None => Err(format!(
                "the server has no key to decrypt its stored {} with: set HOLM_SERVER_SECRET_KEY or HOLM_SERVER_SECRET_FILE as when it was stored",
                registry::API_KEY
            )),
            Some(key) => key.open(&record.name, registry::API_KEY, record.key_version, sealed),
        }
    }

    fn remote_from(&self, record: RuntimeRecord, from_env: bool) -> Remote {
        let base = match self.setup().file_lifetimes.get(&record.name) {
            Some((l, m)) => lifetimes_with(Lifetimes::default(), *l, *m),
            None => Lifetimes::default(),
        };
        let secs = |k: &str| record.fields.get(k).and_then(serde_json::Value::as_u64);
        let mut lifetimes = lifetimes_with(base, secs("lifetime_secs"), secs("max_lifetime_secs"));
        if let Some(hard) = registry::hard_max_secs(&record.provider) {
            lifetimes.max_secs = lifetimes.max_secs.min(hard);
            lifetimes.default_secs = lifetimes.default_secs.min(lifetimes.max_secs);
        }
        let mut fields = record.fields.clone();
        if let Some(file) = self.setup().file_fields.get(&record.name) {
            fields.extend(file.clone());
        }
        let adapter = self.plain_key(&record, from_env).and_then(|key| {
            holm::runtime::remote::connect(&Account {
                name: &record.name,
                provider: &record.provider,
                fields: &fields,
                key: &key,
            })
        });
        let (adapter, problem) = match adapter {
            Ok(a) => (Some(a), None),
            Err(p) => (None, Some(p)),
        };
        Remote { record, from_env, problem, lifetimes, adapter }
    }

    /// Whether a remote runtime answers; asks its vendor.
    pub(super) async fn remote_state(remote: &Remote) -> (RuntimeState, Option<String>) {
        match (&remote.adapter, &remote.problem) {
            (Some(a), _) => match a.ping().await {
                Ok(()) => (RuntimeState::Available, None),
                Err(e) => (RuntimeState::Unavailable, Some(e.to_string())),
            },
            (None, problem) => (RuntimeState::Unavailable, problem.clone()),
        }
    }

    fn remote_reason(remote: &Remote) -> String {
        remote.problem.clone().unwrap_or_else(|| "it takes boxes".to_owned())
    }

    /// A remote runtime as `GET /v1/runtimes` shows it, in `state`.
    pub(super) fn remote_info(
        &self,
        remote: &Remote,
        (state, reason): (RuntimeState, Option<String>),
    ) -> RuntimeInfo {
        let r = &remote.record;
        let vendor = registry::vendor(&r.provider);
        let secrets: Vec<String> = if remote.from_env {
            vec![registry::API_KEY.to_owned()]
        } else {
            r.sealed.keys().cloned().collect()
        };
        RuntimeInfo {
            name: r.name.clone(),
            provider: r.provider.clone(),
            place: Place::Remote,
            environment: vendor
                .map_or(holm_proto::host::Environment::Unknown, |v| v.facts.environment),
            state,
            reason,
            default: r.name == self.default_name(),
            can: vendor.map(|v| v.facts.can).unwrap_or_default(),
            lifetime_secs: remote.lifetimes.default_secs,
            max_lifetime_secs: remote.lifetimes.max_secs,
            secrets,
            fields: r.fields.clone(),
            key_version: Some(r.key_version),
        }
    }

    /// The refusal of a box on a remote runtime, before anything starts.
    pub(super) fn remote_refusal(&self, remote: &Remote) -> ApiError {
        let hosts: Vec<&String> = self.host().keys().collect();
        ApiError::new(
            ErrorCode::Unsupported,
            format!(
                "runtime {} ({}) cannot take boxes: {}",
                remote.record.name,
                remote.record.provider,
                Self::remote_reason(remote)
            ),
        )
        .with_hint(format!(
            "use a host runtime: {}",
            hosts.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
        ))
        .with_details(serde_json::json!({ "runtime": remote.record.name, "state": "unavailable" }))
    }

    /// Why `name` cannot be added or changed through the API, when it cannot.
    fn not_through_api(&self, name: &str) -> Option<ApiError> {
        if self.is_host(name) || holm::runtime::kind::hosts().any(|k| k.name == name) {
            return Some(
                ApiError::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{name} is a host runtime; the API adds and changes only remote vendors"
                    ),
                )
                .with_hint("the runtimes file (HOLM_SERVER_CONFIG) configures host runtimes"),
            );
        }
        if self.remotes().get(name).is_some_and(|r| r.from_env) {
            return Some(
                ApiError::new(
                    ErrorCode::Forbidden,
                    format!("{name} comes from HOLM_SERVER_SANDBOXES and the vendor's variables"),
                )
                .with_hint("change the server's environment and restart it, or add a runtime with another name"),
            );
        }
        None
    }

    fn sealer(&self) -> Result<&SecretKey, Error> {
        self.setup().secret_key.as_ref().ok_or_else(|| {
            ApiError::new(
                ErrorCode::Forbidden,
                "the server has no key to encrypt vendor keys with, so it stores none",
            )
            .with_hint("set HOLM_SERVER_SECRET_KEY (openssl rand -hex 32) or HOLM_SERVER_SECRET_FILE, and restart the server")
            .into()
        })
    }
}

impl Service {
    /// Checks and writes a remote runtime, sealing a new key.
    async fn write_remote(
        &self,
        name: &str,
        provider: &str,
        fields: &BTreeMap<String, serde_json::Value>,
        key: KeyChange,
        existing: Option<RuntimeRecord>,
    ) -> Result<RuntimeInfo, Error> {
        let mut issues = Vec::new();
        if let Err(problem) = registry::check_name(name) {
            issues.push(Issue { path: "name".into(), problem });
        }
        let vendor = registry::vendor(provider);
        let mut checked = serde_json::Map::new();
        match vendor {
            None => {
                let problem = if holm::runtime::kind::kind(provider).is_some() {
                    format!(
                        "{provider:?} is a host engine; the API adds only remote vendors: {}",
                        registry::vendor_names()
                    )
                } else {
                    format!("{provider:?} is no vendor; use one of: {}", registry::vendor_names())
                };
                issues.push(Issue { path: "provider".into(), problem });
            }
            Some(v) => match registry::check_fields(v, fields, true) {
                Ok(f) => checked = f,
                Err(mut more) => issues.append(&mut more),
            },
        }
        let keep = matches!(key, KeyChange::Keep);
        if keep && existing.as_ref().is_none_or(|e| e.sealed.is_empty() || e.provider != provider) {
            issues.push(Issue {
                path: "api_key".into(),
                problem: "the vendor's key is needed: `holm runtime add` reads it from standard input (--api-key) or a variable (--api-key-env)".into(),
            });
        }
        // The stored key never goes to an address it was not given for: a
        // changed endpoint needs the key again.
        if let (true, Some(v), Some(e)) = (keep, vendor, &existing) {
            for field in
                v.fields.iter().filter(|f| f.ty == holm::runtime::kind::FieldType::Endpoint)
            {
                if e.fields.get(field.name) != checked.get(field.name) {
                    issues.push(Issue {
                        path: "api_key".into(),
                        problem: format!(
                            "changing {} needs the vendor's key again (api_key): the stored key \
                             is never sent to an address it was not given for",
                            field.name
                        ),
                    });
                }
            }
        }
        if !issues.is_empty() {
            return Err(ApiError::invalid_fields(issues).into());
        }
        let now = self.clock.now_secs();
        let mut record = RuntimeRecord {
            name: name.to_owned(),
            provider: provider.to_owned(),
            fields: checked,
            sealed: BTreeMap::new(),
            created_at: existing.as_ref().map_or(now, |e| e.created_at),
            updated_at: now,
            key_version: existing.as_ref().map_or(0, |e| e.key_version),
        };
        let new_key = match key {
            KeyChange::Keep => {
                record.sealed = existing.map(|e| e.sealed).unwrap_or_default();
                None
            }
            KeyChange::New(plain) => {
                let sealer = self.runtimes.sealer()?;
                record.key_version += 1;
                record.sealed.insert(
                    registry::API_KEY.to_owned(),
                    sealer.seal(name, registry::API_KEY, record.key_version, &plain),
                );
                Some(plain)
            }
        };
        self.store.put_runtime(&record).await.map_err(|e| store_error(&e))?;
        let remote = match self.runtimes.remote(name) {
            // The same account with a new key (or none): the runtime its
            // boxes use takes the key, so they go on with it.
            Some(prev)
                if prev.record.provider == record.provider
                    && prev.record.fields == record.fields
                    && prev.adapter.is_some() =>
            {
                if let (Some(adapter), Some(key)) = (&prev.adapter, &new_key) {
                    adapter.set_key(key);
                }
                Remote { record, from_env: false, problem: None, ..prev }
            }
            _ => self.runtimes.remote_from(record, false),
        };
        let state = Runtimes::remote_state(&remote).await;
        let info = self.runtimes.remote_info(&remote, state);
        self.runtimes.remotes_mut().insert(name.to_owned(), remote);
        Ok(info)
    }

    fn stored_remote(&self, name: &str) -> Result<RuntimeRecord, Error> {
        if let Some(e) = self.runtimes.not_through_api(name) {
            return Err(e.into());
        }
        self.runtimes
            .remotes()
            .get(name)
            .map(|r| r.record.clone())
            .ok_or_else(|| Error::NoSuchRemote { name: name.to_owned() })
    }

    /// `POST /v1/runtimes`: adds a remote runtime.
    pub async fn add_runtime(&self, request: AddRuntime) -> Result<RuntimeInfo, Error> {
        let _guard = self.runtimes.registry_turn().await;
        if let Some(e) = self.runtimes.not_through_api(&request.name) {
            return Err(e.into());
        }
        if self.runtimes.remotes().contains_key(&request.name) {
            return Err(Error::RemoteExists { name: request.name.clone() });
        }
        let key = KeyChange::of(request.api_key.as_deref())?;
        let info =
            self.write_remote(&request.name, &request.provider, &request.fields, key, None).await?;
        tracing::info!(runtime = %info.name, provider = %info.provider, "added a remote runtime");
        Ok(info)
    }

    /// `PUT /v1/runtimes/{name}`: adds or replaces a remote runtime whole.
    /// Answers whether it was added.
    pub async fn replace_runtime(
        &self,
        name: &str,
        request: ReplaceRuntime,
    ) -> Result<(RuntimeInfo, bool), Error> {
        let _guard = self.runtimes.registry_turn().await;
        if let Some(e) = self.runtimes.not_through_api(name) {
            return Err(e.into());
        }
        let existing = self.runtimes.remotes().get(name).map(|r| r.record.clone());
        let added = existing.is_none();
        let key = KeyChange::of(request.api_key.as_deref())?;
        let info =
            self.write_remote(name, &request.provider, &request.fields, key, existing).await?;
        tracing::info!(runtime = %name, provider = %info.provider, key_version = ?info.key_version, "replaced a remote runtime");
        Ok((info, added))
    }

    /// `PATCH /v1/runtimes/{name}`: changes some fields (`null` removes one)
    /// or replaces the key. A new key is the runtime's next key version,
    /// which its running boxes take.
    pub async fn change_runtime(
        &self,
        name: &str,
        request: ChangeRuntime,
    ) -> Result<RuntimeInfo, Error> {
        let _guard = self.runtimes.registry_turn().await;
        let existing = self.stored_remote(name)?;
        let mut fields: BTreeMap<String, serde_json::Value> =
            existing.fields.clone().into_iter().collect();
        for (k, v) in request.fields {
            if v.is_null() {
                fields.remove(&k);
            } else {
                fields.insert(k, v);
            }
        }
        let key = KeyChange::of(request.api_key.as_deref())?;
        let provider = existing.provider.clone();
        let info = self.write_remote(name, &provider, &fields, key, Some(existing)).await?;
        tracing::info!(runtime = %name, key_version = ?info.key_version, "changed a remote runtime");
        Ok(info)
    }

    /// `DELETE /v1/runtimes/{name}`: removes a remote runtime that no live
    /// box is on.
    pub async fn remove_runtime(&self, name: &str) -> Result<RuntimeInfo, Error> {
        let _guard = self.runtimes.registry_turn().await;
        self.stored_remote(name)?;
        let on_it: Vec<String> = self
            .boxes
            .records()
            .into_iter()
            .filter(|r| r.runtime == name && r.state.is_live())
            .map(|r| r.id)
            .collect();
        if !on_it.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("{} boxes are on runtime {name}", on_it.len()),
            )
            .with_hint("remove them first")
            .with_details(serde_json::json!({ "box_ids": on_it }))
            .into());
        }
        self.store.delete_runtime(name).await.map_err(|e| store_error(&e))?;
        let removed = self.runtimes.remotes_mut().remove(name);
        tracing::info!(runtime = %name, "removed a remote runtime");
        let removed = removed.ok_or_else(|| self.unknown_runtime(name))?;
        Ok(self.runtimes.remote_info(&removed, (RuntimeState::Unavailable, Some("removed".into()))))
    }
}
