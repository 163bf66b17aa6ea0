//! E2B templates from the bundled Dockerfile, named by their content.
//!
//! The flow is E2B's v2 build system, as its SDKs use it: `POST
//! /v3/templates` (name, CPUs, memory) answers a template and a build;
//! the file context (the guest binary, as a tar.gz) is uploaded to the URL
//! `GET /templates/{id}/files/{hash}` gives unless E2B has it; `POST
//! /v2/templates/{id}/builds/{build}` sends the steps (`FROM` as
//! `fromImage`, then `USER root`, `WORKDIR /`, and each `ENV`, `RUN` and
//! `COPY` of the Dockerfile as it reads); `GET …/status?logsOffset=` is
//! polled until `ready` or `error`, its log lines passed on as progress.
//! A template whose name (`holm-<hash>`) exists with a ready build is used
//! as it is; one being built is waited for.

use std::io::Write as _;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::image::{Progress, guest_sha256};
use crate::runtime::remote::{Recipe, Rest, Retry, VResult, VendorError, env_pairs};

/// The longest a template build may take (E2B stops builds after an hour).
const BUILD_TIMEOUT: Duration = Duration::from_secs(3600);
/// How often a build's status is read.
const POLL: Duration = Duration::from_secs(2);
/// The file name of the guest in the build context.
const GUEST_FILE: &str = "holm-guest";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Alias {
    #[serde(rename = "templateID")]
    template_id: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Build {
    #[serde(rename = "buildID")]
    build_id: String,
    status: String,
}

#[derive(Debug, Deserialize)]
struct WithBuilds {
    #[serde(default)]
    builds: Vec<Build>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Requested {
    #[serde(rename = "templateID")]
    template_id: String,
    #[serde(rename = "buildID")]
    build_id: String,
}

#[derive(Debug, Deserialize)]
struct Upload {
    present: bool,
    url: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    status: String,
    #[serde(default)]
    log_entries: Vec<LogEntry>,
    reason: Option<Reason>,
}

#[derive(Debug, Deserialize)]
struct LogEntry {
    message: String,
}

#[derive(Debug, Deserialize)]
struct Reason {
    message: String,
    step: Option<String>,
}

/// The template's name for `recipe`: its Dockerfile, the guest and the
/// resources.
pub fn name(recipe: &Recipe) -> String {
    recipe.name_for(&[recipe.dockerfile.as_bytes(), guest_sha256().as_bytes()])
}

/// Makes the template for `recipe` unless a ready one has its name, and
/// answers the name, which sandboxes are created from.
pub async fn ensure(
    rest: &Rest,
    recipe: &Recipe,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> VResult<String> {
    let name = name(recipe);
    let found = rest
        .json::<Alias>("find a template", Retry::Idempotent, |r| {
            r.request(Method::GET, &format!("/templates/aliases/{name}"))
        })
        .await;
    match found {
        Ok(alias) => {
            let t: WithBuilds = rest
                .json("read a template", Retry::Idempotent, |r| {
                    r.request(Method::GET, &format!("/templates/{}", alias.template_id))
                })
                .await?;
            if t.builds.iter().any(|b| b.status == "ready") {
                progress(Progress::Reused { tag: name.clone() });
                return Ok(name);
            }
            if let Some(b) =
                t.builds.iter().find(|b| b.status == "building" || b.status == "waiting")
            {
                progress(Progress::Status(format!("waiting for E2B's build of template {name}")));
                wait(rest, &alias.template_id, &b.build_id, progress).await?;
                progress(Progress::Built { tag: name.clone() });
                return Ok(name);
            }
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e),
    }
    progress(Progress::Status(format!(
        "building E2B template {name} ({} CPUs, {} MiB); the first box waits for it",
        recipe.cpus, recipe.memory_mib
    )));
    let requested: Requested = rest
        .json("start a template build", Retry::NotTwice, |r| {
            r.request(Method::POST, "/v3/templates").json(&json!({
                "name": name,
                "cpuCount": recipe.cpus,
                "memoryMB": recipe.memory_mib,
            }))
        })
        .await?;
    let (steps, from) = steps(recipe, &files_hash(recipe))?;
    upload(rest, &requested.template_id, &files_hash(recipe)).await?;
    rest.send("run a template build", Retry::NotTwice, |r| {
        r.request(
            Method::POST,
            &format!("/v2/templates/{}/builds/{}", requested.template_id, requested.build_id),
        )
        .json(&json!({ "fromImage": from, "steps": steps, "force": false }))
    })
    .await?;
    wait(rest, &requested.template_id, &requested.build_id, progress).await?;
    progress(Progress::Built { tag: name.clone() });
    Ok(name)
}

/// The hash E2B keeps the guest's upload by.
fn files_hash(recipe: &Recipe) -> String {
    let copy = copy_line(recipe);
    hex::encode(Sha256::digest(format!("COPY {copy}\n{}", guest_sha256())))
}

fn copy_line(recipe: &Recipe) -> String {
    recipe
        .instructions()
        .into_iter()
        .find(|i| i.keyword == "COPY")
        .map(|i| i.args)
        .unwrap_or_default()
}

/// The build steps of the recipe's Dockerfile, and its base image.
fn steps(recipe: &Recipe, files_hash: &str) -> VResult<(Vec<Value>, String)> {
    let bad = |m: String| VendorError::answer("e2b", "describe the template", m);
    let mut from = None;
    let mut steps = vec![
        json!({ "type": "USER", "args": ["root"], "force": false }),
        json!({ "type": "WORKDIR", "args": ["/"], "force": false }),
    ];
    for i in recipe.instructions() {
        match i.keyword.as_str() {
            "FROM" => from = Some(i.args),
            "ENV" => {
                let args: Vec<String> =
                    env_pairs(&i.args).into_iter().flat_map(|(k, v)| [k, v]).collect();
                steps.push(json!({ "type": "ENV", "args": args, "force": false }));
            }
            "RUN" => steps.push(json!({ "type": "RUN", "args": [i.args], "force": false })),
            "COPY" => {
                let mut parts = i.args.split_whitespace();
                let (Some(src), Some(dest)) = (parts.next(), parts.next()) else {
                    return Err(bad(format!("COPY {} names no source and destination", i.args)));
                };
                if src != GUEST_FILE {
                    return Err(bad(format!("COPY {src}: only the guest is in the build context")));
                }
                steps.push(json!({
                    "type": "COPY",
                    "args": [src, dest, "", ""],
                    "filesHash": files_hash,
                    "force": false,
                }));
            }
            // The guest starts at boot through envd, with the box's own
            // secret: the template has no start command.
            "EXPOSE" | "ENTRYPOINT" | "CMD" => {}
            other => {
                return Err(bad(format!(
                    "the bundled Dockerfile has {other}, which holm cannot send to E2B"
                )));
            }
        }
    }
    let from = from.ok_or_else(|| bad("the Dockerfile has no FROM".into()))?;
    Ok((steps, from))
}

/// The build context: the guest, as a tar.gz, made once per process.
fn context() -> &'static [u8] {
    static CONTEXT: OnceLock<Vec<u8>> = OnceLock::new();
    CONTEXT.get_or_init(|| {
        let guest = crate::image::GUEST_BINARY;
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        let mut tar = tar::Builder::new(gz);
        let mut header = tar::Header::new_gnu();
        header.set_size(guest.len() as u64);
        header.set_mode(0o755);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_cksum();
        tar.append_data(&mut header, GUEST_FILE, guest).expect("a tar in memory");
        let mut gz = tar.into_inner().expect("a tar in memory");
        gz.flush().expect("a gzip in memory");
        gz.finish().expect("a gzip in memory")
    })
}

/// Uploads the build context unless E2B has it already.
async fn upload(rest: &Rest, template_id: &str, hash: &str) -> VResult<()> {
    let link: Upload = rest
        .json("ask where to upload the guest", Retry::Idempotent, |r| {
            r.request(Method::GET, &format!("/templates/{template_id}/files/{hash}"))
        })
        .await?;
    if link.present {
        return Ok(());
    }
    let url = link
        .url
        .ok_or_else(|| VendorError::answer("e2b", "upload the guest", "E2B gave no upload URL"))?;
    rest.check_url("upload the guest", &url)?;
    let body = context();
    // A signed URL: the key does not go with it. The body's exact length
    // is sent (chunked uploads are refused).
    let r = rest
        .client()
        .put(&url)
        .header(reqwest::header::CONTENT_LENGTH, body.len())
        .timeout(Duration::from_secs(3600))
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| VendorError::transport("e2b", "upload the guest", &e))?;
    if !r.status().is_success() {
        let status = r.status().as_u16();
        let body = r.bytes().await.unwrap_or_default();
        let message = crate::runtime::remote::plain_message(status, &body);
        return Err(VendorError::answer("e2b", "upload the guest", message).with_status(status));
    }
    Ok(())
}

/// Waits for a build, passing its log on.
async fn wait(
    rest: &Rest,
    template_id: &str,
    build_id: &str,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> VResult<()> {
    let started = Instant::now();
    let mut offset = 0usize;
    let mut last_lines: Vec<String> = Vec::new();
    loop {
        let s: Status = rest
            .json("read a template build", Retry::Idempotent, |r| {
                r.request(
                    Method::GET,
                    &format!("/templates/{template_id}/builds/{build_id}/status"),
                )
                .query(&[("logsOffset", offset.to_string()), ("limit", "100".to_owned())])
            })
            .await?;
        offset += s.log_entries.len();
        for entry in s.log_entries {
            last_lines.push(entry.message.clone());
            if last_lines.len() > 20 {
                last_lines.remove(0);
            }
            progress(Progress::Output(entry.message));
        }
        match s.status.as_str() {
            "ready" => return Ok(()),
            "error" => {
                let reason = s.reason.map_or_else(
                    || "the build failed".to_owned(),
                    |r| match r.step {
                        Some(step) => format!("{} (step {step})", r.message),
                        None => r.message,
                    },
                );
                return Err(VendorError::answer(
                    "e2b",
                    "build the template",
                    format!("{reason}\n{}", last_lines.join("\n")),
                ));
            }
            _ if started.elapsed() > BUILD_TIMEOUT => {
                return Err(VendorError::answer(
                    "e2b",
                    "build the template",
                    "the build took longer than an hour",
                ));
            }
            _ => tokio::time::sleep(POLL).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::ImageRequest;

    #[test]
    fn steps_are_the_dockerfile_as_e2b_takes_it() {
        let recipe = Recipe::new(&ImageRequest::default(), 4096, 2).unwrap();
        let (steps, from) = steps(&recipe, "abc").unwrap();
        assert_eq!(from, "debian:bookworm-slim");
        let types: Vec<&str> = steps.iter().map(|s| s["type"].as_str().unwrap()).collect();
        assert_eq!(&types[..2], ["USER", "WORKDIR"]);
        assert_eq!(types.last(), Some(&"COPY"));
        let env = steps.iter().find(|s| s["type"] == "ENV").unwrap();
        assert_eq!(env["args"], json!(["LANG", "C.UTF-8", "DEBIAN_FRONTEND", "noninteractive"]));
        let copy = steps.last().unwrap();
        assert_eq!(copy["args"], json!(["holm-guest", "/usr/local/bin/holm-guest", "", ""]));
        assert_eq!(copy["filesHash"], "abc");
        assert!(
            steps
                .iter()
                .filter(|s| s["type"] == "RUN")
                .all(|s| !s["args"][0].as_str().unwrap().contains('\n'))
        );
    }

    #[test]
    fn the_context_holds_the_guest_executable() {
        let gz = flate2::read::GzDecoder::new(context());
        let mut tar = tar::Archive::new(gz);
        let mut entries = tar.entries().unwrap();
        let e = entries.next().unwrap().unwrap();
        assert_eq!(e.path().unwrap().to_str(), Some(GUEST_FILE));
        assert_eq!(e.header().mode().unwrap(), 0o755);
        assert_eq!(e.header().size().unwrap(), crate::image::GUEST_BINARY.len() as u64);
    }
}
