//! A vendor's rules for memory and CPUs, checked before anything starts.

use holm_proto::Issue;

const MIB: u64 = 1024 * 1024;
const NANO: u64 = 1_000_000_000;

/// What memory and CPUs a vendor takes for one box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResourceRules {
    /// The fewest CPUs.
    pub cpus_min: u32,
    /// The most CPUs.
    pub cpus_max: u32,
    /// Only 1 or an even number of CPUs (E2B, Vercel).
    pub cpus_one_or_even: bool,
    /// The least memory, in MiB.
    pub memory_min_mib: u64,
    /// The most memory in MiB, where the vendor says.
    pub memory_max_mib: Option<u64>,
    /// Memory is a multiple of this many MiB (2 on E2B, 1024 on Daytona).
    pub memory_step_mib: u64,
    /// The memory of a box that asks for none, in MiB.
    pub default_memory_mib: u64,
    /// The CPUs of a box that asks for none.
    pub default_cpus: u32,
    /// Memory set by the vendor from the CPUs, this many MiB each (Vercel's
    /// 2048): a box asking memory alone gets the CPUs it makes, and memory
    /// that is not CPUs times this is refused.
    pub memory_per_cpu_mib: Option<u64>,
}

/// Memory in MiB and whole CPUs, as a vendor takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resources {
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Whole CPUs.
    pub cpus: u32,
}

impl ResourceRules {
    /// The resources a placement asks for (memory in bytes, billionths of
    /// CPUs) under these rules, or every problem with them, named by the
    /// placement field, for `vendor`.
    pub fn apply(
        &self,
        vendor: &str,
        memory_bytes: Option<u64>,
        nano_cpus: Option<u64>,
    ) -> Result<Resources, Vec<Issue>> {
        let mut issues = Vec::new();
        let cpus = match nano_cpus {
            None => self.default_cpus,
            Some(n) => {
                let whole = (n % NANO == 0).then_some(n / NANO);
                let ok = whole.is_some_and(|c| {
                    (u64::from(self.cpus_min)..=u64::from(self.cpus_max)).contains(&c)
                        && (!self.cpus_one_or_even || c == 1 || c % 2 == 0)
                });
                if !ok {
                    let even = if self.cpus_one_or_even { "1 or an even number, " } else { "" };
                    issues.push(Issue {
                        path: "placement.cpus".into(),
                        problem: format!(
                            "{vendor} takes whole CPUs, {even}{} to {}, not {}",
                            self.cpus_min,
                            self.cpus_max,
                            n as f64 / NANO as f64
                        ),
                    });
                }
                whole.map_or(self.default_cpus, |c| c as u32)
            }
        };
        let memory_mib = match memory_bytes {
            None => self.default_memory_mib,
            Some(b) => {
                let step = self.memory_step_mib.max(1) * MIB;
                let mib = b / MIB;
                let in_range =
                    mib >= self.memory_min_mib && self.memory_max_mib.is_none_or(|max| mib <= max);
                if b % step != 0 || !in_range {
                    let max =
                        self.memory_max_mib.map(|m| format!(" to {}", show(m))).unwrap_or_default();
                    issues.push(Issue {
                        path: "placement.memory".into(),
                        problem: format!(
                            "{vendor} takes memory in steps of {}, at least {}{max}, not {}",
                            show(self.memory_step_mib),
                            show(self.memory_min_mib),
                            show_bytes(b)
                        ),
                    });
                }
                mib
            }
        };
        if let Some(per) = self.memory_per_cpu_mib {
            return self.derived(vendor, per, memory_bytes, nano_cpus, cpus, issues);
        }
        if issues.is_empty() { Ok(Resources { memory_mib, cpus }) } else { Err(issues) }
    }

    /// Memory as `per` MiB times the CPUs: the CPUs a box asks, or those its
    /// memory makes when it asks memory alone.
    fn derived(
        &self,
        vendor: &str,
        per: u64,
        memory_bytes: Option<u64>,
        nano_cpus: Option<u64>,
        cpus: u32,
        mut issues: Vec<Issue>,
    ) -> Result<Resources, Vec<Issue>> {
        issues.retain(|i| i.path != "placement.memory");
        let cpus = match (memory_bytes, nano_cpus) {
            (Some(b), None) if b.is_multiple_of(per * MIB) && b > 0 => {
                let c = b / (per * MIB);
                let ok = (u64::from(self.cpus_min)..=u64::from(self.cpus_max)).contains(&c)
                    && (!self.cpus_one_or_even || c == 1 || c.is_multiple_of(2));
                if !ok {
                    issues.push(Issue {
                        path: "placement.memory".into(),
                        problem: format!(
                            "{vendor} sets memory from the CPUs, {} per CPU; {} would be {c} CPUs, and it takes 1 or an even number, {} to {}",
                            show(per),
                            show_bytes(b),
                            self.cpus_min,
                            self.cpus_max
                        ),
                    });
                }
                c as u32
            }
            _ => cpus,
        };
        let memory_mib = u64::from(cpus) * per;
        let named = issues.iter().any(|i| i.path == "placement.memory");
        if let Some(b) = memory_bytes.filter(|b| *b != memory_mib * MIB && !named) {
            issues.push(Issue {
                path: "placement.memory".into(),
                problem: format!(
                    "{vendor} sets memory from the CPUs, {} per CPU: with {cpus} CPUs it is {}, not {}",
                    show(per),
                    show(memory_mib),
                    show_bytes(b)
                ),
            });
        }
        if issues.is_empty() { Ok(Resources { memory_mib, cpus }) } else { Err(issues) }
    }
}

/// MiB as a person writes them: `1g` for whole GiB, else `512m`.
fn show(mib: u64) -> String {
    if mib >= 1024 && mib.is_multiple_of(1024) {
        format!("{}g", mib / 1024)
    } else {
        format!("{mib}m")
    }
}

fn show_bytes(b: u64) -> String {
    if b.is_multiple_of(MIB) { show(b / MIB) } else { format!("{b} bytes") }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(memory: Option<u64>, cpus: Option<f64>) -> (Option<u64>, Option<u64>) {
        (memory, cpus.map(|c| (c * 1e9) as u64))
    }

    const E2B_LIKE: ResourceRules = ResourceRules {
        cpus_min: 1,
        cpus_max: 8,
        cpus_one_or_even: true,
        memory_min_mib: 256,
        memory_max_mib: None,
        memory_step_mib: 2,
        default_memory_mib: 4096,
        default_cpus: 2,
        memory_per_cpu_mib: None,
    };

    #[test]
    fn defaults_fill_what_a_box_does_not_ask() {
        let (m, c) = ask(None, None);
        assert_eq!(E2B_LIKE.apply("e2b", m, c).unwrap(), Resources { memory_mib: 4096, cpus: 2 });
        let (m, c) = ask(Some(2 << 30), Some(4.0));
        assert_eq!(E2B_LIKE.apply("e2b", m, c).unwrap(), Resources { memory_mib: 2048, cpus: 4 });
    }

    #[test]
    fn every_broken_rule_is_named() {
        let (m, c) = ask(Some(3 * MIB + 512), Some(3.0));
        let issues = E2B_LIKE.apply("e2b", m, c).unwrap_err();
        let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["placement.cpus", "placement.memory"]);
        assert!(issues[0].problem.contains("1 or an even number"), "{issues:?}");
        let (m, c) = ask(None, Some(1.5));
        let issues = E2B_LIKE.apply("e2b", m, c).unwrap_err();
        assert!(issues[0].problem.contains("whole CPUs"), "{issues:?}");
        let daytona = ResourceRules {
            cpus_one_or_even: false,
            memory_min_mib: 1024,
            memory_step_mib: 1024,
            memory_max_mib: Some(8192),
            ..E2B_LIKE
        };
        let (m, c) = ask(Some(1536 * MIB), None);
        let issues = daytona.apply("daytona", m, c).unwrap_err();
        assert_eq!(
            issues[0].problem,
            "daytona takes memory in steps of 1g, at least 1g to 8g, not 1536m"
        );
        let (m, c) = ask(Some(2 << 30), Some(3.0));
        assert!(daytona.apply("daytona", m, c).is_ok());
    }

    #[test]
    fn memory_from_cpus_follows_the_cpus_or_makes_them() {
        let vercel = ResourceRules { memory_per_cpu_mib: Some(2048), ..E2B_LIKE };
        let (m, c) = ask(None, Some(4.0));
        assert_eq!(vercel.apply("vercel", m, c).unwrap(), Resources { memory_mib: 8192, cpus: 4 });
        let (m, c) = ask(Some(2048 * MIB), None);
        assert_eq!(vercel.apply("vercel", m, c).unwrap(), Resources { memory_mib: 2048, cpus: 1 });
        let (m, c) = ask(Some(6144 * MIB), None);
        let issues = vercel.apply("vercel", m, c).unwrap_err();
        assert!(issues[0].problem.contains("would be 3 CPUs"), "{issues:?}");
        let (m, c) = ask(Some(2048 * MIB), Some(2.0));
        let issues = vercel.apply("vercel", m, c).unwrap_err();
        assert_eq!(
            issues[0].problem,
            "vercel sets memory from the CPUs, 2g per CPU: with 2 CPUs it is 4g, not 2g"
        );
    }
}
