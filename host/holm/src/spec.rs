//! Checks a box's spec and placement before anything starts, naming every
//! wrong field at once.

use holm_proto::Issue;
use holm_proto::guest::Profile;
use holm_proto::host::{BoxSpec, Can, Placement};
use holm_proto::viewer::{ViewerAuth, ViewerBind, ViewerPolicy};

/// The default screen size.
pub const DEFAULT_SIZE: (u32, u32) = (1280, 800);
/// The fewest processes and threads a box may be limited to: a desktop
/// with Chromium runs a few hundred.
pub const MIN_PIDS: u32 = 64;
/// The most a box may ask for.
pub const MAX_PIDS: u32 = 4_194_304;
/// The most memory a box may ask for (`placement.memory`): 64 GiB. A box is
/// a desktop; a limit above the host's memory lets one box take the host.
pub const MAX_MEMORY_BYTES: u64 = 64 << 30;
/// The disk a box may write to (`placement.disk`) when it asks for none:
/// 10 GiB. Past it the server stops the box.
pub const DEFAULT_DISK_BYTES: u64 = 10 << 30;
/// The least disk a box may ask for: 32 MiB (a desktop writes a few MiB
/// when it starts).
pub const MIN_DISK_BYTES: u64 = 32 << 20;
/// The most disk a box may ask for: 1 TiB.
pub const MAX_DISK_BYTES: u64 = 1 << 40;
/// The shortest lifetime or idle timeout a box may ask for, in seconds.
pub const MIN_LIFETIME_SECS: u64 = 60;
/// The lifetime of a box that asks for none: one hour.
pub const DEFAULT_LIFETIME_SECS: u64 = 3600;
/// The longest maximum lifetime a runtime may set: a year. Every deadline is
/// a second count well inside `u64`, so no sum of them can overflow.
pub const LONGEST_LIFETIME_SECS: u64 = 366 * 86_400;

/// A spec with its defaults filled in and its values checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// 1 to 6.
    pub screens: u8,
    /// Width and height of every screen.
    pub size: (u32, u32),
    /// The display server.
    pub display: Profile,
    /// Whether Chromium runs.
    pub browser: bool,
    /// Apps, sorted and without repeats.
    pub apps: Vec<String>,
    /// Packages, sorted and without repeats.
    pub packages: Vec<String>,
    /// Memory limit in bytes.
    pub memory_bytes: Option<u64>,
    /// CPU limit in billionths of a CPU.
    pub nano_cpus: Option<u64>,
    /// The most processes and threads.
    pub pids_limit: Option<u32>,
    /// The disk limit the box asked for (`placement.disk`), in bytes;
    /// `None`: [`DEFAULT_DISK_BYTES`].
    pub disk_bytes: Option<u64>,
    /// Seconds from creation to removal.
    pub lifetime_secs: u64,
    /// Seconds without a command before removal.
    pub idle_timeout_secs: Option<u64>,
    /// The browser profile kept across boxes.
    pub profile: Option<String>,
    /// Where the viewer port is published (`spec.policy.bind`).
    pub viewer_bind: ViewerBind,
    /// Whether every screen is recorded for the box's whole life.
    pub record: bool,
}

/// Checks `spec.policy`, the viewer policy: `auth: none` only with
/// `bind: loopback`; `advertise` (a bare host name or address) with and
/// only with `bind: any`.
pub fn check_policy(policy: &ViewerPolicy) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut issue = |path: &str, problem: &str| {
        issues.push(Issue { path: path.to_owned(), problem: problem.to_owned() })
    };
    if policy.auth == ViewerAuth::None && policy.bind == ViewerBind::Any {
        issue(
            "spec.policy.auth",
            "auth: none is refused with bind: any: viewers published on every interface need a token",
        );
    }
    match (&policy.advertise, policy.bind) {
        (None, ViewerBind::Any) => issue(
            "spec.policy.advertise",
            "bind: any needs advertise, the host name people reach this host by, such as boxes.example.com",
        ),
        (Some(_), ViewerBind::Loopback) => issue(
            "spec.policy.advertise",
            "advertise names the host of directly published viewers: only with bind: any",
        ),
        (Some(host), ViewerBind::Any) if !is_host(host) => issue(
            "spec.policy.advertise",
            "must be a bare host name or IP address (no scheme, port or path), such as boxes.example.com",
        ),
        _ => {}
    }
    issues
}

/// A host name or IPv4 address (letters, digits, `-` and `.`), or an IPv6
/// address in brackets.
fn is_host(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !host.is_empty()
        && host.len() <= 253
        && !host.starts_with(['-', '.'])
        && host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

/// Checks a browser profile name: 1 to 63 lowercase letters, digits, `-`,
/// `_` or `.`, starting with a letter or digit (so it is a valid volume name
/// on every engine, and safe in a label and a path).
pub fn check_profile_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a profile name: use 1 to 63 lowercase letters, digits, '-', '_' or '.', starting with a letter or digit"
        ))
    }
}

/// The lifetimes a runtime allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifetimes {
    /// For a box that asks for none.
    pub default_secs: u64,
    /// The most a box may ask for.
    pub max_secs: u64,
}

impl Default for Lifetimes {
    fn default() -> Self {
        Self { default_secs: DEFAULT_LIFETIME_SECS, max_secs: 24 * 3600 }
    }
}

/// Checks `spec` and `placement` against what the runtime can do.
pub fn resolve(
    spec: &BoxSpec,
    placement: &Placement,
    can: &Can,
    lifetimes: Lifetimes,
) -> Result<Resolved, Vec<Issue>> {
    let mut issues = Vec::new();
    let mut issue =
        |path: &str, problem: String| issues.push(Issue { path: path.to_owned(), problem });

    let screens = spec.screens.unwrap_or(1);
    let max_screens = can.screens.max(1);
    if !(1..=max_screens).contains(&screens) {
        issue("spec.screens", format!("must be 1 to {max_screens} on this runtime, not {screens}"));
    }
    let size = match spec.screen_size.as_deref() {
        None => DEFAULT_SIZE,
        Some(s) => parse_size(s).unwrap_or_else(|e| {
            issue("spec.screen_size", e);
            DEFAULT_SIZE
        }),
    };
    let display = spec.display.unwrap_or_default();
    if display == Profile::Wayland && !can.wayland {
        issue("spec.display", "this runtime cannot run Wayland boxes; use x11".to_owned());
    }
    if let Some(name) = &spec.name
        && (name.is_empty()
            || name.len() > 63
            || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    {
        issue("spec.name", "must be 1 to 63 letters, digits, '-' or '_'".to_owned());
    }
    if spec.labels.len() > 32 {
        issue("spec.labels", format!("at most 32 labels, not {}", spec.labels.len()));
    }
    for (k, v) in &spec.labels {
        if k.is_empty() || k.len() > 63 || v.len() > 255 || k.starts_with("holm.") {
            issue(
                &format!("spec.labels.{k}"),
                "keys are 1 to 63 characters and may not start with holm.; values at most 255"
                    .to_owned(),
            );
        }
    }
    if let Some(profile) = &spec.profile {
        if let Err(e) = check_profile_name(profile) {
            issue("spec.profile", e);
        } else if !can.browser_profile {
            issue(
                "spec.profile",
                "this runtime cannot keep a browser profile; move a login with save_state and load_state instead"
                    .to_owned(),
            );
        } else if spec.browser == Some(false) {
            issue(
                "spec.profile",
                "a browser profile needs the browser; drop browser: false".to_owned(),
            );
        }
    }
    let policy = spec.policy.clone().unwrap_or_default();
    for i in check_policy(&policy) {
        issue(&i.path, i.problem);
    }
    let mut apps = spec.apps.clone();
    apps.sort();
    apps.dedup();
    let mut packages = spec.packages.clone();
    packages.sort();
    packages.dedup();

    let memory_bytes = match placement.memory.as_deref() {
        None => None,
        Some(m) => match parse_memory(m) {
            Ok(b) if b < 256 * 1024 * 1024 => {
                issue("placement.memory", format!("{m} is less than the 256m a desktop needs"));
                None
            }
            Ok(b) if b > MAX_MEMORY_BYTES => {
                issue(
                    "placement.memory",
                    format!("{m} is more than the 64g (64 GiB) a box may have"),
                );
                None
            }
            Ok(b) => Some(b),
            Err(e) => {
                issue("placement.memory", e);
                None
            }
        },
    };
    let nano_cpus = match placement.cpus {
        None => None,
        Some(c) if c.is_finite() && c > 0.0 && c <= 256.0 => Some((c * 1e9).round() as u64),
        Some(c) => {
            issue("placement.cpus", format!("must be above 0 and at most 256, not {c}"));
            None
        }
    };
    let disk_bytes = match disk_limit(placement) {
        Ok(b) => placement.disk.is_some().then_some(b),
        Err(e) => {
            issue("placement.disk", e);
            None
        }
    };
    let pids_limit = placement.pids_limit;
    if let Some(n) = pids_limit
        && !(MIN_PIDS..=MAX_PIDS).contains(&n)
    {
        issue("placement.pids_limit", format!("must be {MIN_PIDS} to {MAX_PIDS}, not {n}"));
    }
    if (memory_bytes.is_some() || nano_cpus.is_some() || pids_limit.is_some()) && !can.resources {
        issue(
            "placement",
            "this runtime sets memory and CPUs when its image is built, not per box".to_owned(),
        );
    }
    let lifetime_secs = placement.expires_after_secs.unwrap_or(lifetimes.default_secs);
    if lifetime_secs < MIN_LIFETIME_SECS {
        issue(
            "placement.expires_after_secs",
            format!("must be at least {MIN_LIFETIME_SECS} seconds, not {lifetime_secs}"),
        );
    } else if lifetime_secs > lifetimes.max_secs {
        issue(
            "placement.expires_after_secs",
            format!(
                "{lifetime_secs} seconds is above this runtime's maximum lifetime of {} seconds",
                lifetimes.max_secs
            ),
        );
    }
    if let Some(idle) = placement.idle_timeout_secs {
        if idle < MIN_LIFETIME_SECS {
            issue(
                "placement.idle_timeout_secs",
                format!("must be at least {MIN_LIFETIME_SECS} seconds, not {idle}"),
            );
        } else if idle > lifetimes.max_secs {
            issue(
                "placement.idle_timeout_secs",
                format!(
                    "{idle} seconds is above this runtime's maximum lifetime of {} seconds",
                    lifetimes.max_secs
                ),
            );
        }
    }
    if issues.is_empty() {
        Ok(Resolved {
            screens,
            size,
            display,
            browser: spec.browser.unwrap_or(true),
            apps,
            packages,
            memory_bytes,
            nano_cpus,
            pids_limit,
            disk_bytes,
            lifetime_secs,
            idle_timeout_secs: placement.idle_timeout_secs,
            profile: spec.profile.clone(),
            viewer_bind: policy.bind,
            record: spec.record.unwrap_or(false),
        })
    } else {
        Err(issues)
    }
}

/// The disk a box may write to: its `placement.disk`, checked against
/// [`MIN_DISK_BYTES`] and [`MAX_DISK_BYTES`], or [`DEFAULT_DISK_BYTES`].
pub fn disk_limit(placement: &Placement) -> Result<u64, String> {
    let Some(d) = placement.disk.as_deref() else {
        return Ok(DEFAULT_DISK_BYTES);
    };
    match parse_memory(d) {
        Ok(b) if b < MIN_DISK_BYTES => Err(format!("{d} is less than the 32m a box may have")),
        Ok(b) if b > MAX_DISK_BYTES => {
            Err(format!("{d} is more than the 1t (1 TiB) a box may have"))
        }
        Ok(b) => Ok(b),
        Err(e) => Err(e),
    }
}

/// Parses `1280x800`.
pub fn parse_size(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{s:?} is not WIDTHxHEIGHT, such as 1280x800");
    let (w, h) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(320..=7680).contains(&w) || !(200..=4320).contains(&h) {
        return Err(format!("{s:?} is outside 320x200 to 7680x4320"));
    }
    Ok((w, h))
}

/// Parses a memory size such as `4g`, `512m`, `1.5g`, `2GiB` or a number of bytes.
pub fn parse_memory(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("{s:?} is not a size such as 4g or 512m"))?;
    let mult: f64 = match unit.trim() {
        "" | "b" => 1.0,
        "k" | "kb" | "kib" => 1024.0,
        "m" | "mb" | "mib" => 1024.0 * 1024.0,
        "g" | "gb" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tb" | "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("{s:?} has an unknown unit; use k, m, g or t")),
    };
    let bytes = n * mult;
    if !bytes.is_finite() || !(1.0..=1e15).contains(&bytes) {
        return Err(format!("{s:?} is out of range"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn can() -> Can {
        Can { screens: 6, resources: true, ..Can::default() }
    }

    #[test]
    fn the_viewer_policy_is_checked_field_by_field() {
        let paths = |auth, bind, advertise: Option<&str>| -> Vec<String> {
            let policy = ViewerPolicy { auth, bind, advertise: advertise.map(str::to_owned) };
            let spec = BoxSpec { policy: Some(policy), ..BoxSpec::default() };
            match resolve(&spec, &Placement::default(), &can(), Lifetimes::default()) {
                Ok(r) => {
                    assert_eq!(r.viewer_bind, bind);
                    Vec::new()
                }
                Err(issues) => issues.into_iter().map(|i| i.path).collect(),
            }
        };
        let (token, none) = (ViewerAuth::Token, ViewerAuth::None);
        let (lo, any) = (ViewerBind::Loopback, ViewerBind::Any);
        assert!(paths(token, lo, None).is_empty());
        assert!(paths(none, lo, None).is_empty());
        assert!(paths(token, any, Some("boxes.example.com")).is_empty());
        assert!(paths(token, any, Some("[::1]")).is_empty());
        assert_eq!(paths(none, any, Some("boxes.example.com")), ["spec.policy.auth"]);
        assert_eq!(paths(token, any, None), ["spec.policy.advertise"]);
        assert_eq!(paths(token, lo, Some("boxes.example.com")), ["spec.policy.advertise"]);
        for bad in ["https://boxes.example.com", "boxes.example.com:8080", "a/b", "", "-x"] {
            assert_eq!(paths(token, any, Some(bad)), ["spec.policy.advertise"], "{bad}");
        }
    }

    #[test]
    fn defaults() {
        let r = resolve(&BoxSpec::default(), &Placement::default(), &can(), Lifetimes::default())
            .unwrap();
        assert_eq!(r.screens, 1);
        assert_eq!(r.size, (1280, 800));
        assert!(r.browser);
        assert_eq!(r.lifetime_secs, 3600);
    }

    #[test]
    fn every_wrong_field_is_named() {
        let spec =
            BoxSpec { screens: Some(7), screen_size: Some("huge".into()), ..BoxSpec::default() };
        let placement = Placement {
            memory: Some("lots".into()),
            cpus: Some(-1.0),
            expires_after_secs: Some(10),
            idle_timeout_secs: Some(5),
            ..Placement::default()
        };
        let issues = resolve(&spec, &placement, &can(), Lifetimes::default()).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.screens",
                "spec.screen_size",
                "placement.memory",
                "placement.cpus",
                "placement.expires_after_secs",
                "placement.idle_timeout_secs"
            ]
        );
    }

    #[test]
    fn disk_is_checked_against_its_bounds_and_defaults_to_10g() {
        assert_eq!(disk_limit(&Placement::default()), Ok(DEFAULT_DISK_BYTES));
        for (d, want) in [("64m", Ok(64 << 20)), ("1t", Ok(1 << 40)), ("32m", Ok(32 << 20))] {
            let placement = Placement { disk: Some(d.into()), ..Placement::default() };
            assert_eq!(disk_limit(&placement), want, "{d}");
            let r = resolve(&BoxSpec::default(), &placement, &can(), Lifetimes::default());
            assert_eq!(r.unwrap().disk_bytes, want.ok(), "{d}");
        }
        for (d, says) in [("banana", "not a size"), ("1.5t", "1t (1 TiB)"), ("16m", "32m")] {
            let placement = Placement { disk: Some(d.into()), ..Placement::default() };
            let issues =
                resolve(&BoxSpec::default(), &placement, &can(), Lifetimes::default()).unwrap_err();
            assert_eq!(issues.len(), 1, "{d}");
            assert_eq!(issues[0].path, "placement.disk");
            assert!(issues[0].problem.contains(says), "{d}: {}", issues[0].problem);
        }
    }

    #[test]
    fn memory_above_the_bound_is_refused_with_the_bound() {
        for (m, ok) in [("64g", true), ("65536m", true), ("64.5g", false), ("1t", false)] {
            let placement = Placement { memory: Some(m.into()), ..Placement::default() };
            let r = resolve(&BoxSpec::default(), &placement, &can(), Lifetimes::default());
            match r {
                Ok(r) => assert!(ok && r.memory_bytes <= Some(MAX_MEMORY_BYTES), "{m}"),
                Err(issues) => {
                    assert!(!ok, "{m}: {issues:?}");
                    assert_eq!(issues[0].path, "placement.memory");
                    assert!(issues[0].problem.contains("64g"), "{}", issues[0].problem);
                }
            }
        }
    }

    #[test]
    fn a_lifetime_over_the_maximum_gives_both_numbers() {
        let placement = Placement { expires_after_secs: Some(7200), ..Placement::default() };
        let issues = resolve(
            &BoxSpec::default(),
            &placement,
            &can(),
            Lifetimes { default_secs: 3600, max_secs: 3600 },
        )
        .unwrap_err();
        assert!(
            issues[0].problem.contains("7200") && issues[0].problem.contains("3600"),
            "{}",
            issues[0].problem
        );
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(parse_memory("4g").unwrap(), 4 << 30);
        assert_eq!(parse_memory("512M").unwrap(), 512 << 20);
        assert_eq!(parse_memory("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_memory("1048576").unwrap(), 1 << 20);
        assert!(parse_memory("4q").is_err());
        assert!(parse_memory("").is_err());
    }

    #[test]
    fn profiles_are_named_safely_and_need_a_runtime_that_keeps_them() {
        for good in ["work", "a", "team-1.main_2", &"x".repeat(63)] {
            assert!(check_profile_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Work", "-x", ".x", "a/b", "a b", "../x", "é", &"x".repeat(64)] {
            assert!(check_profile_name(bad).is_err(), "{bad}");
        }
        let spec = BoxSpec { profile: Some("work".into()), ..BoxSpec::default() };
        let keeps = Can { browser_profile: true, ..can() };
        let r = resolve(&spec, &Placement::default(), &keeps, Lifetimes::default()).unwrap();
        assert_eq!(r.profile.as_deref(), Some("work"));
        // A runtime that cannot keep one refuses before anything starts.
        let issues =
            resolve(&spec, &Placement::default(), &can(), Lifetimes::default()).unwrap_err();
        assert_eq!(issues[0].path, "spec.profile");
        assert!(issues[0].problem.contains("save_state"), "{}", issues[0].problem);
        let bad = BoxSpec { profile: Some("No Good".into()), ..BoxSpec::default() };
        let issues =
            resolve(&bad, &Placement::default(), &keeps, Lifetimes::default()).unwrap_err();
        assert_eq!(issues[0].path, "spec.profile");
        let headless = BoxSpec { browser: Some(false), ..spec };
        assert!(resolve(&headless, &Placement::default(), &keeps, Lifetimes::default()).is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1920x1080").unwrap(), (1920, 1080));
        assert!(parse_size("10x10").is_err());
        assert!(parse_size("wide").is_err());
    }
}
