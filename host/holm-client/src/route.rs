//! What both clients' generic calls share: a route record's `{name}`
//! parameters filled with values, its method as `reqwest` spells it, and
//! an answer read as the record says (JSON, or nothing).

use holm_proto::contract::{Answer, Method};
use serde::de::DeserializeOwned;

use crate::error::{ClientError, Result};

/// `path` (with `{name}` parameters) with `params` in order, each
/// percent-encoded, after `base`; a missing value is an error naming the
/// parameter.
pub(crate) fn fill(base: &str, path: &str, method: Method, params: &[&str]) -> Result<String> {
    let mut params = params.iter();
    let mut url = base.to_owned();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        url.push('/');
        if seg.starts_with('{') {
            let value = params.next().ok_or_else(|| ClientError::Protocol {
                url: format!("{base}{path}"),
                message: format!("no value for {seg} of {method} {path}"),
            })?;
            url.push_str(&enc(value));
        } else {
            url.push_str(seg);
        }
    }
    Ok(url)
}

/// `method` as `reqwest` spells it.
pub(crate) fn method(method: Method) -> reqwest::Method {
    match method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    }
}

/// Reads a checked `response` as `answer` says: nothing for
/// [`Answer::Empty`] (`T` is `()`), else JSON.
pub(crate) async fn read<T: DeserializeOwned>(
    url: &str,
    answer: Answer,
    response: reqwest::Response,
) -> Result<T> {
    let protocol = |e: serde_json::Error| ClientError::Protocol {
        url: url.to_owned(),
        message: e.to_string(),
    };
    if matches!(answer, Answer::Empty) {
        return serde_json::from_value(serde_json::Value::Null).map_err(protocol);
    }
    response
        .json::<T>()
        .await
        .map_err(|e| ClientError::Protocol { url: url.to_owned(), message: e.to_string() })
}

/// One path segment, percent-encoded.
pub(crate) fn enc(segment: &str) -> String {
    url::form_urlencoded::byte_serialize(segment.as_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_filled_in_order_and_encoded() {
        let url =
            fill("http://h", "/v1/boxes/{id}/viewers/{grant}", Method::Delete, &["a b", "g/1"])
                .unwrap();
        assert_eq!(url, "http://h/v1/boxes/a+b/viewers/g%2F1");
        let missing = fill("http://h", "/v1/boxes/{id}", Method::Get, &[]).unwrap_err();
        assert!(missing.to_string().contains("no value for {id}"), "{missing}");
    }
}
