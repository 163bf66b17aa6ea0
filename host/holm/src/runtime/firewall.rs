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
//! are checked before every box is made and added where missing, with
//! `iptables` (the program Docker itself needs) and the same with
//! `ip6tables` (`fe80::/10` as link-local) where the host has it, which
//! takes `CAP_NET_ADMIN`: root, or `AmbientCapabilities=CAP_NET_ADMIN
//! CAP_NET_RAW` in holmd's systemd unit. Where they cannot be
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

/// The addresses an IPv6 packet from a box may not reach on the way out:
/// link-local (`fe80::/10`).
pub const LINK_LOCAL_V6: &str = "fe80::/10";

/// One of the host's firewalls: IPv4 (`iptables`) or IPv6 (`ip6tables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Family {
    program: &'static str,
    reject_with: &'static str,
    link_local: &'static str,
}

const V4: Family =
    Family { program: "iptables", reject_with: "icmp-admin-prohibited", link_local: LINK_LOCAL };
const V6: Family =
    Family { program: "ip6tables", reject_with: "icmp6-adm-prohibited", link_local: LINK_LOCAL_V6 };

/// Makes sure the host's firewall keeps boxes on [`BOXES`] from the host's
/// addresses and from link-local ones, over IPv4 and, where the host has
/// `ip6tables`, IPv6 (whether or not Docker gives boxes IPv6 addresses: a
/// box still has its link-local one). Checked at every call (each box
/// made on [`BOXES`]), so rules a firewall reload or an engine restart
/// removed are put back before the next box starts. A host without
/// `ip6tables`, or whose kernel has no IPv6 filter table, is guarded over
/// IPv4 only, and says so in holmd's log.
pub fn ensure() -> Result<(), String> {
    // One check at a time, so two creates never add a rule twice.
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    ensure_family(V4)?;
    match ensure_family(V6) {
        Ok(()) => Ok(()),
        Err(e) if e.starts_with(NO_FIREWALL) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(
                || tracing::warn!(reason = %e, "boxes are kept from the host over IPv4 only"),
            );
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// How the error of a firewall the host does not have begins.
const NO_FIREWALL: &str = "no firewall";

fn ensure_family(f: Family) -> Result<(), String> {
    let reject = ["-j", "REJECT", "--reject-with", f.reject_with];
    // Chains first (an existing one is fine), then their rules, then the
    // jumps to them, each added only when missing.
    for chain in [INPUT_CHAIN, FORWARD_CHAIN] {
        // Another server on the host may make it at the same moment.
        if !run(f, &["-n", "-L", chain])? && !run(f, &["-N", chain])? {
            must(f, &["-n", "-L", chain])?;
        }
    }
    let established: Vec<&str> =
        vec!["-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "RETURN"];
    ensure_rule(f, INPUT_CHAIN, &established, false)?;
    ensure_rule(f, INPUT_CHAIN, &reject, false)?;
    let metadata: Vec<&str> = ["-d", f.link_local].iter().chain(reject.iter()).copied().collect();
    ensure_rule(f, FORWARD_CHAIN, &metadata, false)?;
    ensure_rule(f, "INPUT", &["-i", BOXES, "-j", INPUT_CHAIN], true)?;
    // Docker's chain for users' rules, which it never flushes; FORWARD when
    // the engine made none (ip6tables while Docker's IPv6 is off).
    let forward = if run(f, &["-n", "-L", "DOCKER-USER"])? { "DOCKER-USER" } else { "FORWARD" };
    ensure_rule(f, forward, &["-i", BOXES, "-j", FORWARD_CHAIN], true)?;
    Ok(())
}

/// Adds `rule` to `chain` unless it is there: first when `first`.
fn ensure_rule(f: Family, chain: &str, rule: &[&str], first: bool) -> Result<(), String> {
    let mut check = vec!["-C", chain];
    check.extend_from_slice(rule);
    if run(f, &check)? {
        return Ok(());
    }
    let mut add = if first { vec!["-I", chain, "1"] } else { vec!["-A", chain] };
    add.extend_from_slice(rule);
    must(f, &add)
}

/// Runs `iptables -w ARGS` (or `ip6tables`): whether it succeeded, or why
/// it could not run.
fn run(f: Family, args: &[&str]) -> Result<bool, String> {
    let out = Command::new(f.program).arg("-w").args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("{NO_FIREWALL}: {} is not installed", f.program)
        } else {
            format!("cannot run {}: {e}", f.program)
        }
    })?;
    if out.status.success() {
        return Ok(true);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("ermission denied") || err.contains("you must be root") {
        return Err(format!("{} refused: {}", f.program, err.trim()));
    }
    if err.contains("can't initialize") || err.contains("Table does not exist") {
        return Err(format!("{NO_FIREWALL}: {}: {}", f.program, err.trim()));
    }
    Ok(false)
}

fn must(f: Family, args: &[&str]) -> Result<(), String> {
    if run(f, args)? {
        return Ok(());
    }
    let out = Command::new(f.program).arg("-w").args(args).output();
    let err = out.map(|o| String::from_utf8_lossy(&o.stderr).trim().to_owned()).unwrap_or_default();
    Err(format!("{} {}: {err}", f.program, args.join(" ")))
}
