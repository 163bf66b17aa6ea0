//! The review's L7: the host's firewall rules that keep boxes from the
//! host and from link-local addresses exist over IPv4 and IPv6, and rules
//! a firewall reload removed come back at the next box (each create checks
//! them). Only IPv6's are removed here: the host's other tests rely on the
//! IPv4 ones while this runs.

use holm::runtime::firewall;

/// Whether `ip6tables` (or `iptables`) has `rule` in `chain`.
fn has(program: &str, chain: &str, rule: &[&str]) -> bool {
    std::process::Command::new(program)
        .args(["-w", "-C", chain])
        .args(rule)
        .status()
        .expect("run the firewall's program")
        .success()
}

fn jump() -> [&'static str; 4] {
    ["-i", firewall::BOXES, "-j", "HOLM-BOXES-INPUT"]
}

fn link_local_v6() -> [&'static str; 6] {
    ["-d", firewall::LINK_LOCAL_V6, "-j", "REJECT", "--reject-with", "icmp6-adm-prohibited"]
}

#[tokio::test]
async fn the_rules_exist_over_both_families_and_come_back_after_a_reload() {
    if !holm_testkit::e2e_enabled().await {
        return;
    }
    firewall::ensure().expect("the rules are added");
    assert!(has("iptables", "INPUT", &jump()), "IPv4's jump from INPUT");
    assert!(has("ip6tables", "INPUT", &jump()), "IPv6's jump from INPUT");
    assert!(has("ip6tables", "HOLM-BOXES-FORWARD", &link_local_v6()), "IPv6 link-local refused");

    // What a firewall reload does to them.
    let deleted = std::process::Command::new("ip6tables")
        .args(["-w", "-D", "INPUT"])
        .args(jump())
        .status()
        .unwrap();
    assert!(deleted.success());
    let flushed =
        std::process::Command::new("ip6tables").args(["-w", "-F", "HOLM-BOXES-FORWARD"]).status();
    assert!(flushed.unwrap().success());
    assert!(!has("ip6tables", "INPUT", &jump()));

    firewall::ensure().expect("the rules are checked again");
    assert!(has("ip6tables", "INPUT", &jump()), "the jump came back");
    assert!(has("ip6tables", "HOLM-BOXES-FORWARD", &link_local_v6()), "the rule came back");
}
