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
use std::hash::{Hash, Hasher};

/// The `cse` pass.
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let mut state = State::new(module.values.len());
        let bodies: Vec<RegionId> = module.funcs.iter().map(|f| f.body).collect();
        for body in bodies {
            state.region(module, body, ctx);
        }
        Ok(Changed::from_bool(state.merged > 0))
    }
}

/// No entry (end of a candidate list, unmapped value).
const NONE: u32 = u32::MAX;

/// One visible op: a node of the candidate list of its hash.
struct Entry {
    op: OpId,
    /// The next (earlier) visible op with the same hash, or [`NONE`].
    next: u32,
}

/// The visible ops by [`op_hash`] (equivalent ops have equal hashes), in one table for
/// all scopes: entries are pushed and popped in scope order, so leaving a region undoes
/// exactly the entries it added.
///
/// Search order does not matter: an op is only made visible when no visible op is
/// equivalent to it, and equivalence is an equivalence relation, so at most one visible
/// op is equivalent to any given op.
struct State {
    entries: Vec<Entry>,
    /// Head of the candidate list of each hash.
    heads: FxHashMap<u64, u32>,
    /// `(hash, previous head)` of every pushed entry, to restore heads when a scope ends.
    undo: Vec<(u64, u32)>,
    /// Results of merged ops → the results they were merged into ([`NONE`]: unmapped).
    remap: Vec<u32>,
    any_remap: bool,
    merged: usize,
}

impl State {
    fn new(values: usize) -> State {
        State {
            entries: Vec::new(),
            heads: FxHashMap::default(),
            undo: Vec::new(),
            remap: vec![NONE; values],
            any_remap: false,
            merged: 0,
        }
    }

    fn region(&mut self, m: &mut Module, region: RegionId, ctx: &mut PassContext) {
        let ops = std::mem::take(&mut m.region_mut(region).ops);
        let scope = self.entries.len();
        if scope == 0 {
            // A function body: at most one entry per op (nested ops come and go).
            self.heads.reserve(ops.len());
            self.entries.reserve(ops.len());
            self.undo.reserve(ops.len());
        }
        let mut kept = Vec::with_capacity(ops.len());
        for op in ops {
            self.remap_operands(m, op);
            for i in 0..m.op(op).regions.len() {
                let r = m.op(op).regions[i];
                self.region(m, r, ctx);
            }
            if !is_pure(m, op) {
                kept.push(op);
                continue;
            }
            let hash = op_hash(m, op);
            match self.find_equal(m, op, hash) {
                Some(earlier) if ctx.try_rewrite("cse", m, op) => {
                    let (o, e) = (m.op(op), m.op(earlier));
                    for (&r, &to) in o.results.iter().zip(&e.results) {
                        self.remap[r.index()] = to.0;
                    }
                    self.any_remap = true;
                    m.op_mut(op).parent = None;
                    self.merged += 1;
                }
                Some(_) => kept.push(op),
                None => {
                    kept.push(op);
                    self.push(op, hash);
                }
            }
        }
        m.region_mut(region).ops = kept;
        self.pop_to(scope);
    }

    fn head(&self, hash: u64) -> u32 {
        self.heads.get(&hash).copied().unwrap_or(NONE)
    }

    fn push(&mut self, op: OpId, hash: u64) {
        let next = self
            .heads
            .insert(hash, self.entries.len() as u32)
            .unwrap_or(NONE);
        self.undo.push((hash, next));
        self.entries.push(Entry { op, next });
    }

    /// Forgets the entries pushed since the scope started at `len` entries.
    fn pop_to(&mut self, len: usize) {
        if len == 0 {
            self.entries.clear();
            self.heads.clear();
            self.undo.clear();
            return;
        }
        while self.entries.len() > len {
            self.entries.pop();
            if let Some((hash, prev)) = self.undo.pop() {
                if prev == NONE {
                    self.heads.remove(&hash);
                } else {
                    self.heads.insert(hash, prev);
                }
            }
        }
    }

    fn remap_operands(&self, m: &mut Module, op: OpId) {
        if !self.any_remap {
            return;
        }
        for v in &mut m.op_mut(op).operands {
            if let Some(&to) = self.remap.get(v.index()).filter(|&&t| t != NONE) {
                *v = ValueId(to);
            }
        }
    }

    fn find_equal(&self, m: &Module, op: OpId, hash: u64) -> Option<OpId> {
        let mut i = self.head(hash);
        while i != NONE {
            let e = &self.entries[i as usize];
            if ops_equivalent(m, e.op, op, &mut FxHashMap::default()) {
                return Some(e.op);
            }
            i = e.next;
        }
        None
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
    let commutative = o.kind.is_commutative();
    if commutative && o.operands.len() == 2 {
        let (a, b) = (o.operands[0], o.operands[1]);
        (a.min(b), a.max(b)).hash(&mut h);
    } else if commutative {
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

/// Hashes the attribute values (names are left out: ops of one kind almost always carry
/// the same names, and equality is decided by [`attrs_identical`] anyway).
fn hash_attrs(attrs: &NamedAttrs, h: &mut FxHasher) {
    attrs.len().hash(h);
    for (_, a) in attrs.iter() {
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
