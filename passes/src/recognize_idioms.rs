//! `recognize-idioms`: finds erf-based GELU and softmax subgraphs and replaces each by one
//! named op.
//!
//! Textual form (documented choice): a recognised idiom is a
//! `stablehlo.composite "neuronc.gelu"` / `"neuronc.softmax"` whose `decomposition` is a
//! private function holding the original ops, e.g.
//! `%1 = stablehlo.composite "neuronc.softmax" %0 {composite_attributes = {dimensions =
//! array<i64: 3>}, decomposition = @neuronc.softmax_0} : (tensor<..>) -> tensor<..>`.
//! It is plain StableHLO: it prints, re-parses and runs in the interpreter (which calls the
//! decomposition), and a backend may map the name to a dedicated kernel.
//!
//! Patterns (`c ≈ k`: a splat constant, possibly broadcast, within 1% of `k`; `erf` is
//! `chlo.erf` or `custom_call @mhlo.erf`; `F = erf(x * c≈1/√2 | x / c≈√2) + c≈1`):
//! * `gelu`: `(x * c≈0.5) * F` (torch), `(x * F) / c≈2` (jax), `(x * F) * c≈0.5`.
//! * `softmax`: `e / bcast(reduce_add(e, D))` with `e = exp(x - bcast(reduce_max(x, D)))`.
//!
//! Invariants: only ops whose results are used solely inside the match are absorbed; the
//! decomposition is a copy of exactly the matched ops (plus the constants they read), so
//! semantics are unchanged by construction; each match is one rewrite (`gelu`/`softmax`).

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{
    add_private_func, clone_op, def_op, elem_as_f64, make_composite, splat_of, use_counts,
};
use crate::pass::Pass;
use neuronc_ir::{Attr, ElemType, Module, NamedAttrs, OpId, OpKind, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// The `recognize-idioms` pass.
pub struct RecognizeIdioms;

/// One recognised subgraph.
struct Match {
    rule: &'static str,
    x: ValueId,
    /// Every absorbed op (root included).
    ops: Vec<OpId>,
    attrs: NamedAttrs,
}

impl Pass for RecognizeIdioms {
    fn name(&self) -> &'static str {
        "recognize-idioms"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut roots = Vec::new();
        module.walk_ops(|op| {
            if matches!(module.op(op).kind, OpKind::Multiply | OpKind::Divide) {
                roots.push(op);
            }
        });
        let mut changed = false;
        for root in roots {
            if module.op(root).parent.is_none() {
                continue;
            }
            let uses = use_counts(module);
            let Some(found) = match_gelu(module, root)
                .or_else(|| match_softmax(module, root))
                .filter(|mt| absorbable(module, mt, &uses))
            else {
                continue;
            };
            if !ctx.try_rewrite(found.rule, module, root) {
                break;
            }
            if outline(module, root, &found) {
                changed = true;
            }
        }
        if changed {
            // The constants the matches read now live in the decompositions too.
            crate::dce::remove_dead_ops(module, None);
        }
        Ok(Changed::from_bool(changed))
    }
}

fn splat_near(m: &Module, v: ValueId, k: f64) -> bool {
    splat_of(m, v)
        .and_then(|(e, b)| elem_as_f64(e, &b))
        .is_some_and(|x| (x - k).abs() <= 0.01 * k.abs())
}

fn def_kind(m: &Module, v: ValueId, kind: OpKind) -> Option<OpId> {
    def_op(m, v).filter(|&o| m.op(o).kind == kind)
}

/// For a commutative binary op: `(other operand, op)` where one operand is a splat ≈ `k`.
fn with_splat(m: &Module, v: ValueId, kind: OpKind, k: f64) -> Option<(ValueId, OpId)> {
    let op = def_kind(m, v, kind)?;
    let o = &m.op(op).operands;
    if splat_near(m, o[1], k) {
        return Some((o[0], op));
    }
    (kind.is_commutative() && splat_near(m, o[0], k)).then_some((o[1], op))
}

fn is_erf(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    match o.kind {
        OpKind::ChloErf => true,
        OpKind::CustomCall => {
            o.operands.len() == 1
                && o.results.len() == 1
                && matches!(o.attrs.get("call_target_name"), Some(Attr::Str(s)) if s == "mhlo.erf")
        }
        _ => false,
    }
}

/// `F = erf(x * 1/√2 | x / √2) + 1`: returns `x` and the ops of `F`.
fn erf_plus_one(m: &Module, f: ValueId) -> Option<(ValueId, Vec<OpId>)> {
    let (e, add) = with_splat(m, f, OpKind::Add, 1.0)?;
    let erf = def_op(m, e).filter(|&o| is_erf(m, o))?;
    let b = m.op(erf).operands[0];
    let (x, scale) = with_splat(m, b, OpKind::Multiply, std::f64::consts::FRAC_1_SQRT_2)
        .or_else(|| with_splat(m, b, OpKind::Divide, std::f64::consts::SQRT_2))?;
    Some((x, vec![scale, erf, add]))
}

fn match_gelu(m: &Module, root: OpId) -> Option<Match> {
    let o = m.op(root);
    let (a, b) = (o.operands[0], o.operands[1]);
    let found = |x, mut ops: Vec<OpId>| {
        ops.push(root);
        Some(Match {
            rule: "gelu",
            x,
            ops,
            attrs: NamedAttrs::new(),
        })
    };
    if o.kind == OpKind::Multiply {
        // torch: (x * 0.5) * F, either order.
        for (h, f) in [(a, b), (b, a)] {
            if let (Some((x, half)), Some((x2, ops))) =
                (with_splat(m, h, OpKind::Multiply, 0.5), erf_plus_one(m, f))
            {
                if x == x2 {
                    let mut all = ops;
                    all.push(half);
                    return found(x, all);
                }
            }
        }
    }
    // jax: (x * F) / 2, or (x * F) * 0.5.
    let (inner, _) = match o.kind {
        OpKind::Divide => with_splat(m, o.results[0], OpKind::Divide, 2.0)?,
        _ => with_splat(m, o.results[0], OpKind::Multiply, 0.5)?,
    };
    let mul = def_kind(m, inner, OpKind::Multiply)?;
    let mo = &m.op(mul).operands;
    for (x, f) in [(mo[0], mo[1]), (mo[1], mo[0])] {
        if let Some((x2, mut ops)) = erf_plus_one(m, f) {
            if x == x2 {
                ops.push(mul);
                return found(x, ops);
            }
        }
    }
    None
}

/// `reduce(v, init) applies <kind> across dims`, returning (operand, dims, op).
fn reduction(m: &Module, v: ValueId, body_kind: OpKind) -> Option<(ValueId, Vec<i64>, OpId)> {
    let op = def_kind(m, v, OpKind::Reduce)?;
    let o = m.op(op);
    if o.operands.len() != 2 || o.regions.len() != 1 {
        return None;
    }
    let body = m.region(o.regions[0]);
    let first = *body.ops.first()?;
    if body.ops.len() != 2 || m.op(first).kind != body_kind || m.op(first).operands != body.args {
        return None;
    }
    Some((o.operands[0], o.attrs.i64_array("dimensions")?, op))
}

/// `broadcast_in_dim(v)` that restores the dims a reduction over `dims` removed.
fn rebroadcast(m: &Module, v: ValueId, rank: usize, dims: &[i64]) -> Option<(ValueId, OpId)> {
    let op = def_kind(m, v, OpKind::BroadcastInDim)?;
    let bd = m.op(op).attrs.i64_array("broadcast_dimensions")?;
    let kept: Vec<i64> = (0..rank as i64).filter(|d| !dims.contains(d)).collect();
    (bd == kept).then(|| (m.op(op).operands[0], op))
}

fn match_softmax(m: &Module, root: OpId) -> Option<Match> {
    let o = m.op(root);
    if o.kind != OpKind::Divide {
        return None;
    }
    let (e, denom) = (o.operands[0], o.operands[1]);
    let rank = m.tensor_type(e)?.rank();
    let bsum = def_kind(m, denom, OpKind::BroadcastInDim)?;
    let (e2, dims, rsum) = reduction(m, m.op(bsum).operands[0], OpKind::Add)?;
    rebroadcast(m, denom, rank, &dims)?;
    let exp = def_kind(m, e, OpKind::Exponential)?;
    let sub = def_kind(m, m.op(exp).operands[0], OpKind::Subtract)?;
    let (x, bmax_v) = (m.op(sub).operands[0], m.op(sub).operands[1]);
    let (max, bmax) = rebroadcast(m, bmax_v, rank, &dims)?;
    let (x2, dims2, rmax) = reduction(m, max, OpKind::Maximum)?;
    if e2 != e || x2 != x || dims2 != dims {
        return None;
    }
    let mut attrs = NamedAttrs::new();
    attrs.set("dimensions", Attr::IntArray(ElemType::Int(64), dims));
    Some(Match {
        rule: "softmax",
        x,
        ops: vec![rmax, bmax, sub, exp, rsum, bsum, root],
        attrs,
    })
}

/// All absorbed ops live in the root's region and only the root is used outside the match.
/// Whether `v` is a constant, possibly reshaped, broadcast or converted.
fn is_constant_chain(m: &Module, v: ValueId) -> bool {
    match def_op(m, v).map(|op| (op, m.op(op).kind)) {
        Some((_, OpKind::Constant)) => true,
        Some((op, OpKind::BroadcastInDim | OpKind::Reshape | OpKind::Convert)) => {
            is_constant_chain(m, m.op(op).operands[0])
        }
        _ => false,
    }
}

/// All absorbed ops live in the root's region, only the root is used outside the match,
/// and every other value the match reads is `x` or a constant chain.
fn absorbable(m: &Module, mt: &Match, uses: &[u32]) -> bool {
    let set: FxHashSet<OpId> = mt.ops.iter().copied().collect();
    let root = *mt.ops.last().unwrap_or(&OpId(0));
    let parent = m.op(root).parent;
    let mut inside: FxHashMap<ValueId, u32> = FxHashMap::default();
    for &op in &mt.ops {
        if m.op(op).parent != parent {
            return false;
        }
        for &v in &m.op(op).operands {
            *inside.entry(v).or_default() += 1;
        }
    }
    let produced: FxHashSet<ValueId> = mt
        .ops
        .iter()
        .flat_map(|&o| m.op(o).results.iter().copied())
        .collect();
    let reads_ok = inside
        .keys()
        .all(|&v| v == mt.x || produced.contains(&v) || is_constant_chain(m, v));
    reads_ok
        && set.len() == mt.ops.len()
        && mt.ops.iter().filter(|&&op| op != root).all(|&op| {
            m.op(op)
                .results
                .iter()
                .all(|r| inside.get(r).copied().unwrap_or(0) == uses[r.index()])
        })
}

/// Clones the constant chain defining `v` (constant, possibly reshaped/broadcast) into
/// `body`. Returns false if `v` is not such a chain.
fn capture_constant(
    m: &mut Module,
    v: ValueId,
    body: neuronc_ir::RegionId,
    map: &mut FxHashMap<ValueId, ValueId>,
) -> bool {
    if map.contains_key(&v) {
        return true;
    }
    let Some(op) = def_op(m, v) else {
        return false;
    };
    let ok = match m.op(op).kind {
        OpKind::Constant => true,
        OpKind::BroadcastInDim | OpKind::Reshape | OpKind::Convert => {
            let inner = m.op(op).operands[0];
            capture_constant(m, inner, body, map)
        }
        _ => false,
    };
    if ok {
        let c = clone_op(m, op, map);
        m.append_op(body, c);
    }
    ok
}

/// Moves the matched ops into a new private function and puts a composite in their place.
fn outline(m: &mut Module, root: OpId, mt: &Match) -> bool {
    let Some(parent) = m.op(root).parent else {
        return false;
    };
    let position: FxHashMap<OpId, usize> = m
        .region(parent)
        .ops
        .iter()
        .enumerate()
        .map(|(i, &o)| (o, i))
        .collect();
    let mut ops = mt.ops.clone();
    ops.sort_by_key(|o| position.get(o).copied().unwrap_or(usize::MAX));
    let in_match: FxHashSet<ValueId> = ops.iter().flat_map(|&o| m.op(o).results.clone()).collect();
    let body = m.add_region(None);
    let x_ty = m.value_type(mt.x);
    let arg = m.add_region_arg(body, x_ty);
    let mut map = FxHashMap::default();
    map.insert(mt.x, arg);
    for &op in &ops {
        for v in m.op(op).operands.clone() {
            if !in_match.contains(&v) && !capture_constant(m, v, body, &mut map) {
                return false; // excluded by `absorbable`
            }
        }
        let c = clone_op(m, op, &mut map);
        m.append_op(body, c);
    }
    let root_result = m.op(root).results[0];
    let ret_v = map.get(&root_result).copied().unwrap_or(root_result);
    let ret = m.create_op(OpKind::FuncReturn, vec![ret_v], &[], NamedAttrs::new());
    m.append_op(body, ret);
    let name = fresh_name(m, mt.rule);
    let ty = m.value_type(root_result);
    add_private_func(m, name.clone(), body, vec![ty]);
    let rule = format!("neuronc.{}", mt.rule);
    let comp = make_composite(m, &rule, &name, mt.attrs.clone(), vec![mt.x], &[ty]);
    let (loc, span) = (m.op(root).loc, m.op(root).span);
    m.op_mut(comp).loc = loc;
    m.op_mut(comp).span = span;
    let new_v = m.op(comp).results[0];
    let pos = position.get(&root).copied().unwrap_or(0);
    m.insert_op(parent, pos + 1, comp);
    m.replace_all_uses(root_result, new_v);
    let dead: FxHashSet<OpId> = ops.iter().copied().collect();
    m.region_mut(parent).ops.retain(|o| !dead.contains(o));
    for op in ops {
        m.op_mut(op).parent = None;
    }
    true
}

fn fresh_name(m: &Module, rule: &str) -> String {
    (0..)
        .map(|i| format!("neuronc.{rule}_{i}"))
        .find(|n| m.func(n).is_none())
        .unwrap_or_default()
}
