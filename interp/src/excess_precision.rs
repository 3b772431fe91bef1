//! XLA:CPU's bf16 (and i4 / ui4) excess precision, as a module rewrite: [`FloatSemantics`] and
//! [`xla_module`].
//!
//! # What XLA:CPU computes for bf16
//! The StableHLO spec rounds every bf16 op result to bf16 ([`FloatSemantics::Strict`], the
//! interpreter's own semantics). XLA:CPU, which jax and torch_xla run on, differs where a
//! bf16 op result is read by a convert to f32, and in the order and rounding of bf16 sums.
//! Facts this module relies on (openxla/xla sources, and the optimized HLO that the jaxlib
//! 0.10.2 prints for small probes):
//! * `cpu_compiler.cc` runs `CallInliner` (after `FlattenCallGraph`) before
//!   `FloatNormalization`, and StableHLO composites arrive as calls, so function and
//!   composite boundaries do not materialize bf16 values (`while`/`if`/`case` ones do).
//! * `xla/service/cpu/cpu_compiler.cc` runs `FloatNormalization` with a bf16
//!   `FloatSupport` (`CpuFloatSupport(BF16, ...)`) before its simplification pipeline: an
//!   op whose bf16 operands/result the backend does not support is rewritten to compute in
//!   f32, with `convert` ops inserted around it. `xla/service/float_support.cc`: only
//!   call, conditional, custom-call, get-tuple-element, tuple, while,
//!   optimization-barrier (pass-through ops), `convert` to/from bf16 and integer-only ops
//!   (clz, shifts) support bf16; `float_normalization.cc` additionally never touches
//!   constants, parameters, converts, bitcast-converts, fusions, async and side-effecting
//!   ops.
//! * `xla/hlo/transforms/simplifiers/float_normalization.cc`,
//!   `ChangeOutputTypeThenInsertConvertBack`: when `xla_allow_excess_precision` is set (its
//!   default is `true`), a user of the normalized op that is a `convert` from bf16 to f32
//!   is rewired to the op's unrounded f32 result. Every other user reads the result rounded
//!   to bf16 (the inserted convert back). Checked: with
//!   `XLA_FLAGS=--xla_allow_excess_precision=false` the rewiring disappears.
//! * Newer XLA also lets `ConvertType` skip an `f32 -> bf16 -> f32` pair when it inserts
//!   the operand conversion, and `SimplifyFPConversions` collapses convert chains; the
//!   jaxlib 0.10.2 CPU pipeline does neither (its optimized HLO keeps
//!   `convert(convert(x):bf16):f32` between two normalized ops, and runs
//!   `SimplifyFPConversions` only on the oneDNN path). So bf16 values *are* rounded
//!   between ops, at `while`/`if`/`call` boundaries and at entry results, exactly as in
//!   strict semantics.
//! * Ops with regions (reduce, reduce_window, scatter, sort, map, ...): the cloned region
//!   ends in a convert back to bf16 before its f32 root (`ConvertCalledComputations`), so
//!   every accumulation step, the last one included, is rounded (the optimized HLO of a
//!   bf16 sum shows `add` then `convert` to bf16 and back inside the reducer). The result
//!   therefore depends on the order of the steps: XLA:CPU folds each reduce sequentially,
//!   in row-major order of the reduced elements, after
//!   `xla/hlo/transforms/simplifiers/tree_reduction_rewriter.cc` (run to a fixed point in
//!   the CPU simplification pipeline, window 32) has split every reduce with a reduced
//!   dimension longer than 32 into a `reduce_window` (window and stride `min(n, 32)` on
//!   the reduced dimensions, `SAME` padding with the init value) followed by the reduce.
//!   The interpreter sums bf16 reduces in f64 with one final rounding, so bf16 sums and
//!   products are rewritten here into that chain of `reduce_window`s (which the
//!   interpreter folds sequentially, rounding every step), the last one covering the
//!   whole remaining extent, plus a `reshape`.
//! * f16 is not normalized on CPU (no `FloatNormalization` for F16; f16 arithmetic stays
//!   f16 in the optimized HLO, and f16 dot/conv are computed in f32 and converted back,
//!   `ChangeOpDataType`), so f16 stays strict, except that an f16 `reduce` also rounds
//!   every step: it gets the same tree-rewriter `reduce_window`s as bf16, and its final
//!   reduce folds in the order LLVM's loop vectorizer gives XLA:CPU's reassociable f16
//!   loop (sequential for one reduced dimension, lanes over the next-to-innermost reduced
//!   dimension otherwise; [`crate::reduce::xla_lanes`]). An f16 `batch_norm_training`,
//!   `batch_norm_inference` or `batch_norm_grad` is expanded first into XLA's f16 ops
//!   ([`crate::xla_batch_norm`]), whose sums then get that rewrite too. An f16 reduce over
//!   one dimension whose fused body is too heavy for LLVM to unroll keeps its loop, which
//!   is vectorized like a next-to-innermost one ([`crate::xla_unroll`]). After the batch
//!   norms are expanded, XLA's constant re-association and `A / (r)sqrt(B)` rewrites apply
//!   to every f16/f32/f64 op ([`crate::xla_reassoc`]; modules without bf16/f16 get them
//!   too). The f8/f4 types
//!   are normalized to f16 by the same mechanism; that is not modeled here (no known trace
//!   computes directly in f8).
//! * The 4-bit integers are normalized too (`float-normalization-s4` / `-u4` in XLA's pass
//!   dump): an i4 (ui4) op is computed in i8 (ui8) and wrapped back to 4 bits, except for
//!   a user that is a `convert` to exactly i8 (ui8), which reads the unwrapped 8-bit value,
//!   as for bf16. Checked with `tools/xla_run.py` (probe round 13) over all 16 values of
//!   each type: `add`, `subtract`, `multiply`, `negate`, `abs`, `not`, `power`,
//!   `shift_left` and `popcnt` (of the sign-extended byte) converted to i8/ui8 give the
//!   8-bit results (ui4 `x * reverse(x)` is 56, not 8, at x = 7; ui4 `not` of 1 read as ui8
//!   is 254); a `convert` to i32 or to the other signedness, and every op between two 4-bit
//!   ops, reads the wrapped value; `count_leading_zeros` and the right shifts work in 4 bits
//!   (ui4 `shift_right_arithmetic` of 8 fills with ones: 15); with
//!   `--xla_allow_excess_precision=false` the unwrapped reads disappear. i2 / ui2 ops are
//!   computed in their own width.
//!
//! # The rewrite
//! [`xla_module`] first inlines every `func.call` and `stablehlo.composite` (bounded
//! rounds, so recursion terminates). It then finds every `c = convert(x) : bf16 -> f32`
//! whose operand is the single result of an op `X` that XLA normalizes ([`is_normalized`]: region-free elementwise
//! arithmetic, data movement, iota, dot/convolution, batch_norm_inference), except a
//! `dot_general` that XLA rewrites first (`BatchDotSimplification`: a size-1 batch
//! dimension; `DotDecomposer`: more than one contracting or non-contracting dimension on
//! an operand, or batch dimensions not leading): that one is read through the reshape
//! those passes add, rounded to bf16. It then
//! evaluates `X` in f32 — `X' = X(convert(bf16 operands) to f32) : f32`, inserted where
//! `X` was — turns `X` into `convert(X') : bf16` (its other users still read the rounded
//! value) and feeds `c` from `X'` (an f32 -> f32 identity convert). Every bf16 or f16
//! `reduce` whose body is one `add` or `multiply` becomes the `reduce_window` chain above
//! (for f16, the chain's tree-rewriter windows and then the reduce itself, marked to fold
//! in XLA:CPU's vectorized order). With
//! these rules the bf16 bert/llama fixtures run bit-identically to jaxlib's XLA:CPU.
//!
//! Invariants: the input module is never modified; the result is SSA-valid (`X'` and its
//! operand converts sit immediately before `X`, so they dominate every use of `X`);
//! function signatures are unchanged; a module without bf16 or f16 types is borrowed, not
//! copied; the output is deterministic (ops are visited in id order).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use neuronc_ir::clone::clone_op;
use neuronc_ir::{
    Attr, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, TypeId, ValueDef, ValueId,
};
use rustc_hash::FxHashMap;

use crate::reduce::xla_lanes::{self, ATTR as XLA_ORDER_ATTR};
use crate::region::{classify, Body};

/// XLA:CPU's f16 batch-norm expansions, shared with `decompose-batch-norm`.
pub use crate::xla_batch_norm::{build_f16_batch_norm, is_f16_batch_norm, F16BatchNorm};

/// Which floating-point semantics the interpreter follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FloatSemantics {
    /// The StableHLO specification: every op result is rounded to its element type.
    #[default]
    Strict,
    /// What XLA:CPU (jax, torch_xla) computes: bf16 results consumed by a `convert` to f32
    /// keep f32 precision, bf16 sums round every step in XLA's order (see the module
    /// documentation), i4 / ui4 ops are computed in 8 bits the same way,
    /// `multiply(convert(pred), x)` is `select(pred, x, 0)` and `log(exp(x))` is `x`
    /// (`crate::xla_simplify`); when the interpreter runs (not in the module `compile`
    /// plans from), f32/f64 `a * b + c` is one fused multiply-add (`crate::xla_fma`) and
    /// `A / broadcast(B)` a reciprocal product (`crate::xla_divide`).
    Xla,
}

/// One normalized op `X` and the `convert(X) : bf16 -> f32` ops that read it.
struct Site {
    op: OpId,
    converts: Vec<OpId>,
}

/// `module` rewritten so that plain (strict) evaluation gives XLA:CPU's results: first
/// XLA's result-changing simplifications ([`crate::xla_simplify`]), then the bf16/f16
/// rules above; borrowed unchanged when neither applies.
pub fn xla_module(module: &Module) -> Cow<'_, Module> {
    let module = crate::xla_simplify::xla_simplify(module);
    let types = &module.types;
    let has_half = (0..types.len() as u32).any(|i| {
        types
            .tensor_of(TypeId(i))
            .is_some_and(|t| t.elem == ElemType::F16 || wide_of(t.elem).is_some())
    });
    if !has_half {
        return reassociated(module);
    }
    let mut m = module.into_owned();
    inline_calls(&mut m);
    crate::xla_batch_norm::expand_f16_batch_norms(&mut m);
    crate::xla_reassoc::reassociate(&mut m);
    let sites = find_sites(&m);
    let reduces = find_reduces(&m);
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for site in &sites {
        before.insert(site.op, widen(&mut m, site));
    }
    // XLA decides each reduce's fusion on the graph before any of them is rewritten: the
    // operand uses are counted once, after the widening, for every reduce.
    let uses = crate::xla_reassoc::use_counts(&m);
    for &(op, kind) in &reduces {
        before.insert(op, sequential_reduce(&mut m, op, kind, &uses));
    }
    splice_all(&mut m, &before);
    Cow::Owned(m)
}

/// `module` with XLA's constant re-association and root-divide rewrites
/// ([`crate::xla_reassoc`]); borrowed when nothing matches.
fn reassociated(module: Cow<'_, Module>) -> Cow<'_, Module> {
    if !crate::xla_reassoc::has_sites(&module) {
        return module;
    }
    let mut m = module.into_owned();
    crate::xla_reassoc::reassociate(&mut m);
    Cow::Owned(m)
}

/// The type XLA:CPU's `FloatNormalization` computes ops of element type `low` in: f32 for
/// bf16, the 8-bit integer of the same signedness for i4 / ui4 (see the module
/// documentation); `None` for types computed as they are.
pub fn wide_of(low: ElemType) -> Option<ElemType> {
    match low {
        ElemType::BF16 => Some(ElemType::F32),
        ElemType::Int(4) => Some(ElemType::Int(8)),
        ElemType::UInt(4) => Some(ElemType::UInt(8)),
        _ => None,
    }
}

/// Whether XLA:CPU's `FloatNormalization` computes a bf16 (i4, ui4) op of this kind in f32
/// (i8, ui8) and this interpreter can re-evaluate it in the wide type as it is (no
/// regions, one result). `count_leading_zeros` and the right shifts are not: XLA computes them
/// in the 4-bit width (bitwise `and`/`or`/`xor` give the same values either way).
pub fn is_normalized(kind: OpKind) -> bool {
    use OpKind::*;
    matches!(
        kind,
        Not | Popcnt
            | ShiftLeft
            | Abs
            | Cbrt
            | Ceil
            | Cosine
            | Exponential
            | ExponentialMinusOne
            | Floor
            | Log
            | LogPlusOne
            | Logistic
            | Negate
            | RoundNearestAfz
            | RoundNearestEven
            | Rsqrt
            | Sign
            | Sine
            | Sqrt
            | Tan
            | Tanh
            | ReducePrecision
            | Add
            | Atan2
            | Divide
            | Maximum
            | Minimum
            | Multiply
            | Power
            | Remainder
            | Subtract
            | Clamp
            | Select
            | Iota
            | Broadcast
            | BroadcastInDim
            | Reshape
            | Transpose
            | Reverse
            | Slice
            | DynamicSlice
            | DynamicUpdateSlice
            | Concatenate
            | Pad
            | Gather
            | Dot
            | DotGeneral
            | Convolution
            | BatchNormInference
    )
}

fn elem_of(m: &Module, v: ValueId) -> Option<ElemType> {
    m.tensor_type(v).map(|t| t.elem)
}

/// The normalized op read by `c` when `c` is a `convert` from bf16 to f32 (i4 to i8, ui4
/// to ui8).
fn widened_source(m: &Module, c: OpId) -> Option<OpId> {
    let op = m.op(c);
    if op.kind != OpKind::Convert || op.operands.len() != 1 || op.results.len() != 1 {
        return None;
    }
    let (src, dst) = (op.operands[0], op.results[0]);
    if elem_of(m, dst) != elem_of(m, src).and_then(wide_of) {
        return None;
    }
    unrounded_source(m, src)
}

/// The op whose unrounded f32 value a `convert` of bf16 value `v` to f32 reads under
/// XLA:CPU's excess precision, if any (likewise the unwrapped i8 / ui8 value of an i4 /
/// ui4 `v`): `v` is the only result of an op that XLA computes in the wide type (and does
/// not reshape first). Passes that add, remove or move such a convert change what XLA
/// computes, though not what the spec says.
pub fn unrounded_source(m: &Module, v: ValueId) -> Option<OpId> {
    elem_of(m, v).and_then(wide_of)?;
    let ValueDef::Result(x, 0) = m.value(v).def else {
        return None;
    };
    let xop = m.op(x);
    let ok = is_normalized(xop.kind)
        && xop.regions.is_empty()
        && xop.results.len() == 1
        && xop.parent.is_some()
        && !reshaped_before_normalization(m, x);
    ok.then_some(x)
}

/// Whether XLA:CPU computes this `dot_general` as `reshape(dot(...))` before
/// `FloatNormalization`, so that the bf16 value a convert reads is the reshape's, rounded.
/// Two passes do that: `BatchDotSimplification` (`batch_dot_simplification.cc`) drops size-1
/// batch dimensions of a dot with one contracting dimension and batch dimensions `0..n` on
/// both sides; `DotDecomposer` (`dot_decomposer.cc`, `IsCanonical`) rewrites a dot unless,
/// for each operand, it has exactly one contracting dimension, at most one non-contracting
/// one, and batch dimensions `0..n`. `stablehlo.dot` is always left alone.
fn reshaped_before_normalization(m: &Module, x: OpId) -> bool {
    let op = m.op(x);
    if op.kind != OpKind::DotGeneral {
        return false;
    }
    let Some(Attr::DotDims(d)) = op.attrs.get("dot_dimension_numbers") else {
        return false;
    };
    let shape = |i: usize| {
        op.operands
            .get(i)
            .and_then(|&v| m.tensor_type(v))
            .map_or(&[][..], |t| &t.shape[..])
    };
    let iota = |dims: &[i64]| dims.iter().enumerate().all(|(i, &b)| b == i as i64);
    let canonical = |rank: usize, contracting: &[i64], batch: &[i64]| {
        contracting.len() == 1 && rank <= batch.len() + 2 && iota(batch)
    };
    let lhs = shape(0);
    let degenerate_batch = d.lhs_contracting.len() == 1
        && d.lhs_batching == d.rhs_batching
        && iota(&d.lhs_batching)
        && d.lhs_batching
            .iter()
            .any(|&b| usize::try_from(b).ok().and_then(|b| lhs.get(b)) == Some(&1));
    degenerate_batch
        || !canonical(lhs.len(), &d.lhs_contracting, &d.lhs_batching)
        || !canonical(shape(1).len(), &d.rhs_contracting, &d.rhs_batching)
}

/// Every normalized op with at least one bf16 -> f32 convert user, in op id order.
fn find_sites(m: &Module) -> Vec<Site> {
    let mut by_op: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    m.walk_ops(|c| {
        if let Some(x) = widened_source(m, c) {
            by_op.entry(x).or_default().push(c);
        }
    });
    by_op
        .into_iter()
        .filter(|(op, _)| m.op(*op).parent.is_some())
        .map(|(op, converts)| Site { op, converts })
        .collect()
}

/// Builds `X'` (and the converts of its bf16 operands), turns `X` into `convert(X')` and
/// points the site's converts at `X'`. Returns the new ops, to go before `X`.
fn widen(m: &mut Module, site: &Site) -> Vec<OpId> {
    let x = m.op(site.op).clone();
    let mut new_ops = Vec::new();
    let mut operands = Vec::with_capacity(x.operands.len());
    let low = elem_of(m, x.results[0]);
    let wide_elem = low.and_then(wide_of).unwrap_or(ElemType::F32);
    for &o in &x.operands {
        match m.tensor_type(o).cloned() {
            Some(t) if Some(t.elem) == low => {
                let ty = m.types.tensor(wide_elem, &t.shape);
                let c = m.create_op(OpKind::Convert, vec![o], &[ty], NamedAttrs::new());
                m.op_mut(c).loc = x.loc;
                new_ops.push(c);
                operands.push(m.op(c).results[0]);
            }
            _ => operands.push(o),
        }
    }
    let shape = m
        .tensor_type(x.results[0])
        .map(|t| t.shape.clone())
        .unwrap_or_default();
    let wide_ty = m.types.tensor(wide_elem, &shape);
    let wide = m.create_op(x.kind, operands, &[wide_ty], x.attrs.clone());
    m.op_mut(wide).loc = x.loc;
    m.op_mut(wide).span = x.span;
    new_ops.push(wide);
    let wide_v = m.op(wide).results[0];
    let narrow = m.op_mut(site.op);
    narrow.kind = OpKind::Convert;
    narrow.operands = vec![wide_v];
    narrow.attrs = NamedAttrs::new();
    for &c in &site.converts {
        m.op_mut(c).operands[0] = wide_v;
    }
    new_ops
}

/// Places the new ops of `before` (op -> the detached ops to go before it) before the ops
/// they were made for, in the regions holding those ops.
pub(crate) fn splice_all(m: &mut Module, before: &BTreeMap<OpId, Vec<OpId>>) {
    let mut regions: Vec<RegionId> = before.keys().filter_map(|&op| m.op(op).parent).collect();
    regions.sort();
    regions.dedup();
    for r in regions {
        splice(m, r, before);
    }
}

/// Places the new ops of region `r` before the ops they were made for.
fn splice(m: &mut Module, r: RegionId, before: &BTreeMap<OpId, Vec<OpId>>) {
    let old = std::mem::take(&mut m.region_mut(r).ops);
    let mut ops = Vec::with_capacity(old.len() + before.len() * 2);
    for op in old {
        if let Some(new_ops) = before.get(&op) {
            for &n in new_ops {
                m.op_mut(n).parent = Some(r);
                ops.push(n);
            }
        }
        ops.push(op);
    }
    m.region_mut(r).ops = ops;
}

/// XLA:CPU's `TreeReductionRewriter` window.
const TREE_WINDOW: i64 = 32;

/// Every single-input bf16 or f16 `reduce` whose body is `add` or `multiply` of its two
/// arguments: (op, the body's op kind), in op id order. (f16 is not
/// normalized, but its reducer still rounds every step in the same tree-rewritten order.)
fn find_reduces(m: &Module) -> Vec<(OpId, OpKind)> {
    let mut out = Vec::new();
    m.walk_ops(|r| {
        let op = m.op(r);
        if op.kind != OpKind::Reduce || op.operands.len() != 2 || op.results.len() != 1 {
            return;
        }
        let half = matches!(
            elem_of(m, op.operands[0]),
            Some(ElemType::BF16 | ElemType::F16)
        );
        if !half || op.regions.len() != 1 {
            return;
        }
        if op.parent.is_none() {
            return;
        }
        if let Body::Bin(k @ (OpKind::Add | OpKind::Multiply)) = classify(m, op.regions[0]) {
            out.push((r, k));
        }
    });
    out.sort();
    out
}

/// Replaces `reduce` op `r` by XLA:CPU's evaluation order: tree-rewriter
/// `reduce_window`s, then one sequential `reduce_window` over the whole reduced extent,
/// `r` itself becoming the final `reshape`; except that an f16 window or final step that
/// XLA:CPU vectorizes ([`xla_lanes::vectorized`]) is a reduce marked to fold in that
/// order. Returns the new ops, to go before `r`.
fn sequential_reduce(
    m: &mut Module,
    r: OpId,
    kind: OpKind,
    uses: &HashMap<ValueId, usize>,
) -> Vec<OpId> {
    let op = m.op(r).clone();
    let (mut cur, init) = (op.operands[0], op.operands[1]);
    let red = op.attrs.i64_array("dimensions").unwrap_or_default();
    let mut shape: Vec<i64> = m
        .tensor_type(cur)
        .map(|t| t.shape.to_vec())
        .unwrap_or_default();
    let elem = elem_of(m, cur).unwrap_or(ElemType::BF16);
    let is_red = |d: usize| red.contains(&(d as i64));
    let mut new_ops = Vec::new();
    // Only the first step reads the operand (and the producers XLA fuses into it).
    let mut streams = fused_streams(m, cur);
    while (0..shape.len()).any(|d| is_red(d) && shape[d] > TREE_WINDOW) {
        let win: Vec<i64> = (0..shape.len())
            .map(|d| {
                if is_red(d) {
                    shape[d].min(TREE_WINDOW)
                } else {
                    1
                }
            })
            .collect();
        let (out, pad) = same_padding(&shape, &win);
        let window_sizes: Vec<i64> = win.iter().copied().filter(|&w| w > 1).collect();
        if elem == ElemType::F16
            && pad.iter().all(|&p| p == 0)
            && xla_lanes::vectorized(&window_sizes, streams)
        {
            // Unpadded, XLA:CPU's window loops vectorize like a reduce's.
            let order = (kind, streams);
            cur = window_reduce(m, [cur, init], (&shape, &win), &out, order, &mut new_ops);
        } else {
            let rw = reduce_window(m, [cur, init], &out, (&win, &win), pad, (elem, kind));
            new_ops.push(rw);
            cur = m.op(rw).results[0];
        }
        shape = out;
        streams = 1;
    }
    let sizes: Vec<i64> = (0..shape.len())
        .filter(|&d| is_red(d))
        .map(|d| shape[d])
        .collect();
    if elem == ElemType::F16 && new_ops.is_empty() && kept_loop(m, cur, &sizes, uses) {
        streams = xla_lanes::KEPT_LOOP;
    }
    if elem == ElemType::F16 && xla_lanes::vectorized(&sizes, streams) {
        // The reduce itself, folded in XLA:CPU's vectorized order.
        let reduce = m.op_mut(r);
        reduce.operands[0] = cur;
        reduce
            .attrs
            .set(XLA_ORDER_ATTR, Attr::Int(streams, ElemType::Int(64)));
        // XLA's loops nest the reduced dimensions in dimension order (as `sizes` lists them).
        let mut dims = red.clone();
        dims.sort_unstable();
        reduce
            .attrs
            .set("dimensions", Attr::IntArray(ElemType::Int(64), dims));
        return new_ops;
    }
    let win: Vec<i64> = (0..shape.len())
        .map(|d| if is_red(d) { shape[d] } else { 1 })
        .collect();
    let out: Vec<i64> = (0..shape.len())
        .map(|d| if is_red(d) { 1 } else { shape[d] })
        .collect();
    let ones = vec![1; shape.len()];
    let pad = vec![0; 2 * shape.len()];
    let rw = reduce_window(m, [cur, init], &out, (&win, &ones), pad, (elem, kind));
    new_ops.push(rw);
    let last = m.op(rw).results[0];
    let reshape = m.op_mut(r);
    reshape.kind = OpKind::Reshape;
    reshape.operands = vec![last];
    reshape.attrs = NamedAttrs::new();
    reshape.regions.clear();
    new_ops
}

/// The `reduce_window` of `x` (shape `shape`, windows and strides `win`, no padding) as
/// `reshape` (each windowed dimension split into `[count, window]`) then a `reduce` over
/// the window parts marked to fold in XLA:CPU's vectorized order, appended to `new_ops`;
/// returns the reduce's result (of shape `out`).
fn window_reduce(
    m: &mut Module,
    [x, init]: [ValueId; 2],
    (shape, win): (&[i64], &[i64]),
    out: &[i64],
    (kind, streams): (OpKind, i64),
    new_ops: &mut Vec<OpId>,
) -> ValueId {
    let mut split = Vec::with_capacity(2 * shape.len());
    let mut dims = Vec::new();
    for (&n, &w) in shape.iter().zip(win) {
        split.push(n / w.max(1));
        if w > 1 {
            dims.push(split.len() as i64);
            split.push(w);
        }
    }
    let split_ty = m.types.tensor(ElemType::F16, &split);
    let reshape = m.create_op(OpKind::Reshape, vec![x], &[split_ty], NamedAttrs::new());
    new_ops.push(reshape);
    let split_v = m.op(reshape).results[0];
    let mut attrs = NamedAttrs::new();
    attrs.set("dimensions", Attr::IntArray(ElemType::Int(64), dims));
    attrs.set(XLA_ORDER_ATTR, Attr::Int(streams, ElemType::Int(64)));
    let ty = m.types.tensor(ElemType::F16, out);
    let red = m.create_op(OpKind::Reduce, vec![split_v, init], &[ty], attrs);
    let scalar = m.types.tensor(ElemType::F16, &[]);
    neuronc_ir::build::binary_body(m, red, scalar, kind);
    new_ops.push(red);
    m.op(red).results[0]
}

/// Whether the reduce of `v` over dimensions of sizes `sizes` has one reduced loop (of more
/// than one trip) that LLVM keeps instead of unrolling ([`crate::xla_unroll`]).
fn kept_loop(m: &Module, v: ValueId, sizes: &[i64], uses: &HashMap<ValueId, usize>) -> bool {
    let dims: Vec<i64> = sizes.iter().copied().filter(|&n| n != 1).collect();
    match dims[..] {
        [t] => usize::try_from(t).is_ok_and(|t| crate::xla_unroll::loop_kept(m, v, t, uses)),
        _ => false,
    }
}

/// How many full-size arrays the loop of a reduce of `v` reads in XLA:CPU, which fuses
/// the elementwise producers of `v` (of `v`'s shape, transitively) into the reduce: the
/// distinct values of `v`'s shape those producers read that are not themselves such
/// producers, broadcasts or constants (a broadcast reads its smaller operand, a splat
/// nothing). XLA's loop vectorizer weighs these loads ([`crate::reduce::xla_lanes`]).
fn fused_streams(m: &Module, v: ValueId) -> i64 {
    let Some(shape) = m.tensor_type(v).map(|t| t.shape.clone()) else {
        return 1;
    };
    let mut leaves = std::collections::BTreeSet::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        if !seen.insert(v) || m.tensor_type(v).map(|t| &t.shape) != Some(&shape) {
            continue;
        }
        let producer = match m.value(v).def {
            ValueDef::Result(op, _) => Some(m.op(op)),
            _ => None,
        };
        match producer {
            Some(p) if p.kind.is_elementwise() && p.results.len() == 1 => {
                stack.extend(p.operands.iter().copied());
            }
            Some(p) if matches!(p.kind, OpKind::BroadcastInDim | OpKind::Constant) => {}
            _ => {
                leaves.insert(v);
            }
        }
    }
    leaves.len().max(1) as i64
}

/// Output shape and `[lo, hi]` padding per dimension of a window with `SAME` padding
/// (XLA's `MakePadding`: `ceil(n / stride)` outputs, the missing extent split evenly,
/// the odd element high).
fn same_padding(shape: &[i64], win: &[i64]) -> (Vec<i64>, Vec<i64>) {
    let mut out = Vec::with_capacity(shape.len());
    let mut pad = Vec::with_capacity(2 * shape.len());
    for (&n, &w) in shape.iter().zip(win) {
        let o = (n + w - 1) / w;
        let need = ((o - 1) * w + w - n).max(0);
        out.push(o);
        pad.extend([need / 2, need - need / 2]);
    }
    (out, pad)
}

/// A `reduce_window` of `operands` (input, init) of element type `elem` with body
/// `kind`, window and strides `win_stride`, detached.
fn reduce_window(
    m: &mut Module,
    operands: [ValueId; 2],
    out: &[i64],
    (win, stride): (&[i64], &[i64]),
    pad: Vec<i64>,
    (elem, kind): (ElemType, OpKind),
) -> OpId {
    let i64t = ElemType::Int(64);
    let mut attrs = NamedAttrs::new();
    attrs.set("window_dimensions", Attr::IntArray(i64t, win.to_vec()));
    attrs.set("window_strides", Attr::IntArray(i64t, stride.to_vec()));
    attrs.set("padding", Attr::IntArray(i64t, pad));
    let ty = m.types.tensor(elem, out);
    let rw = m.create_op(OpKind::ReduceWindow, operands.to_vec(), &[ty], attrs);
    let scalar = m.types.tensor(elem, &[]);
    neuronc_ir::build::binary_body(m, rw, scalar, kind);
    rw
}

/// Inlining stops after this many rounds (only recursive programs get there; their
/// remaining calls are simply run as calls).
const MAX_INLINE_ROUNDS: usize = 16;

/// The body of the function a `func.call` / `stablehlo.composite` op runs, if defined.
fn callee_body(m: &Module, op: OpId) -> Option<RegionId> {
    let o = m.op(op);
    let attr = match o.kind {
        OpKind::Call => "callee",
        OpKind::Composite => "decomposition",
        _ => return None,
    };
    let Some(Attr::Symbol(name)) = o.attrs.get(attr) else {
        return None;
    };
    let f = m.func(name)?;
    let ok = !m.is_declaration(f) && m.region(f.body).args.len() == o.operands.len();
    ok.then_some(f.body)
}

/// Inlines every call and composite, as XLA's `CallInliner` does before
/// `FloatNormalization`, so that a bf16 op and the convert reading it meet in one region.
fn inline_calls(m: &mut Module) {
    for _ in 0..MAX_INLINE_ROUNDS {
        let mut calls = Vec::new();
        m.walk_ops(|op| {
            if callee_body(m, op).is_some() && m.op(op).parent.is_some() {
                calls.push(op);
            }
        });
        if calls.is_empty() {
            return;
        }
        for c in calls {
            inline_one(m, c);
        }
    }
}

/// Replaces call op `c` by a copy of its callee's body.
fn inline_one(m: &mut Module, c: OpId) {
    let (Some(body), Some(region)) = (callee_body(m, c), m.op(c).parent) else {
        return;
    };
    let call = m.op(c).clone();
    let mut map: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    for (&a, &v) in m.region(body).args.iter().zip(&call.operands) {
        map.insert(a, v);
    }
    let body_ops = m.region(body).ops.clone();
    let Some((&ret, inner)) = body_ops.split_last() else {
        return;
    };
    let copies: Vec<OpId> = inner.iter().map(|&o| clone_op(m, o, &mut map)).collect();
    let rets: Vec<ValueId> = m
        .op(ret)
        .operands
        .iter()
        .map(|v| map.get(v).copied().unwrap_or(*v))
        .collect();
    for (&r, &v) in call.results.iter().zip(&rets) {
        m.replace_all_uses(r, v);
    }
    let ops = &mut m.region_mut(region).ops;
    if let Some(pos) = ops.iter().position(|&o| o == c) {
        ops.splice(pos..=pos, copies.iter().copied());
    }
    for &o in &copies {
        m.op_mut(o).parent = Some(region);
    }
    m.op_mut(c).parent = None;
}
