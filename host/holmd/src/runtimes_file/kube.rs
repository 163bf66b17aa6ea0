//! A `kubernetes` runtime's own fields in the runtimes file: `kubeconfig`,
//! `namespace`, `runtime_class`, `node_selector`, `tolerations`, `mode`
//! (`auto`, `pods` or `agent-sandbox`), `warm_pool`, and the box volume's
//! `volume_size` and `storage_class` (`context` is the table's, shared
//! with Docker's).
//!
//! ```toml
//! [runtimes.cluster]
//! provider = "kubernetes"
//! kubeconfig = "/etc/holm/kubeconfig"
//! context = "prod"
//! namespace = "holm-boxes"
//! runtime_class = "gvisor"
//! node_selector = { "holm.dev/boxes" = "true" }
//! tolerations = [{ key = "boxes", operator = "Exists", effect = "NoSchedule" }]
//! mode = "agent-sandbox"
//! warm_pool = 4
//! volume_size = "10Gi"
//! storage_class = "standard-rwo"
//! ```

use std::path::PathBuf;

use holm::runtime::kind::Setting;
use holm::runtime::kubernetes::{KubeSettings, Mode, Toleration, is_dns_label};

const OPERATORS: &[&str] = &["Equal", "Exists"];
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// Sets one of a Kubernetes runtime's fields from `value`, or says what is
/// wrong with it.
pub(super) fn set(
    k: &mut KubeSettings,
    setting: Setting,
    value: &toml::Value,
) -> Result<(), String> {
    match setting {
        Setting::Kubeconfig => {
            let path = value.as_str().filter(|s| !s.is_empty()).ok_or("must be a path")?;
            let path = PathBuf::from(path);
            if !path.is_file() {
                return Err(format!("{} does not exist", path.display()));
            }
            k.kubeconfig = Some(path);
        }
        Setting::Namespace => k.namespace = dns_label(value)?,
        Setting::RuntimeClass => k.runtime_class = Some(dns_label(value)?),
        Setting::NodeSelector => {
            let table = value.as_table().ok_or("must be a table of labels and values")?;
            for (key, v) in table {
                let v = v.as_str().ok_or_else(|| format!("{key:?} must be a string"))?;
                k.node_selector.insert(key.clone(), v.to_owned());
            }
        }
        Setting::Tolerations => {
            let list = value.as_array().ok_or("must be a list of tables")?;
            k.tolerations = list
                .iter()
                .enumerate()
                .map(|(i, t)| toleration(t).map_err(|e| format!("[{i}]: {e}")))
                .collect::<Result<_, _>>()?;
        }
        Setting::Mode => {
            let name = value.as_str().unwrap_or_default();
            k.mode = Mode::parse(name).ok_or_else(|| {
                let names: Vec<&str> = Mode::ALL.iter().map(|(n, _)| *n).collect();
                format!("must be one of {}", names.join(", "))
            })?;
        }
        Setting::WarmPool => {
            let n = value.as_integer().and_then(|n| u32::try_from(n).ok());
            k.warm_pool = n.filter(|n| *n <= 1000).ok_or("must be a number from 0 to 1000")?;
        }
        Setting::VolumeSize => {
            let size = value.as_str().filter(|s| is_volume_size(s));
            let size = size.ok_or("must be a size such as \"10Gi\": 1 to 999999 Mi, Gi or Ti")?;
            k.volume_size = Some(size.to_owned());
        }
        Setting::StorageClass => {
            let name = value.as_str().filter(|s| is_dns_subdomain(s));
            let name = name
                .ok_or("must be a storage class's name: lowercase letters, digits, '-' and '.'")?;
            k.storage_class = Some(name.to_owned());
        }
        Setting::Images => {
            let table =
                value.as_table().ok_or("must be a table of profiles and image references")?;
            for (profile, reference) in table {
                let p = toml::Value::String(profile.clone());
                let p: holm_proto::guest::Profile = p
                    .try_into()
                    .map_err(|_| format!("{profile:?} is not a display profile (x11, wayland)"))?;
                let r = reference.as_str().filter(|r| is_image_reference(r));
                let r = r.ok_or_else(|| format!("{profile}: must be an image reference"))?;
                k.images.insert(p, r.to_owned());
            }
        }
        other => unreachable!("{} is not a Kubernetes field", other.as_str()),
    }
    Ok(())
}

/// A PersistentVolumeClaim's size as holm takes it: 1 to 999999 of
/// `Mi`, `Gi` or `Ti`.
fn is_volume_size(s: &str) -> bool {
    let Some(n) = s.strip_suffix("Mi").or(s.strip_suffix("Gi")).or(s.strip_suffix("Ti")) else {
        return false;
    };
    (1..=6).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit()) && !n.starts_with('0')
}

/// An image reference as a pod's `image` takes it: 1 to 255 characters
/// of letters, digits and `.-_/:@`, no scheme.
fn is_image_reference(s: &str) -> bool {
    (1..=255).contains(&s.len())
        && !s.contains("://")
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-/:@".contains(&b))
}

/// A DNS-1123 subdomain: DNS labels joined by `.`, at most 253.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

fn dns_label(value: &toml::Value) -> Result<String, String> {
    value
        .as_str()
        .filter(|s| is_dns_label(s))
        .map(str::to_owned)
        .ok_or_else(|| "must be a DNS label: lowercase letters, digits and '-', at most 63".into())
}

fn toleration(value: &toml::Value) -> Result<Toleration, String> {
    let table = value.as_table().ok_or("must be a table")?;
    let mut t = Toleration::default();
    for (field, v) in table {
        let text = v.as_str().map(str::to_owned).ok_or_else(|| format!("{field} must be a string"));
        match field.as_str() {
            "key" => t.key = Some(text?),
            "value" => t.value = Some(text?),
            "operator" => t.operator = Some(one_of(field, text?, OPERATORS)?),
            "effect" => t.effect = Some(one_of(field, text?, EFFECTS)?),
            _ => {
                return Err(format!(
                    "unknown field {field:?}; the fields are key, operator, value, effect"
                ));
            }
        }
    }
    if t.operator.as_deref() == Some("Exists") && t.value.is_some() {
        return Err("a value goes with operator Equal, not Exists".into());
    }
    if t.key.is_none() && t.operator.as_deref() != Some("Exists") {
        return Err("without a key, the operator must be Exists".into());
    }
    Ok(t)
}

fn one_of(field: &str, s: String, allowed: &[&str]) -> Result<String, String> {
    if allowed.contains(&s.as_str()) {
        Ok(s)
    } else {
        Err(format!("{field} must be one of {}", allowed.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::parse;

    fn p(text: &str) -> Result<super::super::RuntimesFile, String> {
        parse(Path::new("/etc/holm/runtimes.toml"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn a_kubernetes_table_parses() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("kubeconfig");
        std::fs::write(&config, "apiVersion: v1\n").unwrap();
        let f = p(&format!(
            r#"
[runtimes.cluster]
provider = "kubernetes"
kubeconfig = "{}"
context = "prod"
namespace = "holm-boxes"
runtime_class = "gvisor"
node_selector = {{ "holm.dev/boxes" = "true" }}
tolerations = [{{ key = "boxes", operator = "Exists", effect = "NoSchedule" }}, {{ operator = "Exists" }}]
memory = "4g"
"#,
            config.display()
        ))
        .unwrap();
        let t = &f.runtimes["cluster"];
        assert_eq!((t.kind.as_str(), t.adds), ("kubernetes", true));
        assert_eq!(t.context.as_deref(), Some("prod"));
        let k = &t.kube;
        assert_eq!(k.kubeconfig.as_deref(), Some(config.as_path()));
        assert_eq!(
            (k.namespace.as_str(), k.runtime_class.as_deref()),
            ("holm-boxes", Some("gvisor"))
        );
        assert_eq!(k.node_selector["holm.dev/boxes"], "true");
        assert_eq!(k.tolerations.len(), 2);
        assert_eq!(k.tolerations[0].effect.as_deref(), Some("NoSchedule"));
        assert_eq!(
            p("[runtimes.k]\nprovider = \"kubernetes\"\n").unwrap().runtimes["k"].kube.namespace,
            "default"
        );
        // A table named as the kind adds it: the server does not find it.
        let f = p("[runtimes.kubernetes]\nnamespace = \"boxes\"\n").unwrap();
        let t = &f.runtimes["kubernetes"];
        assert!(t.adds && t.kind == "kubernetes" && t.kube.namespace == "boxes");
        let f = p("[runtimes.kubernetes]\nprovider = \"kubernetes\"\n").unwrap();
        assert!(f.runtimes["kubernetes"].adds);
    }

    #[test]
    fn the_mode_warm_pool_and_volume_parse_and_say_what_is_wrong() {
        use holm::runtime::kubernetes::{DEFAULT_WARM_POOL, Mode};
        let table = |rest: &str| p(&format!("[runtimes.k]\nprovider = \"kubernetes\"\n{rest}"));
        let k = table("").unwrap().runtimes["k"].kube.clone();
        assert_eq!((k.mode, k.warm_pool), (Mode::Auto, DEFAULT_WARM_POOL));
        let k =
            table("mode = \"agent-sandbox\"\nwarm_pool = 0\n").unwrap().runtimes["k"].kube.clone();
        assert_eq!((k.mode, k.warm_pool), (Mode::AgentSandbox, 0));
        assert_eq!(table("mode = \"pods\"\n").unwrap().runtimes["k"].kube.mode, Mode::Pods);
        let e = table("mode = \"sandboxes\"\n").unwrap_err();
        assert!(e.contains("mode") && e.contains("auto, pods, agent-sandbox"), "{e}");
        let k = table("volume_size = \"10Gi\"\nstorage_class = \"standard-rwo\"\n").unwrap();
        let k = &k.runtimes["k"].kube;
        assert_eq!(
            (k.volume_size.as_deref(), k.storage_class.as_deref()),
            (Some("10Gi"), Some("standard-rwo"))
        );
        for bad in ["10", "10G", "0Gi", "1.5Gi", "-1Gi", "1234567Gi", ""] {
            let e = table(&format!("volume_size = \"{bad}\"\n")).unwrap_err();
            assert!(e.contains("volume_size") && e.contains("10Gi"), "{bad}: {e}");
        }
        let k = table("images = { x11 = \"reg.example/holm-box:x11-1\" }\n").unwrap();
        let images = &k.runtimes["k"].kube.images;
        assert_eq!(images[&holm_proto::guest::Profile::X11], "reg.example/holm-box:x11-1");
        for bad in
            ["images = { vnc = \"a\" }", "images = { x11 = \"http://a/b\" }", "images = \"a\""]
        {
            let e = table(&format!("{bad}\n")).unwrap_err();
            assert!(e.contains("images"), "{bad}: {e}");
        }
        let e = table("storage_class = \"Fast_SSD\"\n").unwrap_err();
        assert!(e.contains("storage_class"), "{e}");
        let e = table("warm_pool = -1\n").unwrap_err();
        assert!(e.contains("warm_pool") && e.contains("0 to 1000"), "{e}");
        let e = p("[runtimes.docker]\nmode = \"pods\"\n").unwrap_err();
        assert!(e.contains("mode"), "a docker table takes no mode: {e}");
    }

    #[test]
    fn every_wrong_kubernetes_field_is_named() {
        let head = "[runtimes.k]\nprovider = \"kubernetes\"\n";
        for (line, field, says) in [
            ("kubeconfig = \"/nowhere/kubeconfig\"", "kubeconfig", "does not exist"),
            ("kubeconfig = 3", "kubeconfig", "must be a path"),
            ("namespace = \"Holm_Boxes\"", "namespace", "DNS label"),
            ("runtime_class = \"\"", "runtime_class", "DNS label"),
            ("node_selector = \"a=b\"", "node_selector", "table of labels"),
            ("node_selector = { a = 1 }", "node_selector", "\"a\" must be a string"),
            ("tolerations = { key = \"a\" }", "tolerations", "list of tables"),
            (
                "tolerations = [{ key = \"a\", effect = \"Sometimes\" }]",
                "tolerations",
                "[0]: effect must be one of",
            ),
            (
                "tolerations = [{ key = \"a\", operator = \"In\" }]",
                "tolerations",
                "operator must be one of",
            ),
            ("tolerations = [{ colour = \"red\" }]", "tolerations", "unknown field \"colour\""),
            ("tolerations = [{ value = \"v\" }]", "tolerations", "without a key"),
            (
                "tolerations = [{ key = \"a\", operator = \"Exists\", value = \"v\" }]",
                "tolerations",
                "not Exists",
            ),
            ("isolation = \"runsc\"", "isolation", "does not apply to kubernetes runtimes"),
            ("pids_limit = 100", "pids_limit", "does not apply to kubernetes runtimes"),
        ] {
            let err = p(&format!("{head}{line}\n")).expect_err(line);
            assert!(err.contains("runtimes.k") && err.contains(field), "{line}: {err}");
            assert!(err.contains(says), "{line}: {err}");
        }
        let err = p("[runtimes.docker]\nnamespace = \"a\"\n").unwrap_err();
        assert!(err.contains("does not apply to docker runtimes"), "{err}");
    }
}
