//! StableHLO text front end: pretty and generic MLIR syntax into a [`Module`].
//!
//! (Being written.) Public API: [`parse_module`], [`split_input`].
use crate::{Module, ParseError};

/// Parses one StableHLO module (pretty or generic form, with or without `module { }`).
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    let _ = src;
    Err(ParseError(crate::Diagnostic::error(
        crate::Span::default(),
        "parser not implemented yet",
    )))
}

/// Splits a file at `// -----` lines; returns (byte offset of the chunk, chunk text).
pub fn split_input(src: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        if line.trim_end() == "// -----" {
            out.push((start, &src[start..pos]));
            start = pos + line.len();
        }
        pos += line.len();
    }
    out.push((start, &src[start..]));
    out
}
