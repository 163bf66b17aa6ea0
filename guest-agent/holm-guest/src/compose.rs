//! What a desktop of each profile is made of: the places it writes, given
//! to the desktop user ([`prepare`]), and its [`Desktop`](display::Desktop)
//! with the components the supervisor runs ([`desktop`]). The one module
//! that knows both profiles' recipes; the supervisor knows none.

use std::sync::Arc;

use crate::config::{self, Config};
use crate::{display, supervisor, wayland, x11};

/// Makes the places the desktop writes belong to `user`: the X socket
/// directory (shared, sticky, as X expects), the state directory, and a
/// kept browser profile (a volume another box may have filled).
pub fn prepare(config: &Config) {
    use std::os::unix::fs::PermissionsExt;
    let x11 = std::path::Path::new("/tmp/.X11-unix");
    if std::fs::create_dir_all(x11).is_ok() {
        let _ = std::fs::set_permissions(x11, std::fs::Permissions::from_mode(0o1777));
    }
    let Some(user) = &config.desktop_user else { return };
    let mut dirs = vec![config.state_dir.clone(), config.chromium_profile.clone()];
    if config.profile == holm_proto::guest::Profile::X11 {
        // Fluxbox's overlay is written here as root, so its directory is
        // given to the user below, where fluxbox writes its other files.
        crate::x11::components::fluxbox_overlay(&user.home);
        dirs.push(user.home.join(".fluxbox"));
    }
    for dir in &dirs {
        if let Err(e) = std::fs::create_dir_all(dir) {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot make a directory of the desktop");
        }
        chown_tree(dir, user.uid, user.gid);
    }
}

/// Gives `path` and everything under it to `uid:gid`, without following
/// links; a tree that already belongs to them is left at its top.
fn chown_tree(path: &std::path::Path, uid: u32, gid: u32) {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.uid() == uid && meta.gid() == gid {
        return;
    }
    if let Err(e) = std::os::unix::fs::lchown(path, Some(uid), Some(gid)) {
        tracing::warn!(path = %path.display(), error = %e, "cannot give a path to the desktop user");
        return;
    }
    if meta.is_dir()
        && let Ok(entries) = std::fs::read_dir(path)
    {
        for entry in entries.flatten() {
            chown_tree(&entry.path(), uid, gid);
        }
    }
}

/// The desktop of the configured profile, and the components to supervise.
pub fn desktop(
    config: &config::Config,
) -> std::io::Result<(Arc<dyn display::Desktop>, Vec<supervisor::ComponentSpec>)> {
    let screens = u8::try_from(config.screens.len()).unwrap_or(1);
    Ok(match config.profile {
        holm_proto::guest::Profile::X11 => (
            Arc::new(x11::X11::new((0..screens).map(|i| config.display(i)).collect())),
            crate::x11::components::x11_specs(config),
        ),
        holm_proto::guest::Profile::Wayland => {
            let desktop = wayland::Wayland::new(config);
            desktop.prepare(config)?;
            let specs = desktop.specs(config);
            (desktop, specs)
        }
    })
}
