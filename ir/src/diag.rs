//! Diagnostics produced by the parser and the verifier.
//!
//! Owns: [`Diagnostic`] (a message anchored at a source [`Span`], with notes) and the typed
//! errors [`ParseError`] and [`VerifyError`]. Library code only builds these values; the
//! CLI renders them (`file:line:col: error: ...`, the source line, a caret, the notes).
//! Invariant: spans are byte offsets into the text that was parsed; a zero-width span at 0
//! means "no source position" (ops created by passes).

use crate::module::Span;
use std::fmt;

/// Severity of a [`Diagnostic`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One message about the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub span: Span,
    pub message: String,
    /// Extra lines: optionally anchored at their own span (e.g. "operand defined here").
    pub notes: Vec<(Option<Span>, String)>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            span,
            message: message.into(),
            notes: Vec::new(),
        }
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push((None, note.into()));
        self
    }
    pub fn with_note_at(mut self, span: Span, note: impl Into<String>) -> Self {
        self.notes.push((Some(span), note.into()));
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.span.start)?;
        for (_, n) in &self.notes {
            write!(f, "; note: {n}")?;
        }
        Ok(())
    }
}

/// The text could not be parsed. Parsing stops at the first syntax error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("parse error: {0}")]
pub struct ParseError(pub Diagnostic);

/// The module parsed but breaks the StableHLO rules; every violation found is listed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{} verification error(s); first: {}", .0.len(), .0.first().map(|d| d.message.as_str()).unwrap_or(""))]
pub struct VerifyError(pub Vec<Diagnostic>);
