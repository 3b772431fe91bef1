//! Typed errors of the pass infrastructure and of individual passes.
//!
//! Owns [`PassError`]. Every error names the pass (or pipeline text) it comes from, so a
//! failure in a long pipeline can be attributed without re-running it.

use neuronc_ir::VerifyError;

/// Why a pipeline could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// `--passes=` text names a pass the registry does not know.
    #[error("unknown pass `{name}` (known passes: {known})")]
    UnknownPass { name: String, known: String },
    /// `--passes=` text is malformed.
    #[error("invalid pipeline `{text}`: {reason}")]
    InvalidPipeline { text: String, reason: String },
    /// `-O<n>` with an unsupported level.
    #[error("unknown optimization level -O{0} (supported: 0, 1, 2)")]
    UnknownOptLevel(u8),
    /// `--verify-each` found the module broken right after `pass` changed it.
    #[error("verification failed after pass `{pass}`: {error}")]
    VerifyAfter {
        pass: &'static str,
        #[source]
        error: VerifyError,
    },
    /// The input module failed verification before the first pass ran.
    #[error("input module does not verify: {0}")]
    VerifyInput(#[source] VerifyError),
    /// A pass met IR it cannot handle safely (it reports instead of guessing).
    #[error("pass `{pass}` failed: {message}")]
    Failed { pass: &'static str, message: String },
}
