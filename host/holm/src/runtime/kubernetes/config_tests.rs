//! Tests of the kubeconfig and in-cluster config ([`super`]).

use super::*;

const PEM: &str = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A kubeconfig with two contexts: `files` (a CA, token and client
/// certificate in files, relative to the kubeconfig) and `data` (the
/// same inline), `data` current.
fn kubeconfig(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir.join("certs")).unwrap();
    std::fs::write(dir.join("certs/ca.pem"), PEM).unwrap();
    std::fs::write(dir.join("certs/token"), "file-t0ken\n").unwrap();
    std::fs::write(dir.join("certs/client.pem"), "CERT").unwrap();
    std::fs::write(dir.join("certs/client.key"), "KEY").unwrap();
    let text = format!(
        r#"apiVersion: v1
kind: Config
current-context: data
clusters:
- name: on-files
  cluster:
    server: https://10.0.0.1:6443/
    certificate-authority: certs/ca.pem
- name: inline
  cluster:
    server: "https://[::1]:6443"
    certificate-authority-data: {ca}
    insecure-skip-tls-verify: true
users:
- name: files
  user:
    tokenFile: certs/token
    client-certificate: certs/client.pem
    client-key: certs/client.key
- name: inline
  user:
    token: inline-t0ken
    client-certificate-data: {cert}
    client-key-data: {key}
contexts:
- name: files
  context: {{cluster: on-files, user: files, namespace: boxes}}
- name: data
  context:
    cluster: inline
    user: inline
"#,
        ca = b64(PEM),
        cert = b64("CERT"),
        key = b64("KEY"),
    );
    let path = dir.join("config");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn contexts_pick_their_cluster_and_user_from_data_or_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = kubeconfig(dir.path());

    let current = load(Some(&path), None).unwrap();
    assert_eq!(current.server, "https://[::1]:6443");
    assert_eq!(current.ca.as_deref(), Some(PEM.as_bytes()));
    assert!(current.insecure);
    assert_eq!(current.bearer, Bearer::Token("inline-t0ken".into()));
    assert_eq!(current.identity.as_deref(), Some(&b"CERT\nKEY"[..]));

    let files = load(Some(&path), Some("files")).unwrap();
    assert_eq!(files.server, "https://10.0.0.1:6443");
    assert_eq!(files.ca.as_deref(), Some(PEM.as_bytes()));
    assert!(!files.insecure);
    assert_eq!(files.bearer, Bearer::File(dir.path().join("certs/token")));
    assert_eq!(files.identity.as_deref(), Some(&b"CERT\nKEY"[..]));

    let missing = load(Some(&path), Some("nope")).unwrap_err();
    assert!(missing.contains("no context named nope"), "{missing}");
}

#[test]
fn a_json_kubeconfig_with_an_anonymous_user_reads() {
    // What the stand-in writes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    let doc = r#"{"apiVersion":"v1","clusters":[{"cluster":{"server":"http://127.0.0.1:1"},
        "name":"standin"}],"contexts":[{"context":{"cluster":"standin","user":"standin"},
        "name":"standin"}],"current-context":"standin","users":[{"name":"standin","user":{}}]}"#;
    std::fs::write(&path, doc).unwrap();
    let c = load(Some(&path), None).unwrap();
    assert_eq!((c.server.as_str(), &c.bearer, &c.ca), ("http://127.0.0.1:1", &Bearer::None, &None));
}

#[test]
fn merged_files_take_the_first_of_each_name() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a");
    std::fs::write(
        &first,
        "clusters: [{name: c, cluster: {server: 'https://first'}}]\n\
         contexts: [{name: x, context: {cluster: c}}]\n",
    )
    .unwrap();
    let second = dir.path().join("b");
    std::fs::write(
        &second,
        "current-context: x\nclusters: [{name: c, cluster: {server: 'https://second'}}]\n",
    )
    .unwrap();
    let paths = [first, dir.path().join("absent"), second];
    assert_eq!(from_files(&paths, None).unwrap().server, "https://first");
}

#[test]
fn unsupported_auth_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "exec: {command: a, apiVersion: v1, interactiveMode: Always}",
            "`interactiveMode: Always`",
        ),
        ("exec: {apiVersion: v1}", "exec has no command"),
        ("auth-provider: {name: gcp}", "`auth-provider`"),
        ("username: admin", "`username`"),
        ("client-certificate-data: Q0VSVA==", "both client-certificate and client-key"),
    ];
    for (user, named) in cases {
        let path = dir.path().join("config");
        let text = format!(
            "current-context: x\nclusters: [{{name: c, cluster: {{server: 'https://h'}}}}]\n\
             users: [{{name: u, user: {{{user}}}}}]\n\
             contexts: [{{name: x, context: {{cluster: c, user: u}}}}]\n"
        );
        std::fs::write(&path, text).unwrap();
        let e = load(Some(&path), None).unwrap_err();
        assert!(e.contains(named), "{user}: {e}");
    }
    let path = dir.path().join("proxy");
    std::fs::write(
        &path,
        "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h', proxy-url: 'http://p'}}]\n\
         contexts: [{name: x, context: {cluster: c}}]\n",
    )
    .unwrap();
    let e = load(Some(&path), None).unwrap_err();
    assert!(e.contains("`proxy-url`"), "{e}");
}

#[test]
fn in_cluster_reads_the_service_account() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ca.crt"), PEM).unwrap();
    std::fs::write(dir.path().join("token"), "sa-t0ken").unwrap();
    let env = |k: &str| match k {
        "KUBERNETES_SERVICE_HOST" => Some("fd00::1".to_owned()),
        "KUBERNETES_SERVICE_PORT" => Some("443".to_owned()),
        _ => None,
    };
    let c = in_cluster(dir.path(), env).unwrap();
    assert_eq!(c.server, "https://[fd00::1]:443");
    assert_eq!(c.ca.as_deref(), Some(PEM.as_bytes()));
    assert_eq!(c.bearer, Bearer::File(dir.path().join("token")));
    let e = in_cluster(dir.path(), |_| None).unwrap_err();
    assert!(e.contains("KUBERNETES_SERVICE_HOST"), "{e}");
}

#[test]
fn debug_shows_neither_token_nor_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = kubeconfig(dir.path());
    let c = load(Some(&path), None).unwrap();
    let text = format!("{c:?}");
    assert!(!text.contains("inline-t0ken") && !text.contains("KEY"), "{text}");
    assert!(text.contains("[::1]:6443"), "{text}");
}

#[test]
fn an_exec_plugin_is_read_with_its_command_args_and_env() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config");
    std::fs::write(
        &path,
        "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h'}}]\n\
         users:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n\
         \x20     command: bin/get-token\n      args: [--cluster, c]\n\
         \x20     env: [{name: REGION, value: eu}]\n      interactiveMode: IfAvailable\n\
         contexts: [{name: x, context: {cluster: c, user: u}}]\n",
    )
    .unwrap();
    let c = load(Some(&path), None).unwrap();
    let Bearer::Exec(plugin) = &c.bearer else { panic!("{c:?}") };
    assert_eq!(plugin.api_version, "client.authentication.k8s.io/v1");
    assert_eq!(plugin.command, dir.path().join("bin/get-token"));
    assert_eq!(plugin.args, ["--cluster", "c"]);
    assert_eq!(plugin.env, [("REGION".to_owned(), "eu".to_owned())]);
    let text = format!("{c:?}");
    assert!(!text.contains("--cluster") && !text.contains("REGION"), "{text}");
}
