//! XLA:CPU's f16 `logistic`, for the `xla` float semantics (called from
//! [`crate::xla_simplify`]): `logistic(x)` becomes `1 / (1 + exp(-x))` as separate f16 ops.
//!
//! # What XLA:CPU computes
//! XLA:CPU's `LogisticExpander` replaces `logistic(x)` by `1 / (1 + exp(-x))` before code
//! generation. In f16 every op of that chain rounds to f16 (the exponential is computed in
//! f32 and rounded), so the result is not the correctly rounded logistic: over 4001 points
//! in [-8, 8], 1542 differ from it by an ulp (relative 1e-3; in an f16 training step with an
//! SE gate this moved gradients by 4.7e-3 of their scale), and every one equals the
//! f16-rounded chain. Facts checked on jaxlib 0.10.2's XLA:CPU with `tools/xla_run.py`
//! (probe round 9). bf16 is normalized to f32 first and matched the correctly rounded
//! logistic on all 4001 points of [-12, 12]; f32 and f64 differ from ours by at most 1.6e-7
//! and 3e-16 relative (XLA's own `exp`), so only f16 is rewritten.
//!
//! Invariants: the rewritten op keeps its id and result (it becomes the `divide`); the
//! `negate`, `exponential`, the splat `1` constant and the `add` are returned to be placed
//! immediately before it, in that order, so the result is SSA-valid.

use half::f16;
use neuronc_ir::{ElemType, Module, NamedAttrs, OpId, OpKind};

/// Every f16 `logistic` with a parent region, in op id order.
pub(crate) fn find_f16_logistics(m: &Module) -> Vec<OpId> {
    let mut found = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        let f16_result = op.results.len() == 1
            && m.tensor_type(op.results[0])
                .is_some_and(|t| t.elem == ElemType::F16);
        if op.kind == OpKind::Logistic
            && op.operands.len() == 1
            && f16_result
            && op.parent.is_some()
        {
            found.push(id);
        }
    });
    found
}

/// Turns `logistic(x)` into `1 / (1 + exp(-x))`; returns the new ops to go before it.
pub(crate) fn expand_logistic(m: &mut Module, id: OpId) -> Vec<OpId> {
    let op = m.op(id).clone();
    let ty = m.value_type(op.results[0]);
    let Some(one) = m.create_splat_constant(ty, f16::ONE.to_le_bytes().to_vec()) else {
        return Vec::new();
    };
    let neg = m.create_op(
        OpKind::Negate,
        vec![op.operands[0]],
        &[ty],
        NamedAttrs::new(),
    );
    let exp_in = m.op(neg).results[0];
    let exp = m.create_op(OpKind::Exponential, vec![exp_in], &[ty], NamedAttrs::new());
    let (one_v, exp_v) = (m.op(one).results[0], m.op(exp).results[0]);
    let add = m.create_op(OpKind::Add, vec![one_v, exp_v], &[ty], NamedAttrs::new());
    let new_ops = vec![neg, exp, one, add];
    for &n in &new_ops {
        m.op_mut(n).loc = op.loc;
        m.op_mut(n).span = op.span;
    }
    let add_v = m.op(add).results[0];
    let div = m.op_mut(id);
    div.kind = OpKind::Divide;
    div.operands = vec![one_v, add_v];
    div.attrs = NamedAttrs::new();
    new_ops
}
