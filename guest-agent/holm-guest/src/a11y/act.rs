//! Acting on a node through the app: its first action, its editable
//! text, its range value. The pointer and keyboard fallback is the route's
//! (`api::accessibility`), through the guest's input.

use zbus::zvariant::Value;

use super::tree::Info;
use super::{A11yError, call, call_error};

/// Does the node's first action (`DoAction(0)`); answers whether the app
/// did it.
pub async fn first_action(conn: &zbus::Connection, info: &Info) -> Result<bool, A11yError> {
    call::<_, bool>(conn, &info.at, "org.a11y.atspi.Action", "DoAction", &(0i32,))
        .await
        .map_err(|e| call_error(&info.at, &e))
}

/// Sets the node's editable text; answers whether the app did.
pub async fn set_text(conn: &zbus::Connection, info: &Info, text: &str) -> Result<bool, A11yError> {
    call::<_, bool>(conn, &info.at, "org.a11y.atspi.EditableText", "SetTextContents", &(text,))
        .await
        .map_err(|e| call_error(&info.at, &e))
}

/// Sets the node's range value.
pub async fn set_number(conn: &zbus::Connection, info: &Info, v: f64) -> Result<(), A11yError> {
    let body = ("org.a11y.atspi.Value", "CurrentValue", Value::F64(v));
    call::<_, ()>(conn, &info.at, "org.freedesktop.DBus.Properties", "Set", &body)
        .await
        .map_err(|e| call_error(&info.at, &e))
}
