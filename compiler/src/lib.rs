//! `neuronc`: the driver and library facade of neuronc-rs.
//!
//! A framework embeds neuronc-rs through this crate:
//!
//! ```no_run
//! use neuronc::{Session, Source, Unit};
//! let source = Source::new("model.mlir", std::fs::read_to_string("model.mlir").unwrap());
//! let mut session = Session::new();
//! match session.load(&Unit::whole(&source)) {
//!     Ok(module) => println!("{}", session.stats(&module).to_text()),
//!     Err(e) => eprintln!("{e}"), // e.diagnostics() has spans into `source`
//! }
//! ```
//!
//! Compiling for a NeuronCore gives the artifact files in memory (the CLI's `compile` writes
//! them to a directory) and the report behind the summary:
//!
//! ```no_run
//! use neuronc::build::{build, BuildOptions};
//! let text = std::fs::read_to_string("model.mlir").unwrap();
//! let module = neuronc::compile("model.mlir", &text)?;
//! let opts = BuildOptions { target: "trn2".into(), ..BuildOptions::default() };
//! let artifacts = build(module, &opts)?;
//! for (name, bytes) in &artifacts.files {
//!     println!("{name}: {} bytes", bytes.len()); // model.hlo.pb, program.nir, ...
//! }
//! println!("predicted {:.3} ms", artifacts.report.predicted_time_s * 1e3);
//! # Ok::<(), neuronc::Error>(())
//! ```
//!
//! Modules: [`source`] (inputs and `// -----` units), [`session`] (parse / verify / print
//! / stats with timings), [`build`] (the `compile` pipeline and its artifacts), [`error`] (the typed [`Error`] carrying diagnostics and their
//! source), [`stats`] (cost statistics). The command line lives in [`cli`] (clap
//! definitions, subcommands, diagnostic rendering) and the golden-file runner in
//! [`golden`]; library users need neither.
//!
//! Invariant: nothing here panics on user input or prints; rendering is the CLI's job.

pub mod build;
pub mod cache;
pub mod cli;
pub mod error;
pub mod golden;
pub mod plan;
pub(crate) mod progress;
pub mod session;
pub mod source;
pub mod stats;

pub use error::{Diagnostics, Error, Stage};
pub use neuronc_ir as ir;
pub use session::{compile, compile_source, Session, Timings};
pub use source::{Source, Unit};
pub use stats::Stats;
