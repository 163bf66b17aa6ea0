//! The `holm-guest` binary: reads the environment and runs the guest.

use std::process::ExitCode;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let config = match holm_guest::config::Config::from_env() {
        Ok(c) => c,
        Err(e) => {
            tracing::error!("configuration: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime =
        match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                tracing::error!("cannot start the runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
    match runtime.block_on(holm_guest::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}
