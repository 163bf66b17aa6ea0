//! Files: reading, writing, listing and changing them.

use super::*;

// ---------------------------------------------------------------------------
// Files

/// The query of the file routes that name one path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PathQuery {
    /// An absolute path in the box.
    pub path: String,
}

/// The query of `PUT /v1/files/content`, whose body is the raw bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteQuery {
    /// An absolute path in the box; missing parents are made.
    pub path: String,
    /// Permission bits in octal, such as `755` (default 644 for a new file).
    #[serde(default)]
    pub mode: Option<String>,
}

/// The query of `GET /v1/files/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListQuery {
    /// An absolute path to a directory.
    pub path: String,
    /// How many levels to descend (default 1, at most 32).
    #[serde(default)]
    pub depth: Option<u32>,
    /// At most this many entries (default and most 10000); `next_cursor`
    /// continues.
    #[serde(default)]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: Option<String>,
}

/// What kind of entry a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (not followed).
    Symlink,
    /// A socket, device or pipe.
    Other,
}

/// An entry in the box's file system.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileInfo {
    /// The absolute path.
    pub path: String,
    /// The last part of the path.
    pub name: String,
    /// What kind of entry it is.
    #[serde(rename = "type")]
    pub kind: FileType,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits in octal, such as `644`.
    pub mode: String,
    /// Last modification, in RFC 3339.
    pub modified: Option<String>,
    /// Where a symbolic link points.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
}

/// `GET /v1/files/stat`: the entry, or `exists: false`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct FileStat {
    /// Whether the path exists.
    pub exists: bool,
    /// The entry, when it exists.
    #[serde(default, skip_serializing_if = "Option::is_none", flatten)]
    pub info: Option<FileInfo>,
}

/// `POST /v1/files/mkdir`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MkdirRequest {
    /// An absolute path.
    pub path: String,
    /// Make missing parents too, and accept an existing directory (default true).
    #[serde(default = "yes")]
    pub parents: bool,
}

/// `POST /v1/files/remove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RemoveRequest {
    /// An absolute path.
    pub path: String,
    /// Remove a directory and everything in it (default false).
    #[serde(default)]
    pub recursive: bool,
}

/// `POST /v1/files/rename`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RenameRequest {
    /// The absolute path to move.
    pub from: String,
    /// The absolute path to move it to.
    pub to: String,
    /// Replace `to` if it exists (default false).
    #[serde(default)]
    pub overwrite: bool,
}

fn yes() -> bool {
    true
}
