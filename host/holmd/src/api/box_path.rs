//! The `{id}` of a box route, parsed once into a [`BoxId`].

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use holm_http::Error;
use holm_proto::BoxId;

/// The box id of a `/v1/boxes/{id}/…` route. A string that cannot be a box
/// id is answered as a box that does not exist (404 `not_found`), saying
/// what ids look like; it never reaches the service.
#[derive(Debug)]
pub(super) struct BoxPath(pub BoxId);

impl<S: Send + Sync> FromRequestParts<S> for BoxPath {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Error> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|e| Error::internal(format!("a box route without its id: {e}")))?;
        let raw = params.iter().find(|(name, _)| *name == "id").map_or("", |(_, v)| v);
        parse(raw).map(BoxPath)
    }
}

/// Parses a box route's id; the refusal is the service's own "no such box".
pub(super) fn parse(raw: &str) -> Result<BoxId, Error> {
    BoxId::parse(raw).map_err(|_| {
        crate::service::no_such_box(raw, ": box ids look like \"box_7hq3k2m9x4ab\"").into()
    })
}

#[cfg(test)]
mod tests {
    use holm_proto::ErrorCode;

    use super::*;

    #[test]
    fn ids_are_parsed_once_and_a_bad_one_is_no_box() {
        assert_eq!(parse("box_a1").unwrap().as_str(), "box_a1");
        for bad in ["..", "box_A", "box_a%2fb", "x"] {
            let e = parse(bad).unwrap_err().0;
            assert_eq!(e.code, ErrorCode::NotFound, "{bad}");
            assert!(e.message.contains("box ids look like"), "{}", e.message);
        }
    }
}
