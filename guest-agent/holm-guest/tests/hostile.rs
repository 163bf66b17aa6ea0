//! The action grammar under hostile input: requests built from every action
//! type with numbers at the edges of their types (and any coordinate space)
//! are checked whole against screens of any size; the check answers the
//! actions or the problems, and never panics or overflows (tests build with
//! overflow checks on). Nothing here touches a display.

use holm_proto::guest::InputRequest;
use holm_proto::strict;
use proptest::prelude::*;
use serde_json::{Value, json};

fn int() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(i32::MAX)),
        Just(json!(i32::MIN)),
        Just(json!(u32::MAX)),
        Just(json!(u64::MAX)),
        Just(json!(0)),
        Just(json!(-1)),
        any::<i32>().prop_map(Value::from),
        (0i64..5000).prop_map(Value::from),
    ]
}

fn action() -> impl Strategy<Value = Value> {
    let kind = proptest::sample::select(vec![
        "move",
        "click",
        "mouse_down",
        "mouse_up",
        "drag",
        "scroll",
        "type",
        "key",
        "key_down",
        "key_up",
        "hold",
        "wait",
        "bogus",
    ]);
    let fields = proptest::collection::btree_map(
        proptest::sample::select(vec![
            "x",
            "y",
            "dx",
            "dy",
            "count",
            "repeat",
            "duration_ms",
            "button",
            "text",
            "key",
            "keys",
            "modifiers",
            "path",
        ]),
        prop_oneof![
            int(),
            ".{0,8}".prop_map(Value::String),
            proptest::collection::vec(int(), 0..4).prop_map(Value::Array),
            proptest::collection::vec("[a-z+]{0,6}", 0..3)
                .prop_map(|v| Value::Array(v.into_iter().map(Value::String).collect())),
            proptest::collection::vec(proptest::collection::vec(int(), 2), 0..4)
                .prop_map(|v| json!(v)),
        ],
        0..5,
    );
    (kind, fields).prop_map(|(kind, fields)| {
        let mut o: serde_json::Map<String, Value> =
            fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
        o.insert("type".into(), kind.into());
        Value::Object(o)
    })
}

fn request() -> impl Strategy<Value = Value> {
    let scale = prop_oneof![
        Just(json!(1e-300)),
        Just(json!(f64::MIN_POSITIVE)),
        Just(json!(1.0)),
        Just(json!(0.5)),
        Just(json!(2.0)),
        any::<f64>().prop_map(Value::from),
    ];
    let space = proptest::option::of(
        (scale, int(), int()).prop_map(|(s, x, y)| json!({"scale": s, "x": x, "y": y})),
    );
    (proptest::collection::vec(action(), 0..8), space).prop_map(|(actions, space)| {
        let mut r = json!({ "actions": actions });
        if let Some(s) = space {
            r["coordinate_space"] = s;
        }
        r
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_input_request_is_checked_whole_without_a_panic(
        r in request(),
        width in prop_oneof![Just(1u32), Just(64u32), Just(1280u32), Just(7680u32), Just(u32::MAX)],
        height in prop_oneof![Just(1u32), Just(64u32), Just(800u32), Just(4320u32), Just(u32::MAX)],
    ) {
        let bytes = serde_json::to_vec(&r).unwrap();
        if let Ok(req) = strict::from_slice::<InputRequest>(&bytes) {
            match holm_guest::input::check(&req, width, height) {
                Ok(checked) => prop_assert_eq!(checked.ops.len(), req.actions.len()),
                Err(issues) => prop_assert!(!issues.is_empty()),
            }
        }
    }
}
