//! The deploy guide's check (step 7), with the real `holm` binary against a
//! real holmd and real boxes:
//!
//! ```sh
//! curl https://boxes.example.com/v1/health
//! BOX=$(holm new --ttl 10)
//! holm screenshot "$BOX" check.png
//! holm rm "$BOX"
//! ```

use std::process::{Command, Output};

use holm_testkit::{TestServer, container_exists, e2e_enabled};

fn holm(server: &TestServer, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(args)
        .env("HOLM_SERVER_URL", &server.url)
        .env("HOLM_SERVER_TOKEN", &server.token)
        .output()
        .expect("run holm")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

// The server runs in this process while `holm` blocks this thread: the
// server needs a thread of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn step_seven_of_the_deploy_guide_works() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let health = server.client.health().await.expect("health");
    assert_eq!(health.status, "ok");

    let new = holm(&server, &["new", "--ttl", "10"]);
    assert!(new.status.success(), "holm new failed: {}", stderr(&new));
    // `holm new` prints the id and nothing else.
    let id = stdout(&new).trim_end_matches('\n').to_owned();
    assert!(holm::ids::is_box_id(&id), "holm new printed {id:?}");
    assert!(container_exists(&id).await);
    let info = server.client.get_box(&id, None).await.unwrap();
    let lifetime = humantime::parse_rfc3339(&info.expires_at)
        .unwrap()
        .duration_since(humantime::parse_rfc3339(&info.created_at).unwrap())
        .unwrap();
    assert_eq!(lifetime.as_secs(), 600, "--ttl 10 is ten minutes");

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("check.png");
    let shot = holm(&server, &["screenshot", &id, file.to_str().unwrap()]);
    assert!(shot.status.success(), "{}", stderr(&shot));
    let bytes = std::fs::read(&file).unwrap();
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()));
    let info = decoder.read_info().expect("check.png is a PNG").info().clone();
    assert_eq!((info.width, info.height), (1280, 800));

    let rm = holm(&server, &["rm", &id]);
    assert!(rm.status.success(), "{}", stderr(&rm));
    assert_eq!(stdout(&rm).trim(), id);
    assert!(!container_exists(&id).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_cp_and_errors_behave_like_a_shell_tool() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let id = server.client.create_box(&Default::default(), Some(600)).await.unwrap().id;

    // exec streams output and exits with the command's code.
    let out =
        holm(&server, &["exec", &id, "--", "sh", "-c", "echo to-out; echo to-err >&2; exit 7"]);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(stdout(&out), "to-out\n");
    assert_eq!(stderr(&out), "to-err\n");

    // cp both ways.
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("in.txt");
    std::fs::write(&local, "über\n").unwrap();
    let up = holm(&server, &["cp", local.to_str().unwrap(), &format!("{id}:/root/in.txt")]);
    assert!(up.status.success(), "{}", stderr(&up));
    let back = dir.path().join("back.txt");
    let down = holm(&server, &["cp", &format!("{id}:/root/in.txt"), back.to_str().unwrap()]);
    assert!(down.status.success(), "{}", stderr(&down));
    assert_eq!(std::fs::read_to_string(&back).unwrap(), "über\n");

    // Input commands work and --json prints JSON.
    let click = holm(&server, &["--json", "click", &id, "0", "0"]);
    assert!(click.status.success(), "{}", stderr(&click));
    let v: serde_json::Value = serde_json::from_str(&stdout(&click)).unwrap();
    assert_eq!(v["cursor"], serde_json::json!({"x": 0, "y": 0}));

    // An error: the one shape on standard error, a non-zero exit.
    let bad = holm(&server, &["--json", "get", "box_doesnotexist"]);
    assert!(!bad.status.success());
    assert!(stdout(&bad).is_empty());
    let e: serde_json::Value = serde_json::from_str(&stderr(&bad)).unwrap();
    assert_eq!(e["error"]["code"], "not_found");
    assert!(e["error"]["request_id"].as_str().unwrap().starts_with("req_"));
    let bad = holm(&server, &["key", &id, "ctrl+shft+t"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("shft"), "{}", stderr(&bad));

    // Without the token, refused.
    let anon = Command::new(env!("CARGO_BIN_EXE_holm"))
        .args(["--json", "ls"])
        .env("HOLM_SERVER_URL", &server.url)
        .env_remove("HOLM_SERVER_TOKEN")
        .output()
        .unwrap();
    assert!(!anon.status.success());
    assert!(stderr(&anon).contains("unauthorized"));
    server.client.remove_box(&id).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_runtimes_and_apps_are_listed() {
    if !e2e_enabled().await {
        return;
    }
    let server = TestServer::start().await;
    let image = holm_testkit::ensure_image().await;

    // The default image exists already: the build answers its tag at once.
    let build = holm(&server, &["image", "build", "docker"]);
    assert!(build.status.success(), "{}", stderr(&build));
    assert_eq!(stdout(&build).trim(), image);
    let build = holm(&server, &["--json", "image", "build", "docker"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&build)).unwrap();
    assert_eq!(v["cached"], true);

    let ls = holm(&server, &["--json", "image", "ls"]);
    assert!(ls.status.success(), "{}", stderr(&ls));
    let list: serde_json::Value = serde_json::from_str(&stdout(&ls)).unwrap();
    assert!(list.as_array().unwrap().iter().any(|i| i["image"] == image.as_str()), "{list}");

    let bad = holm(&server, &["image", "build", "docker", "--app", "notepad++"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("vscode"), "the refusal lists the apps: {}", stderr(&bad));

    let apps = holm(&server, &["--json", "apps"]);
    let apps: serde_json::Value = serde_json::from_str(&stdout(&apps)).unwrap();
    let vscode = apps
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "vscode")
        .expect("vscode is in the catalogue");
    assert_eq!(vscode["third_party"], true);

    let rt = holm(&server, &["runtime", "ls"]);
    assert!(rt.status.success());
    assert!(
        stdout(&rt).lines().any(|l| l.starts_with("docker (default)") && l.contains("available")),
        "{}",
        stdout(&rt)
    );
}
