//! `neuronc-backend`: the NeuronCore back end of neuronc-rs.
//!
//! * [`hlo`] — XLA `HloModuleProto` / HLO text emission (the artifact neuronx-cc reads).
//! * [`hlo_import`] — the reverse: an `HloModuleProto` read back as StableHLO text.
//! * [`sim`] — functional simulation of the compiled program (kernel by kernel, PSUM
//!   accumulation, auto-cast), the numbers `run --engine sim` prints.
//! * [`target`] — NeuronCore-v2/v3 hardware model as data: engines, memories, costs.

pub mod engine;
pub mod hlo;
pub mod hlo_import;
pub mod sim;
pub mod target;

pub use hlo::{emit_hlo_module, HloArtifacts, HloError, HloOptions};
pub use target::Target;
