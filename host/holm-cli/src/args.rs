//! Flags that several commands share, declared once.

use clap::Args;

/// `--sensitive`, declared once for every command that sends a secret
/// (typing, filling, setting a value, the clipboard, a command).
#[derive(Debug, Args, Clone, Copy)]
pub(crate) struct SensitiveArg {
    /// The text is a secret: holmd keeps it in no record (its timeline and
    /// exports, logs) and not even its length; a command's argv and
    /// environment are recorded as `[sensitive]`.
    #[arg(long)]
    pub(crate) sensitive: bool,
}
