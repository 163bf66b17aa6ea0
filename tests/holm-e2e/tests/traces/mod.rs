//! Contract traces: holm's adapter and the vendor's own SDK, against the
//! same stand-in, make the same calls. The stand-in's gate records each
//! call's route, `User-Agent`, header names and JSON body shape
//! (`holm_standins::trace`); holm's calls are those whose agent is holm's
//! ([`holm_client::USER_AGENT`]), the SDK's all others. For each route
//! holm called (answered 2xx), the SDK must have called it too, with the
//! same header names and the same body fields of the same JSON types.
//! Each difference that remains is listed, with its reason, in the
//! vendor's table beside this file (`<vendor>.tsv`: the difference, a tab,
//! the reason; `*: ` in place of the route lists it on every route); the
//! test fails on a difference the table does not list, and on a listed one
//! that no longer occurs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use holm_standins::Call;

/// One side's calls: per `METHOD route`, what its calls carried.
#[derive(Debug, Default)]
pub struct Side(BTreeMap<String, Seen>);

/// What one side's calls to one route carried, over all of them.
#[derive(Debug, Default)]
pub struct Seen {
    /// Header names.
    headers: BTreeSet<String>,
    /// Query parameter names.
    query: BTreeSet<String>,
    /// Each body field's JSON types.
    body: BTreeMap<String, BTreeSet<&'static str>>,
}

/// The 2xx calls of one side (holm's when `holm`, else the SDK's), with
/// the fields in `maps` (maps of the caller's own keys: metadata, labels,
/// environment) read as one field `name.*`, since their keys are data.
pub fn side(calls: &[Call], holm: bool, maps: &[&str]) -> Side {
    let mut out = Side::default();
    for call in calls {
        let Some(t) = &call.trace else { continue };
        if !(200..300).contains(&call.status) || is_holms(&t.agent) != holm {
            continue;
        }
        let entry = out.0.entry(format!("{} {}", call.method, t.route)).or_default();
        entry.headers.extend(t.headers.iter().cloned());
        entry.query.extend(t.query.iter().cloned());
        for (field, ty) in &t.body {
            let field = maps
                .iter()
                .find(|m| field.starts_with(&format!("{m}.")))
                .map_or_else(|| field.clone(), |m| format!("{m}.*"));
            entry.body.entry(field).or_default().insert(ty);
        }
    }
    out
}

/// Whether `agent` is holm's: [`holm_client::USER_AGENT`], alone or
/// followed by its gRPC library's name (tonic puts its own after it).
fn is_holms(agent: &str) -> bool {
    agent.split(' ').next() == Some(holm_client::USER_AGENT)
}

fn types(t: &BTreeSet<&str>) -> String {
    t.iter().copied().collect::<Vec<_>>().join("|")
}

/// Every way holm's calls differ from the SDK's, one line each.
pub fn differences(holm: &Side, sdk: &Side) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (route, h) in &holm.0 {
        let Some(sdk) = sdk.0.get(route) else {
            out.insert(format!("{route}: the SDK made no such call"));
            continue;
        };
        for (what, ours, theirs) in
            [("header", &h.headers, &sdk.headers), ("query parameter", &h.query, &sdk.query)]
        {
            for x in ours.difference(theirs) {
                out.insert(format!("{route}: {what} {x}: holm only"));
            }
            for x in theirs.difference(ours) {
                out.insert(format!("{route}: {what} {x}: SDK only"));
            }
        }
        let (body, sdk_body) = (&h.body, &sdk.body);
        for (field, ty) in body {
            match sdk_body.get(field) {
                None => out.insert(format!("{route}: field {field} ({}): holm only", types(ty))),
                Some(st) if st != ty => out.insert(format!(
                    "{route}: field {field}: holm {}, SDK {}",
                    types(ty),
                    types(st)
                )),
                Some(_) => false,
            };
        }
        for (field, ty) in sdk_body {
            if !body.contains_key(field) {
                out.insert(format!("{route}: field {field} ({}): SDK only", types(ty)));
            }
        }
    }
    out
}

/// Everything holm's calls carried, one line each: each route, and per
/// route each header, query parameter and body field (with its types).
pub fn facts(holm: &Side) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (route, h) in &holm.0 {
        out.insert(route.clone());
        out.extend(h.headers.iter().map(|x| format!("{route}: header {x}")));
        out.extend(h.query.iter().map(|x| format!("{route}: query parameter {x}")));
        out.extend(h.body.iter().map(|(f, t)| format!("{route}: field {f} ({})", types(t))));
    }
    out
}

/// A table beside this file (`name`): each row and its reason.
fn table(name: &str) -> (PathBuf, BTreeMap<String, String>) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/traces").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let rows = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (d, reason) = l.split_once('\t').unwrap_or((l, ""));
            (d.trim().to_owned(), reason.trim().to_owned())
        })
        .collect();
    (path, rows)
}

/// Compares holm's calls with the SDK's in `calls` against the vendor's
/// table, and fails naming every unlisted or stale difference.
pub fn check(vendor: &str, calls: &[Call], maps: &[&str]) {
    let holm = side(calls, true, maps);
    let sdk = side(calls, false, maps);
    assert!(!holm.0.is_empty(), "{vendor}: no call of holm's was traced: {calls:#?}");
    assert!(!sdk.0.is_empty(), "{vendor}: no call of the SDK's was traced");
    let found = differences(&holm, &sdk);
    let (path, listed) = table(&format!("{vendor}.tsv"));
    // A row `*: what` lists that difference on every route (an SDK's
    // telemetry headers, sent with each of its calls).
    let matches = |row: &str, d: &str| {
        row == d
            || row
                .strip_prefix("*: ")
                .is_some_and(|what| d.split_once(": ").is_some_and(|(_, w)| w == what))
    };
    let unlisted: Vec<&String> =
        found.iter().filter(|d| !listed.keys().any(|row| matches(row, d))).collect();
    let stale: Vec<&String> =
        listed.keys().filter(|row| !found.iter().any(|d| matches(row, d))).collect();
    let unexplained: Vec<&String> =
        listed.iter().filter(|(_, r)| r.is_empty()).map(|(d, _)| d).collect();
    assert!(
        unlisted.is_empty() && stale.is_empty() && unexplained.is_empty(),
        "{vendor}'s contract trace: fix holm's adapter, or list each difference with its reason in {}\n\
         unlisted (holm differs from the SDK): {unlisted:#?}\n\
         listed but no longer found (remove): {stale:#?}\n\
         listed without a reason: {unexplained:#?}\n\
         holm's routes: {:#?}",
        path.display(),
        holm.0.keys().collect::<Vec<_>>(),
    );
}

/// For a vendor with no SDK (Runtime Cloud): every route, header, query
/// parameter and body field of holm's calls is in the vendor's documented
/// contract, as the table `<vendor>.contract.tsv` transcribes it (each
/// row: the fact, a tab, where the documentation says it). The test fails
/// on a fact the table lacks, and on a row holm no longer uses.
///
/// A row whose source begins with [`ONLY_WHEN`] is a call holm makes only
/// on a path the scenario does not take (a guest that ended): it is not
/// stale when unused, and [`check_documented_part`] checks it.
pub fn check_documented(vendor: &str, calls: &[Call], maps: &[&str]) {
    documented(vendor, calls, maps, true);
}

/// [`check_documented`] for a test of one path: every fact of its calls
/// is in the table; the table's other rows are not asked for.
#[allow(dead_code, reason = "vendor_runtime_cloud.rs uses it; vendors.rs does not")]
pub fn check_documented_part(vendor: &str, calls: &[Call], maps: &[&str]) {
    documented(vendor, calls, maps, false);
}

/// How the source of a row holm's usual calls need not use begins.
pub const ONLY_WHEN: &str = "only when ";

fn documented(vendor: &str, calls: &[Call], maps: &[&str], whole: bool) {
    let holm = side(calls, true, maps);
    assert!(!holm.0.is_empty(), "{vendor}: no call of holm's was traced: {calls:#?}");
    let found = facts(&holm);
    let (path, listed) = table(&format!("{vendor}.contract.tsv"));
    let undocumented: Vec<&String> = found.iter().filter(|f| !listed.contains_key(*f)).collect();
    let stale: Vec<&String> = listed
        .iter()
        .filter(|(f, source)| whole && !source.starts_with(ONLY_WHEN) && !found.contains(*f))
        .map(|(f, _)| f)
        .collect();
    let unsourced: Vec<&String> =
        listed.iter().filter(|(_, r)| r.is_empty()).map(|(f, _)| f).collect();
    assert!(
        undocumented.is_empty() && stale.is_empty() && unsourced.is_empty(),
        "{vendor}'s contract trace: holm must use only what the vendor documents; add each \
         fact with where it is documented to {}, or fix holm's adapter\n\
         not in the table: {undocumented:#?}\n\
         in the table but no longer used (remove): {stale:#?}\n\
         without a source: {unsourced:#?}",
        path.display(),
    );
}
