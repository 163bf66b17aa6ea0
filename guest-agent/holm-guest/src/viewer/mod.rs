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
//! - [`server`]: the viewer port (pages, assets, session, the stream).
//!
//! holmd sets the key with `PUT /v1/viewers/config` on the guest API once
//! the desktop is ready; until then every viewer is refused.

pub mod rfb;
pub mod server;
pub mod state;
pub mod watch;

pub use state::Viewers;
