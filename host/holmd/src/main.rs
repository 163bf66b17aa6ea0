//! The `holmd` binary.

use tokio::net::TcpListener;

fn main() -> anyhow::Result<()> {
    // Before the runtime starts its threads.
    holmd::allocator::tune();
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(serve())
}

async fn serve() -> anyhow::Result<()> {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::prelude::*;
    let wanted = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("holmd=info,holm=info"));
    // rmcp logs every request it receives, a tool call's arguments (typed
    // text, commands) included, at debug: its targets stop at info whatever
    // RUST_LOG asks (docs/security.md). A second filter, so no more specific
    // RUST_LOG directive (`rmcp::service=trace`) can lift it.
    let cap =
        Targets::new().with_default(LevelFilter::TRACE).with_target("rmcp", LevelFilter::INFO);
    tracing_subscriber::registry()
        .with(wanted)
        .with(cap)
        .with(tracing_subscriber::fmt::layer())
        .init();
    let config = holmd::config::ServerConfig::from_env_and_args(std::env::args().skip(1))
        .map_err(anyhow::Error::msg)?;
    let service = holmd::service(&config).await?;
    let listener = TcpListener::bind(config.addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", config.addr))?;
    match config.exposure {
        holmd::config::Exposure::Token => {}
        holmd::config::Exposure::LoopbackOnly => tracing::warn!(
            "no token is set (HOLM_SERVER_TOKEN, HOLM_SERVER_TOKEN_FILE): the API answers \
             without a credential, on loopback only"
        ),
        holmd::config::Exposure::InsecureNoToken => tracing::warn!(
            "INSECURE: {} (or {}) is set and no token is: the API answers everyone who \
             reaches {} without a credential",
            holmd::config::INSECURE_NO_TOKEN,
            holmd::config::INSECURE_NO_TOKEN_FLAG,
            config.public_url.as_deref().map_or_else(|| config.addr.to_string(), str::to_owned)
        ),
    }
    tracing::info!(
        addr = %listener.local_addr()?,
        runtimes = ?service.runtime_names(),
        storage = config.storage.backend(),
        store = %config.storage.describe(),
        server_name = %config.server_name,
        "holmd is listening"
    );
    let options = holmd::ServeOptions {
        token: config.token.clone(),
        public_url: config.public_url.clone(),
        ..holmd::ServeOptions::default()
    };
    // SIGINT and SIGTERM alike: stop taking requests, write the store, exit.
    holmd::serve_with(listener, service, options, holm_http::shutdown_signal()).await?;
    tracing::info!("holmd stopped and wrote its store; boxes keep running");
    Ok(())
}
