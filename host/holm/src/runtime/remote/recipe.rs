//! [`Recipe`]: the box image as a vendor builds it, named by its content.
//!
//! A vendor builds the image itself from the bundled Dockerfile (rendered
//! with the box's apps and packages, as on Docker) and, where the vendor
//! sets memory and CPUs at the image (an E2B template, a Daytona snapshot),
//! the box's resources. Each set is one image, built once: its name is a
//! hash of everything that goes in ([`Recipe::name_for`]), so a later box
//! finds the image by name and a change of any input makes a new one.
//!
//! The Dockerfile is read as Docker reads it ([`instructions`]): comment
//! lines dropped, continuation lines joined with the backslash and the line
//! break removed and the next line's indentation kept, so a step sent as
//! text runs exactly the command `docker build` would run.

use sha2::{Digest, Sha256};

use crate::image::{self, GUEST_BINARY, ImageError, ImageRequest};

/// The base every vendor pulls: the bundled Dockerfile's `FROM`.
pub const VENDOR_BASE: &str = image::BASE_IMAGE;
/// Where the bundled Dockerfile puts the guest.
pub const GUEST_PATH: &str = "/usr/local/bin/holm-guest";
/// Where a guest a vendor's agent started writes its output.
pub const GUEST_LOG: &str = "/tmp/holm-guest.log";
/// Bump when what a recipe means changes without its inputs changing.
const RECIPE_VERSION: &str = "holm-vendor-image/1";

/// The box image for a set of apps and packages with these resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// The apps and packages, normalized.
    pub request: ImageRequest,
    /// The bundled Dockerfile rendered for them; its one `COPY` is the guest.
    pub dockerfile: String,
    /// Memory in MiB.
    pub memory_mib: u64,
    /// Whole CPUs.
    pub cpus: u32,
}

/// One instruction of a Dockerfile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// The keyword, upper case: `FROM`, `RUN`, `ENV`, `COPY`, ...
    pub keyword: String,
    /// Everything after it, continuation lines joined as Docker joins them.
    pub args: String,
}

impl Recipe {
    /// The recipe for `request` with `memory_mib` and `cpus`.
    pub fn new(request: &ImageRequest, memory_mib: u64, cpus: u32) -> Result<Self, ImageError> {
        // The base's id is the vendor's business: the name stands for it.
        let plan = image::plan(request, GUEST_BINARY, &format!("vendor:{VENDOR_BASE}"))?;
        Ok(Self { request: plan.request, dockerfile: plan.dockerfile, memory_mib, cpus })
    }

    /// The image's instructions.
    pub fn instructions(&self) -> Vec<Instruction> {
        instructions(&self.dockerfile)
    }

    /// The guest binary the image runs.
    pub fn guest(&self) -> &'static [u8] {
        GUEST_BINARY
    }

    /// A name for the image made of `content` (what the vendor is sent)
    /// with these resources: `holm-` and 16 hex digits of their hash.
    pub fn name_for(&self, content: &[&[u8]]) -> String {
        let mut h = Sha256::new();
        let resources = format!("{}m{}c", self.memory_mib, self.cpus);
        for part in [RECIPE_VERSION.as_bytes(), resources.as_bytes()]
            .into_iter()
            .chain(content.iter().copied())
        {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        format!("holm-{}", &hex::encode(h.finalize())[..16])
    }

    /// The Dockerfile without the guest, for a vendor whose own agent
    /// starts it at boot: the `COPY` of the guest is left out and the
    /// entrypoint keeps the machine up until then.
    pub fn dockerfile_without_guest(&self) -> String {
        let mut out = String::with_capacity(self.dockerfile.len());
        for line in self.dockerfile.lines() {
            let t = line.trim_start();
            if t.starts_with("COPY holm-guest ") {
                out.push_str(
                    "# The guest is delivered and started at boot by the vendor's agent.\n",
                );
            } else if t.starts_with("ENTRYPOINT ") {
                out.push_str("ENTRYPOINT [\"sleep\", \"infinity\"]\n");
            } else {
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}

/// The shell line a vendor's agent runs once per boot to start the guest
/// (after `prepare`, such as unpacking it): in the background, detached
/// from the agent's process and streams, its output in
/// `/tmp/holm-guest.log`; it fails, with the log's end, when the guest
/// stops at once.
pub fn start_script(prepare: &str) -> String {
    let prepare = if prepare.is_empty() {
        String::new()
    } else {
        format!("{{ {prepare}; }} || {{ echo 'cannot put the guest in place'; exit 1; }}; ")
    };
    format!(
        "{prepare}g={GUEST_PATH}; [ -x \"$g\" ] || {{ echo \"no guest at $g\"; exit 127; }}; \
         setsid \"$g\" </dev/null >{GUEST_LOG} 2>&1 & \
         sleep 0.2; kill -0 $! 2>/dev/null || {{ echo 'the guest stopped at once:'; tail -n 20 {GUEST_LOG}; exit 1; }}"
    )
}

/// The instructions of a Dockerfile, as Docker reads them.
pub fn instructions(dockerfile: &str) -> Vec<Instruction> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in dockerfile.lines() {
        let trimmed = line.trim_start();
        // Comments and empty lines go, also inside a continued instruction
        // (Docker drops empty continuation lines too).
        if trimmed.starts_with('#') || trimmed.is_empty() {
            continue;
        }
        let (text, continues) = match line.strip_suffix('\\') {
            Some(head) => (head, true),
            None => (line, false),
        };
        match &mut current {
            Some(acc) => acc.push_str(text),
            None => current = Some(text.trim_start().to_owned()),
        }
        if !continues && let Some(whole) = current.take() {
            let (keyword, args) = whole.split_once(char::is_whitespace).unwrap_or((&whole, ""));
            out.push(Instruction {
                keyword: keyword.to_ascii_uppercase(),
                args: args.trim().to_owned(),
            });
        }
    }
    if let Some(whole) = current {
        let (keyword, args) = whole.split_once(char::is_whitespace).unwrap_or((&whole, ""));
        out.push(Instruction {
            keyword: keyword.to_ascii_uppercase(),
            args: args.trim().to_owned(),
        });
    }
    out
}

/// The pairs of an `ENV`: `K=V K2=V2`, or the old `K V` form.
pub fn env_pairs(args: &str) -> Vec<(String, String)> {
    if !args.split_whitespace().next().is_some_and(|w| w.contains('=')) {
        let (k, v) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
        return vec![(k.to_owned(), v.trim().to_owned())];
    }
    args.split_whitespace()
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_read_as_docker_reads_them() {
        let text = "# head\nFROM debian:bookworm-slim\n\nENV A=1 \\\n    B=2\nRUN echo a \\\n    b \\\n# inside\n        c\nCOPY holm-guest /usr/local/bin/holm-guest\n";
        let got = instructions(text);
        let pairs: Vec<(&str, &str)> =
            got.iter().map(|i| (i.keyword.as_str(), i.args.as_str())).collect();
        // The same strings `docker history` shows for these lines.
        assert_eq!(
            pairs,
            [
                ("FROM", "debian:bookworm-slim"),
                ("ENV", "A=1     B=2"),
                ("RUN", "echo a     b         c"),
                ("COPY", "holm-guest /usr/local/bin/holm-guest"),
            ]
        );
        assert_eq!(env_pairs("A=1     B=2"), [("A".into(), "1".into()), ("B".into(), "2".into())]);
        assert_eq!(env_pairs("LANG C.UTF-8"), [("LANG".into(), "C.UTF-8".into())]);
    }

    #[test]
    fn the_bundled_dockerfile_reads_as_steps_a_vendor_can_run() {
        let r = Recipe::new(&ImageRequest::default(), 4096, 2).unwrap();
        let kinds: Vec<String> = r.instructions().into_iter().map(|i| i.keyword).collect();
        assert_eq!(kinds.first().map(String::as_str), Some("FROM"));
        assert!(
            kinds
                .iter()
                .all(|k| ["FROM", "ENV", "RUN", "COPY", "EXPOSE", "ENTRYPOINT"]
                    .contains(&k.as_str())),
            "{kinds:?}"
        );
        let copy: Vec<Instruction> =
            r.instructions().into_iter().filter(|i| i.keyword == "COPY").collect();
        assert_eq!(copy[0].args, format!("holm-guest {GUEST_PATH}"));
    }

    #[test]
    fn names_follow_the_content_and_the_resources() {
        let r = Recipe::new(&ImageRequest::default(), 4096, 2).unwrap();
        let a = r.name_for(&[b"dockerfile"]);
        assert_eq!(a, r.name_for(&[b"dockerfile"]));
        assert!(a.starts_with("holm-") && a.len() == 21, "{a}");
        assert_ne!(a, r.name_for(&[b"dockerfile2"]));
        let bigger = Recipe { memory_mib: 8192, ..r.clone() };
        assert_ne!(a, bigger.name_for(&[b"dockerfile"]));
    }

    #[test]
    fn the_start_script_backgrounds_the_guest_and_checks_it() {
        let s = start_script("");
        assert!(s.starts_with("g=/usr/local/bin/holm-guest;"), "{s}");
        assert!(s.contains("setsid \"$g\" </dev/null >/tmp/holm-guest.log 2>&1 &"), "{s}");
        assert!(start_script("gunzip x").starts_with("{ gunzip x; } || {"));
    }

    #[test]
    fn without_the_guest_the_image_waits_for_it() {
        let r = Recipe::new(&ImageRequest::default(), 4096, 2).unwrap();
        let d = r.dockerfile_without_guest();
        assert!(!d.contains("COPY holm-guest"), "{d}");
        assert!(d.contains("ENTRYPOINT [\"sleep\", \"infinity\"]"), "{d}");
        assert!(d.starts_with(&r.dockerfile[..r.dockerfile.find("COPY holm-guest").unwrap()]));
    }
}
