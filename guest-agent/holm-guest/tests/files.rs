//! Files, against the real guest binary: streamed reads and atomic writes,
//! listings, stat, mkdir, remove, rename, and an error for every way a path
//! can be wrong, each naming the path.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use bytes::Bytes;
use common::{Guest, Options};
use serde_json::{Value, json};

async fn guest() -> Guest {
    Guest::start(Options::default()).await
}

fn p(g: &Guest, rel: &str) -> String {
    format!("{}/{rel}", g.home.display())
}

/// A route with a query string, each value percent-encoded.
fn with_query<K: AsRef<str>, V: AsRef<str>>(route: &str, pairs: &[(K, V)]) -> String {
    let enc = |s: &str| -> String {
        s.bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect()
    };
    let q: Vec<String> =
        pairs.iter().map(|(k, v)| format!("{}={}", enc(k.as_ref()), enc(v.as_ref()))).collect();
    format!("{route}?{}", q.join("&"))
}

async fn put(g: &Guest, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let r =
        g.put(&with_query("/v1/files/content", &[("path", path)])).body(body).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn read(g: &Guest, path: &str) -> reqwest::Response {
    g.get(&with_query("/v1/files/content", &[("path", path)])).send().await.unwrap()
}

async fn get_json(g: &Guest, route: &str, query: &[(&str, &str)]) -> (u16, Value) {
    let r = g.get(&with_query(route, query)).send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap())
}

async fn post(g: &Guest, route: &str, body: Value) -> (u16, Value) {
    let r = g.post(route).json(&body).send().await.unwrap();
    let status = r.status().as_u16();
    let text = r.text().await.unwrap();
    (status, if text.is_empty() { Value::Null } else { serde_json::from_str(&text).unwrap() })
}

/// Asserts an error response: its status, its code, and that it names `path`.
fn assert_error(status: u16, v: &Value, want_status: u16, code: &str, path: &str) {
    assert_eq!(status, want_status, "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains(path),
        "the message names {path}: {v}"
    );
    assert_eq!(v["error"]["details"]["path"], path, "{v}");
}

fn issue_paths(v: &Value) -> Vec<String> {
    v["error"]["details"]["issues"]
        .as_array()
        .unwrap_or_else(|| panic!("no issues in {v}"))
        .iter()
        .map(|i| i["path"].as_str().unwrap().to_owned())
        .collect()
}

/// Bytes that are not text and do not repeat in short cycles.
fn noise(len: usize) -> Vec<u8> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[tokio::test]
async fn text_binary_and_unicode_names_round_trip() {
    let g = guest().await;
    let path = p(&g, "notes.txt");
    let (status, info) = put(&g, &path, "hello\n").await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["path"], path);
    assert_eq!(info["name"], "notes.txt");
    assert_eq!(info["type"], "file");
    assert_eq!(info["size"], 6);
    assert_eq!(info["mode"], "644");
    assert!(info["modified"].as_str().unwrap().ends_with('Z'));
    let r = read(&g, &path).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/octet-stream");
    assert_eq!(r.content_length(), Some(6));
    assert_eq!(r.text().await.unwrap(), "hello\n");

    let binary: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
    let path = p(&g, "blob.bin");
    put(&g, &path, binary.clone()).await;
    assert_eq!(read(&g, &path).await.bytes().await.unwrap(), binary);

    let path = p(&g, "Ünïcødé 文件 (1) #?&.txt");
    let (status, info) = put(&g, &path, "ünï\u{1F600}").await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["name"], "Ünïcødé 文件 (1) #?&.txt");
    assert_eq!(read(&g, &path).await.text().await.unwrap(), "ünï\u{1F600}");
    assert!(Path::new(&path).is_file());

    // Files that report size 0 but have content, as in /proc, are read to
    // their end.
    let r = read(&g, "/proc/version").await;
    assert_eq!(r.status(), 200);
    assert!(r.text().await.unwrap().starts_with("Linux"));

    let path = p(&g, "empty");
    let (_, info) = put(&g, &path, "").await;
    assert_eq!(info["size"], 0);
    let r = read(&g, &path).await;
    assert_eq!(r.status(), 200);
    assert!(r.bytes().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_20_mib_file_streams_both_ways() {
    let g = guest().await;
    let data = noise(20 << 20);
    let chunks: Vec<Result<Bytes, std::io::Error>> =
        data.chunks(1 << 20).map(|c| Ok(Bytes::copy_from_slice(c))).collect();
    // Sent as a stream, without a length: well past any 2 MB body limit.
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
    let path = p(&g, "big/file.bin");
    let (status, info) = put(&g, &path, body).await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(info["size"], 20 << 20);
    assert!(std::fs::read(&path).unwrap() == data, "the file on disk is what was sent");
    let mut r = read(&g, &path).await;
    assert_eq!(r.content_length(), Some(20 << 20));
    let mut got = Vec::with_capacity(20 << 20);
    let mut pieces = 0;
    while let Some(chunk) = r.chunk().await.unwrap() {
        got.extend_from_slice(&chunk);
        pieces += 1;
    }
    assert!(pieces > 1, "the body came in pieces");
    assert!(got == data, "the file read back is what was sent");
}

#[tokio::test]
async fn a_write_replaces_the_file_atomically_and_keeps_its_mode() {
    let g = guest().await;
    // A directory of its own: the desktop writes dotfiles into home.
    std::fs::create_dir(p(&g, "etc")).unwrap();
    let path = p(&g, "etc/config.ini");
    std::fs::write(&path, "old").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A second name for the old file: a rename leaves it untouched, a
    // rewrite in place would change it.
    std::fs::hard_link(&path, p(&g, "etc/old-link")).unwrap();
    let (status, info) = put(&g, &path, "new content").await;
    assert_eq!(status, 200, "{info}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new content");
    assert_eq!(std::fs::read_to_string(p(&g, "etc/old-link")).unwrap(), "old");
    assert_eq!(info["mode"], "600", "a replaced file keeps its mode");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o600);
    // No temporary file is left beside it.
    let mut names: Vec<String> = std::fs::read_dir(p(&g, "etc"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["config.ini", "old-link"]);

    // Writing through a symlink writes the file it points to.
    std::os::unix::fs::symlink(&path, p(&g, "link.ini")).unwrap();
    let (status, _) = put(&g, &p(&g, "link.ini"), "via link").await;
    assert_eq!(status, 200);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "via link");
    assert!(std::fs::symlink_metadata(p(&g, "link.ini")).unwrap().file_type().is_symlink());
}

#[tokio::test]
async fn parents_are_made_and_the_mode_is_set() {
    let g = guest().await;
    let path = p(&g, "a/b/c/run.sh");
    let r = g
        .put(&with_query("/v1/files/content", &[("path", path.as_str()), ("mode", "755")]))
        .body("#!/bin/sh\necho ran\n")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let info: Value = r.json().await.unwrap();
    assert_eq!(info["mode"], "755");
    assert!(std::fs::metadata(p(&g, "a/b/c")).unwrap().is_dir());
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o755);
    // It is executable indeed.
    let (_, out) = post(&g, "/v1/commands/run", json!({"argv": [path]})).await;
    assert_eq!(out["stdout"], "ran\n");

    let r = g
        .put(&with_query("/v1/files/content", &[("path", path.as_str()), ("mode", "9x")]))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(issue_paths(&v), ["mode"]);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "#!/bin/sh\necho ran\n",
        "a refused write changes nothing"
    );
}

#[tokio::test]
async fn listing_goes_to_the_depth_asked_in_tree_order_without_following_links() {
    let g = guest().await;
    let d = p(&g, "d");
    for dir in ["d/sub/deeper", "d/.hidden"] {
        std::fs::create_dir_all(p(&g, dir)).unwrap();
    }
    for (f, text) in [("d/a.txt", "aaa"), ("d/sub/b.txt", "b"), ("d/sub/deeper/c.txt", "c")] {
        std::fs::write(p(&g, f), text).unwrap();
    }
    std::os::unix::fs::symlink(p(&g, "d/sub"), p(&g, "d/link")).unwrap();
    let list = |depth: &'static str| {
        let d = d.clone();
        let g = &g;
        async move {
            let (status, v) =
                get_json(g, "/v1/files/list", &[("path", d.as_str()), ("depth", depth)]).await;
            assert_eq!(status, 200, "{v}");
            v
        }
    };
    let rel = |v: &Value| -> Vec<String> {
        v["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().strip_prefix(&d).unwrap().to_owned())
            .collect()
    };
    let one = list("1").await;
    assert_eq!(rel(&one), ["/.hidden", "/a.txt", "/link", "/sub"]);
    let entries = one["data"].as_array().unwrap();
    assert_eq!(entries[1]["type"], "file");
    assert_eq!(entries[1]["size"], 3);
    assert_eq!(entries[1]["name"], "a.txt");
    assert_eq!(entries[2]["type"], "symlink");
    assert_eq!(entries[2]["symlink_target"], p(&g, "d/sub"));
    assert_eq!(entries[3]["type"], "dir");
    assert_eq!(one["next_cursor"], Value::Null);
    assert_eq!(
        rel(&list("2").await),
        ["/.hidden", "/a.txt", "/link", "/sub", "/sub/b.txt", "/sub/deeper"]
    );
    let all = list("32").await;
    assert_eq!(
        rel(&all),
        ["/.hidden", "/a.txt", "/link", "/sub", "/sub/b.txt", "/sub/deeper", "/sub/deeper/c.txt"],
        "the symlinked directory is not entered"
    );
    // The default depth is 1.
    let (_, v) = get_json(&g, "/v1/files/list", &[("path", d.as_str())]).await;
    assert_eq!(rel(&v), rel(&one));

    // Pages: limit and next_cursor walk the same entries.
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut q =
            vec![("path", d.clone()), ("depth", "32".to_owned()), ("limit", "2".to_owned())];
        if let Some(c) = &cursor {
            q.push(("cursor", c.clone()));
        }
        let r = g.get(&with_query("/v1/files/list", &q)).send().await.unwrap();
        let page: Value = r.json().await.unwrap();
        assert!(page["data"].as_array().unwrap().len() <= 2);
        seen.extend(rel(&page));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, rel(&all));

    for bad in ["0", "33"] {
        let (status, v) =
            get_json(&g, "/v1/files/list", &[("path", d.as_str()), ("depth", bad)]).await;
        assert_eq!(status, 400, "{v}");
        assert_eq!(issue_paths(&v), ["depth"]);
    }
}

#[tokio::test]
async fn stat_answers_the_entry_or_exists_false() {
    let g = guest().await;
    let file = p(&g, "f.txt");
    std::fs::write(&file, "12345").unwrap();
    let (status, v) = get_json(&g, "/v1/files/stat", &[("path", &file)]).await;
    assert_eq!(status, 200);
    assert_eq!(v["exists"], true);
    assert_eq!(v["type"], "file");
    assert_eq!(v["size"], 5);
    assert_eq!(v["path"], file);
    let (_, v) = get_json(&g, "/v1/files/stat", &[("path", g.home.to_str().unwrap())]).await;
    assert_eq!(v["type"], "dir");
    std::os::unix::fs::symlink("f.txt", p(&g, "ln")).unwrap();
    let (_, v) = get_json(&g, "/v1/files/stat", &[("path", &p(&g, "ln"))]).await;
    assert_eq!(v["type"], "symlink");
    assert_eq!(v["symlink_target"], "f.txt");
    for missing in [p(&g, "nothing"), p(&g, "f.txt/under-a-file")] {
        let (status, v) = get_json(&g, "/v1/files/stat", &[("path", &missing)]).await;
        assert_eq!(status, 200, "{v}");
        assert_eq!(v, json!({"exists": false}));
    }
}

#[tokio::test]
async fn mkdir_remove_and_rename() {
    let g = guest().await;
    // mkdir makes parents by default and accepts a directory that exists.
    let dir = p(&g, "m/n/o");
    let (status, v) = post(&g, "/v1/files/mkdir", json!({"path": dir})).await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["type"], "dir");
    assert!(Path::new(&dir).is_dir());
    let (status, _) = post(&g, "/v1/files/mkdir", json!({"path": dir})).await;
    assert_eq!(status, 200);

    // remove: a file, an empty directory, a whole tree.
    std::fs::write(p(&g, "m/n/o/f"), "x").unwrap();
    let (status, _) = post(&g, "/v1/files/remove", json!({"path": p(&g, "m/n/o/f")})).await;
    assert_eq!(status, 204);
    assert!(!Path::new(&p(&g, "m/n/o/f")).exists());
    let (status, _) = post(&g, "/v1/files/remove", json!({"path": dir})).await;
    assert_eq!(status, 204, "an empty directory needs no recursive");
    std::fs::write(p(&g, "m/n/deep"), "x").unwrap();
    let (status, _) =
        post(&g, "/v1/files/remove", json!({"path": p(&g, "m"), "recursive": true})).await;
    assert_eq!(status, 204);
    assert!(!Path::new(&p(&g, "m")).exists());
    // A symlink is removed, not what it points to.
    std::fs::create_dir(p(&g, "keep")).unwrap();
    std::fs::write(p(&g, "keep/x"), "x").unwrap();
    std::os::unix::fs::symlink(p(&g, "keep"), p(&g, "keep-link")).unwrap();
    let (status, _) =
        post(&g, "/v1/files/remove", json!({"path": p(&g, "keep-link"), "recursive": true})).await;
    assert_eq!(status, 204);
    assert!(Path::new(&p(&g, "keep/x")).exists());
    let (status, v) = post(&g, "/v1/files/remove", json!({"path": "/", "recursive": true})).await;
    assert_eq!(status, 400, "{v}");

    // rename: into a new directory, refusing and then replacing a target.
    std::fs::write(p(&g, "one"), "1").unwrap();
    std::fs::write(p(&g, "two"), "2").unwrap();
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": p(&g, "one"), "to": p(&g, "new/dir/one")}))
            .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["path"], p(&g, "new/dir/one"));
    assert!(!Path::new(&p(&g, "one")).exists());
    assert_eq!(std::fs::read_to_string(p(&g, "new/dir/one")).unwrap(), "1");
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": p(&g, "two"), "to": p(&g, "new/dir/one")}))
            .await;
    assert_error(status, &v, 409, "already_exists", &p(&g, "new/dir/one"));
    assert_eq!(
        std::fs::read_to_string(p(&g, "two")).unwrap(),
        "2",
        "a refused rename changes nothing"
    );
    assert_eq!(std::fs::read_to_string(p(&g, "new/dir/one")).unwrap(), "1");
    let (status, _) = post(
        &g,
        "/v1/files/rename",
        json!({"from": p(&g, "two"), "to": p(&g, "new/dir/one"), "overwrite": true}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(std::fs::read_to_string(p(&g, "new/dir/one")).unwrap(), "2");
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": p(&g, "new"), "to": p(&g, "new/dir/inside")}))
            .await;
    assert_eq!(status, 400, "{v}");
}

#[tokio::test]
async fn rename_works_across_file_systems() {
    let g = guest().await;
    // /dev/shm is a tmpfs, the home directory is not.
    let other = format!("/dev/shm/holm-files-test-{}", std::process::id());
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(p(&g, "file"), "moved").unwrap();
    std::fs::create_dir_all(p(&g, "tree/sub")).unwrap();
    std::fs::write(p(&g, "tree/sub/leaf"), "leaf").unwrap();
    std::os::unix::fs::symlink("sub/leaf", p(&g, "tree/ln")).unwrap();
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": p(&g, "file"), "to": format!("{other}/file")}))
            .await;
    assert_eq!(status, 200, "{v}");
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": p(&g, "tree"), "to": format!("{other}/tree")}))
            .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["type"], "dir");
    let moved = (
        std::fs::read_to_string(format!("{other}/file")),
        std::fs::read_to_string(format!("{other}/tree/sub/leaf")),
        std::fs::read_link(format!("{other}/tree/ln")),
    );
    let _ = std::fs::remove_dir_all(&other);
    assert_eq!(moved.0.unwrap(), "moved");
    assert_eq!(moved.1.unwrap(), "leaf");
    assert_eq!(moved.2.unwrap(), Path::new("sub/leaf"));
    assert!(!Path::new(&p(&g, "file")).exists() && !Path::new(&p(&g, "tree")).exists());
}

#[tokio::test]
async fn every_file_error_has_its_code_and_names_its_path() {
    let g = guest().await;
    std::fs::write(p(&g, "file.txt"), "x").unwrap();
    std::fs::create_dir_all(p(&g, "full/inner")).unwrap();
    let missing = p(&g, "missing.txt");

    let r = read(&g, &missing).await;
    let (status, v) = (r.status().as_u16(), r.json().await.unwrap());
    assert_error(status, &v, 404, "file_not_found", &missing);
    let (status, v) = get_json(&g, "/v1/files/list", &[("path", &missing)]).await;
    assert_error(status, &v, 404, "file_not_found", &missing);
    let (status, v) = post(&g, "/v1/files/remove", json!({"path": missing})).await;
    assert_error(status, &v, 404, "file_not_found", &missing);
    let (status, v) =
        post(&g, "/v1/files/rename", json!({"from": missing, "to": p(&g, "x")})).await;
    assert_error(status, &v, 404, "file_not_found", &missing);
    let orphan = p(&g, "no/parent");
    let (status, v) = post(&g, "/v1/files/mkdir", json!({"path": orphan, "parents": false})).await;
    assert_error(status, &v, 404, "file_not_found", &orphan);

    let dir = p(&g, "full");
    let r = read(&g, &dir).await;
    let (status, v) = (r.status().as_u16(), r.json().await.unwrap());
    assert_error(status, &v, 409, "is_a_directory", &dir);
    let (status, v) = put(&g, &dir, "x").await;
    assert_error(status, &v, 409, "is_a_directory", &dir);

    let file = p(&g, "file.txt");
    let (status, v) = get_json(&g, "/v1/files/list", &[("path", &file)]).await;
    assert_error(status, &v, 409, "not_a_directory", &file);
    let (status, v) = put(&g, &p(&g, "file.txt/child"), "x").await;
    assert_error(status, &v, 409, "not_a_directory", &file);

    // Even root cannot make files in sysfs.
    let sys = "/sys/holm-files-test";
    let (status, v) = put(&g, sys, "x").await;
    assert_error(status, &v, 403, "permission_denied", sys);
    let (status, v) = post(&g, "/v1/files/mkdir", json!({"path": sys})).await;
    assert_error(status, &v, 403, "permission_denied", sys);

    let (status, v) = post(&g, "/v1/files/mkdir", json!({"path": file, "parents": false})).await;
    assert_error(status, &v, 409, "already_exists", &file);
    let (status, v) = post(&g, "/v1/files/rename", json!({"from": dir, "to": file})).await;
    assert_error(status, &v, 409, "already_exists", &file);

    let (status, v) = post(&g, "/v1/files/remove", json!({"path": dir})).await;
    assert_error(status, &v, 409, "directory_not_empty", &dir);
    assert!(v["error"]["hint"].as_str().unwrap().contains("recursive"));
    assert!(Path::new(&p(&g, "full/inner")).is_dir());
}

#[tokio::test]
async fn relative_paths_and_unknown_fields_are_refused_by_name() {
    let g = guest().await;
    let (status, v) = get_json(&g, "/v1/files/stat", &[("path", "notes.txt")]).await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["code"], "invalid_request");
    assert_eq!(issue_paths(&v), ["path"]);
    assert!(v["error"]["hint"].as_str().unwrap().contains(&p(&g, "notes.txt")), "{v}");
    let (status, v) = put(&g, "rel/file", "x").await;
    assert_eq!(status, 400, "{v}");
    assert!(!g.home.join("rel").exists());
    let (status, v) = post(&g, "/v1/files/rename", json!({"from": "a", "to": "b"})).await;
    assert_eq!(status, 400);
    assert_eq!(issue_paths(&v), ["from", "to"]);

    let r = g.get("/v1/files/stat?path=/tmp&foo=1&bar=2").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let v: Value = r.json().await.unwrap();
    assert_eq!(issue_paths(&v), ["foo", "bar"]);
    let (status, v) =
        post(&g, "/v1/files/mkdir", json!({"path": "/tmp/x", "parent": true, "mode": 1})).await;
    assert_eq!(status, 400);
    assert_eq!(issue_paths(&v), ["mode", "parent"]);
    let (status, v) = get_json(&g, "/v1/files/list", &[]).await;
    assert_eq!(status, 400);
    assert_eq!(issue_paths(&v), ["path"]);
}

#[tokio::test]
async fn every_file_route_needs_the_secret() {
    let g = guest().await;
    let target = p(&g, "should-not-exist");
    let routes = [
        (reqwest::Method::GET, "/v1/files/content"),
        (reqwest::Method::PUT, "/v1/files/content"),
        (reqwest::Method::GET, "/v1/files/list"),
        (reqwest::Method::GET, "/v1/files/stat"),
        (reqwest::Method::POST, "/v1/files/mkdir"),
        (reqwest::Method::POST, "/v1/files/remove"),
        (reqwest::Method::POST, "/v1/files/rename"),
    ];
    for (method, route) in routes {
        let r = g
            .http
            .request(
                method.clone(),
                format!("{}{}", g.url, with_query(route, &[("path", target.as_str())])),
            )
            .header("authorization", "Bearer not-the-secret-at-all")
            .json(&json!({"path": target}))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 401, "{method} {route}");
        let v: Value = r.json().await.unwrap();
        assert_eq!(v["error"]["code"], "unauthorized");
    }
    assert!(!Path::new(&target).exists());
}
