//! XLA:CPU's expansion of an f16 `batch_norm_training`, for the `xla` float semantics
//! (called from [`crate::excess_precision::xla_module`]).
//!
//! # What XLA:CPU computes
//! XLA's `BatchNormExpander` rewrites `batch_norm_training` into ops of the operand's
//! element type. bf16 is normalized to f32 first (`FloatNormalization`), so a bf16 batch
//! norm is an f32 computation rounded once, which the interpreter's f64 evaluation already
//! matches; f16 is not normalized on CPU, so every step rounds to f16 and the variance is
//! the cancelling `E[x²] - E[x]²`. With `N` the element count per feature, `Σ` an f16
//! `reduce`-sum over every dimension but the feature one (rounded every step, in the order
//! [`crate::excess_precision`] models) and per-feature values broadcast along the feature
//! dimension, the optimized HLO (jaxlib 0.10.2, probe round 10) computes
//! * `mean = Σx * r`, `var = Σ(x*x) * r - mean*mean`, where `r = f16(1 / f16(N))` (the
//!   divide by the constant `N` becomes a multiply by its reciprocal);
//! * `y = ((x - mean) * rsqrt(var + f16(eps))) * scale + offset`,
//!
//! and returns `(y, mean, var)`. The interpreter's own f64 formula differs from this in
//! about half of the f16 outputs (torch_xla lowers f16 `LayerNorm` to this op, so f16
//! transformers moved by several ulps).
//!
//! Not modelled: f16 `batch_norm_inference` and `batch_norm_grad` (also expanded by XLA);
//! a case where XLA's `mean*mean` overflowed although `mean` was 100.75 (as if the square
//! of the f16 sum 403 were taken: `var = -inf`), seen on a lone batch norm but not inside a
//! transformer layer norm; sums over non-adjacent dimensions, whose f16 order XLA:CPU
//! changes (see the probe10 notes).
//!
//! Invariants: the replaced op is removed from its region and its results' uses point at
//! the expansion, which takes the op's place (so it dominates those uses); ops of other
//! element types are untouched; ops are visited in id order (deterministic output).

use half::f16;
use neuronc_ir::build::OpSeq;
use neuronc_ir::{Attr, ElemType, Module, OpId, OpKind, TypeId, ValueId};

/// Expands every f16 `batch_norm_training` of `m` in place; returns whether any was.
pub(crate) fn expand_f16_batch_norms(m: &mut Module) -> bool {
    let mut targets = Vec::new();
    m.walk_ops(|op| {
        let o = m.op(op);
        let f16_operand = o
            .operands
            .first()
            .and_then(|&v| m.tensor_type(v))
            .is_some_and(|t| t.elem == ElemType::F16);
        if o.kind == OpKind::BatchNormTraining && f16_operand && o.parent.is_some() {
            targets.push(op);
        }
    });
    targets.sort();
    let mut changed = false;
    for op in targets {
        changed |= expand(m, op);
    }
    changed
}

/// The operand shape facts of one batch norm.
struct Dims {
    full: TypeId,
    vec: TypeId,
    scalar: TypeId,
    feature: i64,
    reduce: Vec<i64>,
    count: u64,
    eps: f64,
}

impl Dims {
    fn of(m: &mut Module, op: OpId) -> Option<Dims> {
        let o = m.op(op);
        let x = m.tensor_type(*o.operands.first()?)?.clone();
        let feature = o.attrs.int("feature_index")?;
        let eps = match o.attrs.get("epsilon")? {
            Attr::Float(v, _) => *v,
            _ => return None,
        };
        let f = usize::try_from(feature).ok().filter(|&f| f < x.rank())?;
        let c = x.shape[f];
        Some(Dims {
            full: m.types.tensor(ElemType::F16, &x.shape),
            vec: m.types.tensor(ElemType::F16, &[c]),
            scalar: m.types.tensor(ElemType::F16, &[]),
            feature,
            reduce: (0..x.rank() as i64).filter(|&d| d != feature).collect(),
            count: x.num_elements() / c.max(1) as u64,
            eps,
        })
    }
}

/// Replaces batch norm `op` by XLA's f16 expansion; false (nothing changed) when its
/// attributes or types are malformed.
fn expand(m: &mut Module, op: OpId) -> bool {
    let Some(d) = Dims::of(m, op) else {
        return false;
    };
    let o = m.op(op).clone();
    let (Some(region), &[x, scale, offset]) = (o.parent, &o.operands[..]) else {
        return false;
    };
    let mut b = Builder {
        seq: OpSeq::new(m, o.loc, o.span),
    };
    let n = f16::from_f64(d.count as f64).to_f32();
    let recip = b.constant(d.vec, f16::from_f32(1.0 / n));
    let sum = b.sum(x, &d);
    let mean = b.op(OpKind::Multiply, vec![sum, recip], d.vec);
    let sq = b.op(OpKind::Multiply, vec![x, x], d.full);
    let sq_sum = b.sum(sq, &d);
    let sq_mean = b.op(OpKind::Multiply, vec![sq_sum, recip], d.vec);
    let mean_sq = b.op(OpKind::Multiply, vec![mean, mean], d.vec);
    let var = b.op(OpKind::Subtract, vec![sq_mean, mean_sq], d.vec);
    let eps = b.constant(d.vec, f16::from_f64(d.eps));
    let var_eps = b.op(OpKind::Add, vec![var, eps], d.vec);
    let rstd = b.op(OpKind::Rsqrt, vec![var_eps], d.vec);
    let centered = {
        let mean_b = b.bcast(mean, &d);
        b.op(OpKind::Subtract, vec![x, mean_b], d.full)
    };
    let rstd_b = b.bcast(rstd, &d);
    let normed = b.op(OpKind::Multiply, vec![centered, rstd_b], d.full);
    let scale_b = b.bcast(scale, &d);
    let scaled = b.op(OpKind::Multiply, vec![normed, scale_b], d.full);
    let offset_b = b.bcast(offset, &d);
    let y = b.op(OpKind::Add, vec![scaled, offset_b], d.full);
    let new_ops = b.seq.finish();
    for (&r, v) in o.results.iter().zip([y, mean, var]) {
        m.replace_all_uses(r, v);
    }
    for &n in &new_ops {
        m.op_mut(n).parent = Some(region);
    }
    let ops = &mut m.region_mut(region).ops;
    if let Some(pos) = ops.iter().position(|&p| p == op) {
        ops.splice(pos..=pos, new_ops);
    }
    m.op_mut(op).parent = None;
    true
}

/// f16 ops of one expansion, built with the shapes of [`Dims`].
struct Builder<'a> {
    seq: OpSeq<'a>,
}

impl Builder<'_> {
    fn op(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: TypeId) -> ValueId {
        self.seq.op(kind, operands, ty)
    }

    /// A splat f16 constant of type `ty` (a tensor type by construction).
    fn constant(&mut self, ty: TypeId, v: f16) -> ValueId {
        self.seq.splat(ty, v.to_le_bytes().to_vec())
    }

    /// `[C] -> operand shape` along the feature dimension.
    fn bcast(&mut self, v: ValueId, d: &Dims) -> ValueId {
        self.seq.broadcast_in_dim(v, d.full, vec![d.feature])
    }

    /// f16 `reduce`-sum over every dimension but the feature one: `[..] -> [C]`.
    fn sum(&mut self, x: ValueId, d: &Dims) -> ValueId {
        let zero = self.constant(d.scalar, f16::ZERO);
        self.seq
            .reduce_sum(x, zero, d.reduce.clone(), d.vec, d.scalar)
    }
}
