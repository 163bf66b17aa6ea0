//! The `holm-guest` binary: reads the environment and runs the guest.

use std::process::ExitCode;

fn main() -> ExitCode {
    // Started by the guest itself, as the desktop user: can this user make
    // a user namespace (what Chromium's sandbox needs)? Nothing else runs.
    if std::env::args().nth(1).as_deref() == Some(holm_guest::supervisor::PROBE_SANDBOX) {
        // SAFETY: unshare takes a flag and touches no memory of ours.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWUSER) };
        return if rc == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
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
    scrub_secret();
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

/// Takes the box secret (or its digest) out of the environment, so no
/// component or command inherits it, and wipes it from the process's
/// original environment block, which `/proc/<pid>/environ` shows to anyone
/// in the box.
fn scrub_secret() {
    for name in [c"HOLM_BOX_SECRET", c"HOLM_BOX_SECRET_SHA256"] {
        // SAFETY: this runs before any other thread exists. `getenv` answers
        // a pointer into the environment block (or null); the bytes
        // overwritten are exactly the value's, up to its terminating NUL.
        // `remove_var` then runs with no other thread reading the
        // environment.
        unsafe {
            let value = libc::getenv(name.as_ptr());
            if !value.is_null() {
                let len = libc::strlen(value);
                std::ptr::write_bytes(value, b'-', len);
            }
            std::env::remove_var(name.to_str().unwrap_or_default());
        }
    }
}
