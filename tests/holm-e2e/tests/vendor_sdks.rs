//! The vendors' own SDKs (pinned: Python from PyPI, TypeScript from npm)
//! drive holm's stand-ins,
//! unchanged but for their address: create, get, list (with a metadata or
//! label filter, in pages), the timeout, pause and resume (or Daytona's
//! stop and start, and its refusal of pause), delete, a refusal at the
//! vendor's limit, and a wrong key. The stand-ins keep each vendor's
//! contract as its SDK reads it.

use holm_standins::daytona::DaytonaStandin;
use holm_standins::e2b::E2bStandin;
use holm_standins::modal::ModalStandin;
use holm_standins::sdk;
use holm_standins::vercel::VercelStandin;
use holm_testkit::e2e_enabled;

async fn base_image() {
    holm_testkit::matrix::ensure_base().await;
}

fn lines(run: &sdk::Run) -> Vec<String> {
    run.stdout.lines().map(|l| l.split_whitespace().next().unwrap_or("").to_owned()).collect()
}

/// E2B's SDK (the script `script`, Python or TypeScript) against the E2B
/// stand-in.
async fn e2bs_sdk_accepts_the_e2b_stand_in(script: &str) {
    if !e2e_enabled().await {
        return;
    }
    base_image().await;
    let standin = E2bStandin::start().await;
    let env = vec![
        ("E2B_API_KEY".to_owned(), standin.key.clone()),
        ("E2B_API_URL".to_owned(), standin.api_url.clone()),
        ("E2B_SANDBOX_URL".to_owned(), standin.sandbox_url.clone()),
    ];
    let run = sdk::run(script, env).await;
    assert!(run.ok, "E2B's SDK failed against the stand-in:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        lines(&run),
        ["create", "get", "list", "timeout", "pause", "resume", "limit", "delete", "auth"]
    );
    assert!(standin.sandbox_ids().is_empty(), "the SDK's sandboxes are gone");
    // The SDK listed in pages of one: the stand-in paged with X-Next-Token.
    assert!(standin.calls.to("GET", "/v2/sandboxes").len() >= 3);
    // The SDK made its sandbox and resumed it with E2B's current create
    // and connect, not the deprecated `POST /sandboxes` and
    // `POST /sandboxes/{id}/connect`.
    let calls = standin.calls.all();
    assert!(
        calls.iter().any(|c| c.method == "POST" && c.path == "/v2/sandboxes"),
        "the SDK created with POST /v2/sandboxes: {calls:?}"
    );
    assert!(
        calls.iter().any(|c| c.method == "POST"
            && c.path.starts_with("/v2/sandboxes/")
            && c.path.ends_with("/connect")),
        "the SDK resumed with POST /v2/sandboxes/{{id}}/connect: {calls:?}"
    );
}

/// Daytona's SDK (the script `script`, Python or TypeScript) against the
/// Daytona stand-in.
async fn daytonas_sdk_accepts_the_daytona_stand_in(script: &str) {
    if !e2e_enabled().await {
        return;
    }
    base_image().await;
    let standin = DaytonaStandin::start().await;
    let env = vec![
        ("DAYTONA_API_KEY".to_owned(), standin.key.clone()),
        ("DAYTONA_API_URL".to_owned(), standin.api_url.clone()),
    ];
    let run = sdk::run(script, env).await;
    assert!(run.ok, "Daytona's SDK failed against the stand-in:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        lines(&run),
        ["create", "get", "list", "timeout", "preview", "stop-start", "pause", "delete", "auth"]
    );
    assert!(standin.sandbox_ids().is_empty(), "the SDK's sandboxes are gone");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2bs_python_sdk_accepts_the_e2b_stand_in() {
    e2bs_sdk_accepts_the_e2b_stand_in("e2b_sdk.py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2bs_typescript_sdk_accepts_the_e2b_stand_in() {
    e2bs_sdk_accepts_the_e2b_stand_in("e2b_sdk.mjs").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daytonas_python_sdk_accepts_the_daytona_stand_in() {
    daytonas_sdk_accepts_the_daytona_stand_in("daytona_sdk.py").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daytonas_typescript_sdk_accepts_the_daytona_stand_in() {
    daytonas_sdk_accepts_the_daytona_stand_in("daytona_sdk.mjs").await;
}

/// Modal's Python client against the Modal stand-in: a hello, an app, an image from
/// a Dockerfile whose context file goes through blob storage, a sandbox
/// with an environment, tags, timeouts and an encrypted port, its tunnels,
/// a command through the command router (its streams and exit code), its
/// tags, the list by tag, terminate, and a wrong token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modals_python_client_accepts_the_modal_stand_in() {
    if !e2e_enabled().await {
        return;
    }
    base_image().await;
    let standin = ModalStandin::start().await;
    let env = vec![
        ("MODAL_TOKEN_ID".to_owned(), standin.token_id.clone()),
        ("MODAL_TOKEN_SECRET".to_owned(), standin.key.clone()),
        ("MODAL_SERVER_URL".to_owned(), standin.server_url.clone()),
        ("HOLM_BASE_IMAGE".to_owned(), holm::image::BASE_IMAGE.to_owned()),
    ];
    let run = sdk::run("modal_sdk.py", env).await;
    assert!(run.ok, "Modal's client failed against the stand-in:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        lines(&run),
        ["hello", "app", "image", "create", "tunnels", "exec", "tags", "list", "terminate", "auth"]
    );
    assert!(standin.sandbox_ids().is_empty(), "the client's sandbox is gone");
    // The command went through the router, with the client's JWT.
    let router = "/modal.task_command_router.TaskCommandRouter/";
    assert!(!standin.calls.to("POST", &format!("{router}TaskExecStart")).is_empty());
    let refused = standin.calls.to("POST", "/modal.client.ModalClient/AppGetOrCreate");
    assert!(refused.iter().any(|c| c.status == 401), "{refused:?}");
    assert!(!run.stdout.contains(&standin.key) && !run.stderr.contains(&standin.key));
}

/// Vercel's TypeScript SDK against the Vercel stand-in: create (ports,
/// resources, tags), get, list by tags in pages of one, commands (exit
/// code, both streams, `sudo`, detached and waited for), files written as
/// a gzipped tar and read back (a missing one `null`), the timeout
/// extended, the port limit refused, a stop (then 410), delete, and a
/// wrong token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vercels_typescript_sdk_accepts_the_vercel_stand_in() {
    if !e2e_enabled().await {
        return;
    }
    base_image().await;
    let standin = VercelStandin::start().await;
    let env = vec![
        ("VERCEL_TOKEN".to_owned(), standin.key.clone()),
        ("VERCEL_TEAM_ID".to_owned(), standin.team_id.clone()),
        ("VERCEL_PROJECT_ID".to_owned(), standin.project_id.clone()),
        ("VERCEL_API_URL".to_owned(), standin.api_url.clone()),
    ];
    let run = sdk::run("vercel_sdk.mjs", env).await;
    assert!(run.ok, "Vercel's SDK failed against the stand-in:\n{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        lines(&run),
        ["create", "get", "list", "exec", "files", "timeout", "limit", "stop", "delete", "auth"]
    );
    assert!(standin.sandbox_names().is_empty(), "the SDK's sandboxes are gone");
    // The SDK listed in pages of one: the stand-in paged with its cursor.
    assert!(standin.calls.to("GET", "/api/v2/sandboxes").len() >= 3);
    assert!(!run.stdout.contains(&standin.key) && !run.stderr.contains(&standin.key));
}
