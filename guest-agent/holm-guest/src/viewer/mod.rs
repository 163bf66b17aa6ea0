//! The viewers: a web page per screen, built on noVNC, that shows the screen
//! live (watch only) or hands it to a person (takeover), with the RFB stream
//! carried over WebSocket by the guest itself.
//!
//! - [`state`]: the viewer key, revocations, open connections, the person in
//!   control and the agent's request for help;
//! - [`rfb`]: reading a viewer's RFB messages, so watch-only input is
//!   dropped where the stream is served;
//! - [`watch`]: reading the VNC server's messages to a watcher, so the box's
//!   clipboard never reaches a watch-only viewer;
//! - [`keeper`]: on X11, a held client per watched screen, so x11vnc takes
//!   a new viewer at once;
//! - [`server`]: the viewer port (pages, assets, session, the stream).
//!
//! holmd sets the key with `PUT /v1/viewers/config` on the guest API once
//! the desktop is ready; until then every viewer is refused.

pub mod keeper;
pub mod rfb;
pub mod server;
pub mod state;
pub mod watch;

pub use state::Viewers;
