//! Whether LLVM fully unrolls the reduced loop of an f16 `reduce` over one dimension in
//! XLA:CPU ([`loop_kept`]), for the `xla` float semantics
//! ([`crate::excess_precision`] marks a kept loop for [`crate::reduce::xla_lanes`]).
//!
//! # What XLA:CPU computes
//! XLA:CPU fuses a reduce's elementwise producers into its loop, so the loop body loads
//! the producers' inputs and recomputes them. LLVM's full unroller flattens a reduced loop
//! of `t <= 32` trips whose unrolled size stays under its threshold: the sum is then
//! sequential. A heavier body keeps the loop, and the loop vectorizer, allowed to
//! reassociate the `fadd reassoc half` chain, splits it into lanes (the stages of
//! [`crate::reduce::xla_lanes`]). Seen in the `fp16_scaled_train_step` trace: the f16
//! `LayerNorm` sums over 32 features, whose fused body converts the f32 matmul result
//! and the bias and applies the GELU's f16 ops, are `fadd reassoc <8 x half>` loops in the
//! optimized LLVM IR (`XLA_FLAGS=--xla_dump_to`, jaxlib 0.10.2), while the `Σdy` sum
//! (two converts and an f32 multiply) is 32 scalar `fadd`s.
//!
//! The threshold is fitted to probes of that jaxlib on this x86-64 host (`[6, t]` f16
//! reduces over dimension 1 of chains of `k` f16 `multiply`/`add` ops of 1 to 3 inputs,
//! with and without an f32 input converted to f16; the vectorized loop read from the IR):
//! in half units, a loaded input costs 3, an elementwise op (`convert` included) 2, and the
//! loop is kept when `t * (cost + 2) > 568`. Every probe obeyed it: `t = 32`: 1 input up to
//! 6 ops unrolled, 7 kept; 2 inputs 4 / 5; 3 inputs 3 / 4; an input converted from f32
//! plus `k` ops 2 / 3; `t = 16`: 1 input 15 / 16, 2 inputs 13 unrolled; `t = 24`: 1 input
//! 9 / 10. Another host CPU (another LLVM cost model) may differ.
//!
//! What XLA fuses is approximated: elementwise producers (of any shape: a broadcast's
//! operand is loaded per trip), reshapes and broadcasts are fused; anything else (dots,
//! reduces, custom calls, arguments, expensive ops read through a broadcast or through a
//! value with other users, which XLA does not duplicate) is a loaded input; an f16 `dot_general` or `convolution` also costs its convert (XLA
//! computes it in f32). Constants are free. Two cases fall back to the sequential order
//! (the interpreter's order before this rule): a body with an expensive op (exp, log,
//! tanh, ...) of single use, and producers that move data (transpose, slice, concatenate,
//! ...). Checked: `Σexp(x)`, `Σtanh(x)`, `Σlog(x)` over 8, 16 and 32 are scalar loops (a
//! sequential sum), and every f16 `LayerNorm` sum of `fixtures/models/cvt_f16_infer`
//! reads a materialized `add` of transposes and is sequential.
//!
//! Not modelled: reduces over two or more dimensions with a heavy body (the innermost
//! reduced loop is assumed unrolled, [`crate::reduce::xla_lanes`]); the vector width and
//! interleave LLVM picks for a kept loop vary with the body (`[6, 32]` with an f32 input
//! converted plus 3 ops: 4 interleaved `<8 x half>` parts combined in order; `t` = 20 or
//! 28: `<4 x half>`), and only the widths of [`crate::reduce::xla_lanes`] are used; a
//! 32-sum of 8 ops after a single-use `exp`, or after a `transpose`, is neither sequential
//! nor in those lanes on XLA:CPU (probes), and XLA's real fusion decisions (which
//! producers it duplicates into the reduce) are only approximated.
//!
//! Invariant: read-only; the same module and value always give the same answer.

use std::collections::{BTreeSet, HashMap};

use neuronc_ir::{ElemType, Module, OpKind, ValueDef, ValueId};

/// Half-unit cost of a loaded input.
const LOAD: i64 = 3;
/// Half-unit cost of a fused elementwise op (a `convert` too).
const OP: i64 = 2;
/// Half-unit loop overhead added to the body per trip.
const OVERHEAD: i64 = 2;
/// The full-unroll budget, in half units (`t * (cost + OVERHEAD)` above it keeps the loop).
const BUDGET: i64 = 568;

/// Whether LLVM keeps the `t`-trip loop of an f16 reduce of `v` over one dimension
/// (instead of unrolling it), in XLA:CPU on the host the fit was made on. `uses` counts the
/// operand slots reading each value ([`crate::xla_reassoc::use_counts`]), once per module.
pub(crate) fn loop_kept(m: &Module, v: ValueId, t: usize, uses: &HashMap<ValueId, usize>) -> bool {
    let t = i64::try_from(t).unwrap_or(i64::MAX);
    body_cost(m, v, uses).is_some_and(|c| t.saturating_mul(c + OVERHEAD) > BUDGET)
}

/// The half-unit cost of the fused body computing `v` (each value once); `None` when the
/// body computes an expensive op (that loop is not vectorized: a sequential sum); one
/// load when the producers move data (XLA then computes them in a separate fusion).
fn body_cost(m: &Module, v: ValueId, uses: &HashMap<ValueId, usize>) -> Option<i64> {
    let mut seen = BTreeSet::new();
    // (value, read through a broadcast or a value with other users: XLA does not
    // duplicate an expensive op there)
    let mut stack = vec![(v, false)];
    let mut cost = 0;
    while let Some((v, shared)) = stack.pop() {
        if !seen.insert(v) {
            continue;
        }
        let ValueDef::Result(id, _) = m.value(v).def else {
            cost += LOAD;
            continue;
        };
        let op = m.op(id);
        let cheap = !op.kind.is_expensive();
        let widened = shared || uses.get(&v).copied().unwrap_or(0) > 1;
        match op.kind {
            OpKind::Constant => {}
            OpKind::Transpose
            | OpKind::Concatenate
            | OpKind::Slice
            | OpKind::Pad
            | OpKind::Reverse
            | OpKind::Gather
            | OpKind::DynamicSlice
            | OpKind::DynamicUpdateSlice => return Some(LOAD),
            OpKind::Reshape => stack.extend(op.operands.iter().map(|&o| (o, widened))),
            OpKind::BroadcastInDim | OpKind::Broadcast => {
                stack.extend(op.operands.iter().map(|&o| (o, true)));
            }
            k if k.is_elementwise() && op.results.len() == 1 && cheap => {
                cost += OP;
                stack.extend(op.operands.iter().map(|&o| (o, widened)));
            }
            k if k.is_elementwise() && !widened => {
                return None;
            }
            OpKind::DotGeneral | OpKind::Dot | OpKind::Convolution if is_f16(m, v) => {
                cost += LOAD + OP;
            }
            _ => cost += LOAD,
        }
    }
    Some(cost)
}

fn is_f16(m: &Module, v: ValueId) -> bool {
    m.tensor_type(v).is_some_and(|t| t.elem == ElemType::F16)
}
