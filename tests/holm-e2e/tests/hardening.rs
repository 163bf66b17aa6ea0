//! Boxes are confined by default, and a runtime's table in the runtimes
//! file can widen it: real boxes on each container engine (Docker and
//! podman, one scenario for both), looked at from the engine (its inspect
//! API), from inside (`/proc`, `ps`), and from the network (connections
//! from a box to another box, to the host and to link-local addresses).
//! podman boxes do not join holm's guarded network (podman 4.3 has no
//! `enable_icc=false`): the scenario checks that they reach each other and
//! the host, as docs/security.md says. See docs/security.md.

use std::collections::BTreeMap;

use holm_client::BoxClient;
use holm_proto::host::{BoxSpec, BoxState, CreateBox, Placement};
use holm_proto::viewer::CreateViewer;
use holm_testkit::TestServer;
use holm_testkit::matrix::{Engine, Target};

holm_testkit::suite!(boxes_are_confined_by_default_and_a_runtime_can_widen_it:
    docker [x11],
    podman [x11],
);

async fn new_box(server: &TestServer, runtime: &str, browser: bool) -> String {
    let request = CreateBox {
        spec: BoxSpec { browser: Some(browser), ..BoxSpec::default() },
        placement: Placement { runtime: Some(runtime.to_owned()), ..Placement::default() },
    };
    let info = server.client.create_box(&request, Some(600)).await.expect("create a box");
    assert_eq!(info.state, BoxState::Running, "{info:?}");
    info.id
}

async fn sh(b: &BoxClient, script: &str) -> String {
    let r = b.exec(&["bash", "-c", script]).await.expect("run a command in the box");
    r.stdout + &r.stderr
}

/// Whether a TCP connection from the box to `ip:port` opens, and what the
/// box saw when it did not.
async fn connects(b: &BoxClient, ip: &str, port: u16) -> (bool, String) {
    let out = sh(
        b,
        &format!(
            "timeout 10 bash -c 'exec 3<>/dev/tcp/{ip}/{port}' 2>&1 && echo OPEN || echo CLOSED"
        ),
    )
    .await;
    (out.contains("OPEN"), out)
}

/// A box's network as its engine reports it: the network's name, the box's
/// address and the network's gateway (the host's address on it).
async fn network(target: &Target, id: &str) -> (String, String, String) {
    let c = target.container(id).await;
    let networks = c.network_settings.unwrap().networks.unwrap();
    assert_eq!(networks.len(), 1, "{networks:?}");
    let (name, n) = networks.into_iter().next().unwrap();
    (name, n.ip_address.unwrap(), n.gateway.unwrap())
}

/// The capability bits of a `/proc/*/status` line such as `CapEff:\t...`.
fn caps(status: &str, field: &str) -> u64 {
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    u64::from_str_radix(line.split_whitespace().nth(1).unwrap(), 16).unwrap()
}

/// The bit of a capability, by the name Docker and podman use.
fn cap_bit(name: &str) -> u64 {
    let bit = match name {
        "CHOWN" => 0,
        "DAC_OVERRIDE" => 1,
        "FOWNER" => 3,
        "FSETID" => 4,
        "KILL" => 5,
        "SETGID" => 6,
        "SETUID" => 7,
        "NET_BIND_SERVICE" => 10,
        "NET_RAW" => 13,
        "SYS_CHROOT" => 18,
        other => panic!("no bit known for {other}"),
    };
    1 << bit
}

/// A field of `/proc/self/status`, such as `NoNewPrivs`.
fn status_field<'a>(status: &'a str, field: &str) -> &'a str {
    let line = status.lines().find(|l| l.starts_with(&format!("{field}:"))).unwrap();
    line.split_whitespace().nth(1).unwrap()
}

async fn boxes_are_confined_by_default_and_a_runtime_can_widen_it(target: Target) {
    let engine = target.engine;
    let docker = engine == Engine::Docker;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runtimes.toml");
    // The widened runtime: host_access is Docker's alone (the runtimes file
    // refuses it on podman).
    let host_access = if docker { "host_access = true\n" } else { "" };
    std::fs::write(
        &file,
        format!(
            "[runtimes.open]\nprovider = \"{}\"\n{host_access}seccomp = \"unconfined\"\npids_limit = 2048\n",
            engine.name()
        ),
    )
    .unwrap();
    target.ensure_image().await;
    let server = TestServer::start_without_image(|c| {
        c.config_file = Some(file.clone());
        c.runtimes = Some(vec![engine.name().into(), "open".into()]);
    })
    .await;
    let a = new_box(&server, engine.name(), true).await;
    let b = new_box(&server, engine.name(), false).await;
    let c = new_box(&server, "open", true).await;
    let (ba, bc) = (server.client.boxed(&a), server.client.boxed(&c));

    // From the engine: the limits.
    let host = target.container(&a).await.host_config.unwrap();
    assert_eq!(
        (host.pids_limit, host.memory, host.nano_cpus),
        (Some(4096), Some(4 << 30), Some(2_000_000_000))
    );
    let open = target.container(&c).await.host_config.unwrap();
    assert_eq!(open.pids_limit, Some(2048));
    // The container log rotates (a box can write to it without end).
    let log = host.log_config.clone().expect("a log config");
    assert_eq!(log.typ.as_deref(), Some("json-file"), "{log:?}");
    if docker {
        let want = BTreeMap::from([("max-file", "3"), ("max-size", "10m")]);
        let got = log.config.clone().unwrap_or_default();
        let got: BTreeMap<&str, &str> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(got, want, "{log:?}");
    } else {
        // podman's Docker API leaves the options out of its inspect; its
        // own shows the size it truncates at.
        let out = std::process::Command::new("podman")
            .args(["inspect", "--format", "{{.HostConfig.LogConfig.Size}}"])
            .arg(holm::runtime::docker::container_name(&a))
            .output()
            .expect("podman inspect");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "10MB", "{out:?}");
    }

    // From inside: commands are root with exactly the kept capabilities
    // (podman's boxes also SYS_CHROOT, for Chromium's own sandbox), no new
    // privileges, and the engine's seccomp filter unless the runtime says
    // unconfined.
    let mut kept: Vec<&str> = holm::runtime::docker::KEPT_CAPABILITIES.to_vec();
    if !docker {
        kept.push("SYS_CHROOT");
    }
    let want = kept.iter().map(|c| cap_bit(c)).fold(0, |m, b| m | b);
    let status = sh(&ba, "cat /proc/self/status").await;
    assert_eq!(caps(&status, "CapEff:"), want, "{kept:?}: {status}");
    assert_eq!(caps(&status, "CapBnd:"), want, "nothing more can be gained: {status}");
    assert_eq!(status_field(&status, "NoNewPrivs"), "1", "{status}");
    assert_eq!(status_field(&status, "Seccomp"), "2", "a seccomp filter: {status}");
    let open_status = sh(&bc, "cat /proc/self/status").await;
    assert_eq!(status_field(&open_status, "Seccomp"), "0", "unconfined: {open_status}");

    // The desktop is the user `holm`; the guest root. The VNC server starts
    // when a viewer first asks for it: a viewer's stream starts it here.
    let grant = server.client.create_viewer(&a, &CreateViewer::default()).await.unwrap();
    let _viewer = holm_testkit::rfb::open(&grant.url).await.expect("a viewer's stream");
    let users = sh(
        &ba,
        "ps -eo user:16,args | grep -E 'Xvfb|fluxbox|x11vnc|chromium|holm-guest' | grep -v grep",
    )
    .await;
    let mut by_program: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for line in users.lines() {
        let (user, args) = line.split_once(' ').unwrap();
        for program in ["Xvfb", "fluxbox", "x11vnc", "chromium", "holm-guest"] {
            if args.contains(program) {
                by_program.entry(program).or_default().push(user.trim());
            }
        }
    }
    assert_eq!(by_program.get("holm-guest").map(Vec::as_slice), Some(&["root"][..]), "{users}");
    for program in ["Xvfb", "fluxbox", "x11vnc", "chromium"] {
        let who = by_program.get(program).unwrap_or_else(|| panic!("{program} runs: {users}"));
        assert!(who.iter().all(|u| *u == "holm"), "{program} runs as {who:?}: {users}");
    }
    // Chromium's own sandbox where the runtime allows user namespaces: an
    // unconfined runtime, and podman's default profile; not under Docker's
    // default profile.
    let browser = |b: &BoxClient| {
        let b = b.clone();
        async move { sh(&b, "ps -eo args | grep -- --remote-debugging-port | grep -v grep").await }
    };
    let confined = browser(&ba).await;
    assert!(!confined.is_empty(), "Chromium runs");
    assert_eq!(confined.contains("--no-sandbox"), docker, "{confined}");
    let sandboxed = browser(&bc).await;
    assert!(!sandboxed.is_empty() && !sandboxed.contains("--no-sandbox"), "{sandboxed}");

    // From the network: another box's guest port, from the first; the
    // host, on its address on the box's network, where this test listens
    // on every address.
    let (net, _, gateway) = network(&target, &a).await;
    let (_, b_ip, _) = network(&target, &b).await;
    let listener = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (to_box, said_box) = connects(&ba, &b_ip, holm_proto::guest::DEFAULT_GUEST_PORT).await;
    let (to_host, said_host) = connects(&ba, &gateway, port).await;
    if docker {
        assert_eq!(net, "holm-boxes");
        assert!(!to_box, "a box reached another box's guest: {said_box}");
        assert!(!to_host, "a box reached the host: {said_host}");
        assert!(said_host.contains("No route to host"), "refused at once: {said_host}");
        let (_, _, open_gateway) = network(&target, &c).await;
        let (open, said) = connects(&bc, &open_gateway, port).await;
        assert!(open, "a host_access box could not reach the host: {said}");
        // Link-local (cloud metadata): the rule is there before anything
        // is sent.
        let rules = std::process::Command::new("iptables")
            .args(["-S", "HOLM-BOXES-FORWARD"])
            .output()
            .unwrap();
        let rules = String::from_utf8_lossy(&rules.stdout);
        assert!(rules.contains("169.254.0.0/16") && rules.contains("REJECT"), "{rules}");
        let (open, said) = connects(&ba, "169.254.169.254", 80).await;
        assert!(!open && said.contains("No route to host"), "{said}");
    } else {
        // What docs/security.md says of podman: its default network, where
        // boxes reach each other and the host. When podman gains a guarded
        // network this fails, and the docs and this branch change.
        assert_ne!(net, "holm-boxes");
        assert!(to_box, "podman boxes reach each other (documented): {said_box}");
        assert!(to_host, "podman boxes reach the host (documented): {said_host}");
    }

    for id in [&a, &b, &c] {
        server.client.remove_box(id).await.unwrap();
    }
    drop(listener);
}
