//! The command reference in docs/cli.md, made from the command line's own
//! definition (clap), so it cannot drift from what `holm` accepts.

use clap::{Arg, Command};

/// Every command and subcommand of `cli`, with its usage, what it does and
/// its options, as Markdown.
pub(super) fn markdown(cli: &mut Command) -> String {
    cli.build();
    let mut out = String::new();
    for sub in cli.get_subcommands().filter(|c| !c.is_hide_set()) {
        command(&mut out, "holm", sub);
    }
    out
}

fn command(out: &mut String, parent: &str, cmd: &Command) {
    let path = format!("{parent} {}", cmd.get_name());
    let subs: Vec<&Command> = cmd.get_subcommands().filter(|c| !c.is_hide_set()).collect();
    if !subs.is_empty() {
        for sub in subs {
            command(out, &path, sub);
        }
        return;
    }
    out.push_str(&format!("#### `{path}`\n\n"));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        out.push_str(&format!("{}\n\n", one_paragraph(&about.to_string())));
    }
    let usage = usage(&path, cmd);
    out.push_str(&format!("```\n{usage}\n```\n\n"));
    let args: Vec<&Arg> = cmd.get_arguments().filter(|a| shown(a)).collect();
    if args.is_empty() {
        return;
    }
    out.push_str("| argument | what |\n|---|---|\n");
    for a in args {
        let help = a.get_long_help().or(a.get_help()).map(|h| h.to_string()).unwrap_or_default();
        let mut what = one_paragraph(&help).replace('|', "\\|");
        let defaults: Vec<String> =
            a.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
        if !defaults.is_empty() && a.get_action().takes_values() {
            what.push_str(&format!(" (default: `{}`)", defaults.join(",")));
        }
        let values: Vec<String> = a
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| format!("`{}`", v.get_name()))
            .collect();
        if !values.is_empty() {
            what.push_str(&format!(" ({})", values.join(", ")));
        }
        out.push_str(&format!("| `{}` | {what} |\n", name(a).replace('|', "\\|")));
    }
    out.push('\n');
}

/// Whether an argument is one a reader looks up (not `--help`, `--version`
/// or the global `--json`, which docs/cli.md names once).
fn shown(a: &Arg) -> bool {
    !a.is_hide_set() && !a.is_global_set() && !matches!(a.get_id().as_str(), "help" | "version")
}

/// How an argument is written: `--ttl <MINUTES>`, `-r, --recursive` or `<BOX>`.
fn name(a: &Arg) -> String {
    let value = || {
        let names = a.get_value_names().map(|n| n.iter().map(|s| s.to_string()).collect());
        let names: Vec<String> = names.unwrap_or_else(|| vec![a.get_id().as_str().to_uppercase()]);
        names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" ")
    };
    let takes = a.get_action().takes_values();
    match (a.get_short(), a.get_long()) {
        (None, None) => value(),
        (short, long) => {
            let mut flag: Vec<String> = Vec::new();
            if let Some(s) = short {
                flag.push(format!("-{s}"));
            }
            if let Some(l) = long {
                flag.push(format!("--{l}"));
            }
            let flag = flag.join(", ");
            if takes { format!("{flag} {}", value()) } else { flag }
        }
    }
}

/// The usage line clap prints, with the command's full path.
fn usage(path: &str, cmd: &Command) -> String {
    let mut cmd = cmd.clone().bin_name(path.to_owned());
    let rendered = cmd.render_usage().to_string();
    rendered.trim_start_matches("Usage: ").trim().to_owned()
}

/// Help text on one line: clap's wrapped paragraphs joined.
fn one_paragraph(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
