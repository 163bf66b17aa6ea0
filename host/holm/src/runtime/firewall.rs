//! What a box may reach on the network, on a host engine.
//!
//! Every box of the docker runtime joins one of holm's own networks, never
//! Docker's default bridge:
//!
//! - [`BOXES`] (bridge `holm-boxes`): inter-container traffic is off
//!   (`enable_icc=false`), so no box reaches another box's guest, bridge or
//!   anything else; and two rules of the host's firewall, which this module
//!   keeps, refuse what a box sends **to the host itself** (any of its
//!   addresses, on any interface: the `INPUT` chain, answers to connections
//!   the host opened excepted) and **to link-local addresses** such as the
//!   cloud metadata service at 169.254.169.254 (the `DOCKER-USER` chain, on
//!   the way out). Both refuse at once (`icmp-admin-prohibited`), so a
//!   program in a box sees "no route to host", not a hang.
//! - [`HOST_ACCESS`] (bridge `holm-host`): for runtimes whose table in the
//!   runtimes file says `host_access = true`: inter-box traffic is off as
//!   well, but the host and link-local addresses are reachable.
//!
//! The rules match only packets that come in on `holm-boxes`, so nothing
//! else on the host (Docker's default bridge, other networks) changes. They
//! are added once, idempotently, with `iptables` (the program Docker itself
//! needs), which takes `CAP_NET_ADMIN`: root, or `AmbientCapabilities=
//! CAP_NET_ADMIN CAP_NET_RAW` in holmd's systemd unit. Where they cannot be
//! added, boxes on [`BOXES`] are refused with the reason, rather than run
//! unguarded.

use std::process::Command;
use std::sync::Mutex;

/// The network of boxes that may not reach the host.
pub const BOXES: &str = "holm-boxes";
/// The network of boxes of runtimes with `host_access = true`.
pub const HOST_ACCESS: &str = "holm-host";
/// The chain that refuses what boxes send to the host.
const INPUT_CHAIN: &str = "HOLM-BOXES-INPUT";
/// The chain that refuses what boxes send to link-local addresses.
const FORWARD_CHAIN: &str = "HOLM-BOXES-FORWARD";
/// The addresses a box may not reach on the way out: link-local, where
/// clouds serve instance metadata (and with it, credentials).
pub const LINK_LOCAL: &str = "169.254.0.0/16";

/// Makes sure the host's firewall keeps boxes on [`BOXES`] from the host's
/// addresses and from link-local ones. Cheap after the first success in a
/// process; tried again after a failure.
pub fn ensure() -> Result<(), String> {
    static DONE: Mutex<bool> = Mutex::new(false);
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    if *done {
        return Ok(());
    }
    let reject = ["-j", "REJECT", "--reject-with", "icmp-admin-prohibited"];
    // Chains first (an existing one is fine), then their rules, then the
    // jumps to them, each added only when missing.
    for chain in [INPUT_CHAIN, FORWARD_CHAIN] {
        // Another server on the host may make it at the same moment.
        if !iptables(&["-n", "-L", chain])? && !iptables(&["-N", chain])? {
            iptables_must(&["-n", "-L", chain])?;
        }
    }
    let established: Vec<&str> =
        vec!["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"];
    ensure_rule(INPUT_CHAIN, &established, false)?;
    ensure_rule(INPUT_CHAIN, &reject, false)?;
    let metadata: Vec<&str> = ["-d", LINK_LOCAL].iter().chain(reject.iter()).copied().collect();
    ensure_rule(FORWARD_CHAIN, &metadata, false)?;
    ensure_rule("INPUT", &["-i", BOXES, "-j", INPUT_CHAIN], true)?;
    // Docker's chain for users' rules, which it never flushes; FORWARD when
    // the engine made none.
    let forward = if iptables(&["-n", "-L", "DOCKER-USER"])? { "DOCKER-USER" } else { "FORWARD" };
    ensure_rule(forward, &["-i", BOXES, "-j", FORWARD_CHAIN], true)?;
    *done = true;
    Ok(())
}

/// Adds `rule` to `chain` unless it is there: first when `first`.
fn ensure_rule(chain: &str, rule: &[&str], first: bool) -> Result<(), String> {
    let mut check = vec!["-C", chain];
    check.extend_from_slice(rule);
    if iptables(&check)? {
        return Ok(());
    }
    let mut add = if first { vec!["-I", chain, "1"] } else { vec!["-A", chain] };
    add.extend_from_slice(rule);
    iptables_must(&add)
}

/// Runs `iptables -w ARGS`: whether it succeeded, or why it could not run.
fn iptables(args: &[&str]) -> Result<bool, String> {
    let out = Command::new("iptables")
        .arg("-w")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run iptables: {e}"))?;
    if out.status.success() {
        return Ok(true);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("ermission denied") || err.contains("you must be root") {
        return Err(format!("iptables refused: {}", err.trim()));
    }
    Ok(false)
}

fn iptables_must(args: &[&str]) -> Result<(), String> {
    let out = Command::new("iptables")
        .arg("-w")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run iptables: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!("iptables {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
}
