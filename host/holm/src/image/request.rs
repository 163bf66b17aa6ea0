//! What a box image holds: its display profile's desktop, and beyond it
//! apps from the catalogue and Debian packages.

use holm_proto::guest::Profile;

use super::catalog::{catalog, valid_package_name};
use super::{ImageError, Result};

/// The display profile, apps (`--app`) and packages (`--package`) of a box
/// image.
///
/// The default is the plain X11 desktop. Each distinct set is its own image;
/// [`ImageRequest::normalized`] sorts and deduplicates, so the order and
/// repetitions a user typed do not make a different image.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ImageRequest {
    /// Names from the app catalogue ([`super::catalog`]).
    pub apps: Vec<String>,
    /// Debian package names (bookworm), installed without recommends.
    pub packages: Vec<String>,
    /// The desktop: X11 (`images/x11`) or Wayland (`images/wayland`).
    pub display: Profile,
}

impl ImageRequest {
    /// A request for these apps and packages, checked and normalized.
    pub fn new<A, P>(apps: A, packages: P) -> Result<Self>
    where
        A: IntoIterator,
        A::Item: Into<String>,
        P: IntoIterator,
        P::Item: Into<String>,
    {
        Self {
            apps: apps.into_iter().map(Into::into).collect(),
            packages: packages.into_iter().map(Into::into).collect(),
            display: Profile::X11,
        }
        .normalized()
    }

    /// The same request for the `display` profile's desktop.
    pub fn with_display(mut self, display: Profile) -> Self {
        self.display = display;
        self
    }

    /// The same request, checked, sorted and without duplicates.
    ///
    /// Refuses an app that is not in the catalogue (the error lists the
    /// catalogue's apps) and a package name that does not follow Debian's
    /// rules (`^[a-z0-9][a-z0-9+.-]+$`), which also keeps package names from
    /// carrying anything a shell would interpret.
    pub fn normalized(&self) -> Result<Self> {
        let catalog = catalog();
        for name in &self.apps {
            if catalog.get(name).is_none() {
                return Err(ImageError::UnknownApp { name: name.clone(), known: catalog.names() });
            }
        }
        for name in &self.packages {
            if !valid_package_name(name) {
                return Err(ImageError::InvalidPackage { name: name.clone() });
            }
        }
        let mut apps = self.apps.clone();
        apps.sort();
        apps.dedup();
        let mut packages = self.packages.clone();
        packages.sort();
        packages.dedup();
        Ok(Self { apps, packages, display: self.display })
    }

    /// Whether an app of the request needs X11 (on Wayland it brings
    /// Xwayland). The request must be normalized.
    pub fn needs_x11(&self) -> bool {
        self.apps.iter().filter_map(|a| catalog().get(a)).any(|a| a.x11)
    }

    /// Whether this is the plain desktop, with no apps and no packages.
    pub fn is_default(&self) -> bool {
        self.apps.is_empty() && self.packages.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_duplicates_do_not_matter() {
        let a = ImageRequest::new(["jq", "git", "jq"], ["ripgrep", "htop"]).unwrap();
        let b = ImageRequest::new(["git", "jq"], ["htop", "ripgrep", "htop"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.apps, ["git", "jq"]);
        assert_eq!(a.packages, ["htop", "ripgrep"]);
    }

    #[test]
    fn unknown_app_lists_the_known_ones() {
        let err = ImageRequest::new(["photoshop"], [] as [&str; 0]).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, ImageError::UnknownApp { .. }));
        assert!(msg.starts_with("unknown app \"photoshop\": the apps are "), "{msg}");
        for known in ["vscode", "firefox", "jq"] {
            assert!(msg.contains(known), "{known} not in {msg}");
        }
    }

    #[test]
    fn app_names_are_exact() {
        assert!(ImageRequest::new(["VSCode"], [] as [&str; 0]).is_err());
    }

    #[test]
    fn bad_package_names_are_refused() {
        for bad in ["JQ", "jq; rm -rf /", "$(id)", "j", "jq=1.6"] {
            let err = ImageRequest::new([] as [&str; 0], [bad]).unwrap_err();
            assert!(matches!(err, ImageError::InvalidPackage { .. }), "{bad}: {err}");
            assert!(err.to_string().contains("debian package name"), "{err}");
        }
    }

    #[test]
    fn default_is_the_plain_desktop() {
        assert!(ImageRequest::default().is_default());
        assert!(!ImageRequest::new([] as [&str; 0], ["jq"]).unwrap().is_default());
    }
}
