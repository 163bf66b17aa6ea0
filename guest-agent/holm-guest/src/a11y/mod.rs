//! The accessibility tree, read from AT-SPI over D-Bus (zbus).
//!
//! The guest connects to the box's session bus ([`bus`]), asks
//! `org.a11y.Bus.GetAddress` for the accessibility bus (which starts it),
//! and keeps one connection to that bus. The registry's root
//! (`org.a11y.atspi.Registry`, `/org/a11y/atspi/accessible/root`) has one
//! child per app; an app is on the screens where its process (the bus
//! connection's, `GetConnectionUnixProcessID`) has windows. The tree is
//! read breadth first ([`tree`]); actions are in [`act`].

pub mod act;
pub mod bus;
pub mod tree;

use std::path::PathBuf;
use std::time::Duration;

use serde::de::DeserializeOwned;
use zbus::zvariant::{DynamicType, OwnedObjectPath, OwnedValue};

/// The registry's name on the accessibility bus.
pub const REGISTRY: &str = "org.a11y.atspi.Registry";

/// The registry's root object: the desktop, whose children are the apps.
pub const ROOT: &str = "/org/a11y/atspi/accessible/root";

/// How long one call to an app may take: an app that hangs must not hang
/// the walk.
const CALL_TIMEOUT: Duration = Duration::from_secs(3);

/// What went wrong reading or acting on the tree.
#[derive(Debug)]
pub enum A11yError {
    /// No such node (or it is gone).
    NotFound(String),
    /// The accessibility bus cannot be reached.
    Gone(String),
    /// The app refused or answered something unusable.
    Failed(String),
}

impl std::fmt::Display for A11yError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotFound(m) | Self::Gone(m) | Self::Failed(m) => f.write_str(m),
        }
    }
}

/// A node on the bus: its app's unique bus name and its object path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeRef {
    /// The app's unique bus name, such as `:1.4`.
    pub dest: String,
    /// The node's object path.
    pub path: OwnedObjectPath,
}

impl NodeRef {
    /// The id the API gives it: the bus name then the path.
    pub fn id(&self) -> String {
        format!("{}{}", self.dest, self.path.as_str())
    }

    /// The node an id names, when it is well formed: a unique bus name
    /// (`:` then digits and dots) then an object path.
    pub fn parse(id: &str) -> Option<Self> {
        let slash = id.find('/')?;
        let (dest, path) = id.split_at(slash);
        let well_formed = dest.len() > 1
            && dest.starts_with(':')
            && dest[1..].chars().all(|c| c.is_ascii_digit() || c == '.');
        if !well_formed {
            return None;
        }
        let path = OwnedObjectPath::try_from(path.to_owned()).ok()?;
        Some(Self { dest: dest.to_owned(), path })
    }

    /// The registry's root.
    pub fn root() -> Self {
        Self { dest: REGISTRY.to_owned(), path: OwnedObjectPath::try_from(ROOT).expect("a path") }
    }
}

/// The guest's client of the accessibility bus.
#[derive(Debug)]
pub struct A11y {
    session: PathBuf,
    conn: tokio::sync::Mutex<Option<zbus::Connection>>,
}

impl A11y {
    /// A client that finds the accessibility bus through the session bus on
    /// `session` (its socket).
    pub fn new(session: PathBuf) -> Self {
        Self { session, conn: tokio::sync::Mutex::new(None) }
    }

    /// The connection to the accessibility bus, made on first use and again
    /// after it broke.
    pub async fn conn(&self) -> Result<zbus::Connection, A11yError> {
        let mut held = self.conn.lock().await;
        if let Some(c) = held.as_ref() {
            return Ok(c.clone());
        }
        let gone = |what: &str, e: &dyn std::fmt::Display| {
            A11yError::Gone(format!("the accessibility bus is not answering ({what}: {e})"))
        };
        let session = async {
            zbus::connection::Builder::address(bus::address(&self.session).as_str())?.build().await
        };
        let session = timed(session).await.map_err(|e| gone("session bus", &e))?;
        let reply = session
            .call_method(
                Some("org.a11y.Bus"),
                "/org/a11y/bus",
                Some("org.a11y.Bus"),
                "GetAddress",
                &(),
            )
            .await
            .map_err(|e| gone("org.a11y.Bus", &e))?;
        let address: String = reply.body().deserialize().map_err(|e| gone("org.a11y.Bus", &e))?;
        let a11y = async { zbus::connection::Builder::address(address.as_str())?.build().await };
        let a11y = timed(a11y).await.map_err(|e| gone("accessibility bus", &e))?;
        *held = Some(a11y.clone());
        Ok(a11y)
    }

    /// Forgets the connection, after a call found it broken.
    pub async fn reset(&self) {
        *self.conn.lock().await = None;
    }
}

async fn timed<T>(
    f: impl std::future::Future<Output = Result<T, zbus::Error>>,
) -> Result<T, zbus::Error> {
    match tokio::time::timeout(CALL_TIMEOUT, f).await {
        Ok(r) => r,
        Err(_) => Err(zbus::Error::Failure("no answer in time".into())),
    }
}

/// Whether a call's error says the node or its app is gone.
fn is_gone(e: &zbus::Error) -> bool {
    match e {
        zbus::Error::MethodError(name, _, _) => {
            let n = name.as_str();
            n.ends_with(".UnknownObject")
                || n.ends_with(".ServiceUnknown")
                || n.ends_with(".NameHasNoOwner")
                || n.ends_with(".UnknownMethod")
                || n.ends_with(".UnknownInterface")
                || n.ends_with(".Defunct")
        }
        _ => false,
    }
}

/// Turns a call's error into the tree's.
pub fn call_error(node: &NodeRef, e: &zbus::Error) -> A11yError {
    if is_gone(e) {
        A11yError::NotFound(format!("there is no node {:?}", node.id()))
    } else {
        A11yError::Failed(format!("node {:?} did not answer: {e}", node.id()))
    }
}

/// Calls `method` of `iface` on `node` and reads its answer.
pub async fn call<B, T>(
    conn: &zbus::Connection,
    node: &NodeRef,
    iface: &str,
    method: &str,
    body: &B,
) -> Result<T, zbus::Error>
where
    B: serde::Serialize + DynamicType,
    T: DeserializeOwned + zbus::zvariant::Type,
{
    let reply = timed(conn.call_method(
        Some(node.dest.as_str()),
        node.path.as_str(),
        Some(iface),
        method,
        body,
    ))
    .await?;
    reply.body().deserialize::<T>()
}

/// Reads property `name` of `iface` on `node`.
pub async fn property(
    conn: &zbus::Connection,
    node: &NodeRef,
    iface: &str,
    name: &str,
) -> Result<OwnedValue, zbus::Error> {
    call(conn, node, "org.freedesktop.DBus.Properties", "Get", &(iface, name)).await
}

/// The process of an app's bus connection.
pub async fn pid_of(conn: &zbus::Connection, dest: &str) -> Option<u32> {
    let reply = timed(conn.call_method(
        Some("org.freedesktop.DBus"),
        "/org/freedesktop/DBus",
        Some("org.freedesktop.DBus"),
        "GetConnectionUnixProcessID",
        &(dest,),
    ))
    .await
    .ok()?;
    reply.body().deserialize::<u32>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_as_written() {
        let n = NodeRef::parse(":1.4/org/a11y/atspi/accessible/168").unwrap();
        assert_eq!(n.dest, ":1.4");
        assert_eq!(n.path.as_str(), "/org/a11y/atspi/accessible/168");
        assert_eq!(n.id(), ":1.4/org/a11y/atspi/accessible/168");
        for bad in ["", "/a", ":1.4", "org.a11y.atspi.Registry/x", ":1.4/a//b", ":x/a", ":/a"] {
            assert!(NodeRef::parse(bad).is_none(), "{bad}");
        }
    }
}
