//! The runtimes file under hostile input: any text, and files built from the
//! file's own tables, fields and values at the edges of their types, parse
//! or stop the server with the file, table and field named; never a panic
//! or an overflow.

use std::path::Path;

use holmd::runtimes_file;
use proptest::prelude::*;

fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("18446744073709551615".to_owned()),
        Just("9223372036854775807".to_owned()),
        Just("-9223372036854775808".to_owned()),
        Just("\"18446744073709551615d\"".to_owned()),
        Just("\"99999999999999999999h\"".to_owned()),
        Just("1e308".to_owned()),
        Just("nan".to_owned()),
        Just("-0.0".to_owned()),
        Just("true".to_owned()),
        Just("[\"NET_RAW\", \"cap_sys_admin\", 3]".to_owned()),
        Just("\"unconfined\"".to_owned()),
        Just("\"/nonexistent/profile.json\"".to_owned()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:?}")),
        "\"[0-9]{0,20}[smhdgk]?\"",
        "\"[ -~]{0,12}\"",
    ]
}

fn file() -> impl Strategy<Value = String> {
    let name = proptest::sample::select(vec![
        "docker", "podman", "e2b", "modal", "hardened", "gpu", "smolvm", "x",
    ]);
    let field = proptest::sample::select(vec![
        "provider",
        "enabled",
        "memory",
        "cpus",
        "lifetime",
        "max_lifetime",
        "isolation",
        "context",
        "program",
        "build_with",
        "pids_limit",
        "host_access",
        "no_new_privileges",
        "cap_add",
        "seccomp",
        "unknown",
    ]);
    let table =
        (name, proptest::collection::vec((field, value()), 0..6)).prop_map(|(name, fields)| {
            let mut t = format!("[runtimes.{name}]\n");
            for (f, v) in fields {
                t += &format!("{f} = {v}\n");
            }
            t
        });
    (proptest::option::of(value()), proptest::collection::vec(table, 0..4)).prop_map(
        |(default, tables)| {
            let mut f = default.map(|d| format!("default = {d}\n")).unwrap_or_default();
            f += &tables.concat();
            f
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn any_runtimes_file_parses_or_names_the_mistake(text in file()) {
        let path = Path::new("/etc/holm/runtimes.toml");
        if let Err(e) = runtimes_file::parse(path, &text) {
            prop_assert!(e.to_string().starts_with("/etc/holm/runtimes.toml: "), "{e}");
        }
    }

    #[test]
    fn any_text_parses_or_is_refused(text in "[ -~\n\t]{0,200}") {
        let _ = runtimes_file::parse(Path::new("f.toml"), &text);
    }

    #[test]
    fn any_duration_parses_or_is_refused(s in "[0-9]{0,25}[smhdx]?") {
        let _ = runtimes_file::parse_duration(&s);
    }
}
