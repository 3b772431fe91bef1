//! The `neuronc-rs` command line.
fn main() {}
