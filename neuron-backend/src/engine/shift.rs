//! A shift along the free axis folded into the matmul that produces its data, as extra
//! contraction rows.
//!
//! Owns: [`contraction_shift`] (which op of a kernel is such a shift), [`pass_shift`] (its
//! role in instruction combining) and [`shift_rows`] (how many contraction rows it costs).
//!
//! The recomputed attention probabilities (`recompute-for-contraction`) are
//! `exp(scale * (K·Qᵀ) + mask[k] - max[q])` with the keys on the partitions: the row
//! maximum varies along the free axis, so `- bcast(max)` is a two-tensor VectorE op per
//! tile (`operands`). But `scale*M + b - v = scale*(M - v/scale) + b`, and `M - v/scale`
//! is the same matmul with one more contraction row: ones on the stationary side,
//! `-v/scale` along the moving operand's columns (the free axis of the output). So the
//! PSUM eviction applies `exp(x*scale + mask)` directly and the shift costs no instruction
//! of its own. Under auto-cast the matmul's operands are BF16, which would round the shift
//! row to 8 bits (a relative error of 2^-9 of `max/scale`, several percent of a
//! probability at typical logits); the row is split into three BF16 parts (hi + mid + lo,
//! 24 significant bits, what FP32 holds) accumulated in FP32 in PSUM, so three rows; an
//! FP32 matmul needs one. Only folded while the last K tile has room for three rows (K =
//! 64 per head: 67 rows), where they cost nothing ([`crate::engine::emit_mm::matmul_record`]
//! streams whole K tiles); a K that fills its tiles (a 768-wide dense layer) would pay a
//! whole extra K pass.
//!
//! Rule: op `c` is `y - bcast(v)` or `y + bcast(v)` with `y` (operand 0) a full tile, the
//! result of a scalar op (the eviction's group the shift passes through), that is the
//! kernel's only matmul result through single-use relabels and scalar ops of the
//! eviction's form (multiplies by one value — a splat or a broadcast single element, which
//! the shift row is divided by —, adds or subtracts of `[P, 1]` operands), and `bcast(v)`
//! a broadcast constant along the result's partition dimension whose source is computed
//! outside the kernel (the rows must exist before the matmul streams; a shift derived from
//! the matmul's own result would also give a value of the chain a second use, which the
//! chain refuses).
//! Invariants: only costs change (the functional simulator runs the IR ops); splitting
//! and laying out the shift rows (a few bytes per output column) is not priced.

use crate::engine::classify::OpWork;
use crate::engine::combine::{only_used_by, same_tile, scalar_op, Combined, Ctx, Form, Open, Role};
use crate::engine::operands::scalar_operand;
use neuronc_ir::{OpId, OpKind, ValueDef, ValueId};
use neuronc_passes::ir_util::{def_of_kind, splat_ref};
use rustc_hash::FxHashMap;

/// Contraction rows a folded shift adds to a matmul (`fp32`: the operands stay FP32).
pub(crate) fn shift_rows(fp32: bool) -> u64 {
    if fp32 {
        1
    } else {
        3
    }
}

/// The index in `ops` of the first op that is a shift of the kernel's only matmul's
/// result (module doc), if any, when the matmul's last K tile has room for its rows.
pub(crate) fn contraction_shift(cx: &Ctx, ops: &[OpId], works: &[OpWork]) -> Option<usize> {
    let mut matmuls = works
        .iter()
        .enumerate()
        .filter(|(_, w)| **w == OpWork::Matmul);
    let (mi, _) = matmuls.next()?;
    if matmuls.next().is_some() {
        return None;
    }
    let spare = crate::engine::tiling::matmul_dims(cx.m, ops[mi])?.k % 128;
    if spare == 0 || spare + shift_rows(false) > 128 {
        return None;
    }
    let mm_res = *cx.m.op(ops[mi]).results.first()?;
    let index: FxHashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    (mi + 1..ops.len()).find(|&c| is_shift(cx, &index, ops, works, mm_res, c))
}

fn is_shift(
    cx: &Ctx,
    index: &FxHashMap<OpId, usize>,
    ops: &[OpId],
    works: &[OpWork],
    mm_res: ValueId,
    c: usize,
) -> bool {
    let o = cx.m.op(ops[c]);
    let (&[data, shift], &[res]) = (&o.operands[..], &o.results[..]) else {
        return false;
    };
    let scaled = match cx.m.value(data).def {
        ValueDef::Result(q, _) => index
            .get(&q)
            .is_some_and(|&qi| scalar_op(cx, q, &works[qi]).is_some()),
        ValueDef::RegionArg(..) => false,
    };
    matches!(o.kind, OpKind::Subtract | OpKind::Add)
        && scaled
        && same_tile(cx, data, res)
        && row_shift(cx, index, shift, res)
        && affine_of_matmul(cx, index, works, data, ops[c], mm_res)
}

/// `shift` is a broadcast, constant along `res`'s partition dimension but not a `[P, 1]`
/// operand, of a value computed outside the kernel.
fn row_shift(cx: &Ctx, index: &FxHashMap<OpId, usize>, shift: ValueId, res: ValueId) -> bool {
    let m = cx.m;
    let Some(b) = def_of_kind(m, shift, OpKind::BroadcastInDim) else {
        return false;
    };
    let bo = m.op(b);
    let (Some(&src), Some(part)) = (bo.operands.first(), cx.layout.of(res)) else {
        return false;
    };
    let inside = matches!(m.value(src).def, ValueDef::Result(p, _) if index.contains_key(&p));
    let (Some(st), Some(dims)) = (
        m.tensor_type(src),
        bo.attrs.i64_array("broadcast_dimensions"),
    ) else {
        return false;
    };
    !inside
        && scalar_operand(cx, shift, res).is_none()
        && st
            .shape
            .iter()
            .zip(&dims)
            .all(|(&n, &d)| n <= 1 || d != i64::from(part))
}

/// `v` is `mm_res` through single-use relabels and eviction-form scalar ops, each value
/// read only by the next op of the chain (ending at `user`).
fn affine_of_matmul(
    cx: &Ctx,
    index: &FxHashMap<OpId, usize>,
    works: &[OpWork],
    mut v: ValueId,
    mut user: OpId,
    mm_res: ValueId,
) -> bool {
    let m = cx.m;
    for _ in 0..8 {
        if !only_used_by(cx, v, user) {
            return false;
        }
        if v == mm_res {
            return true;
        }
        let ValueDef::Result(q, _) = m.value(v).def else {
            return false;
        };
        let Some(&qi) = index.get(&q) else {
            return false;
        };
        let next = match &works[qi] {
            OpWork::Relabel if m.op(q).operands.len() == 1 => m.op(q).operands[0],
            w => match scalar_op(cx, q, w) {
                Some((s, d, _))
                    if (s.op == "multiply" && uniform(cx, q, d))
                        || (matches!(s.op, "add" | "subtract") && !s.reversed) =>
                {
                    d
                }
                _ => return false,
            },
        };
        user = q;
        v = next;
    }
    false
}

/// The operand of binary op `q` other than `data` holds one value: a splat constant or a
/// broadcast of a single element (the attention scale, a kernel input or a constant).
fn uniform(cx: &Ctx, q: OpId, data: ValueId) -> bool {
    let m = cx.m;
    let Some(&s) = m.op(q).operands.iter().find(|&&x| x != data) else {
        return false;
    };
    splat_ref(m, s).is_some()
        || def_of_kind(m, s, OpKind::BroadcastInDim)
            .and_then(|b| m.op(b).operands.first())
            .and_then(|&x| m.tensor_type(x))
            .is_some_and(|t| t.shape.iter().all(|&n| n == 1))
}

/// Op `c` (at `op`), applied by the matmul: the open group of its data operand (operand
/// 0) moves to it, so a later consumer merges the group as if `c` were not there; with no
/// group it is a relabel.
pub(crate) fn pass_shift(
    cx: &Ctx,
    index: &FxHashMap<OpId, usize>,
    open: &mut [Option<Open>],
    roles: &mut [Role],
    op: OpId,
    c: usize,
) {
    let data = cx.m.op(op).operands[0];
    let p = match cx.m.value(data).def {
        ValueDef::Result(pop, _) => index.get(&pop).copied(),
        ValueDef::RegionArg(..) => None,
    };
    match p.and_then(|p| Some((p, open[p].take()?))) {
        Some((p, g)) => {
            roles[p] = Role::Merged;
            roles[c] = Role::Combined(Combined {
                form: Form::TensorScalar(g.ops.clone()),
                inputs: 1,
                engines: g.engines,
            });
            open[c] = Some(g);
        }
        None => roles[c] = Role::Merged,
    }
}
