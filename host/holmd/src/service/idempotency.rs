//! Idempotency keys: the same key and body answer the first box again, for
//! 24 hours. A key is written before its box, so a crash between the two is
//! finished by the retry, with the same box id.

use std::future::Future;
use std::sync::Arc;

use holm_proto::{ApiError, ErrorCode, Issue};

use super::Service;
use super::errors::Error;
use super::errors::store_error;
use super::state::Entry;
use crate::store::{IDEMPOTENCY_RETENTION_SECS, IdempotencyRecord, rfc3339, sha256_hex};

impl Service {
    /// Runs `make` with a new box id (`fresh`, or one made here), or with
    /// an idempotency key, answers what the key made before. The key is
    /// written before the box, so a crash between the two is finished by the
    /// retry, with the same id.
    pub(super) async fn idempotent<Fut>(
        &self,
        key: Option<&str>,
        fingerprint: String,
        fresh: Option<String>,
        make: impl FnOnce(String) -> Fut,
    ) -> Result<(Arc<Entry>, bool), Error>
    where
        Fut: Future<Output = Result<Arc<Entry>, Error>>,
    {
        let Some(key) = key else {
            return Ok((make(fresh.unwrap_or_else(holm::ids::new_box_id)).await?, false));
        };
        if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ApiError::invalid_fields(vec![Issue {
                path: "Idempotency-Key".into(),
                problem: "must be 1 to 255 visible ASCII characters".into(),
            }])
            .into());
        }
        let key_hash = sha256_hex(key.as_bytes());
        let _one_at_a_time = self.boxes.idempotency_turn().await;
        let now = self.clock.now_secs();
        let known = self.store.get_idempotency(&key_hash).await.map_err(|e| store_error(&e))?;
        match known {
            Some(k) if k.created_at + IDEMPOTENCY_RETENTION_SECS > now => {
                if k.fingerprint != fingerprint {
                    return Err(ApiError::new(
                        ErrorCode::IdempotencyKeyReused,
                        format!(
                            "this Idempotency-Key was used at {} with another body",
                            rfc3339(k.created_at)
                        ),
                    )
                    .with_hint("send the same body again, or use a new key for new work")
                    .with_details(serde_json::json!({
                        "first_used_at": rfc3339(k.created_at),
                        "box_id": k.box_id,
                    }))
                    .into());
                }
                match self.get(&k.box_id) {
                    Ok(entry) => Ok((entry, true)),
                    // The server stopped after it kept the key and before it
                    // recorded the box: make it now, with the same id.
                    Err(_) => Ok((make(k.box_id).await?, true)),
                }
            }
            _ => {
                let id = fresh.unwrap_or_else(holm::ids::new_box_id);
                let record = IdempotencyRecord {
                    key_hash,
                    fingerprint,
                    box_id: id.clone(),
                    created_at: now,
                };
                self.store.put_idempotency(&record).await.map_err(|e| store_error(&e))?;
                Ok((make(id).await?, false))
            }
        }
    }

    /// Forgets keys older than their retention.
    pub(super) async fn purge_idempotency(&self) {
        let before = self.clock.now_secs().saturating_sub(IDEMPOTENCY_RETENTION_SECS);
        match self.store.purge_idempotency(before).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(keys = n, "forgot idempotency keys older than a day"),
            Err(e) => tracing::warn!(error = %e, "cannot forget old idempotency keys"),
        }
    }
}

/// The SHA-256 of a route and a parsed body: the same request, however its
/// JSON was spaced or ordered, has the same fingerprint.
pub fn fingerprint(route: &str, body: &impl serde::Serialize) -> String {
    let mut bytes = route.as_bytes().to_vec();
    bytes.push(b'\n');
    bytes.extend(serde_json::to_vec(body).unwrap_or_default());
    sha256_hex(&bytes)
}
