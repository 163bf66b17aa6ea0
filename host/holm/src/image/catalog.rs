//! The app catalogue (`images/apps.toml`): what `--app NAME` installs.
//!
//! The file is embedded when holm is compiled and parsed on first use. A unit
//! test parses and checks every entry, so a malformed catalogue fails the
//! build's tests rather than a user's box.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

/// The catalogue's source, embedded at compile time.
const APPS_TOML: &str = include_str!("../../../../images/apps.toml");

/// One app of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct App {
    /// The app's name, as `--app` takes it (filled in from the table's key).
    #[serde(skip)]
    pub name: String,
    /// What the app is, in one line.
    pub description: String,
    /// Debian packages to install, without recommends.
    #[serde(default)]
    pub packages: Vec<String>,
    /// The third-party apt repository the app comes from, when it is not in
    /// Debian. Building such an app needs that repository to be reachable.
    #[serde(default)]
    pub repository: Option<String>,
    /// Shell lines that run before the packages are installed (after an
    /// `apt-get update`), such as adding a repository and its key.
    #[serde(default)]
    pub setup: Vec<String>,
    /// Shell lines that run after the packages are installed.
    #[serde(default)]
    pub run: Vec<String>,
    /// The app needs X11: in a Wayland box it runs through Xwayland, which
    /// the image then carries (and sway starts on its first X11 client).
    #[serde(default)]
    pub x11: bool,
}

impl App {
    /// Whether the app comes from a repository other than Debian's.
    pub fn needs_third_party_repository(&self) -> bool {
        self.repository.is_some()
    }
}

/// The parsed catalogue, with apps in name order.
#[derive(Debug, Clone)]
pub struct Catalog {
    apps: BTreeMap<String, App>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    apps: BTreeMap<String, App>,
}

impl Catalog {
    /// Parses and checks a catalogue. Every problem in the file is reported,
    /// one per line, so a fix does not take one round per mistake.
    pub fn parse(text: &str) -> Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| format!("apps.toml: {e}"))?;
        let mut problems = Vec::new();
        let mut apps = BTreeMap::new();
        for (name, mut app) in file.apps {
            app.name = name.clone();
            problems.extend(check(&app).into_iter().map(|p| format!("app {name:?}: {p}")));
            apps.insert(name, app);
        }
        if apps.is_empty() {
            problems.push("the catalogue has no apps".into());
        }
        if problems.is_empty() { Ok(Self { apps }) } else { Err(problems.join("\n")) }
    }

    /// The app with this name.
    pub fn get(&self, name: &str) -> Option<&App> {
        self.apps.get(name)
    }

    /// All apps, in name order.
    pub fn apps(&self) -> impl Iterator<Item = &App> {
        self.apps.values()
    }

    /// The apps' names, comma-separated, for error messages.
    pub fn names(&self) -> String {
        self.apps.keys().map(String::as_str).collect::<Vec<_>>().join(", ")
    }
}

/// The catalogue embedded in this build of holm.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    // The unit test `embedded_catalogue_is_valid` parses the same text, so this
    // cannot fail in a build whose tests passed.
    CATALOG
        .get_or_init(|| Catalog::parse(APPS_TOML).expect("the embedded images/apps.toml is valid"))
}

/// Whether `name` is a valid app name: lowercase letters, digits and dashes,
/// starting with a letter.
fn valid_app_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'a'..=b'z'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
        && !name.ends_with('-')
}

/// Whether `name` follows Debian's rule for package names
/// (`^[a-z0-9][a-z0-9+.-]+$`, Debian Policy 5.6.1).
pub(crate) fn valid_package_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    name.len() >= 2
        && matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'))
        && bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'+' | b'.' | b'-'))
}

/// Every problem with one entry.
fn check(app: &App) -> Vec<String> {
    let mut problems = Vec::new();
    if !valid_app_name(&app.name) {
        problems.push(
            "the name must be lowercase letters, digits and dashes, starting with a letter".into(),
        );
    }
    let description = app.description.trim();
    if description.is_empty() || description.contains('\n') {
        problems.push("the description must be one non-empty line".into());
    }
    if app.packages.is_empty() && app.setup.is_empty() && app.run.is_empty() {
        problems.push("it installs nothing: give packages, setup or run lines".into());
    }
    for package in &app.packages {
        if !valid_package_name(package) {
            problems.push(format!("{package:?} is not a debian package name"));
        }
    }
    match &app.repository {
        Some(url) if !url.starts_with("https://") => {
            problems.push(format!("the repository {url:?} must be an https url"));
        }
        Some(_) if app.setup.is_empty() => {
            problems
                .push("an app from a third-party repository needs setup lines that add it".into());
        }
        _ => {}
    }
    for line in app.setup.iter().chain(&app.run) {
        // Each line becomes one command of a `RUN` joined with `; \`, so a line
        // must be a single, complete shell command.
        if line.trim().is_empty() || line.contains('\n') || line.trim_end().ends_with('\\') {
            problems
                .push(format!("{line:?} must be one non-empty shell command without a line break"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_catalogue_is_valid() {
        let catalog = Catalog::parse(APPS_TOML).unwrap_or_else(|e| panic!("{e}"));
        let names: Vec<_> = catalog.apps().map(|a| a.name.as_str()).collect();
        // TOML already refuses a repeated key; this also catches names that
        // differ only in case, which `--app` could not tell apart.
        let mut lower: Vec<_> = names.iter().map(|n| n.to_lowercase()).collect();
        lower.dedup();
        assert_eq!(lower.len(), names.len(), "names are not unique: {names:?}");
        for name in &names {
            assert_eq!(*name, name.to_lowercase(), "{name} is not lowercase");
        }
    }

    #[test]
    fn catalogue_has_the_apps_the_docs_name() {
        let catalog = catalog();
        for name in ["vscode", "firefox", "libreoffice", "python", "nodejs", "git", "jq"] {
            assert!(catalog.get(name).is_some(), "{name} is missing");
        }
        let vscode = catalog.get("vscode").unwrap();
        assert!(vscode.needs_third_party_repository());
        assert!(vscode.packages.contains(&"code".to_owned()));
        assert!(!catalog.get("firefox").unwrap().needs_third_party_repository());
    }

    #[test]
    fn malformed_entries_are_all_reported() {
        let text = r#"
            [apps.Bad_Name]
            description = ""
            packages = ["UPPER"]

            [apps.repo]
            description = "from elsewhere"
            repository = "http://example.com"
            packages = ["ok"]

            [apps.lines]
            description = "bad lines"
            run = ["echo a \\", ""]
        "#;
        let err = Catalog::parse(text).unwrap_err();
        for expected in [
            "app \"Bad_Name\": the name must be",
            "app \"Bad_Name\": the description must be",
            "\"UPPER\" is not a debian package name",
            "must be an https url",
            "app \"lines\": \"echo a \\\\\" must be one",
            "app \"lines\": \"\" must be one",
        ] {
            assert!(err.contains(expected), "{expected:?} not in:\n{err}");
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        let err = Catalog::parse(
            "[apps.x]\ndescription = \"x\"\npackages = [\"xx\"]\npackage = [\"typo\"]\n",
        )
        .unwrap_err();
        assert!(err.contains("package"), "{err}");
    }

    #[test]
    fn package_names_follow_debian_rules() {
        for ok in ["jq", "g++", "libreoffice-writer", "python3.11", "0ad", "fonts-noto-cjk"] {
            assert!(valid_package_name(ok), "{ok}");
        }
        for bad in
            ["", "a", "Jq", "-jq", ".jq", "+jq", "jq;rm", "jq bash", "jq=1.6", "jq_x", "jq/stable"]
        {
            assert!(!valid_package_name(bad), "{bad}");
        }
    }
}
