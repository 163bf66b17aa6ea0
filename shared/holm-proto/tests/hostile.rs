//! Hostile input for the parsers every request passes through: the key
//! chord and text parsers, strict JSON and query parsing, and regions. Each
//! takes anything (arbitrary strings and bytes, and inputs built from the
//! grammar's own pieces, which reach deeper) and answers a value or an
//! error: never a panic, never an overflow (tests build with overflow
//! checks on).

use holm_proto::guest::{
    CommandRequest, InputRequest, ProcessStart, Region, ScreenshotOptions, WriteQuery,
};
use holm_proto::host::{CreateBox, ExtendBox, ForkBox, Placement};
use holm_proto::{keys, strict};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig { cases: 2000, ..ProptestConfig::default() }
}

/// A chord made of the table's own names, single characters, hex keysyms
/// and junk, joined by `+` with spaces.
fn chord() -> impl Strategy<Value = String> {
    let name = prop_oneof![
        proptest::sample::select(
            keys::KEYS.iter().flat_map(|k| k.names.iter().copied()).collect::<Vec<_>>()
        )
        .prop_map(str::to_owned),
        any::<char>().prop_map(|c| c.to_string()),
        any::<u32>().prop_map(|n| format!("0x{n:x}")),
        "[ +_-]{0,3}",
        ".{0,6}",
    ];
    proptest::collection::vec(name, 0..6).prop_map(|parts| parts.join("+"))
}

/// JSON values of any shape, with the numbers at the edges of every type.
fn json() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::{Value, json};
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(f64::MAX)),
            Just(json!(-0.0)),
            Just(json!(1e-300)),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
        ],
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        let key = prop_oneof![
            proptest::sample::select(vec![
                "spec",
                "placement",
                "actions",
                "type",
                "x",
                "y",
                "text",
                "key",
                "keys",
                "button",
                "count",
                "duration_ms",
                "dx",
                "dy",
                "path",
                "argv",
                "command",
                "env",
                "timeout_ms",
                "expires_after_secs",
                "idle_timeout_secs",
                "by_secs",
                "screens",
                "screen_size",
                "memory",
                "cpus",
                "pids_limit",
                "coordinate_space",
                "scale",
                "region",
                "repeat",
                "settle",
                "quiet_ms",
                "modifiers",
                "labels",
                "apps",
            ])
            .prop_map(str::to_owned),
            ".{0,8}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(key, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn parse_all(bytes: &[u8]) {
    let _ = strict::from_slice::<InputRequest>(bytes);
    let _ = strict::from_slice::<CommandRequest>(bytes);
    let _ = strict::from_slice::<ProcessStart>(bytes);
    let _ = strict::from_slice::<CreateBox>(bytes);
    let _ = strict::from_slice::<Placement>(bytes);
    let _ = strict::from_slice::<ForkBox>(bytes);
    let _ = strict::from_slice::<ExtendBox>(bytes);
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_chord_parses_or_is_refused(s in chord()) {
        if let Ok(c) = keys::parse_chord(&s) {
            let _ = c.press_order().count();
        }
    }

    #[test]
    fn any_string_is_a_chord_or_a_refusal(s in ".{0,40}") {
        let _ = keys::parse_chord(&s);
        let _ = keys::keysym(&s);
        let _ = keys::text_keysyms(&s);
    }

    #[test]
    fn any_bytes_are_json_or_a_refusal(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        parse_all(&bytes);
    }

    #[test]
    fn any_json_is_a_request_or_a_refusal_naming_fields(v in json()) {
        parse_all(&serde_json::to_vec(&v).unwrap());
    }

    #[test]
    fn any_query_is_options_or_a_refusal(q in "[a-z_=&%0-9,.-]{0,60}") {
        let _ = strict::from_query::<ScreenshotOptions>(&q);
        let _ = strict::from_query::<WriteQuery>(&q);
        let _ = q.parse::<Region>();
    }
}
