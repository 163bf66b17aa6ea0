//! What goes into a box image, and its name: the rendered Dockerfile, the
//! labels and the content-addressed tag.
//!
//! The tag is `holm-box:<hash>`, where the hash covers every input of the
//! build: the rendered Dockerfile (which holds the apps' install lines), the
//! guest binary, the base image's id, the apps and the packages. So an image
//! with a tag is exactly what those inputs build, an unchanged set reuses its
//! image with one inspect, and a new guest or a refreshed base gives new tags
//! instead of silently running old bits.

use std::collections::BTreeMap;

use holm_proto::guest::Profile;
use sha2::{Digest, Sha256};

use super::catalog::catalog;
use super::request::ImageRequest;

/// The repository part of every box image's tag.
pub const IMAGE_REPOSITORY: &str = "holm-box";
/// Label on every image holm builds: `"1"`.
pub const LABEL_IMAGE: &str = "holm.image";
/// Label with the image's apps, comma-separated (empty for none).
pub const LABEL_APPS: &str = "holm.apps";
/// Label with the image's extra packages, comma-separated (empty for none).
pub const LABEL_PACKAGES: &str = "holm.packages";
/// Label with the full hex SHA-256 of the build's inputs.
pub const LABEL_HASH: &str = "holm.hash";
/// Label with the hex SHA-256 of the guest binary inside.
pub const LABEL_GUEST: &str = "holm.guest";
/// Label with the id of the base image the image was built on.
pub const LABEL_BASE: &str = "holm.base";
/// Label with the image's display profile: `x11` or `wayland`.
pub const LABEL_DISPLAY: &str = "holm.display";

/// The bundled Dockerfile of the X11 profile.
const DOCKERFILE_X11: &str = include_str!("../../../../images/x11/Dockerfile");
/// The bundled Dockerfile of the Wayland profile.
const DOCKERFILE_WAYLAND: &str = include_str!("../../../../images/wayland/Dockerfile");
/// What the Wayland image adds for apps that need X11.
const XWAYLAND_PACKAGE: &str = "xwayland";
/// The line of the Dockerfile that the apps' layer replaces.
const APPS_MARKER: &str = "# @holm:apps@";
/// Bump when the meaning of the inputs changes without the inputs changing
/// (say, how labels are applied), so old images are not mistaken for new.
const HASH_VERSION: &str = "holm-box/1";
/// Hex digits of the hash in the tag: 64 bits, plenty to tell a host's images
/// apart; the label keeps the full hash.
const TAG_HEX_LEN: usize = 16;

/// Everything needed to build one box image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildPlan {
    /// The normalized request.
    pub request: ImageRequest,
    /// `holm-box:<hash>`.
    pub tag: String,
    /// The full hex SHA-256 of the inputs.
    pub hash: String,
    /// The Dockerfile to build, with the apps' layer in place. Its only
    /// `COPY` is `COPY holm-guest /usr/local/bin/holm-guest`.
    pub dockerfile: String,
    /// The labels to put on the image.
    pub labels: BTreeMap<String, String>,
}

/// The plan for `request` with this guest on this base.
///
/// `request` is normalized here, so callers may pass it as typed; an invalid
/// request is refused with the same errors as [`ImageRequest::normalized`].
pub fn plan(
    request: &ImageRequest,
    guest_binary: &[u8],
    base_image_id: &str,
) -> super::Result<BuildPlan> {
    let request = request.normalized()?;
    let dockerfile = render_dockerfile(&request);
    let guest_hash = if std::ptr::eq(guest_binary, super::GUEST_BINARY) {
        super::guest_sha256().to_owned()
    } else {
        hex::encode(Sha256::digest(guest_binary))
    };

    let mut hasher = Sha256::new();
    // Each field is length-prefixed so no two different inputs can produce
    // the same byte stream.
    for field in [
        HASH_VERSION,
        &dockerfile,
        &guest_hash,
        base_image_id,
        &request.apps.join(","),
        &request.packages.join(","),
    ] {
        hasher.update((field.len() as u64).to_le_bytes());
        hasher.update(field.as_bytes());
    }
    let hash = hex::encode(hasher.finalize());
    let tag = format!("{IMAGE_REPOSITORY}:{}", &hash[..TAG_HEX_LEN]);

    let labels = BTreeMap::from([
        (LABEL_IMAGE.to_owned(), "1".to_owned()),
        (LABEL_APPS.to_owned(), request.apps.join(",")),
        (LABEL_PACKAGES.to_owned(), request.packages.join(",")),
        (LABEL_HASH.to_owned(), hash.clone()),
        (LABEL_GUEST.to_owned(), guest_hash),
        (LABEL_BASE.to_owned(), base_image_id.to_owned()),
        (LABEL_DISPLAY.to_owned(), request.display.to_string()),
    ]);
    Ok(BuildPlan { request, tag, hash, dockerfile, labels })
}

/// The tag of the image that `request` with this guest on this base builds:
/// `holm-box:<hash>`.
pub fn image_tag(
    request: &ImageRequest,
    guest_binary: &[u8],
    base_image_id: &str,
) -> super::Result<String> {
    Ok(plan(request, guest_binary, base_image_id)?.tag)
}

/// The bundled Dockerfile with the apps' layer in place of its marker line.
/// `request` must be normalized (its apps known to the catalogue).
fn render_dockerfile(request: &ImageRequest) -> String {
    let layer = apps_layer(request);
    let template = dockerfile(request.display);
    let mut out = String::with_capacity(template.len() + layer.len());
    for line in template.lines() {
        if line.trim() == APPS_MARKER {
            out.push_str(&layer);
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The bundled Dockerfile of a display profile.
fn dockerfile(display: Profile) -> &'static str {
    match display {
        Profile::X11 => DOCKERFILE_X11,
        Profile::Wayland => DOCKERFILE_WAYLAND,
    }
}

/// The `RUN` that installs a request's apps and packages, or nothing for the
/// plain desktop. On Wayland, apps that need X11 bring Xwayland.
///
/// One layer for the whole set: the image is per set anyway, and one
/// `apt-get update` and one clean-up keep the layer small. `set -eux` makes
/// the first failing command fail the build and shows each command in the
/// output, so the error names what failed.
fn apps_layer(request: &ImageRequest) -> String {
    if request.is_default() {
        return String::new();
    }
    let apps: Vec<_> = request.apps.iter().filter_map(|name| catalog().get(name)).collect();
    let mut packages: Vec<&str> =
        apps.iter().flat_map(|a| a.packages.iter().map(String::as_str)).collect();
    packages.extend(request.packages.iter().map(String::as_str));
    if request.display == Profile::Wayland && request.needs_x11() {
        packages.push(XWAYLAND_PACKAGE);
    }
    packages.sort_unstable();
    packages.dedup();

    let mut commands = vec!["set -eux".to_owned(), "apt-get update".to_owned()];
    let setup: Vec<&String> = apps.iter().flat_map(|a| &a.setup).collect();
    if !setup.is_empty() {
        commands.extend(setup.iter().map(|l| l.trim().to_owned()));
        // The setup lines may have added repositories.
        commands.push("apt-get update".to_owned());
    }
    if !packages.is_empty() {
        commands.push(format!("apt-get install -y --no-install-recommends {}", packages.join(" ")));
    }
    commands.extend(apps.iter().flat_map(|a| &a.run).map(|l| l.trim().to_owned()));
    // Keep the downloaded packages and the lists out of the layer, whatever
    // the base's apt settings.
    commands.push("apt-get clean".to_owned());
    commands.push("rm -rf /var/lib/apt/lists/*".to_owned());

    let mut layer = format!(
        "# Apps: {}. Packages: {}.\nRUN ",
        if request.apps.is_empty() { "none".to_owned() } else { request.apps.join(", ") },
        if request.packages.is_empty() { "none".to_owned() } else { request.packages.join(", ") },
    );
    layer.push_str(&commands.join("; \\\n    "));
    layer.push('\n');
    layer
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUEST: &[u8] = b"\x7fELF guest one";
    const BASE: &str = "sha256:base";

    fn req(apps: &[&str], packages: &[&str]) -> ImageRequest {
        ImageRequest::new(apps.iter().copied(), packages.iter().copied()).unwrap()
    }

    fn tag(r: &ImageRequest) -> String {
        image_tag(r, GUEST, BASE).unwrap()
    }

    #[test]
    fn bundled_dockerfiles_have_their_slots() {
        for (display, file, desktop) in
            [(Profile::X11, DOCKERFILE_X11, "xvfb"), (Profile::Wayland, DOCKERFILE_WAYLAND, "sway")]
        {
            assert_eq!(dockerfile(display), file);
            assert_eq!(file.lines().filter(|l| l.trim() == APPS_MARKER).count(), 1, "{display}");
            let first = file.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty());
            assert_eq!(first, Some("FROM debian:bookworm-slim"), "{display}");
            let copy: Vec<_> = file.lines().filter(|l| l.starts_with("COPY")).collect();
            assert_eq!(copy, ["COPY holm-guest /usr/local/bin/holm-guest"], "{display}");
            assert!(file.contains(r#"ENTRYPOINT ["/usr/local/bin/holm-guest"]"#), "{display}");
            assert!(file.contains("EXPOSE 8765 9223 6080"), "{display}");
            assert!(file.contains("LANG=C.UTF-8"), "{display}");
            // The apps' layer comes after the desktop and before the guest, so
            // the desktop layer is shared and a new guest rebuilds only the
            // last layer.
            let apps = file.find(APPS_MARKER).unwrap();
            assert!(file.find("chromium").unwrap() < apps, "{display}");
            assert!(file.find(desktop).unwrap() < apps, "{display}");
            assert!(apps < file.find("COPY holm-guest").unwrap(), "{display}");
        }
    }

    #[test]
    fn each_display_is_its_own_image_and_x11_apps_bring_xwayland_to_wayland() {
        let x11 = plan(&req(&["gimp", "gedit"], &[]), GUEST, BASE).unwrap();
        let wl = plan(&req(&["gimp", "gedit"], &[]).with_display(Profile::Wayland), GUEST, BASE)
            .unwrap();
        assert_ne!(x11.tag, wl.tag);
        assert_eq!(
            (x11.labels[LABEL_DISPLAY].as_str(), wl.labels[LABEL_DISPLAY].as_str()),
            ("x11", "wayland")
        );
        assert!(
            wl.dockerfile.contains("install -y --no-install-recommends gedit gimp xwayland;"),
            "{}",
            wl.dockerfile
        );
        assert!(!x11.dockerfile.contains("xwayland"), "{}", x11.dockerfile);
        // Apps that run natively on Wayland bring nothing more.
        let native =
            plan(&req(&["gedit"], &[]).with_display(Profile::Wayland), GUEST, BASE).unwrap();
        assert!(!native.dockerfile.contains("xwayland"), "{}", native.dockerfile);
        let plain =
            plan(&ImageRequest::default().with_display(Profile::Wayland), GUEST, BASE).unwrap();
        assert!(plain.dockerfile.contains("sway") && !plain.dockerfile.contains("# Apps:"));
    }

    #[test]
    fn tag_is_stable_for_the_same_inputs() {
        let a = tag(&req(&["jq", "git"], &["htop"]));
        let b = tag(&req(&["git", "jq", "git"], &["htop"]));
        assert_eq!(a, b);
        assert!(a.starts_with("holm-box:"), "{a}");
        assert_eq!(a.len(), "holm-box:".len() + TAG_HEX_LEN);
        // Unnormalized input gives the same tag as normalized input.
        let raw = ImageRequest {
            apps: vec!["jq".into(), "git".into()],
            packages: vec!["htop".into()],
            display: Profile::X11,
        };
        assert_eq!(tag(&raw), a);
    }

    #[test]
    fn tag_changes_with_each_input() {
        let base = req(&["git"], &["htop"]);
        let t = tag(&base);
        assert_ne!(t, tag(&req(&["git", "jq"], &["htop"])), "an app");
        assert_ne!(t, tag(&req(&["git"], &["htop", "ripgrep"])), "a package");
        assert_ne!(t, image_tag(&base, b"\x7fELF guest two", BASE).unwrap(), "the guest");
        assert_ne!(t, image_tag(&base, GUEST, "sha256:other").unwrap(), "the base");
        assert_ne!(tag(&ImageRequest::default()), t);
    }

    #[test]
    fn an_app_and_the_same_package_are_different_images() {
        // `--app jq` and `--package jq` install the same thing, but the labels
        // and `holm image ls` differ, so they are kept apart.
        assert_ne!(tag(&req(&["jq"], &[])), tag(&req(&[], &["jq"])));
    }

    #[test]
    fn default_image_has_no_apps_layer() {
        let p = plan(&ImageRequest::default(), GUEST, BASE).unwrap();
        assert!(!p.dockerfile.lines().any(|l| l.trim() == APPS_MARKER));
        assert!(!p.dockerfile.contains("# Apps:"));
        assert_eq!(p.labels[LABEL_IMAGE], "1");
        assert_eq!(p.labels[LABEL_APPS], "");
        assert_eq!(p.labels[LABEL_PACKAGES], "");
        assert_eq!(p.labels[LABEL_HASH], p.hash);
        assert_eq!(p.labels[LABEL_BASE], BASE);
        assert!(p.tag.ends_with(&p.hash[..TAG_HEX_LEN]));
    }

    #[test]
    fn apps_layer_installs_everything_once_before_the_guest() {
        let p = plan(&req(&["vscode", "python", "jq"], &["jq", "htop"]), GUEST, BASE).unwrap();
        let d = &p.dockerfile;
        assert!(
            d.contains("# Apps: jq, python, vscode. Packages: htop, jq.\nRUN set -eux; \\\n"),
            "{d}"
        );
        assert!(d.contains(
            "apt-get install -y --no-install-recommends code htop jq python3 python3-pip python3-venv; \\\n"
        ));
        // The repository is added before the install, and the lists are
        // refreshed after adding it.
        let key = d.find("packages.microsoft.com/keys").unwrap();
        let second_update = d[key..].find("apt-get update").unwrap() + key;
        assert!(second_update < d.find("install -y --no-install-recommends code").unwrap());
        assert!(
            d.find("rm -rf /var/lib/apt/lists/*\n").unwrap() < d.find("COPY holm-guest").unwrap()
        );
        assert_eq!(p.labels[LABEL_APPS], "jq,python,vscode");
        assert_eq!(p.labels[LABEL_PACKAGES], "htop,jq");
    }

    #[test]
    fn plan_refuses_invalid_requests() {
        let bad = ImageRequest { apps: vec!["nope".into()], ..ImageRequest::default() };
        assert!(plan(&bad, GUEST, BASE).is_err());
    }
}
