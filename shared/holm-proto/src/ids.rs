//! Small types that carry an invariant: a [`BoxId`] is parsed once, where it
//! enters, and a [`Secret`] never shows itself in `Debug`. On the wire both
//! are plain strings.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

/// A box's id, such as `box_7hq3k2m9x4ab`: `box_` and 1 to 32 lowercase
/// ASCII letters and digits, so it is safe in a container name, a file name
/// and a URL path. Made by [`BoxId::parse`] (or `str::parse`, or serde),
/// which is the one check of the grammar.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BoxId(String);

/// The longest part after `box_`.
const MAX_ID_LEN: usize = 32;

/// A string that is not a box id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotABoxId(pub String);

impl fmt::Display for NotABoxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a box id, such as \"box_7hq3k2m9x4ab\"", self.0)
    }
}

impl std::error::Error for NotABoxId {}

impl BoxId {
    /// Checks `s` against the id grammar.
    pub fn parse(s: &str) -> Result<Self, NotABoxId> {
        let ok = s.strip_prefix("box_").is_some_and(|rest| {
            !rest.is_empty()
                && rest.len() <= MAX_ID_LEN
                && rest.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
        if ok { Ok(Self(s.to_owned())) } else { Err(NotABoxId(s.to_owned())) }
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for BoxId {
    type Err = NotABoxId;
    fn from_str(s: &str) -> Result<Self, NotABoxId> {
        Self::parse(s)
    }
}

impl TryFrom<String> for BoxId {
    type Error = NotABoxId;
    fn try_from(s: String) -> Result<Self, NotABoxId> {
        Self::parse(&s)
    }
}

impl From<BoxId> for String {
    fn from(id: BoxId) -> Self {
        id.0
    }
}

impl std::ops::Deref for BoxId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for BoxId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for BoxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for BoxId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl JsonSchema for BoxId {
    fn schema_name() -> Cow<'static, str> {
        "BoxId".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": "^box_[a-z0-9]{1,32}$",
            "description": "A box's id, such as \"box_7hq3k2m9x4ab\"."
        })
    }
}

/// A secret (a token, a key, a password): `Debug` shows `<hidden>`, and the
/// text is only reached through [`Secret::expose`], so a secret held in a
/// struct cannot reach a log through `{:?}`. On the wire a plain string.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Self(s.into())
    }

    /// The secret's text, to send or compare; never to log.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<hidden>")
    }
}

impl JsonSchema for Secret {
    fn schema_name() -> Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_ids_are_parsed_once_and_strings_on_the_wire() {
        let id = BoxId::parse("box_7hq3k2m9x4ab").unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), "box_7hq3k2m9x4ab");
        assert_eq!(serde_json::from_str::<BoxId>("\"box_a1\"").unwrap().as_str(), "box_a1");
        assert_eq!(format!("{id} {id:?}"), "box_7hq3k2m9x4ab \"box_7hq3k2m9x4ab\"");
        assert!(BoxId::parse(&format!("box_{}", "a".repeat(32))).is_ok());
        for bad in [
            "",
            "box_",
            "box_ABC",
            "box_../x",
            "box_a/b",
            "container",
            "box_a b",
            "box_é",
            &format!("box_{}", "a".repeat(33)),
        ] {
            let e = BoxId::parse(bad).unwrap_err();
            assert!(e.to_string().contains("is not a box id"), "{e}");
            assert!(serde_json::from_value::<BoxId>(serde_json::json!(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn secrets_hide_in_debug_and_are_strings_on_the_wire() {
        #[derive(Debug, Serialize, Deserialize, JsonSchema)]
        struct Holder {
            token: Secret,
        }
        let h = Holder { token: Secret::new("hunter2") };
        assert_eq!(format!("{h:?}"), "Holder { token: <hidden> }");
        assert_eq!(serde_json::to_string(&h).unwrap(), r#"{"token":"hunter2"}"#);
        let back: Holder = serde_json::from_str(r#"{"token":"s3"}"#).unwrap();
        assert_eq!(back.token.expose(), "s3");
        let schema = serde_json::to_value(schemars::schema_for!(Holder)).unwrap();
        assert_eq!(schema["properties"]["token"]["type"], "string");
    }
}
