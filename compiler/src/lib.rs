//! `neuronc`: driver and library facade of neuronc-rs.
pub use neuronc_ir as ir;
