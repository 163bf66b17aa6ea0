//! Helpers shared by holm's tests against a real Docker engine: the gate that
//! decides whether they run, and small engine chores (running a command in an
//! image, removing throwaway images).
//!
//! The gate is the project's rule for tests that need Docker: with neither
//! `HOLM_E2E` nor `CI` set, a test prints why it skips and returns; with
//! either set, an engine that cannot be reached is a failure, because CI must
//! never pass by skipping. (To move to `holm-testkit`.)

#![allow(dead_code)]

use bollard::Docker;
use bollard::models::ContainerCreateBody;
use bollard::query_parameters::{LogsOptions, RemoveContainerOptions, RemoveImageOptions};
use futures_util::StreamExt;

/// Whether an environment variable asks for the engine tests: set and not
/// empty, `0` or `false` (CI systems set `CI=true`; people write `CI=false`).
fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// A client of the engine the tests should use, or `None` (after saying so)
/// when engine tests are not asked for. Panics when they are asked for and
/// the engine does not answer.
pub async fn docker_or_skip() -> Option<Docker> {
    if !flag("HOLM_E2E") && !flag("CI") {
        eprintln!("skipping: set HOLM_E2E=1 to run tests against Docker");
        return None;
    }
    let docker = Docker::connect_with_defaults().unwrap_or_else(|e| {
        panic!("HOLM_E2E or CI is set, but no Docker client could be made: {e}")
    });
    if let Err(e) = docker.ping().await {
        panic!("HOLM_E2E or CI is set, but the Docker engine does not answer: {e}");
    }
    Some(docker)
}

/// Runs `argv` (as the entrypoint, replacing the image's) in a new container
/// of `image`, waits for it, removes it, and returns its exit code and its
/// output (stdout and stderr).
pub async fn run_in(docker: &Docker, image: &str, argv: &[&str]) -> (i64, String) {
    let body = ContainerCreateBody {
        image: Some(image.to_owned()),
        entrypoint: Some(argv.iter().map(|s| (*s).to_owned()).collect()),
        cmd: Some(Vec::new()),
        ..Default::default()
    };
    let id = docker.create_container(None, body).await.expect("create a container").id;
    let result = async {
        docker.start_container(&id, None).await.expect("start the container");
        let code = match docker.wait_container(&id, None).next().await {
            Some(Ok(r)) => r.status_code,
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => code,
            other => panic!("waiting for the container: {other:?}"),
        };
        let options = LogsOptions { stdout: true, stderr: true, ..Default::default() };
        let mut output = String::new();
        let mut logs = docker.logs(&id, Some(options));
        while let Some(chunk) = logs.next().await {
            output.push_str(&chunk.expect("read the container's output").to_string());
        }
        (code, output)
    }
    .await;
    let _ = docker
        .remove_container(&id, Some(RemoveContainerOptions { force: true, ..Default::default() }))
        .await;
    result
}

/// Removes an image the test made; a missing image is fine.
pub async fn remove_image(docker: &Docker, name: &str) {
    let options = RemoveImageOptions { force: true, ..Default::default() };
    match docker.remove_image(name, Some(options), None).await {
        Ok(_) | Err(bollard::errors::Error::DockerResponseServerError { status_code: 404, .. }) => {
        }
        Err(e) => panic!("remove the test image {name}: {e}"),
    }
}

/// A random lowercase suffix for throwaway names, so parallel and repeated
/// runs never collide.
pub fn random_suffix() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos(),
    );
    format!("{:016x}", hasher.finish())
}
