//! The holm-guest binary.
fn main() {}
