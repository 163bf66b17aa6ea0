//! The guest supervises its desktop: components come up, report readiness,
//! and come back when they die. The API refuses requests without the secret.

mod common;

use std::time::Duration;

use common::{Guest, Options, Profile};

crate::profiles!(
    components_become_ready_and_health_needs_no_secret,
    a_killed_component_comes_back,
    a_killed_display_server_comes_back_with_its_clients,
    chromium_answers_devtools_on_loopback,
    the_secret_is_not_left_in_any_environment,
);

async fn components_become_ready_and_health_needs_no_secret(p: Profile) {
    let g = Guest::start(Options { profile: p, vnc: "on", ..Options::default() }).await;
    let health = g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let names: Vec<&str> = health["components"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    match p {
        Profile::X11 => assert_eq!(names, ["xvfb", "fluxbox", "x11vnc", "dbus"]),
        Profile::Wayland => assert_eq!(names, ["sway", "wayvnc", "dbus"]),
    }
    // The VNC server answers the RFB handshake on loopback.
    use tokio::io::AsyncReadExt;
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", g.vnc_port_base)).await.unwrap();
    let mut banner = [0u8; 12];
    s.read_exact(&mut banner).await.unwrap();
    assert!(banner.starts_with(b"RFB 003."), "{banner:?}");
}

/// The component after the display server: fluxbox, or wayvnc.
async fn a_killed_component_comes_back(p: Profile) {
    let g = Guest::start(Options { profile: p, vnc: "on", ..Options::default() }).await;
    let health = g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let victim = &health["components"][1];
    let name = match p {
        Profile::X11 => "fluxbox",
        Profile::Wayland => "wayvnc",
    };
    assert_eq!(victim["name"], name);
    let pid = victim["pid"].as_i64().unwrap() as i32;
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let health = g
        .wait_until(Duration::from_secs(30), |h| {
            let c = &h["components"][1];
            c["restarts"] == 1 && c["state"] == "ready" && c["pid"].as_i64() != Some(i64::from(pid))
        })
        .await;
    assert_eq!(health["components"][1]["last_exit"], "signal SIGKILL");
}

async fn a_killed_display_server_comes_back_with_its_clients(p: Profile) {
    let g = Guest::start(Options { profile: p, vnc: "on", ..Options::default() }).await;
    let health = g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    assert_eq!(health["components"][0]["name"], g.display_server());
    let pid = health["components"][0]["pid"].as_i64().unwrap() as i32;
    // SAFETY: kill takes plain integers.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    // Its clients lose it, end, and come back once it is up again; the
    // session bus is no client of it and keeps running.
    let h = g
        .wait_until(Duration::from_secs(30), |h| {
            h["status"] == "ready"
                && h["components"][0]["restarts"] == 1
                && h["components"].as_array().unwrap()[1..]
                    .iter()
                    .filter(|c| c["name"] != "dbus")
                    .all(|c| c["restarts"].as_u64() >= Some(1))
        })
        .await;
    let bus = h["components"].as_array().unwrap().iter().find(|c| c["name"] == "dbus").cloned();
    assert_eq!(bus.map(|c| c["restarts"].clone()), Some(serde_json::json!(0)), "{h}");
}

async fn chromium_answers_devtools_on_loopback(p: Profile) {
    let g = Guest::start(Options { profile: p, chromium: true, ..Options::default() }).await;
    g.wait_until(Duration::from_secs(60), |h| h["status"] == "ready").await;
    let v: serde_json::Value = g
        .http
        .get(format!("http://127.0.0.1:{}/json/version", g.devtools_port_base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(v["Browser"].as_str().unwrap().contains("Chrome"), "{v}");
}

#[tokio::test]
async fn every_route_but_health_needs_the_secret() {
    let g = Guest::start(Options::default()).await;
    for path in ["/v1/info", "/v1/screens", "/v1/nothing-here"] {
        let r = g.http.get(format!("{}{path}", g.url)).send().await.unwrap();
        assert_eq!(r.status(), 401, "{path}");
        assert!(r.headers().contains_key("x-request-id"));
        let body: serde_json::Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "unauthorized");
        assert!(body["error"]["request_id"].as_str().unwrap().starts_with("req_"));
        let r = g
            .http
            .get(format!("{}{path}", g.url))
            .bearer_auth("wrong-secret-wrong-secret")
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{path}");
    }
    let r = g.get("/v1/info").send().await.unwrap();
    assert_eq!(r.status(), 200);
    let info: serde_json::Value = r.json().await.unwrap();
    assert_eq!(info["screens"][0]["width"], 1280);
    let r = g.get("/v1/nothing-here").header("x-request-id", "req_mine").send().await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["x-request-id"], "req_mine");
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "route_not_found");
    assert_eq!(body["error"]["request_id"], "req_mine");
}

async fn the_secret_is_not_left_in_any_environment(p: Profile) {
    let g = Guest::start(Options { profile: p, vnc: "on", ..Options::default() }).await;
    let health = g.wait_until(Duration::from_secs(30), |h| h["status"] == "ready").await;
    let environ = std::fs::read(format!("/proc/{}/environ", g.pid())).unwrap();
    assert!(
        !String::from_utf8_lossy(&environ).contains(&g.secret),
        "the guest's /proc environ shows the secret"
    );
    for c in health["components"].as_array().unwrap() {
        let pid = c["pid"].as_u64().unwrap();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
        assert!(
            !String::from_utf8_lossy(&environ).contains(&g.secret),
            "{} inherited the secret",
            c["name"]
        );
    }
    // The API still knows it.
    assert_eq!(g.get("/v1/info").send().await.unwrap().status(), 200);
}
