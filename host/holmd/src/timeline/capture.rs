//! What the trace middleware takes from a request and its answer for the
//! timeline, without making either wait on the store: the step its
//! route's record names and the path parameters the router matched (the
//! path itself is never parsed here), a small JSON body
//! (read whole, then passed on), a raw body's size (counted as it
//! streams), and an answered image (copied as it streams to the caller,
//! then queued).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::extract::{FromRequestParts, RawPathParams, Request};
use axum::http::header;
use axum::response::Response;
use bytes::Bytes;
use futures_util::TryStreamExt;
use holm_proto::contract::Step;
use holm_proto::timeline::{Shot, StepAction, StepKind};

use super::classify;
use super::{Pending, Shots};

/// JSON bodies up to this size are read for their action; larger ones
/// keep only their size.
const MAX_BODY: usize = 64 * 1024;

/// Images larger than this are not kept.
pub const MAX_IMAGE: u64 = 16 << 20;

/// What was seen of a request before it ran.
#[derive(Debug, Default)]
pub struct Seen {
    step: Option<Step>,
    params: Vec<(String, String)>,
    body: Option<Bytes>,
    counted: Option<Arc<AtomicU64>>,
}

/// Keeps the request's `step` (its route's record's) and its route's
/// path parameters; when it is a step, reads a small JSON body of it, or
/// counts a raw one (`raw_body`: the record says its body is raw bytes)
/// as it streams. The request goes on with its body whole.
pub async fn observe(req: Request, step: Option<Step>, raw_body: bool) -> (Request, Seen) {
    let Some(step) = step else { return (req, Seen::default()) };
    let writes = matches!(req.method().as_str(), "POST" | "PUT" | "PATCH");
    let length = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let (mut parts, body) = req.into_parts();
    let params = RawPathParams::from_request_parts(&mut parts, &()).await.map_or_else(
        |_| Vec::new(),
        |p| p.iter().map(|(k, v)| (k.to_owned(), v.to_owned())).collect(),
    );
    let req = Request::from_parts(parts, body);
    let mut seen = Seen { step: Some(step), params, ..Seen::default() };
    if raw_body {
        let counter = Arc::new(AtomicU64::new(0));
        seen.counted = Some(Arc::clone(&counter));
        let (parts, body) = req.into_parts();
        let stream = body.into_data_stream().inspect_ok(move |chunk| {
            counter.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        });
        return (Request::from_parts(parts, Body::from_stream(stream)), seen);
    }
    if !writes || length.is_none_or(|n| n > MAX_BODY as u64) {
        return (req, seen);
    }
    let (parts, body) = req.into_parts();
    // Within the length the header promised; a body that breaks off goes
    // on empty, and the route refuses it as it would.
    let bytes = axum::body::to_bytes(body, MAX_BODY).await.unwrap_or_default();
    seen.body = Some(bytes.clone());
    (Request::from_parts(parts, Body::from(bytes)), seen)
}

impl Seen {
    /// The action of the request, with what was seen of its body and its
    /// `query`; `None` for a read.
    pub fn action(&self, query: Option<&str>) -> Option<StepAction> {
        let counted = self.counted.as_ref().map(|c| c.load(Ordering::Relaxed));
        let params: Vec<(&str, &str)> =
            self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        classify::classify(&classify::Request {
            step: self.step,
            params: &params,
            query,
            body: self.body.as_deref(),
            body_bytes: counted,
        })
    }
}

/// When `response` is an image answered to a screenshot or to input (not
/// marked sensitive), keeps
/// a copy as it streams to the caller and queues it under `id` once whole
/// (an image that comes short or long is not kept);
/// answers the response to send and the image's record.
pub fn keep_image(
    shots: &Arc<Shots>,
    box_id: &str,
    id: &str,
    action: Option<&StepAction>,
    response: Response,
) -> (Response, Option<Shot>) {
    // A sensitive action's image may show what was typed: it is not kept.
    let wanted = action.is_some_and(|a| {
        matches!(a.kind, StepKind::Screenshot | StepKind::Input) && !classify::is_sensitive(a)
    });
    let media_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .filter(|t| t.starts_with("image/"))
        .map(str::to_owned);
    let length = response
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|n| (1..=MAX_IMAGE).contains(n));
    let (Some(media_type), Some(length), true, true) =
        (media_type, length, wanted, response.status().is_success())
    else {
        return (response, None);
    };
    let shot = Shot { id: id.to_owned(), media_type, bytes: length };
    let want = usize::try_from(length).unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::with_capacity(want);
    let (parts, body) = response.into_parts();
    let (shots, box_id, id) = (Arc::clone(shots), box_id.to_owned(), id.to_owned());
    // Queued with the chunk that makes it whole: the server may stop
    // polling a body once its length is sent.
    let stream = body.into_data_stream().inspect_ok(move |chunk| {
        if buf.len() + chunk.len() > want {
            buf = Vec::new();
            return;
        }
        buf.extend_from_slice(chunk);
        if buf.len() == want {
            let image = Bytes::from(std::mem::take(&mut buf));
            shots.queue(Pending { box_id: box_id.clone(), id: id.clone(), image });
        }
    });
    (Response::from_parts(parts, Body::from_stream(stream)), Some(shot))
}
