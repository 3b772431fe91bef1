//! `neuronc-ir`: the IR of neuronc-rs and its StableHLO text front end.
//!
//! * [`module`] — the data model (read it first): module, functions, regions, ops, values.
//! * [`types`] — element and tensor types, the type interner.
//! * [`ops`] — the op enum [`OpKind`] and its traits.
//! * [`attr`] — attribute values.
//! * [`diag`] — diagnostics and the typed errors of parsing and verification.
//! * [`par`] — the two-way fork/join the printer and the planners split work with.

pub mod attr;
pub mod build;
pub mod clone;
pub mod diag;
pub mod module;
pub mod ops;
pub mod types;

pub use attr::{Attr, DenseData, DenseElements, EnumAttr, EnumKind, NamedAttrs};
pub use diag::{Diagnostic, ParseError, Severity, VerifyError};
pub use module::{
    Func, FuncId, LocId, Mesh, Module, Op, OpId, Region, RegionId, Span, Value, ValueDef, ValueId,
};
pub use ops::{OpKind, Traits};
pub use types::{ElemType, F8Kind, TensorType, Type, TypeId, TypeInterner};

pub mod par;
pub mod parse;
pub mod print;
pub mod verify;

pub use parse::parse_module;
pub use print::{print_module, PrintOptions};
pub use verify::verify_module;
