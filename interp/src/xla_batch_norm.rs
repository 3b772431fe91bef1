//! XLA:CPU's expansions of f16 `batch_norm_training`, `batch_norm_inference` and
//! `batch_norm_grad`, for the `xla` float semantics (called from
//! [`crate::excess_precision::xla_module`]) and for `decompose-batch-norm`, which builds
//! the same ops through [`build_f16_batch_norm`] so that its output computes what XLA:CPU computes.
//!
//! # What XLA:CPU computes
//! XLA's `BatchNormExpander` rewrites the three ops into ops of the operand's element
//! type. bf16 is normalized to f32 first (`FloatNormalization`), so a bf16 batch norm is
//! an f32 computation rounded once, which the interpreter's f64 evaluation already
//! matches; f16 is not normalized on CPU, so every step rounds to f16. With `N` the element
//! count per feature, `Σ` an f16 `reduce`-sum over every dimension but the feature one
//! (rounded every step, in the order [`crate::excess_precision`] models), per-feature values
//! broadcast along the feature dimension, `e = f16(eps)` and `r = f16(1 / f16(N))` (a
//! divide by the constant `N` becomes a multiply by its reciprocal), the optimized HLO
//! (jaxlib 0.10.2, `XLA_FLAGS=--xla_dump_to`, f16[2,3,4,5] with feature 1) computes
//! * training: `mean = Σx * r`, `var = Σ(x*x) * r - mean*mean` (the cancelling
//!   `E[x²] - E[x]²`), `y = ((x - mean) * rsqrt(var + e)) * scale + offset`; results
//!   `(y, mean, var)`;
//! * inference: `k = scale * rsqrt(var + e)`, `y = x * k + (offset - mean * k)`;
//! * grad: `grad_scale = Σ(dy * (x - mean)) * rsqrt(var + e)`, `grad_offset = Σdy`,
//!   `grad_x = ((scale * rsqrt(var + e)) * r) * ((dy * f16(N) - Σdy)
//!   - (Σ(dy * (x - mean)) * (x - mean)) * (1 / (var + e)))`.
//!
//! The interpreter's own f64 formulas differ from these in about half of the f16 outputs
//! (torch_xla lowers f16 `LayerNorm` to batch_norm_training, so f16 transformers moved by
//! several ulps).
//!
//! Not modelled: a case where XLA's `mean*mean` overflowed although `mean` was 100.75 (as
//! if the square of the f16 sum 403 were taken: `var = -inf`), seen on a lone batch norm
//! but not inside a transformer layer norm.
//!
//! Invariants: the replaced op is removed from its region and its results' uses point at
//! the expansion, which takes the op's place (so it dominates those uses); ops of other
//! element types are untouched; ops are visited in id order (deterministic output).

use half::f16;
use neuronc_ir::build::OpSeq;
use neuronc_ir::{Attr, ElemType, Module, OpId, OpKind, TypeId, ValueId};

/// Expands every f16 batch norm op of `m` in place; returns whether any was.
pub(crate) fn expand_f16_batch_norms(m: &mut Module) -> bool {
    let mut targets = Vec::new();
    m.walk_ops(|op| {
        if m.op(op).parent.is_some() && is_f16_batch_norm(m, op) {
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

/// Whether `op` is a `batch_norm_*` op with an f16 operand (which XLA:CPU computes in f16).
pub fn is_f16_batch_norm(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    let kinds = [
        OpKind::BatchNormTraining,
        OpKind::BatchNormInference,
        OpKind::BatchNormGrad,
    ];
    kinds.contains(&o.kind)
        && o.operands
            .first()
            .and_then(|&v| m.tensor_type(v))
            .is_some_and(|t| t.elem == ElemType::F16)
}

/// The shape facts of one f16 batch norm op.
pub struct F16BatchNorm {
    kind: OpKind,
    full: TypeId,
    vec: TypeId,
    scalar: TypeId,
    feature: i64,
    reduce: Vec<i64>,
    count: u64,
    eps: f64,
}

impl F16BatchNorm {
    /// The facts of `op` when [`is_f16_batch_norm`] holds and its attributes are
    /// well-formed; `None` otherwise.
    pub fn of(m: &mut Module, op: OpId) -> Option<F16BatchNorm> {
        if !is_f16_batch_norm(m, op) {
            return None;
        }
        let o = m.op(op);
        let kind = o.kind;
        let x = m.tensor_type(*o.operands.first()?)?.clone();
        let feature = o.attrs.int("feature_index")?;
        let eps = match o.attrs.get("epsilon")? {
            Attr::Float(v, _) => *v,
            _ => return None,
        };
        let f = usize::try_from(feature).ok().filter(|&f| f < x.rank())?;
        let c = x.shape[f];
        Some(F16BatchNorm {
            kind,
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

/// Appends XLA:CPU's f16 expansion of batch norm `d` (see the module documentation) with
/// operands `operands` (the op's, in order) to `seq`; returns the values replacing the op's
/// results, in order, or `None` when the operand count is wrong.
pub fn build_f16_batch_norm(
    seq: &mut OpSeq<'_>,
    d: &F16BatchNorm,
    operands: &[ValueId],
) -> Option<Vec<ValueId>> {
    let mut b = Builder { seq, d };
    Some(match (d.kind, operands) {
        (OpKind::BatchNormTraining, &[x, scale, offset]) => b.training(x, scale, offset).to_vec(),
        (OpKind::BatchNormInference, &[x, scale, offset, mean, var]) => {
            vec![b.inference(x, scale, offset, mean, var)]
        }
        (OpKind::BatchNormGrad, &[x, scale, mean, var, dy]) => {
            b.grad(x, scale, mean, var, dy).to_vec()
        }
        _ => return None,
    })
}

/// Replaces batch norm `op` by XLA's f16 expansion; false (nothing changed) when its
/// attributes, types or operands are malformed.
fn expand(m: &mut Module, op: OpId) -> bool {
    let Some(d) = F16BatchNorm::of(m, op) else {
        return false;
    };
    let o = m.op(op).clone();
    let Some(region) = o.parent else {
        return false;
    };
    let mut seq = OpSeq::new(m, o.loc, o.span);
    let Some(results) = build_f16_batch_norm(&mut seq, &d, &o.operands) else {
        return false;
    };
    let new_ops = seq.finish();
    for (&r, v) in o.results.iter().zip(results) {
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

/// f16 ops of one expansion, built with the shapes of [`F16BatchNorm`].
struct Builder<'s, 'm> {
    seq: &'s mut OpSeq<'m>,
    d: &'s F16BatchNorm,
}

impl Builder<'_, '_> {
    fn op(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: TypeId) -> ValueId {
        self.seq.op(kind, operands, ty)
    }

    /// A full-size elementwise op.
    fn full(&mut self, kind: OpKind, a: ValueId, b: ValueId) -> ValueId {
        self.op(kind, vec![a, b], self.d.full)
    }

    /// A per-feature (`[C]`) elementwise op.
    fn vec(&mut self, kind: OpKind, a: ValueId, b: ValueId) -> ValueId {
        self.op(kind, vec![a, b], self.d.vec)
    }

    /// A splat `[C]` f16 constant.
    fn constant(&mut self, v: f16) -> ValueId {
        self.seq.splat(self.d.vec, v.to_le_bytes().to_vec())
    }

    /// `f16(N)` and `r = f16(1 / f16(N))`, XLA's element count and its reciprocal.
    fn count_and_recip(&mut self) -> (f16, f16) {
        let n = f16::from_f64(self.d.count as f64);
        (n, f16::from_f32(1.0 / n.to_f32()))
    }

    /// `[C] -> operand shape` along the feature dimension.
    fn bcast(&mut self, v: ValueId) -> ValueId {
        let (full, feature) = (self.d.full, self.d.feature);
        self.seq.broadcast_in_dim(v, full, vec![feature])
    }

    /// f16 `reduce`-sum over every dimension but the feature one: `[..] -> [C]`.
    fn sum(&mut self, x: ValueId) -> ValueId {
        let zero = self
            .seq
            .splat(self.d.scalar, f16::ZERO.to_le_bytes().to_vec());
        let (dims, vec, scalar) = (self.d.reduce.clone(), self.d.vec, self.d.scalar);
        self.seq.reduce_sum(x, zero, dims, vec, scalar)
    }

    /// `var + f16(eps)` on `[C]`.
    fn var_eps(&mut self, var: ValueId) -> ValueId {
        let eps = self.constant(f16::from_f64(self.d.eps));
        self.vec(OpKind::Add, var, eps)
    }

    /// `rsqrt(var + f16(eps))` on `[C]`.
    fn rstd(&mut self, var: ValueId) -> ValueId {
        let v = self.var_eps(var);
        self.op(OpKind::Rsqrt, vec![v], self.d.vec)
    }

    /// `x - bcast(mean)`.
    fn centered(&mut self, x: ValueId, mean: ValueId) -> ValueId {
        let mean_b = self.bcast(mean);
        self.full(OpKind::Subtract, x, mean_b)
    }

    fn training(&mut self, x: ValueId, scale: ValueId, offset: ValueId) -> [ValueId; 3] {
        let (_, r) = self.count_and_recip();
        let recip = self.constant(r);
        let sum = self.sum(x);
        let mean = self.vec(OpKind::Multiply, sum, recip);
        let sq = self.full(OpKind::Multiply, x, x);
        let sq_sum = self.sum(sq);
        let sq_mean = self.vec(OpKind::Multiply, sq_sum, recip);
        let mean_sq = self.vec(OpKind::Multiply, mean, mean);
        let var = self.vec(OpKind::Subtract, sq_mean, mean_sq);
        let rstd = self.rstd(var);
        let centered = self.centered(x, mean);
        let rstd_b = self.bcast(rstd);
        let normed = self.full(OpKind::Multiply, centered, rstd_b);
        let scale_b = self.bcast(scale);
        let scaled = self.full(OpKind::Multiply, normed, scale_b);
        let offset_b = self.bcast(offset);
        let y = self.full(OpKind::Add, scaled, offset_b);
        [y, mean, var]
    }

    fn inference(
        &mut self,
        x: ValueId,
        scale: ValueId,
        offset: ValueId,
        mean: ValueId,
        var: ValueId,
    ) -> ValueId {
        let rstd = self.rstd(var);
        let k = self.vec(OpKind::Multiply, scale, rstd);
        let mean_k = self.vec(OpKind::Multiply, mean, k);
        let shift = self.vec(OpKind::Subtract, offset, mean_k);
        let k_b = self.bcast(k);
        let xk = self.full(OpKind::Multiply, x, k_b);
        let shift_b = self.bcast(shift);
        self.full(OpKind::Add, xk, shift_b)
    }

    fn grad(
        &mut self,
        x: ValueId,
        scale: ValueId,
        mean: ValueId,
        var: ValueId,
        dy: ValueId,
    ) -> [ValueId; 3] {
        let (n, r) = self.count_and_recip();
        let rstd = self.rstd(var);
        let one = self.constant(f16::ONE);
        let var_eps = self.var_eps(var);
        let inv_var = self.vec(OpKind::Divide, one, var_eps);
        let sum_dy = self.sum(dy);
        let centered = self.centered(x, mean);
        let dy_c = self.full(OpKind::Multiply, dy, centered);
        let sum_dy_c = self.sum(dy_c);
        let grad_scale = self.vec(OpKind::Multiply, sum_dy_c, rstd);
        // grad_x = ((scale * rstd) * r) * ((dy * N - Σdy) - (Σ(dy*c) * c) * (1/(var+e)))
        let k = self.vec(OpKind::Multiply, scale, rstd);
        let recip = self.constant(r);
        let k = self.vec(OpKind::Multiply, k, recip);
        let n_full = self.seq.splat(self.d.full, n.to_le_bytes().to_vec());
        let dy_n = self.full(OpKind::Multiply, dy, n_full);
        let sum_dy_b = self.bcast(sum_dy);
        let a = self.full(OpKind::Subtract, dy_n, sum_dy_b);
        let sum_dy_c_b = self.bcast(sum_dy_c);
        let t = self.full(OpKind::Multiply, sum_dy_c_b, centered);
        let inv_b = self.bcast(inv_var);
        let t = self.full(OpKind::Multiply, t, inv_b);
        let diff = self.full(OpKind::Subtract, a, t);
        let k_b = self.bcast(k);
        let grad_x = self.full(OpKind::Multiply, k_b, diff);
        [grad_x, grad_scale, sum_dy]
    }
}
