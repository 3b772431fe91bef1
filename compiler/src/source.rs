//! Source texts and the units the driver processes.
//!
//! Owns: [`Source`] (a named input text) and [`Unit`] (one module to process: the whole
//! text, or one `// -----` chunk of it when splitting is on).
//! Invariant: a unit's `range` is a byte range into its source's text, and diagnostics of
//! a unit are shifted by `range.start`, so line numbers are always relative to the whole
//! file, never to the chunk.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use crate::error::Error;

/// A named input text (a file, or `<stdin>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// The name diagnostics show (the path as given by the user, or `<stdin>`).
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Arc<Source> {
        Arc::new(Source {
            name: name.into(),
            text: text.into(),
        })
    }

    /// Reads `path`; `name` is what diagnostics show. A `.pb` file is a serialized XLA
    /// `HloModuleProto`, and a `.hlo` / `.hlo.txt` file, or a `.txt` file whose text starts
    /// with `HloModule`, is XLA's HLO text: in both cases the source's text is the
    /// StableHLO they translate to (see `neuronc_backend::hlo_import`), and diagnostics
    /// point into that text.
    pub fn read(path: &Path, name: impl Into<String>) -> Result<Arc<Source>, Error> {
        let name = name.into();
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(source) => return Err(Error::Io { path: name, source }),
        };
        let imported = if path.extension().is_some_and(|e| e == "pb") {
            neuronc_backend::hlo_import::hlo_proto_to_stablehlo(&bytes)
        } else {
            let Ok(text) = String::from_utf8(bytes) else {
                return Err(Error::NotUtf8 { path: name });
            };
            if !is_hlo_text(path, &text) {
                return Ok(Source::new(name, text));
            }
            neuronc_backend::hlo_import::hlo_text_to_stablehlo(&text)
        };
        match imported {
            Ok(text) => Ok(Source::new(name, text)),
            Err(source) => Err(Error::HloImport { path: name, source }),
        }
    }

    /// The units to process: one per `// -----` chunk when `split`, else the whole text.
    pub fn units(self: &Arc<Self>, split: bool) -> Vec<Unit> {
        if !split {
            return vec![Unit {
                source: Arc::clone(self),
                range: 0..self.text.len(),
            }];
        }
        neuronc_ir::parse::split_input(&self.text)
            .into_iter()
            .map(|(start, chunk)| Unit {
                source: Arc::clone(self),
                range: start..start + chunk.len(),
            })
            .collect()
    }
}

/// Whether a text file is XLA HLO text: `.hlo`, `.hlo.txt`, or `.txt` starting with
/// `HloModule`.
fn is_hlo_text(path: &Path, text: &str) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".hlo")
        || name.ends_with(".hlo.txt")
        || (name.ends_with(".txt") && text.trim_start().starts_with("HloModule"))
}

/// One module's worth of text inside a [`Source`].
#[derive(Clone, Debug)]
pub struct Unit {
    pub source: Arc<Source>,
    /// Byte range of the unit in `source.text`.
    pub range: Range<usize>,
}

impl Unit {
    /// A unit covering all of `source`.
    pub fn whole(source: &Arc<Source>) -> Unit {
        Unit {
            source: Arc::clone(source),
            range: 0..source.text.len(),
        }
    }
    /// The unit's text.
    pub fn text(&self) -> &str {
        &self.source.text[self.range.clone()]
    }
    /// Size of the unit in bytes.
    pub fn len(&self) -> usize {
        self.range.len()
    }
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}
