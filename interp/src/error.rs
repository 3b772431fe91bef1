//! The typed errors of the interpreter.
//!
//! Owns: [`InterpError`]. Invariant: every failure while running user input is one of
//! these values (never a panic); messages name the op or check involved.

/// Why a run failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum InterpError {
    #[error("function @{0} not found")]
    NoSuchFunction(String),
    #[error("@{func} takes {expected} argument(s), got {got}")]
    ArgCount {
        func: String,
        expected: usize,
        got: usize,
    },
    #[error("argument {index} of @{func}: expected {expected}, got {got}")]
    ArgType {
        func: String,
        index: usize,
        expected: String,
        got: String,
    },
    #[error("unsupported op {0}")]
    UnsupportedOp(String),
    #[error("unsupported custom_call target @{0}")]
    UnsupportedCustomCall(String),
    #[error("{op}: {msg}")]
    Op { op: String, msg: String },
    #[error("{check} failed: {detail}")]
    CheckFailed { check: String, detail: String },
    #[error("call depth limit exceeded at @{0}")]
    Recursion(String),
}
