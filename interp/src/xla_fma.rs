//! XLA:CPU's contraction of `a * b + c` into one fused multiply-add, for the interpreter's
//! `xla` float semantics only: [`contract`] rewrites the contracted adds and subtracts into
//! the interpreter-only custom call [`TARGET`], which [`exec`] evaluates.
//!
//! # What XLA:CPU computes
//! XLA:CPU compiles every kernel with LLVM's `AllowFPOpFusion = Fast`, so the x86 backend
//! (this host has FMA3) turns an `fadd`/`fsub` of an `fmul` into one `vfmadd`-family
//! instruction, rounding once, when the `fmul` has no other use and sits in the same basic
//! block. No `fmuladd` or `contract` flag is in XLA's LLVM IR; the contraction happens in
//! instruction selection (the `.o` files XLA dumps with `--xla_dump_to` hold the `vfmadd`s).
//! Facts checked on jaxlib 0.10.2's XLA:CPU with `tools/xla_run.py`, 2048 uniform inputs
//! in [-1, 1) per case (436 of 2048 f32 `a*b + c` differ between the fused and the
//! separately rounded result):
//! * f32 `a*b + c`, `c + a*b`, `a*b - c`, `c - a*b`, `negate(a*b) + c`, `a*0.1 + c` and
//!   `a*b + c*d` (the first operand's product is fused) equal the correctly rounded
//!   `fma` on every input; so does f64 `a*b + c`.
//! * f16 and bf16 `a*b + c` equal the separately rounded result (the f32 product is
//!   rounded to the element type before the add), and so does an f32 product converted to
//!   f64 before an f64 add.
//! * The multiply is fused only when XLA duplicates it into the add's fusion and it has one
//!   use there: a product that is also a function result is materialized once and read
//!   rounded (`add(m, c)` with `m` returned: separate); a product used by two element-wise
//!   ops that end in different fusions is duplicated and fused in both (`m + c` and
//!   `m * d` returned: fused); a product used twice inside one fused expression is not
//!   fused at all (`(m + c) + m`: separate).
//! * A product broadcast into a larger shape before the add is not fused
//!   (`broadcast(a*b : 64) : 64x64 + c`): LLVM hoists the loop-invariant `fmul` out of the
//!   loop, into another block. A reshape (XLA's bitcast), a slice, a pad with zero or a
//!   concatenate in between does not stop it (256 or 4..1024 elements: all fused); a
//!   `select` or a `reverse` does (1811 and 1609 of 2048 equal the fma).
//! * A reduce-sum of a fused product is a sequential chain `acc = fma(x_i, y_i, acc)` from
//!   the init value when it has one to three results: 30 random cases of each summed
//!   length 2..32 with one and with three results, all equal. With more results LLVM may
//!   vectorize across them and then rounds the products first: 64 results of 6 or 8
//!   summed elements, 4, 8, 16, 32 or 128 results of 6 elements are separately rounded
//!   sums, 64 results of other lengths and 5 or 9 results are chains. A rank-1 `dot` of 3
//!   to 17 elements is the chain from zero (XLA's simplifier turns it into
//!   `reduce(multiply)`; 200 random pairs of 5 and of 8 elements, all equal). Longer sums
//!   are split by XLA's tree-reduction rewriter (33 elements: not a chain).
//!
//! Not modelled: concatenates between product and add; sums of products with more than
//! three results (the interpreter keeps its f64 sum, [`crate::region::Accum::Wide`]);
//! LLVM's own algebra in small fully unrolled kernels, which can fuse a product XLA's HLO
//! adds through a pad to a sum of two negated products, `-(t*k) + -(p*q)` computed as
//! `fma(t, -k, -(p*q))` (jax's gradient of a Rosenbrock sum, 5 elements); cases where
//! XLA's fusion heuristics keep a product out of its consumer's fusion for reasons other
//! than the users listed in [`fusible`].
//!
//! # The rewrite
//! An f32/f64 `add` or `subtract` whose operand (the first one that qualifies) is a
//! `multiply` of its element type, reached through single-use `negate`, `reshape`,
//! `slice`, zero-`pad` and same-type `convert` ops in the same region, becomes
//! `custom_call @neuronc.xla_fma(a', b', c)` with `neg_product` / `neg_addend` flags, when
//! every user of the product is an op XLA fuses element-wise producers into and no other
//! user of the product is connected to the add by a fusible def-use path (so would share
//! its fusion); `a'`, `b'` are the multiply's operands passed through copies of the
//! reshapes, slices and pads (zero padding gives `fma(0, 0, c) = c`). An f32/f64
//! reduce-sum of such a product over one dimension of at most 32 elements (other reduced
//! dimensions of size 1) with at most three results, and a rank-1 dot of at most 32
//! elements, become the chain of `neuronc.xla_fma` calls on slices of `a'` and `b'`, the
//! last one in place of the reduce or dot.
//!
//! Invariants: the input module is never modified and is borrowed when nothing matches;
//! a rewritten op keeps its id and result; new ops are placed immediately before the op
//! they were made for (SSA-valid); the product and the ops between it and the add stay in
//! place for their other users (or are dead); the output is deterministic.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use neuronc_ir::{Attr, DenseData, ElemType, Module, NamedAttrs, OpId, OpKind, TypeId, ValueId};

use crate::dispatch::Ctx;
use crate::eval::{Res, Val};
use crate::region::{classify, Body};
use crate::tensor::{Data, Tensor};
use crate::xla_simplify::single_def;

/// The interpreter-only custom call computing `(±a) * b + (±c)` rounded once.
pub(crate) const TARGET: &str = "neuronc.xla_fma";
const NEG_PRODUCT: &str = "neg_product";
const NEG_ADDEND: &str = "neg_addend";
/// How many def-use hops [`product_of`] and [`connected`] follow.
const MAX_HOPS: usize = 8;

/// One add/subtract to contract.
struct Site {
    op: OpId,
    a: ValueId,
    b: ValueId,
    c: ValueId,
    neg_product: bool,
    neg_addend: bool,
    /// Reshapes, slices and pads between the product and the add, re-applied to `a`, `b`.
    shape_ops: Vec<OpId>,
}

/// `module` with XLA:CPU's fused multiply-adds made explicit (see the module docs).
pub(crate) fn contract(module: &Module) -> Cow<'_, Module> {
    let sites = find_sites(module);
    let chains = find_chains(module);
    if sites.is_empty() && chains.is_empty() {
        return Cow::Borrowed(module);
    }
    let mut m = module.clone();
    let mut before: BTreeMap<OpId, Vec<OpId>> = BTreeMap::new();
    for c in &chains {
        before.insert(c.op, expand_chain(&mut m, c));
    }
    for s in &sites {
        let mut new_ops = Vec::new();
        let a = reapply(&mut m, &s.shape_ops, s.a, &mut new_ops);
        let b = reapply(&mut m, &s.shape_ops, s.b, &mut new_ops);
        before.insert(s.op, new_ops);
        let op = m.op_mut(s.op);
        op.kind = OpKind::CustomCall;
        op.operands = vec![a, b, s.c];
        op.attrs = fma_attrs(s.neg_product, s.neg_addend);
    }
    crate::excess_precision::splice_all(&mut m, &before);
    Cow::Owned(m)
}

/// Every user op of every value, one entry per operand slot.
fn users(m: &Module) -> HashMap<ValueId, Vec<OpId>> {
    let mut u: HashMap<ValueId, Vec<OpId>> = HashMap::new();
    m.walk_ops(|id| {
        for &v in &m.op(id).operands {
            u.entry(v).or_default().push(id);
        }
    });
    u
}

fn find_sites(m: &Module) -> Vec<Site> {
    let users = users(m);
    let mut sites = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        let sub = match op.kind {
            OpKind::Add => false,
            OpKind::Subtract => true,
            _ => return,
        };
        if op.operands.len() != 2 || op.results.len() != 1 || op.parent.is_none() {
            return;
        }
        let Some(elem) = m.tensor_type(op.results[0]).map(|t| t.elem) else {
            return;
        };
        if !matches!(elem, ElemType::F32 | ElemType::F64) {
            return;
        }
        for i in 0..2 {
            let Some(p) = product_of(m, id, op.operands[i], elem, &users) else {
                continue;
            };
            let (a, b) = (m.op(p.mul).operands[0], m.op(p.mul).operands[1]);
            // add: p + c; subtract: p - c (i = 0) or c - p (i = 1).
            sites.push(Site {
                op: id,
                a,
                b,
                c: op.operands[1 - i],
                neg_product: p.negated != (sub && i == 1),
                neg_addend: sub && i == 0,
                shape_ops: p.shape_ops,
            });
            return;
        }
    });
    sites
}

/// A product XLA fuses into an add: the `multiply`, whether an odd number of negates
/// lies between, and the `reshape` / `slice` / `pad` ops between (from the multiply out).
struct Product {
    mul: OpId,
    negated: bool,
    shape_ops: Vec<OpId>,
}

/// The product that `v` (an operand of `add`) is, through single-use negates, reshapes,
/// slices, pads with zero and identity converts; None when XLA would not fuse it into
/// `add` (see the module docs).
fn product_of(
    m: &Module,
    add: OpId,
    v: ValueId,
    elem: ElemType,
    users: &HashMap<ValueId, Vec<OpId>>,
) -> Option<Product> {
    let region = m.op(add).parent;
    let (mut v, mut negated, mut first_user) = (v, false, add);
    let mut shape_ops = Vec::new();
    for _ in 0..MAX_HOPS {
        let def = single_def(m, v)?;
        let d = m.op(def);
        if d.parent != region || d.operands.is_empty() {
            return None;
        }
        if m.tensor_type(d.operands[0]).map(|t| t.elem) != Some(elem) {
            return None;
        }
        let unary = d.operands.len() == 1;
        match d.kind {
            OpKind::Multiply if d.operands.len() == 2 => {
                shape_ops.reverse();
                return product_fuses(m, v, first_user, add, users).then_some(Product {
                    mul: def,
                    negated,
                    shape_ops,
                });
            }
            OpKind::Negate | OpKind::Convert if unary => {}
            OpKind::Reshape | OpKind::Slice if unary => shape_ops.push(def),
            OpKind::Pad if d.operands.len() == 2 && is_zero(m, d.operands[1]) => {
                shape_ops.push(def)
            }
            _ => return None,
        }
        if users.get(&v).map_or(0, Vec::len) != 1 {
            return None;
        }
        negated ^= d.kind == OpKind::Negate;
        first_user = def;
        v = d.operands[0];
    }
    None
}

/// Whether `v` is a constant of all-zero bytes (+0).
fn is_zero(m: &Module, v: ValueId) -> bool {
    let Some(c) = single_def(m, v).filter(|&c| m.op(c).kind == OpKind::Constant) else {
        return false;
    };
    match m.op(c).attrs.get("value") {
        Some(Attr::Elements(d)) => match &d.data {
            DenseData::Splat(b) => b.iter().all(|&x| x == 0),
            DenseData::Full(b) => b.iter().all(|&x| x == 0),
        },
        _ => false,
    }
}

/// Copies of `shape_ops` applied to `x` in order (pads pad with their zero), placed in
/// `new_ops`; the last copy's result (`x` when there are none).
fn reapply(m: &mut Module, shape_ops: &[OpId], x: ValueId, new_ops: &mut Vec<OpId>) -> ValueId {
    let mut x = x;
    for &s in shape_ops {
        let op = m.op(s).clone();
        let mut operands = op.operands.clone();
        operands[0] = x;
        let ty = m.value_type(op.results[0]);
        let c = m.create_op(op.kind, operands, &[ty], op.attrs.clone());
        new_ops.push(c);
        x = m.op(c).results[0];
    }
    x
}

/// Whether product `p`, read by `first_user` on its way to `add`, is duplicated into the
/// add's fusion with that one use: every user fuses producers, and no other user is
/// connected to `add`.
fn product_fuses(
    m: &Module,
    p: ValueId,
    first_user: OpId,
    add: OpId,
    users: &HashMap<ValueId, Vec<OpId>>,
) -> bool {
    let Some(us) = users.get(&p) else {
        return false;
    };
    if us.iter().filter(|&&u| u == first_user).count() != 1 {
        return false;
    }
    us.iter().all(|&u| fusible(m.op(u).kind))
        && us
            .iter()
            .filter(|&&u| u != first_user)
            .all(|&u| !connected(m, u, add, users) && !connected(m, add, u, users))
}

/// Ops XLA:CPU fuses element-wise producers into (a product with any other user, such as
/// a function or loop result, a dot or a custom call, is materialized once).
fn fusible(kind: OpKind) -> bool {
    kind.is_elementwise()
        || matches!(
            kind,
            OpKind::BroadcastInDim
                | OpKind::Reshape
                | OpKind::Transpose
                | OpKind::Slice
                | OpKind::DynamicSlice
                | OpKind::DynamicUpdateSlice
                | OpKind::Pad
                | OpKind::Concatenate
                | OpKind::Reverse
                | OpKind::Reduce
        )
}

/// Ops a loop fusion passes values through (def-use paths [`connected`] follows).
fn fuses_through(kind: OpKind) -> bool {
    fusible(kind) && kind != OpKind::Reduce
}

/// Whether `to` is reachable from `from` over at most [`MAX_HOPS`] def-use edges through
/// ops a loop fusion passes values through.
fn connected(m: &Module, from: OpId, to: OpId, users: &HashMap<ValueId, Vec<OpId>>) -> bool {
    let mut frontier = vec![from];
    let mut seen = vec![from];
    for _ in 0..MAX_HOPS {
        let mut next = Vec::new();
        for &o in &frontier {
            for r in &m.op(o).results {
                for &u in users.get(r).map_or(&[][..], Vec::as_slice) {
                    if u == to {
                        return true;
                    }
                    if fuses_through(m.op(u).kind) && !seen.contains(&u) {
                        seen.push(u);
                        next.push(u);
                    }
                }
            }
        }
        if next.is_empty() || seen.len() > 256 {
            return false;
        }
        frontier = next;
    }
    false
}

/// Longest reduced extent XLA:CPU sums in one sequential loop (its tree-reduction
/// rewriter splits longer ones into `reduce_window`s, not modelled here).
const MAX_CHAIN: i64 = 32;

/// Most results a reduce may have for its chains to be fused: with more kept elements
/// LLVM may vectorize across them and fuse or not depending on its cost model.
const MAX_KEPT: u64 = 3;

/// A reduce-sum of a product, or a vector dot product, that XLA:CPU computes as a
/// sequential chain of fused multiply-adds over dimension `dim` (`n` elements) of `a` and
/// `b` (both of shape `shape`), starting from `init` (None: zero).
struct Chain {
    op: OpId,
    a: ValueId,
    b: ValueId,
    init: Option<ValueId>,
    neg_product: bool,
    /// Reshapes, slices and pads between the product and the reduce.
    shape_ops: Vec<OpId>,
    shape: Vec<i64>,
    dim: usize,
}

/// Every f32/f64 reduce-sum of a fusible product and every rank-1 dot product whose summed
/// extent is one dimension of at most [`MAX_CHAIN`] elements (other reduced dimensions
/// have size 1).
fn find_chains(m: &Module) -> Vec<Chain> {
    let users = users(m);
    let mut chains = Vec::new();
    m.walk_ops(|id| {
        let op = m.op(id);
        if op.results.len() != 1 || op.parent.is_none() {
            return;
        }
        let elem = m.tensor_type(op.results[0]).map(|t| t.elem);
        if !matches!(elem, Some(ElemType::F32 | ElemType::F64)) {
            return;
        }
        let found = match op.kind {
            OpKind::Reduce => reduce_chain(m, id, &users),
            OpKind::DotGeneral => dot_chain(m, id),
            _ => None,
        };
        chains.extend(found);
    });
    chains
}

/// The single reduced dimension of `shape` with more than one element (None when there
/// are several, or it is longer than [`MAX_CHAIN`]); dimension `dims[0]` when all are 1.
fn chain_dim(shape: &[i64], dims: &[i64]) -> Option<usize> {
    let big: Vec<usize> = dims
        .iter()
        .filter_map(|&d| usize::try_from(d).ok())
        .filter(|&d| shape.get(d).is_some_and(|&s| s > 1))
        .collect();
    let dim = match big.as_slice() {
        [] => usize::try_from(*dims.first()?).ok()?,
        [d] => *d,
        _ => return None,
    };
    (*shape.get(dim)? <= MAX_CHAIN).then_some(dim)
}

fn reduce_chain(m: &Module, id: OpId, users: &HashMap<ValueId, Vec<OpId>>) -> Option<Chain> {
    let op = m.op(id);
    if op.operands.len() != 2 || classify(m, *op.regions.first()?) != Body::Bin(OpKind::Add) {
        return None;
    }
    let elem = m.tensor_type(op.results[0])?.elem;
    let p = product_of(m, id, op.operands[0], elem, users)?;
    let shape = m.tensor_type(op.operands[0])?.shape.to_vec();
    let mul = m.op(p.mul);
    let kept = m.tensor_type(op.results[0])?.num_elements();
    if kept > MAX_KEPT {
        return None;
    }
    let dim = chain_dim(&shape, &op.attrs.i64_array("dimensions")?)?;
    Some(Chain {
        op: id,
        a: mul.operands[0],
        b: mul.operands[1],
        init: Some(op.operands[1]),
        neg_product: p.negated,
        shape_ops: p.shape_ops,
        shape,
        dim,
    })
}

/// A `dot_general` of two rank-1 operands of one element type contracting their only
/// dimension (XLA's simplifier turns it into `reduce(multiply)`).
fn dot_chain(m: &Module, id: OpId) -> Option<Chain> {
    let op = m.op(id);
    let Some(Attr::DotDims(dd)) = op.attrs.get("dot_dimension_numbers") else {
        return None;
    };
    let (l, r) = (op.operands.first()?, op.operands.get(1)?);
    let (lt, rt) = (m.tensor_type(*l)?, m.tensor_type(*r)?);
    let out = m.tensor_type(op.results[0])?;
    let rank1 = lt.shape.len() == 1 && lt.shape == rt.shape && out.shape.is_empty();
    let plain =
        dd.lhs_batching.is_empty() && dd.lhs_contracting == [0] && dd.rhs_contracting == [0];
    if !rank1 || !plain || lt.elem != out.elem || rt.elem != out.elem {
        return None;
    }
    let shape = lt.shape.to_vec();
    let dim = chain_dim(&shape, &[0])?;
    Some(Chain {
        op: id,
        a: *l,
        b: *r,
        init: None,
        neg_product: false,
        shape_ops: Vec::new(),
        shape,
        dim,
    })
}

/// Rewrites `c.op` into the last fused multiply-add of its chain; returns the new ops to
/// place before it (the start value, then per element the two slices and the fma).
fn expand_chain(m: &mut Module, c: &Chain) -> Vec<OpId> {
    let out_ty = m.value_type(m.op(c.op).results[0]);
    let Some(out) = m.tensor_type(m.op(c.op).results[0]).cloned() else {
        return Vec::new();
    };
    let mut new_ops = Vec::new();
    let a = reapply(m, &c.shape_ops, c.a, &mut new_ops);
    let b = reapply(m, &c.shape_ops, c.b, &mut new_ops);
    let mut acc = match c.init {
        Some(init) => {
            let mut attrs = NamedAttrs::new();
            attrs.set(
                "broadcast_dimensions",
                Attr::IntArray(ElemType::Int(64), Vec::new()),
            );
            let b = m.create_op(OpKind::BroadcastInDim, vec![init], &[out_ty], attrs);
            new_ops.push(b);
            m.op(b).results[0]
        }
        None => {
            let zero = match out.elem {
                ElemType::F64 => 0f64.to_le_bytes().to_vec(),
                _ => 0f32.to_le_bytes().to_vec(),
            };
            let Some(z) = m.create_splat_constant(out_ty, zero) else {
                return Vec::new();
            };
            new_ops.push(z);
            m.op(z).results[0]
        }
    };
    let n = c.shape[c.dim];
    let mut slice_shape = c.shape.clone();
    slice_shape[c.dim] = 1;
    let slice_ty = m.types.tensor(out.elem, &slice_shape);
    for i in 0..n {
        let sa = slice(m, a, slice_ty, &c.shape, c.dim, i);
        let sb = slice(m, b, slice_ty, &c.shape, c.dim, i);
        new_ops.extend([sa, sb]);
        let operands = vec![m.op(sa).results[0], m.op(sb).results[0], acc];
        if i + 1 == n {
            let op = m.op_mut(c.op);
            op.kind = OpKind::CustomCall;
            op.operands = operands;
            op.regions.clear();
            op.attrs = fma_attrs(c.neg_product, false);
        } else {
            let f = m.create_op(
                OpKind::CustomCall,
                operands,
                &[out_ty],
                fma_attrs(c.neg_product, false),
            );
            new_ops.push(f);
            acc = m.op(f).results[0];
        }
    }
    new_ops
}

/// The attributes of a [`TARGET`] call.
fn fma_attrs(neg_product: bool, neg_addend: bool) -> NamedAttrs {
    let mut attrs = NamedAttrs::new();
    attrs.set("call_target_name", Attr::Str(TARGET.to_string()));
    attrs.set(NEG_PRODUCT, Attr::Bool(neg_product));
    attrs.set(NEG_ADDEND, Attr::Bool(neg_addend));
    attrs
}

/// `slice(v)[.., i:i+1 at dim, ..]` of type `ty`, not yet placed.
fn slice(m: &mut Module, v: ValueId, ty: TypeId, shape: &[i64], dim: usize, i: i64) -> OpId {
    let i64s = |v: Vec<i64>| Attr::IntArray(ElemType::Int(64), v);
    let mut start = vec![0; shape.len()];
    start[dim] = i;
    let mut limit = shape.to_vec();
    limit[dim] = i + 1;
    let mut attrs = NamedAttrs::new();
    attrs.set("start_indices", i64s(start));
    attrs.set("limit_indices", i64s(limit));
    attrs.set("strides", i64s(vec![1; shape.len()]));
    m.create_op(OpKind::Slice, vec![v], &[ty], attrs)
}

/// Evaluates [`TARGET`]: `(±a) * b + (±c)` element-wise, rounded once (f32 or f64).
pub(crate) fn exec(cx: &Ctx<'_>, ins: &[Tensor]) -> Res<Vec<Val>> {
    let [a, b, c] = ins else {
        return Err(cx.err(format!("@{TARGET}: expected 3 operands")));
    };
    let sp = cx.attrs().bool(NEG_PRODUCT).unwrap_or(false);
    let sc = cx.attrs().bool(NEG_ADDEND).unwrap_or(false);
    let out = cx.out(0)?;
    let data = match (a.data(), b.data(), c.data()) {
        (Data::F32(a), Data::F32(b), Data::F32(c)) if a.len() == b.len() && b.len() == c.len() => {
            let f = |(x, (y, z)): (&f32, (&f32, &f32))| {
                let x = if sp { -*x } else { *x };
                x.mul_add(*y, if sc { -*z } else { *z })
            };
            Data::F32(a.iter().zip(b.iter().zip(c)).map(f).collect())
        }
        (Data::F64(a), Data::F64(b), Data::F64(c)) if a.len() == b.len() && b.len() == c.len() => {
            let f = |(x, (y, z)): (&f64, (&f64, &f64))| {
                let x = if sp { -*x } else { *x };
                x.mul_add(*y, if sc { -*z } else { *z })
            };
            Data::F64(a.iter().zip(b.iter().zip(c)).map(f).collect())
        }
        _ => {
            return Err(cx.err(format!(
                "@{TARGET}: operands must be f32 or f64 of one size"
            )))
        }
    };
    Ok(vec![Val::T(cx.wrap(Tensor::new(out.clone(), data))?)])
}
