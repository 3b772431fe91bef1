//! `cse`: common subexpression elimination by hash-consing.
//!
//! Two pure ops are merged when they have the same kind, the same operands (in any order
//! for commutative kinds), identical attributes (floats compared by bits) and the same
//! result types; ops with regions additionally need structurally identical regions (same
//! ops, attributes and types, operands corresponding one to one). The later op's results
//! are replaced by the earlier op's. Scoping follows dominance: an op inside a region may
//! reuse an equal op of an enclosing region, never one of a sibling region.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{attrs_identical, is_pure};
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, NamedAttrs, OpId, RegionId, ValueId};
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};

/// The `cse` pass.
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut state = State {
            scopes: Vec::new(),
            remap: FxHashMap::default(),
            merged: 0,
        };
        let bodies: Vec<RegionId> = module.funcs.iter().map(|f| f.body).collect();
        for body in bodies {
            state.region(module, body, ctx);
        }
        Ok(Changed::from_bool(state.merged > 0))
    }
}

struct State {
    /// Innermost scope last: hash → ops with that hash (almost always one: inline).
    scopes: Vec<FxHashMap<u64, SmallVec<[OpId; 1]>>>,
    /// Results of merged ops → the results they were merged into.
    remap: FxHashMap<ValueId, ValueId>,
    merged: usize,
}

impl State {
    fn region(&mut self, m: &mut Module, region: RegionId, ctx: &mut PassContext) {
        let ops = m.region(region).ops.clone();
        self.scopes.push(FxHashMap::with_capacity_and_hasher(
            ops.len(),
            Default::default(),
        ));
        let mut kept = Vec::with_capacity(ops.len());
        for op in ops {
            self.remap_operands(m, op);
            for r in m.op(op).regions.clone() {
                self.region(m, r, ctx);
            }
            if !is_pure(m, op) {
                kept.push(op);
                continue;
            }
            let key = op_hash(m, op);
            match self.find_equal(m, op, key) {
                Some(earlier) if ctx.try_rewrite("cse", m, op) => {
                    let pairs: Vec<_> = m
                        .op(op)
                        .results
                        .iter()
                        .copied()
                        .zip(m.op(earlier).results.iter().copied())
                        .collect();
                    self.remap.extend(pairs);
                    m.op_mut(op).parent = None;
                    self.merged += 1;
                }
                Some(_) => kept.push(op),
                None => {
                    kept.push(op);
                    if let Some(s) = self.scopes.last_mut() {
                        s.entry(key).or_default().push(op);
                    }
                }
            }
        }
        m.region_mut(region).ops = kept;
        self.scopes.pop();
    }

    fn remap_operands(&self, m: &mut Module, op: OpId) {
        if self.remap.is_empty() {
            return;
        }
        for v in &mut m.op_mut(op).operands {
            if let Some(&to) = self.remap.get(v) {
                *v = to;
            }
        }
    }

    fn find_equal(&self, m: &Module, op: OpId, key: u64) -> Option<OpId> {
        self.scopes
            .iter()
            .rev()
            .filter_map(|s| s.get(&key))
            .flatten()
            .copied()
            .find(|&cand| ops_equivalent(m, cand, op, &mut FxHashMap::default()))
    }
}

/// Operands in canonical order: sorted for commutative kinds.
fn canonical_operands(m: &Module, op: OpId) -> Vec<ValueId> {
    let o = m.op(op);
    let mut v = o.operands.clone();
    if o.kind.is_commutative() {
        v.sort();
    }
    v
}

/// `canonical_operands(a) == canonical_operands(b)`, without allocating in the common
/// cases (non-commutative, or two operands).
fn same_canonical_operands(m: &Module, a: OpId, b: OpId) -> bool {
    let (oa, ob) = (m.op(a), m.op(b));
    if !oa.kind.is_commutative() {
        return oa.operands == ob.operands;
    }
    match (oa.operands.as_slice(), ob.operands.as_slice()) {
        ([x0, x1], [y0, y1]) => (x0.min(x1), x0.max(x1)) == (y0.min(y1), y0.max(y1)),
        _ => canonical_operands(m, a) == canonical_operands(m, b),
    }
}

fn op_hash(m: &Module, op: OpId) -> u64 {
    let o = m.op(op);
    let mut h = FxHasher::default();
    o.kind.hash(&mut h);
    if o.kind.is_commutative() && o.operands.len() == 2 {
        let (a, b) = (o.operands[0], o.operands[1]);
        (a.min(b), a.max(b)).hash(&mut h);
    } else if o.kind.is_commutative() {
        canonical_operands(m, op).hash(&mut h);
    } else {
        o.operands.hash(&mut h);
    }
    for r in &o.results {
        m.value_type(*r).hash(&mut h);
    }
    hash_attrs(&o.attrs, &mut h);
    o.regions.len().hash(&mut h);
    for &r in &o.regions {
        for &inner in &m.region(r).ops {
            m.op(inner).kind.hash(&mut h);
        }
    }
    h.finish()
}

fn hash_attrs(attrs: &NamedAttrs, h: &mut FxHasher) {
    for (name, a) in attrs.iter() {
        name.hash(h);
        hash_attr(a, h);
    }
}

/// Hashes enough of an attribute to spread buckets; equality is decided by
/// [`attrs_identical`].
fn hash_attr(a: &Attr, h: &mut FxHasher) {
    std::mem::discriminant(a).hash(h);
    match a {
        Attr::Int(v, _) => v.hash(h),
        Attr::Float(v, _) => v.to_bits().hash(h),
        Attr::Str(s) | Attr::Symbol(s) | Attr::Opaque(s) => s.hash(h),
        Attr::IntArray(_, v) => v.hash(h),
        Attr::Array(items) => items.iter().for_each(|i| hash_attr(i, h)),
        Attr::Dict(d) => hash_attrs(d, h),
        Attr::Enum(e) => e.value.hash(h),
        Attr::Elements(e) => {
            e.ty.hash(h);
            // Zero-element constants (`tensor<2x0xf32>`) have no element to sample.
            if e.len > 0 {
                e.element_bytes(0).hash(h);
            }
            if e.len > 1 {
                e.element_bytes(e.len - 1).hash(h);
            }
        }
        _ => {}
    }
}

/// Whether `b` computes the same as `a`; `local` maps values defined inside `a`'s regions to
/// their counterparts in `b`'s.
fn ops_equivalent(m: &Module, a: OpId, b: OpId, local: &mut FxHashMap<ValueId, ValueId>) -> bool {
    let (oa, ob) = (m.op(a), m.op(b));
    if oa.kind != ob.kind
        || oa.results.len() != ob.results.len()
        || oa.regions.len() != ob.regions.len()
        || !oa
            .results
            .iter()
            .zip(&ob.results)
            .all(|(x, y)| m.value_type(*x) == m.value_type(*y))
        || !attrs_identical(&oa.attrs, &ob.attrs)
    {
        return false;
    }
    let same = |x: &ValueId, y: &ValueId| local.get(x).map_or(x == y, |z| z == y);
    let operands_match = if local.is_empty() {
        same_canonical_operands(m, a, b)
    } else {
        oa.operands.len() == ob.operands.len()
            && oa
                .operands
                .iter()
                .zip(&ob.operands)
                .all(|(x, y)| same(x, y))
    };
    if !operands_match {
        return false;
    }
    for (ra, rb) in oa.regions.iter().zip(&ob.regions) {
        if !regions_equivalent(m, *ra, *rb, local) {
            return false;
        }
    }
    for (x, y) in oa.results.iter().zip(&ob.results) {
        local.insert(*x, *y);
    }
    true
}

fn regions_equivalent(
    m: &Module,
    ra: RegionId,
    rb: RegionId,
    local: &mut FxHashMap<ValueId, ValueId>,
) -> bool {
    let (a, b) = (m.region(ra), m.region(rb));
    if a.args.len() != b.args.len() || a.ops.len() != b.ops.len() {
        return false;
    }
    for (x, y) in a.args.iter().zip(&b.args) {
        if m.value_type(*x) != m.value_type(*y) {
            return false;
        }
        local.insert(*x, *y);
    }
    a.ops
        .iter()
        .zip(&b.ops)
        .all(|(x, y)| ops_equivalent(m, *x, *y, local))
}
