//! `scale-after-contraction`: moves a scale of a matmul operand that does not vary along
//! the contracted dimensions past the matmul, onto its (smaller) result.
//!
//! # Why
//! Softmax ends in `e / bcast(sum)`, and attention contracts that over the key axis:
//! `(e / bcast(sum)) · V`. The sum is constant along the key axis, so the division can
//! be applied to the product instead, `(e · V) / bcast(sum)`: one element per query and
//! head dim (64) instead of one per query and key (128-512), and the matmul operand is `e`
//! itself. On a NeuronCore the rescaled product also has the queries on its partitions, so
//! the division becomes a per-partition scalar, and `recompute-for-contraction` no longer
//! has to carry the division (a free-axis broadcast in its layout) into its copy.
//!
//! # Rule
//! For a `dot_general` operand `x = y` or `x = reshape(y)` (torch prints `P·V` as a
//! reshape of the 4-D probabilities to 3-D), with `y = divide(e, broadcast_in_dim(s))` or
//! `y = multiply(e, broadcast_in_dim(s))` (either operand order for multiply), where
//! * `x` and `y` have no other use and an `f32`/`f64` element type,
//! * the dimensions along which `s` varies (*scale dims*) stay whole through the
//!   reshape: each group of dimensions the reshape merges or splits holds only scale dims
//!   or none (size-1 dimensions aside),
//! * no scale dim of `x` is contracted,
//! * the matmul's result has fewer elements than `x`,
//!
//! the matmul reads `e` (through the reshape, if any), and its result `r` is replaced by
//! `divide(r, broadcast_in_dim(s'))` (or `multiply`), where `s'` is `s` reshaped to the
//! scale dims of `x` and each goes to the position that dimension takes in the result
//! (batch dimensions first, then the left operand's free dimensions, then the right's).
//! The old scale op (and its broadcast, when nothing else reads it) is removed.
//!
//! Exact in real arithmetic; in floating point the scale is rounded after the sum
//! instead of before each product (a relative difference of a few ulps), which is why
//! it is limited to f32/f64 (a bf16 operand would change which values are rounded to 8
//! bits). Each move is one rewrite (`--opt-fuel`, `--trace-rewrites`); every move
//! strictly shrinks the scaled tensor, so repeated runs terminate.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{def_of_kind, def_op, erase_op, for_each_reshape_group, use_counts};
use crate::pass::Pass;
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, ValueId};

/// The `scale-after-contraction` pass.
pub struct ScaleAfterContraction;

impl Pass for ScaleAfterContraction {
    fn name(&self) -> &'static str {
        "scale-after-contraction"
    }

    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        Ok(crate::pass::each_body(module, ctx, run_region))
    }
}

/// One move: the matmul, which operand, the scale op and what it scales by.
struct Move {
    dot: OpId,
    side: usize,
    /// The reshape between the scale op and the matmul, if any.
    reshape: Option<OpId>,
    scale_op: OpId,
    kind: OpKind,
    /// The unscaled operand `e`.
    unscaled: ValueId,
    /// The broadcast of the scale and its operand `s`.
    broadcast: OpId,
    s: ValueId,
    /// The shape `s` takes in the operand's space (its scale dims, in order).
    s_shape: Vec<i64>,
    /// Where each of those dimensions goes in the matmul's result.
    result_dims: Vec<i64>,
}

fn run_region(m: &mut Module, region: RegionId, ctx: &mut PassContext) -> bool {
    let dots: Vec<OpId> = m
        .region(region)
        .ops
        .iter()
        .copied()
        .filter(|&o| m.op(o).kind == OpKind::DotGeneral)
        .collect();
    if dots.is_empty() {
        return false;
    }
    let mut uses = use_counts(m);
    let mut changed = false;
    for dot in dots {
        for side in 0..2 {
            let Some(mv) = plan(m, region, dot, side, &uses) else {
                continue;
            };
            if !ctx.try_rewrite("scale-after-contraction", m, dot) {
                return changed;
            }
            apply(m, region, &mv, &mut uses, ctx);
            changed = true;
            break;
        }
    }
    changed
}

/// The op defining `v` in `region` when `v` has exactly one use.
fn single_use_def(m: &Module, region: RegionId, v: ValueId, uses: &[u32]) -> Option<OpId> {
    (uses.get(v.index()) == Some(&1))
        .then(|| def_op(m, v))
        .flatten()
        .filter(|&o| m.op(o).parent == Some(region))
}

/// The move for operand `side` of `dot`, if the rule applies.
fn plan(m: &Module, region: RegionId, dot: OpId, side: usize, uses: &[u32]) -> Option<Move> {
    let op = m.op(dot);
    let Some(Attr::DotDims(dd)) = op.attrs.get("dot_dimension_numbers") else {
        return None;
    };
    let x = *op.operands.get(side)?;
    let mut scale_op = single_use_def(m, region, x, uses)?;
    let mut reshape = None;
    if m.op(scale_op).kind == OpKind::Reshape {
        reshape = Some(scale_op);
        scale_op = single_use_def(m, region, m.op(scale_op).operands[0], uses)?;
    }
    let sop = m.op(scale_op);
    let y = *sop.results.first()?;
    let (unscaled, scale) = match (sop.kind, &sop.operands[..]) {
        (OpKind::Divide, &[e, b]) => (e, b),
        (OpKind::Multiply, &[a, b]) if def_of_kind(m, b, OpKind::BroadcastInDim).is_some() => {
            (a, b)
        }
        (OpKind::Multiply, &[a, b]) => (b, a),
        _ => return None,
    };
    let broadcast = def_of_kind(m, scale, OpKind::BroadcastInDim)?;
    let s = m.op(broadcast).operands[0];
    let (xt, yt, st) = (m.tensor_type(x)?, m.tensor_type(y)?, m.tensor_type(s)?);
    let small = m.tensor_type(op.results[0])?.num_elements() < xt.num_elements();
    if !small || !matches!(xt.elem, ElemType::F32 | ElemType::F64) {
        return None;
    }
    let dims = m.op(broadcast).attrs.i64_array("broadcast_dimensions")?;
    let y_scale = scale_dims(&yt.shape, &st.shape, &dims)?;
    let x_scale = through_reshape(&yt.shape, &xt.shape, &y_scale)?;
    let (batching, contracting) = if side == 0 {
        (&dd.lhs_batching, &dd.lhs_contracting)
    } else {
        (&dd.rhs_batching, &dd.rhs_contracting)
    };
    // Free dimensions of the left operand come before those of the right in the result.
    let lhs_rank = m.tensor_type(op.operands[0])?.shape.len();
    let lhs_free = lhs_rank - dd.lhs_batching.len() - dd.lhs_contracting.len();
    let free_base = batching.len() + if side == 0 { 0 } else { lhs_free };
    let result_dims = (0..xt.shape.len() as i64)
        .filter(|&d| x_scale[d as usize])
        .map(|d| result_position(d, batching, contracting, free_base))
        .collect::<Option<Vec<i64>>>()?;
    let s_shape = (0..xt.shape.len())
        .filter(|&d| x_scale[d])
        .map(|d| xt.shape[d])
        .collect();
    Some(Move {
        dot,
        side,
        reshape,
        scale_op,
        kind: sop.kind,
        unscaled,
        broadcast,
        s,
        s_shape,
        result_dims,
    })
}

/// Which dimensions of the broadcast's result `y` the scale varies along: those `s`
/// (shape `s`, mapped by `dims`, which must increase) gives their full extent above 1.
/// `None` if `dims` is not increasing.
fn scale_dims(y: &[i64], s: &[i64], dims: &[i64]) -> Option<Vec<bool>> {
    if dims.windows(2).any(|w| w[0] >= w[1]) || dims.len() != s.len() {
        return None;
    }
    let mut out = vec![false; y.len()];
    for (&d, &n) in dims.iter().zip(s) {
        let d = usize::try_from(d).ok()?;
        out[d] = n > 1 && y.get(d) == Some(&n);
    }
    Some(out)
}

/// The scale dims of a reshape's result `x` given those of its operand `y`: each group of
/// dimensions the reshape merges or splits must hold only scale dims or none (ignoring
/// size-1 dimensions); then the group's dimensions above 1 in `x` are scale dims or not
/// alike. `None` when some group mixes them.
fn through_reshape(y: &[i64], x: &[i64], y_scale: &[bool]) -> Option<Vec<bool>> {
    let mut out = vec![false; x.len()];
    let mut mixed = false;
    let grouped = for_each_reshape_group(y, x, |yr, xr| {
        let big = |d: &usize| y[*d] > 1;
        let scaled = yr.clone().filter(big).filter(|&d| y_scale[d]).count();
        let plain = yr.filter(big).filter(|&d| !y_scale[d]).count();
        mixed |= scaled > 0 && plain > 0;
        for d in xr {
            out[d] = scaled > 0 && x[d] > 1;
        }
    });
    (grouped && !mixed).then_some(out)
}

/// Where operand dimension `a` goes in the matmul's result: its index among the batching
/// dimensions, or `free_base` plus its rank among the operand's free dimensions; `None`
/// for a contracted dimension.
fn result_position(a: i64, batching: &[i64], contracting: &[i64], free_base: usize) -> Option<i64> {
    if contracting.contains(&a) {
        return None;
    }
    if let Some(j) = batching.iter().position(|&b| b == a) {
        return i64::try_from(j).ok();
    }
    let below = (0..a)
        .filter(|d| !batching.contains(d) && !contracting.contains(d))
        .count();
    i64::try_from(free_base + below).ok()
}

/// Makes the matmul read the unscaled operand and scales its result instead.
fn apply(m: &mut Module, region: RegionId, mv: &Move, uses: &mut Vec<u32>, ctx: &mut PassContext) {
    let result = m.op(mv.dot).results[0];
    let ty = m.value_type(result);
    let (loc, span) = (m.op(mv.scale_op).loc, m.op(mv.scale_op).span);
    let mut new_ops = Vec::new();
    let mut s = mv.s;
    let s_elem = m
        .tensor_type(s)
        .filter(|t| t.shape[..] != mv.s_shape[..])
        .map(|t| t.elem);
    if let Some(elem) = s_elem {
        let s_ty = m.types.tensor(elem, &mv.s_shape);
        let r = m.create_op(OpKind::Reshape, vec![s], &[s_ty], NamedAttrs::new());
        s = m.op(r).results[0];
        new_ops.push(r);
    }
    let mut attrs = NamedAttrs::new();
    attrs.set(
        "broadcast_dimensions",
        Attr::IntArray(ElemType::Int(64), mv.result_dims.clone()),
    );
    let bcast = m.create_op(OpKind::BroadcastInDim, vec![s], &[ty], attrs);
    let b = m.op(bcast).results[0];
    let scaled = m.create_op(mv.kind, vec![result, b], &[ty], NamedAttrs::new());
    new_ops.extend([bcast, scaled]);
    for &o in &new_ops {
        m.op_mut(o).loc = loc;
        m.op_mut(o).span = span;
    }
    // Redirect the result's readers before placing the new ops, which read it themselves.
    m.replace_all_uses(result, m.op(scaled).results[0]);
    match mv.reshape {
        Some(r) => m.op_mut(r).operands[0] = mv.unscaled,
        None => m.op_mut(mv.dot).operands[mv.side] = mv.unscaled,
    }
    let at = m.region(region).ops.iter().position(|&o| o == mv.dot);
    let at = at.map_or(m.region(region).ops.len(), |p| p + 1);
    for (i, &o) in new_ops.iter().enumerate() {
        m.insert_op(region, at + i, o);
    }
    erase_op(m, mv.scale_op);
    let old_b = m.op(mv.broadcast).results[0];
    if let Some(n) = uses.get_mut(old_b.index()) {
        *n -= 1;
        if *n == 0 {
            erase_op(m, mv.broadcast);
        }
    }
    uses.resize(m.values.len(), 0);
    for o in new_ops.iter().chain([&mv.dot]).chain(mv.reshape.iter()) {
        ctx.mark_edited(*o);
    }
    ctx.mark_region_edited(m, region);
}
