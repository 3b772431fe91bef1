//! The typed error of the driver: [`Error`], and [`Diagnostics`], the payload of invalid
//! input.
//!
//! Invariant: the spans of every diagnostic in a [`Diagnostics`] are byte offsets into the
//! *whole* text of its [`Source`] (already shifted by the unit's offset), so a renderer
//! needs nothing but this value to print `file:line:col`.

use std::fmt;
use std::sync::Arc;

use neuronc_ir::{Diagnostic, Span};

use crate::source::{Source, Unit};

/// Which stage rejected the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Parse,
    Verify,
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Stage::Parse => "parsing",
            Stage::Verify => "verification",
        })
    }
}

/// Diagnostics about one unit of input, with the source they point into.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    pub stage: Stage,
    pub source: Arc<Source>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Wraps diagnostics whose spans are relative to `unit`, shifting them to the file.
    pub fn new(stage: Stage, unit: &Unit, diagnostics: Vec<Diagnostic>) -> Self {
        let base = unit.range.start as u32;
        let shift = |s: Span| Span {
            start: s.start.saturating_add(base),
            end: s.end.saturating_add(base),
        };
        let diagnostics = diagnostics
            .into_iter()
            .map(|mut d| {
                d.span = shift(d.span);
                for (span, _) in &mut d.notes {
                    *span = span.map(shift);
                }
                d
            })
            .collect();
        Diagnostics {
            stage,
            source: Arc::clone(&unit.source),
            diagnostics,
        }
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} failed with {} error(s)",
            self.source.name,
            self.stage,
            self.diagnostics.len()
        )?;
        if let Some(first) = self.diagnostics.first() {
            write!(f, "; first: {}", first.message)?;
        }
        Ok(())
    }
}

/// Everything the driver can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An input file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// An input file is not UTF-8 text.
    #[error("cannot read {path}: not valid UTF-8")]
    NotUtf8 { path: String },
    /// An `HloModuleProto` input could not be translated to StableHLO.
    #[error("cannot import {path}: {source}")]
    HloImport {
        path: String,
        #[source]
        source: neuronc_backend::hlo_import::ImportError,
    },
    /// An output could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// An `.npz` file could not be read or written, or does not fit the function.
    #[error("{path}: {source}")]
    Npz {
        path: String,
        #[source]
        source: neuronc_interp::npz::NpzError,
    },
    /// The interpreter rejected the program or its inputs.
    #[error("interpreter: {0}")]
    Interp(#[from] neuronc_interp::InterpError),
    /// A function to run was not found, or needs inputs that were not given.
    #[error("{0}")]
    Run(String),
    /// A pass pipeline could not be built or a pass failed.
    #[error("{0}")]
    Pass(#[from] neuronc_passes::PassError),
    /// The input does not parse or does not verify.
    #[error("{0}")]
    Invalid(Box<Diagnostics>),
}

impl Error {
    /// The diagnostics, if the error is about invalid input.
    pub fn diagnostics(&self) -> Option<&Diagnostics> {
        match self {
            Error::Invalid(d) => Some(d),
            _ => None,
        }
    }
}

impl From<Diagnostics> for Error {
    fn from(d: Diagnostics) -> Self {
        Error::Invalid(Box::new(d))
    }
}
