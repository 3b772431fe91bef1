//! `decompose-batch-norm`: expands `batch_norm_training`, `batch_norm_inference` and
//! `batch_norm_grad` into elementwise ops, `broadcast_in_dim` and `reduce`-sums, in the
//! operand's element type, following the formulas of the StableHLO specification.
//!
//! With `x` the operand, `f` the feature dimension, `N` the number of elements per feature,
//! `Σ` a sum over every dimension but `f`, and per-feature vectors broadcast along `f`:
//! * training: `mean = Σx/N`, `c = x - mean`, `var = Σc²/N`,
//!   `y = c * (scale * rsqrt(var + eps)) + offset`; results `(y, mean, var)`.
//! * inference: `y = (x - mean) * (scale * rsqrt(var + eps)) + offset`.
//! * grad (`dy` the output gradient, `r = rsqrt(var + eps)`, `c = x - mean`):
//!   `grad_offset = Σdy`, `grad_scale = Σ(dy*c) * r`,
//!   `grad_x = (scale*r) * (dy - Σdy/N - c * (Σ(dy*c) * r² / N))`.
//!
//! Per-feature arithmetic is done on the `[C]` vectors before broadcasting, so the
//! expansion adds only a few full-size ops. `bf16` batch norms are computed in `f32`
//! (operands converted up, results converted back once), matching the single rounding of
//! the fused op, which is what XLA:CPU computes too (it normalizes bf16 to f32); a bf16
//! operand that an op computes is rounded explicitly once widened, so that XLA:CPU, which
//! would otherwise read its unrounded f32 value there, reads what the batch norm op read.
//! `f16` batch norms become XLA's own f16 expansion
//! ([`neuronc_interp::excess_precision::build_f16_batch_norm`]: f16 steps, `E[x²] - E[x]²`),
//! which is what XLA:CPU computes for the op (it does not normalize f16) and what the
//! interpreter's `xla` semantics evaluate the op as, so the pass changes neither. Ops on
//! other element types are left alone.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{encode_scalar, parent_regions};
use crate::pass::Pass;
use neuronc_interp::excess_precision::{build_f16_batch_norm, unrounded_source, F16BatchNorm};
use neuronc_ir::build::OpSeq;
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, TypeId, ValueId};
use rustc_hash::FxHashMap;

/// `reduce_precision` bits of bf16 (its exponent range is f32's, so this rounding is
/// exactly a convert to bf16). The expansion reads a computed bf16 operand as
/// `reduce_precision(convert(x))`, not `convert(x)` alone: under XLA:CPU's excess
/// precision (`xla_allow_excess_precision`, on by default) a `convert` bf16 -> f32 of an op
/// result reads the op's unrounded f32 value, while the batch norm op itself read the
/// rounded one. By the spec the rounding is a no-op (the value is bf16 already).
const BF16_ROUNDING: (i64, i64) = (8, 7);

/// The `decompose-batch-norm` pass.
pub struct DecomposeBatchNorm;

impl Pass for DecomposeBatchNorm {
    fn name(&self) -> &'static str {
        "decompose-batch-norm"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let (targets, mut readers) = find_targets(module);
        let mut replacements = FxHashMap::default();
        let mut expansions = FxHashMap::default();
        for op in targets {
            let Some(shape) = Shape::of(module, op) else {
                continue;
            };
            if !ctx.try_rewrite("decompose-batch-norm", module, op) {
                break;
            }
            expand(module, op, &shape, &mut replacements, &mut expansions);
        }
        if replacements.is_empty() {
            return Ok(Changed::No);
        }
        // The expansions read the operands of the ops they replace, which may be results
        // of other expanded ops.
        readers.extend(expansions.values().flatten().copied());
        place_expansions(module, expansions);
        replace_uses(module, &replacements, &readers);
        Ok(Changed::Yes)
    }
}

/// The batch-norm ops, and the ops that read one of their results (the only ops whose
/// operands the expansion redirects), in one walk: a value is defined before its uses
/// in walk order, so its readers come after the op defining it.
fn find_targets(m: &Module) -> (Vec<OpId>, Vec<OpId>) {
    let (mut targets, mut readers) = (Vec::new(), Vec::new());
    let mut defined_by_target = vec![false; m.values.len()];
    m.walk_ops(|op| {
        let o = m.op(op);
        let reads = !targets.is_empty() && o.operands.iter().any(|v| defined_by_target[v.index()]);
        if reads {
            readers.push(op);
        }
        if is_batch_norm(o.kind) {
            targets.push(op);
            for r in &o.results {
                defined_by_target[r.index()] = true;
            }
        }
    });
    (targets, readers)
}

fn is_batch_norm(kind: OpKind) -> bool {
    matches!(
        kind,
        OpKind::BatchNormTraining | OpKind::BatchNormInference | OpKind::BatchNormGrad
    )
}

/// What the expansion needs to know about one batch-norm op.
struct Shape {
    /// The element type the arithmetic runs in.
    elem: ElemType,
    /// The op's own element type, when it differs from `elem` (low precision).
    narrow: Option<ElemType>,
    full: TypeId,
    vec: TypeId,
    scalar: TypeId,
    feature: i64,
    reduce_dims: Vec<i64>,
    count: f64,
    eps: f64,
}

impl Shape {
    fn of(m: &mut Module, op: OpId) -> Option<Shape> {
        let o = m.op(op);
        let x = m.tensor_type(o.operands[0])?.clone();
        let feature = o.attrs.int("feature_index")?;
        let eps = match o.attrs.get("epsilon")? {
            Attr::Float(v, _) => *v,
            _ => return None,
        };
        let f = usize::try_from(feature).ok().filter(|&f| f < x.rank())?;
        if !matches!(
            x.elem,
            ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F64
        ) {
            return None;
        }
        let c = x.shape[f];
        let count = (x.num_elements() / c.max(1) as u64) as f64;
        let (elem, narrow) = match x.elem {
            ElemType::F16 | ElemType::BF16 => (ElemType::F32, Some(x.elem)),
            e => (e, None),
        };
        Some(Shape {
            elem,
            narrow,
            full: m.types.tensor(elem, &x.shape),
            vec: m.types.tensor(elem, &[c]),
            scalar: m.types.tensor(elem, &[]),
            feature,
            reduce_dims: (0..x.rank() as i64).filter(|&d| d != feature).collect(),
            count,
            eps,
        })
    }
}

/// Builds ops in order, with the location of the op being expanded.
struct Builder<'a> {
    seq: OpSeq<'a>,
}

impl Builder<'_> {
    fn op(&mut self, kind: OpKind, operands: Vec<ValueId>, ty: TypeId) -> ValueId {
        self.seq.op(kind, operands, ty)
    }
    /// `v` converted to the compute element type (a no-op unless the op is low precision).
    /// A bf16 `v` whose producer XLA:CPU computes in f32 ([`unrounded_source`]) is rounded
    /// explicitly after the widening (see [`BF16_ROUNDING`]).
    fn widen(&mut self, v: ValueId, s: &Shape) -> ValueId {
        let Some(shape) = s
            .narrow
            .and(self.seq.m.tensor_type(v))
            .map(|t| t.shape.clone())
        else {
            return v;
        };
        let ty = self.seq.m.types.tensor(s.elem, &shape);
        let wide = self.op(OpKind::Convert, vec![v], ty);
        if s.narrow != Some(ElemType::BF16) || unrounded_source(self.seq.m, v).is_none() {
            return wide;
        }
        let mut attrs = NamedAttrs::with_capacity(2);
        let (e, mant) = BF16_ROUNDING;
        attrs.set("exponent_bits", Attr::Int(e, ElemType::Int(32)));
        attrs.set("mantissa_bits", Attr::Int(mant, ElemType::Int(32)));
        let op = self
            .seq
            .m
            .create_op(OpKind::ReducePrecision, vec![wide], &[ty], attrs);
        self.seq.push(op)
    }
    /// `v` converted back to type `ty` when they differ.
    fn narrow_to(&mut self, v: ValueId, ty: TypeId) -> ValueId {
        if self.seq.m.value_type(v) == ty {
            return v;
        }
        self.op(OpKind::Convert, vec![v], ty)
    }
    fn constant(&mut self, ty: TypeId, elem: ElemType, value: f64) -> ValueId {
        let bytes = encode_scalar(elem, value).unwrap_or_default();
        self.seq.splat(ty, bytes)
    }
    fn bcast(&mut self, v: ValueId, s: &Shape) -> ValueId {
        self.seq.broadcast_in_dim(v, s.full, vec![s.feature])
    }
    /// Σ over every dimension but the feature one: `[..] -> [C]`.
    fn sum(&mut self, x: ValueId, s: &Shape) -> ValueId {
        let zero = self.constant(s.scalar, s.elem, 0.0);
        self.seq
            .reduce_sum(x, zero, s.reduce_dims.clone(), s.vec, s.scalar)
    }
    /// `rsqrt(var + eps)` on `[C]`.
    fn rstd(&mut self, var: ValueId, s: &Shape) -> ValueId {
        let eps = self.constant(s.vec, s.elem, s.eps);
        let v = self.op(OpKind::Add, vec![var, eps], s.vec);
        self.op(OpKind::Rsqrt, vec![v], s.vec)
    }
    /// `v / N` on `[C]`.
    fn per_element(&mut self, v: ValueId, s: &Shape) -> ValueId {
        let n = self.constant(s.vec, s.elem, s.count);
        self.op(OpKind::Divide, vec![v, n], s.vec)
    }
    /// `c * bcast(scale * rstd) + bcast(offset)`.
    fn normalize(
        &mut self,
        c: ValueId,
        scale: ValueId,
        rstd: ValueId,
        offset: ValueId,
        s: &Shape,
    ) -> ValueId {
        let k = self.op(OpKind::Multiply, vec![scale, rstd], s.vec);
        let kb = self.bcast(k, s);
        let y = self.op(OpKind::Multiply, vec![c, kb], s.full);
        let ob = self.bcast(offset, s);
        self.op(OpKind::Add, vec![y, ob], s.full)
    }
}

/// Redirects every use of a replaced value: `readers` holds every op that may read one
/// (ops whose regions hold a reader need not be listed).
fn replace_uses(m: &mut Module, map: &FxHashMap<ValueId, ValueId>, readers: &[OpId]) {
    for &op in readers {
        // Expanded ops are detached and keep their operands.
        if m.op(op).parent.is_none() {
            continue;
        }
        for v in &mut m.op_mut(op).operands {
            if let Some(&by) = map.get(v) {
                *v = by;
            }
        }
    }
}

/// Expands one op: builds its replacement ops (placed later by [`place_expansions`],
/// which puts them where `op` was, into `expansions`) and records its results'
/// replacements in `map`.
fn expand(
    m: &mut Module,
    op: OpId,
    s: &Shape,
    map: &mut FxHashMap<ValueId, ValueId>,
    expansions: &mut FxHashMap<OpId, Vec<OpId>>,
) {
    let o = m.op(op).clone();
    let Some(parent) = o.parent else {
        return;
    };
    if s.narrow == Some(ElemType::F16) {
        if let Some(d) = F16BatchNorm::of(m, op) {
            let mut seq = OpSeq::new(m, o.loc, o.span);
            if let Some(results) = build_f16_batch_norm(&mut seq, &d, &o.operands) {
                let new_ops = seq.finish();
                place(m, op, parent, new_ops, expansions);
                map.extend(o.results.iter().copied().zip(results));
                return;
            }
        }
    }
    let mut b = Builder {
        seq: OpSeq::new(m, o.loc, o.span),
    };
    let operands: Vec<ValueId> = o.operands.iter().map(|&v| b.widen(v, s)).collect();
    let x = operands[0];
    let new_results = match o.kind {
        OpKind::BatchNormTraining => {
            let (scale, offset) = (operands[1], operands[2]);
            let sx = b.sum(x, s);
            let mean = b.per_element(sx, s);
            let mb = b.bcast(mean, s);
            let c = b.op(OpKind::Subtract, vec![x, mb], s.full);
            let c2 = b.op(OpKind::Multiply, vec![c, c], s.full);
            let sc2 = b.sum(c2, s);
            let var = b.per_element(sc2, s);
            let rstd = b.rstd(var, s);
            let y = b.normalize(c, scale, rstd, offset, s);
            vec![y, mean, var]
        }
        OpKind::BatchNormInference => {
            let (scale, offset, mean, var) = (operands[1], operands[2], operands[3], operands[4]);
            let mb = b.bcast(mean, s);
            let c = b.op(OpKind::Subtract, vec![x, mb], s.full);
            let rstd = b.rstd(var, s);
            vec![b.normalize(c, scale, rstd, offset, s)]
        }
        _ => expand_grad(&mut b, &operands, s),
    };
    let new_results: Vec<ValueId> = new_results
        .into_iter()
        .zip(&o.results)
        .map(|(v, &old)| b.narrow_to(v, b.seq.m.value_type(old)))
        .collect();
    let new_ops = b.seq.finish();
    place(m, op, parent, new_ops, expansions);
    map.extend(o.results.iter().copied().zip(new_results));
}

/// Records `new_ops` (detached, now given region `parent`) as the expansion of `op`.
fn place(
    m: &mut Module,
    op: OpId,
    parent: RegionId,
    new_ops: Vec<OpId>,
    expansions: &mut FxHashMap<OpId, Vec<OpId>>,
) {
    for &new in &new_ops {
        m.op_mut(new).parent = Some(parent);
    }
    expansions.insert(op, new_ops);
}

fn expand_grad(b: &mut Builder, operands: &[ValueId], s: &Shape) -> Vec<ValueId> {
    let (x, scale, mean, var, dy) = (
        operands[0],
        operands[1],
        operands[2],
        operands[3],
        operands[4],
    );
    let rstd = b.rstd(var, s);
    let mb = b.bcast(mean, s);
    let c = b.op(OpKind::Subtract, vec![x, mb], s.full);
    let sum_dy = b.sum(dy, s);
    let dyc = b.op(OpKind::Multiply, vec![dy, c], s.full);
    let sum_dyc = b.sum(dyc, s);
    let grad_scale = b.op(OpKind::Multiply, vec![sum_dyc, rstd], s.vec);
    // grad_x = (scale*r) * (dy - Σdy/N - c * (Σ(dy*c) * r² / N))
    let mean_dy = b.per_element(sum_dy, s);
    let r2 = b.op(OpKind::Multiply, vec![rstd, rstd], s.vec);
    let t = b.op(OpKind::Multiply, vec![sum_dyc, r2], s.vec);
    let t = b.per_element(t, s);
    let tb = b.bcast(t, s);
    let ct = b.op(OpKind::Multiply, vec![c, tb], s.full);
    let mdb = b.bcast(mean_dy, s);
    let d1 = b.op(OpKind::Subtract, vec![dy, mdb], s.full);
    let d2 = b.op(OpKind::Subtract, vec![d1, ct], s.full);
    let k = b.op(OpKind::Multiply, vec![scale, rstd], s.vec);
    let kb = b.bcast(k, s);
    let grad_x = b.op(OpKind::Multiply, vec![kb, d2], s.full);
    vec![grad_x, grad_scale, sum_dy]
}

/// Replaces each expanded op by its expansion, in one rebuild per region; the expanded
/// ops are detached (they stay in the arena).
fn place_expansions(m: &mut Module, mut expansions: FxHashMap<OpId, Vec<OpId>>) {
    for region in parent_regions(m, expansions.keys().copied()) {
        let old = std::mem::take(&mut m.region_mut(region).ops);
        let mut ops = Vec::with_capacity(old.len());
        for op in old {
            let expanded = is_batch_norm(m.op(op).kind);
            match expanded.then(|| expansions.remove(&op)).flatten() {
                Some(new_ops) => {
                    ops.extend(new_ops);
                    m.op_mut(op).parent = None;
                }
                None => ops.push(op),
            }
        }
        m.region_mut(region).ops = ops;
    }
}
