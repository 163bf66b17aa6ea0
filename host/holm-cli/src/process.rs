//! What the commands that run a process in a box share (`holm exec`,
//! `holm spawn`, `holm logs --follow`, `holm shell`): `--env KEY=VALUE`
//! and the shell's exit code convention.

use std::process::ExitCode;

use anyhow::Context;

/// `--env KEY=VALUE` arguments.
pub(crate) fn parse_env(
    env: &[String],
) -> anyhow::Result<std::collections::BTreeMap<String, String>> {
    let mut out = std::collections::BTreeMap::new();
    for kv in env {
        let (k, v) =
            kv.split_once('=').with_context(|| format!("--env {kv:?} is not KEY=VALUE"))?;
        out.insert(k.to_owned(), v.to_owned());
    }
    Ok(out)
}

/// The shell's convention: the code, or 128 + the signal, or 124 for a timeout.
pub(crate) fn exit_code(code: Option<i32>, signal: Option<&str>, timed_out: bool) -> ExitCode {
    if timed_out {
        return ExitCode::from(124);
    }
    match code {
        Some(c) => ExitCode::from(u8::try_from(c & 0xff).unwrap_or(1)),
        None => {
            let n = signal.and_then(signal_number).unwrap_or(0);
            ExitCode::from(u8::try_from(128 + n).unwrap_or(1))
        }
    }
}

fn signal_number(name: &str) -> Option<i32> {
    Some(match name.trim_start_matches("SIG") {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "ABRT" => 6,
        "KILL" => 9,
        "SEGV" => 11,
        "PIPE" => 13,
        "TERM" => 15,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use std::process::ExitCode;

    use super::exit_code;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(Some(3), None, false), ExitCode::from(3));
        assert_eq!(exit_code(None, Some("SIGKILL"), false), ExitCode::from(137));
        assert_eq!(exit_code(Some(0), None, true), ExitCode::from(124));
    }
}
