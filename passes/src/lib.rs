//! `neuronc-passes`: the pass infrastructure and the generic optimization passes.
//!
//! * [`pass`] — the [`Pass`] trait; [`context`] — [`PassContext`] (fuel, rewrite trace,
//!   print sink); [`registry`] — every pass by kebab-case name.
//! * [`pipeline`] — [`Pipeline`]s parsed from `--passes=` text and the `-O` presets;
//!   [`manager`] — [`run_pipeline`], [`PassReport`] and [`OptOptions`] (the `opt` flags).
//! * Passes, one file each: [`inline`], [`canonicalize`] (rules in its submodules),
//!   [`cse`], [`dce`], [`decompose_batch_norm`], [`recognize_idioms`], [`sink_constants`],
//!   [`strip_sharding`], [`narrow_index`] (with its integer range analysis in [`range`]).
//!
//! Invariants: passes are deterministic; every individual rewrite is announced through
//! [`PassContext::try_rewrite`] before it happens (so `--opt-fuel` bisects and
//! `--trace-rewrites` lists exactly the applied rewrites); passes keep the module valid
//! (checked after every changing pass with `verify_each`).

pub mod canonicalize;
pub mod context;
pub mod cse;
pub mod dce;
pub mod decompose_batch_norm;
pub mod dedupe_functions;
pub mod edits;
pub mod error;
pub mod inline;
pub mod ir_util;
pub mod manager;
pub mod narrow_index;
pub mod neuron;
pub mod pass;
pub mod pipeline;
pub mod range;
pub mod recognize_idioms;
pub mod recompute_contraction;
pub mod registry;
pub mod scale_after_contraction;
pub mod sink_constants;
pub mod strip_sharding;

pub use context::{Changed, PassContext, PrintSink};
pub use error::PassError;
pub use manager::{run_pipeline, OptOptions, PassReport, PassRun};
pub use pass::Pass;
pub use pipeline::{Pipeline, PipelineItem};
pub use registry::{registry, PassInfo};
