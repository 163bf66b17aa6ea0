//! The command line's own tests: it parses, its reference in docs/cli.md is
//! its definition, and `--sensitive` is one flag where a secret is sent.

use clap::{CommandFactory, Parser};

use super::boxes::{ExtendArgs, ForkArgs};
use super::desktop::{DragArgs, TypeArgs};
use super::exec::ExecArgs;
use super::{Cli, Command, boxes, desktop, exec};
use crate::args::SensitiveArg;

/// docs/cli.md's command reference is the command line's own
/// definition (`HOLM_UPDATE_SNAPSHOTS=1` writes it).
#[test]
fn docs_cli_md_reference_is_the_command_line() {
    let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let reference = crate::reference::markdown(&mut Cli::command());
    holm_proto::docgen::check_section(&doc, "reference", &reference, "holm-cli").unwrap();
}

#[test]
fn sensitive_is_one_flag_on_each_command_that_sends_a_secret() {
    let parse = |line: &[&str]| Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{e}"));
    let cli = parse(&["holm", "type", "box_a", "pw", "--sensitive"]);
    assert!(matches!(
        cli.command,
        Command::Desktop(desktop::Commands::Type(TypeArgs {
            secret: SensitiveArg { sensitive: true },
            ..
        }))
    ));
    let cli = parse(&["holm", "type", "box_a", "pw"]);
    assert!(matches!(
        cli.command,
        Command::Desktop(desktop::Commands::Type(TypeArgs {
            secret: SensitiveArg { sensitive: false },
            ..
        }))
    ));
    let cli = parse(&["holm", "exec", "box_a", "--sensitive", "--", "mysql", "-ppw"]);
    assert!(matches!(
        cli.command,
        Command::Exec(exec::Commands::Exec(ExecArgs {
            secret: SensitiveArg { sensitive: true },
            ..
        }))
    ));
    for line in [
        &["holm", "spawn", "box_a", "--sensitive", "--", "sleep", "1"][..],
        &["holm", "page", "box_a", "type", "#pw", "pw", "--sensitive"],
        &["holm", "page", "box_a", "fill", "#pw", "pw", "--sensitive"],
        &["holm", "clipboard", "box_a", "set", "pw", "--sensitive"],
    ] {
        parse(line);
    }
    assert!(Cli::try_parse_from(["holm", "key", "box_a", "a", "--sensitive"]).is_err());
}

#[test]
fn the_command_line_parses() {
    Cli::command().debug_assert();
    let cli = Cli::try_parse_from(["holm", "exec", "box_a", "--", "ls", "-la"]).unwrap();
    assert!(
        matches!(cli.command, Command::Exec(exec::Commands::Exec(ExecArgs { ref argv, .. })) if argv == &["ls", "-la"])
    );
    let cli = Cli::try_parse_from(["holm", "--json", "new", "--ttl", "10"]).unwrap();
    assert!(cli.json);
    let cli = Cli::try_parse_from(["holm", "extend", "box_a", "--minutes", "30"]).unwrap();
    assert!(matches!(
        cli.command,
        Command::Boxes(boxes::Commands::Extend(ExtendArgs { minutes: 30, .. }))
    ));
    let cli = Cli::try_parse_from(["holm", "fork", "box_a", "--ttl", "10"]).unwrap();
    assert!(matches!(
        cli.command,
        Command::Boxes(boxes::Commands::Fork(ForkArgs { ttl: Some(10), .. }))
    ));
    let cli = Cli::try_parse_from(["holm", "drag", "box_a", "0", "0", "10", "-5"]).unwrap();
    assert!(
        matches!(cli.command, Command::Desktop(desktop::Commands::Drag(DragArgs { ref coords, .. })) if coords == &[0, 0, 10, -5])
    );
    for line in [
        &["holm", "page", "box_a", "click", "#go"][..],
        &[
            "holm",
            "page",
            "box_a",
            "--tab",
            "T1",
            "goto",
            "http://127.0.0.1:8000/",
            "--wait",
            "dom-content-loaded",
        ],
        &["holm", "page", "box_a", "eval", "document.title", "--tab", "T1"],
        &["holm", "page", "box_a", "screenshot", "p.png", "--full-page"],
        &["holm", "state", "save", "box_a", "login.json"],
        &["holm", "bridge", "box_a", "--ttl", "30"],
        &["holm", "view", "box_a", "--screen", "1", "--takeover", "--open"],
        &["holm", "view", "box_a", "--revoke", "vg_0123456789ab"],
        &["holm", "handoff", "box_a", "--ask", "solve the captcha", "--wait", "600"],
        &["holm", "new", "--profile", "work"],
        &["holm", "ls", "box_a:/root", "--depth", "2"],
        &["holm", "rm", "-r", "box_a:/tmp/d"],
        &["holm", "mv", "-f", "box_a:/a", "box_a:/b"],
        &["holm", "spawn", "box_a", "--tag", "web", "--", "python3", "-m", "http.server"],
        &["holm", "logs", "box_a", "p_1", "-f"],
        &["holm", "kill", "box_a", "p_1", "--signal", "KILL"],
        &["holm", "write", "box_a", "p_1", "--eof"],
        &["holm", "shell", "box_a"],
        &["holm", "shell", "box_a", "--cwd", "/tmp", "--", "vi", "x"],
        &["holm", "windows", "box_a"],
        &["holm", "window", "box_a", "4194306", "focus"],
        &["holm", "window", "box_a", "4194306", "move", "-10", "20"],
        &["holm", "window", "box_a", "4194306", "resize", "640", "400"],
        &["holm", "window", "box_a", "4194306", "close"],
        &["holm", "clipboard", "box_a", "get", "--image", "c.png"],
        &["holm", "clipboard", "box_a", "set", "-"],
        &["holm", "clipboard", "box_a", "set", "text", "--image", "c.png"],
    ] {
        Cli::try_parse_from(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
    }
}
