//! What the `holm` CLI shares with the programs it runs (`holm-bench`):
//! printing results and errors in the one error shape. The commands
//! themselves are the `holm` binary's.

pub mod output;
