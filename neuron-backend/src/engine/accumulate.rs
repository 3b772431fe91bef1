//! ScalarE's free-axis accumulate: an add-reduce along the free axis of a value that a
//! ScalarE instruction of the same kernel produces is accumulated by that instruction.
//!
//! Owns: [`mark`] (which reductions of a kernel are accumulated) and
//! [`READ_BACK_CYCLES`].
//!
//! `activation` computes `func(x*scale + bias)` and can add its results along the free
//! axis into 128 per-partition accumulator registers at no extra cost; reading them back
//! (`ActReadAccumulator`) takes about 64 cycles (`neuron-facts.md` §2.3). So softmax's
//! `sum(exp(x - max))` costs the exponential plus a read-back instead of a VectorE pass
//! over the row (about N cycles). Rule: the reduction is a free-axis `add` of one tensor
//! over rows of at least 128 elements (shorter ones gain nothing and load ScalarE),
//! that tensor is the result of an op of the same kernel that emits its own instruction
//! (not merged into a consumer) and runs only on ScalarE (a transcendental, or a combined
//! `Activation`). The instruction then also holds the sums; the reduction becomes the
//! read-back, on ScalarE, after it.
//! Invariants: only costs change (the functional simulator runs the IR ops); a reduction
//! not marked keeps its VectorE cost.

use crate::engine::classify::{OpWork, ACT_ONLY};
use crate::engine::combine::Role;
use neuronc_ir::{Module, OpId, ValueDef};
use rustc_hash::FxHashMap;

/// Cycles to read ScalarE's accumulator registers back (facts §2.3: "about 64").
pub(crate) const READ_BACK_CYCLES: f64 = 64.0;

/// Shortest reduced row worth accumulating: below it VectorE's pass over the row (about
/// one cycle per element) costs no more than the read-back, and moving it would only load
/// ScalarE (attention over a dozen keys).
const MIN_ROW: i64 = 2 * READ_BACK_CYCLES as i64;

/// The reduce `op` sums at least [`MIN_ROW`] elements into each result.
fn long_rows(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    let (Some(t), Some(dims)) = (
        o.operands.first().and_then(|&x| m.tensor_type(x)),
        o.attrs.i64_array("dimensions"),
    ) else {
        return false;
    };
    let row: i64 = dims
        .iter()
        .filter_map(|&d| t.shape.get(usize::try_from(d).ok()?))
        .product();
    row >= MIN_ROW
}

/// Marks as accumulated every free-axis add-reduce of `works` (after combining, `roles`
/// the ops' parts) whose operand a ScalarE-only instruction of the kernel produces.
pub(crate) fn mark(m: &Module, ops: &[OpId], works: &mut [OpWork], roles: &[Role]) {
    let index: FxHashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    for i in 0..ops.len() {
        let OpWork::ReduceFree {
            name: "add",
            inputs: 1,
            ..
        } = works[i]
        else {
            continue;
        };
        let Some(&x) = m.op(ops[i]).operands.first() else {
            continue;
        };
        let ValueDef::Result(p, _) = m.value(x).def else {
            continue;
        };
        let Some(&j) = index.get(&p) else {
            continue;
        };
        let on_scalar =
            matches!(works[j], OpWork::Elementwise { engines, .. } if engines == ACT_ONLY);
        if on_scalar && !matches!(roles[j], Role::Merged) && long_rows(m, ops[i]) {
            works[i] = OpWork::ReduceFree {
                name: "add",
                inputs: 1,
                accumulate: true,
            };
        }
    }
}
