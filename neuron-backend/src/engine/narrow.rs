//! Storage narrowing under `--auto-cast`: which FP32 values may be kept in SBUF and HBM
//! as BF16 without changing what the program computes.
//!
//! Owns: [`narrow_roots`], `feeds_only_matmuls` (the same rule for one operand, used by
//! relayouts), `matmul_only_reads` (the rule per reading kernel, for HBM copies written
//! after the last other reader) and `tensor_engine_dot`.
//!
//! # Rule
//! With `--auto-cast matmult|all` (facts §3.1), TensorE rounds both operands of every
//! floating-point `dot_general` to BF16 before multiplying (`sim::psum` does the same).
//! A computed FP32 value whose *every* use — directly or through layout-only views
//! (reshape, transpose, get_tuple_element, the ops [`root`] looks through) — is such a
//! matmul operand is therefore only ever observed rounded to BF16. Rounding once where it
//! is produced (ScalarE/VectorE write any dtype at no cost, facts §1.2: "Input and output
//! casts cost nothing") instead of where TensorE reads it gives bit-identical results
//! under the default round-to-nearest-even (facts §1.7; with run-time stochastic
//! rounding both places round once, each randomly), and halves its bytes in SBUF and
//! over DMA.
//! Invariants: function arguments and returned values are never narrowed (their HBM
//! layout is the caller's); a value with any other use (elementwise, reduce, a capture by
//! a nested region, a convolution, a `dot_general` with a non-float operand) is not
//! narrowed; without auto-cast nothing is.

use crate::engine::tiling::root;
use neuronc_ir::{Attr, ElemType, Module, OpKind, ValueDef, ValueId};
use neuronc_passes::neuron::graph::RegionGraph;
use rustc_hash::FxHashSet;

/// Roots (see [`root`]) of the function body that may be stored as BF16: FP32 op results
/// whose uses are all TensorE `dot_general` operands. `returned` are the returned roots.
pub fn narrow_roots(
    m: &Module,
    graph: &RegionGraph,
    returned: &FxHashSet<ValueId>,
) -> FxHashSet<ValueId> {
    let mut out = FxHashSet::default();
    for &op in &graph.order {
        for &v in &m.op(op).results {
            if root(m, v) != v || returned.contains(&v) {
                continue;
            }
            let f32 = m.tensor_type(v).is_some_and(|t| t.elem == ElemType::F32);
            if f32 && only_matmul_uses(m, graph, v, returned) {
                out.insert(v);
            }
        }
    }
    out
}

/// Whether operand `j` of `op` is only ever read as a TensorE matmul operand: `op` is a
/// float `dot_general` (and `j` one of its two operands), or a layout-only view whose
/// results are used only that way.
pub(crate) fn feeds_only_matmuls(
    m: &Module,
    graph: &RegionGraph,
    op: neuronc_ir::OpId,
    j: usize,
    returned: &FxHashSet<ValueId>,
) -> bool {
    let o = m.op(op);
    if tensor_engine_dot(m, op) {
        return j <= 1;
    }
    let view = matches!(
        o.kind,
        OpKind::Reshape | OpKind::Transpose | OpKind::GetTupleElement
    );
    view && j == 0
        && !o.results.is_empty()
        && o.results
            .iter()
            .all(|&r| !returned.contains(&r) && only_matmul_uses(m, graph, r, returned))
}

/// Whether every use of `v`, through layout-only views, is an operand of a float
/// `dot_general` that TensorE runs.
fn only_matmul_uses(
    m: &Module,
    graph: &RegionGraph,
    v: ValueId,
    returned: &FxHashSet<ValueId>,
) -> bool {
    uses_only_matmuls(m, graph, v, returned, |_| true)
}

/// Whether every use of `v` by an op `in_scope` accepts, following layout-only views
/// (whose results are not returned), is operand 0 or 1 of a TensorE `dot_general`, and
/// there is at least one. A view that passes `v` into a nested region fails.
fn uses_only_matmuls(
    m: &Module,
    graph: &RegionGraph,
    v: ValueId,
    returned: &FxHashSet<ValueId>,
    in_scope: impl Fn(neuronc_ir::OpId) -> bool,
) -> bool {
    let mut work = vec![v];
    let mut any = false;
    // Views of views are rare and short; the bound keeps a malformed chain finite.
    for _ in 0..4096 {
        let Some(x) = work.pop() else {
            return any;
        };
        for &(user, idx) in graph.users_of(m, x) {
            if !in_scope(user) {
                continue;
            }
            let o = m.op(user);
            let view = matches!(
                o.kind,
                OpKind::Reshape | OpKind::Transpose | OpKind::GetTupleElement
            ) && idx == 0;
            if view {
                if o.results.iter().any(|r| returned.contains(r)) {
                    return false;
                }
                work.extend(o.results.iter().copied());
                continue;
            }
            if !tensor_engine_dot(m, user) || idx > 1 {
                return false;
            }
            any = true;
        }
        if x != v && matches!(m.value(x).def, ValueDef::RegionArg(..)) {
            return false;
        }
    }
    false
}

/// Whether `op` is a `dot_general` the simulator runs on TensorE with auto-cast rounding
/// (both operands and the result are TensorE floats).
pub(crate) fn tensor_engine_dot(m: &Module, op: neuronc_ir::OpId) -> bool {
    let o = m.op(op);
    let float = |v: ValueId| {
        m.tensor_type(v).is_some_and(|t| {
            matches!(
                t.elem,
                ElemType::F32 | ElemType::BF16 | ElemType::F16 | ElemType::F8(_)
            )
        })
    };
    o.kind == OpKind::DotGeneral
        && matches!(o.attrs.get("dot_dimension_numbers"), Some(Attr::DotDims(_)))
        && o.operands.len() == 2
        && o.operands.iter().all(|&x| float(x))
        && o.results.iter().all(|&x| float(x))
}

/// Late narrowing: the `(root, kernel position)` pairs where the kernel at that position
/// reads the FP32 root (through any of its inputs and in-kernel layout-only views) only
/// as operands of TensorE `dot_general`s. A root whose every read from some position on
/// is such a pair may have its HBM copy written as BF16 from then on (a spill, or the
/// store of an output that found no SBUF room): under auto-cast every later reader
/// rounds it to BF16 anyway, so rounding once on the way to HBM is bit-identical (the
/// [module rule](self), applied to the remaining uses only).
pub(crate) fn matmul_only_reads(
    m: &Module,
    graph: &RegionGraph,
    kernels: &[neuronc_passes::neuron::fusion::Kernel],
    order: &[usize],
    returned: &FxHashSet<ValueId>,
) -> FxHashSet<(ValueId, usize)> {
    let mut yes = FxHashSet::default();
    let mut no = FxHashSet::default();
    for (pos, &k) in order.iter().enumerate() {
        let kernel = &kernels[k];
        let own: FxHashSet<neuronc_ir::OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .copied()
            .collect();
        for &v in &kernel.inputs {
            let r = root(m, v);
            if m.tensor_type(r).is_some_and(|t| t.elem == ElemType::F32)
                && uses_only_matmuls(m, graph, v, returned, |op| own.contains(&op))
            {
                yes.insert((r, pos));
            } else {
                no.insert((r, pos));
            }
        }
    }
    yes.retain(|x| !no.contains(x));
    yes
}
