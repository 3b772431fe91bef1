//! Op-at-a-time execution, for clients that choose the execution order themselves — the
//! NeuronCore functional simulator runs a function kernel by kernel in the back end's
//! order instead of program order.
//!
//! Owns: [`Stepper`]. It exposes the evaluator's value environment (one slot per
//! [`ValueId`]) and runs single ops with exactly the interpreter's semantics
//! (`dispatch::exec`), so a client reuses every numeric kernel of the interpreter.
//! Invariants: `exec` reads operands only from the environment and writes every result;
//! values are dropped only when the client says so.

use crate::eval::{Interp, Val};
use crate::{InterpError, Tensor};
use neuronc_ir::{Module, OpId, ValueId};

/// A value environment plus single-op execution over one module.
pub struct Stepper<'m> {
    it: Interp<'m>,
}

impl<'m> Stepper<'m> {
    pub fn new(m: &'m Module) -> Self {
        Stepper { it: Interp::new(m) }
    }

    /// Binds `v` to tensor `t`.
    pub fn set(&mut self, v: ValueId, t: Tensor) {
        self.it.set(v, Val::T(t));
    }

    /// Whether `v` currently has a value.
    pub fn has(&self, v: ValueId) -> bool {
        self.it.get(v).is_ok()
    }

    /// The tensor bound to `v`, if `v` is bound to a tensor.
    pub fn tensor(&self, v: ValueId) -> Option<&Tensor> {
        self.it.get(v).ok().and_then(Val::tensor)
    }

    /// Unbinds `v` (frees its storage).
    pub fn clear(&mut self, v: ValueId) {
        self.it.clear(v);
    }

    /// Runs `op` on the current values of its operands and binds its results.
    pub fn exec(&mut self, op: OpId) -> Result<(), InterpError> {
        let results = crate::dispatch::exec(&mut self.it, op)?;
        self.it.bind_results(op, results)
    }
}
