//! `cse`: common subexpression elimination by hash-consing.
//!
//! Two pure ops are merged when they have the same kind, the same operands (in any order
//! for commutative kinds), identical attributes (floats compared by bits) and the same
//! result types; ops with regions additionally need structurally identical regions (same
//! ops, attributes and types, operands corresponding one to one). The later op's results
//! are replaced by the earlier op's. Scoping follows dominance: an op inside a region may
//! reuse an equal op of an enclosing region, never one of a sibling region.
//!
//! # Inside fixpoint groups
//! A run is idempotent: every op is compared, once its operands and regions are final,
//! with every earlier op it can see, so at the end no op sees an equivalent one. Full runs
//! mark the ops whose operands they redirect and the owners of regions they shrink (see
//! [`crate::edits`]). A later run first proves cheaply that it would merge nothing: two
//! ops neither of which was edited since the last complete run (nor had an op of its
//! regions edited) were not equivalent then and still are not; and an op equivalent to an
//! edited op has the same operands, so its first operand is an operand of an edited op
//! (or both have no operands and the same kind). Hash-consing only the edited ops and
//! those sharing their operands thus finds a merge iff a full run would merge something;
//! only then does the run go on in full. A merge never leaves a dead op behind (the merged
//! op reads what the op it merges into reads), so `dce` stays skippable after `cse`.

use crate::context::{Changed, PassContext};
use crate::edits::Dirty;
use crate::error::PassError;
use crate::ir_util::{attrs_identical, is_pure, pure_kind};
use crate::pass::Pass;
use neuronc_ir::{Attr, Module, NamedAttrs, Op, OpId, OpKind, RegionId, ValueId};
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

/// The name of the pass.
pub const NAME: &str = "cse";

/// The `cse` pass.
pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        NAME
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        if let Some(dirty) = ctx.dirty_since(NAME) {
            if !would_merge(module, &dirty) {
                ctx.note_shortcut();
                return Ok(Changed::No);
            }
        }
        let mut state = State::new(module.values.len());
        for fi in 0..module.funcs.len() {
            let body = module.funcs[fi].body;
            state.body(module, body, ctx);
        }
        // A merged op reads what the op it merges into reads: no value loses its last use.
        ctx.note_keeps_dead_free();
        Ok(Changed::from_bool(state.merged > 0))
    }
    fn tracks_edits(&self) -> bool {
        true
    }
}

/// Whether a full run would merge some op, knowing that only the `dirty` ops changed
/// since the last complete run (see the module docs).
fn would_merge(m: &Module, dirty: &Dirty) -> bool {
    let mut interest = Interest {
        op: vec![false; m.ops.len()],
        value: vec![false; m.values.len()],
        nullary: vec![false; OpKind::ALL.len()],
        marked: 0,
    };
    for op in dirty.ops(m.ops.len()) {
        interest.mark(m, op);
    }
    if interest.marked == 0 {
        return false;
    }
    let mut state = State::new(m.values.len());
    // The table holds the interesting ops only: a few per marked operand.
    state.buckets = vec![NONE; (4 * interest.marked).next_power_of_two().max(16)];
    m.funcs.iter().any(|f| state.probe(m, f.body, &interest))
}

/// The ops a run inside a fixpoint group has to compare: edited ones and those that
/// may be equivalent to one.
struct Interest {
    /// Edited ops and ops with an edited op in their regions, by op index.
    op: Vec<bool>,
    /// Operands of those ops, by value index.
    value: Vec<bool>,
    /// Kinds of those ops that have no operands, by `OpKind as usize`.
    nullary: Vec<bool>,
    /// Number of marked ops and values.
    marked: usize,
}

impl Interest {
    /// Marks the edited `op` and the ops whose regions hold it.
    fn mark(&mut self, m: &Module, op: OpId) {
        let mut op = op;
        while !self.op[op.index()] {
            self.op[op.index()] = true;
            self.marked += 1;
            let o = m.op(op);
            for v in &o.operands {
                if !self.value[v.index()] {
                    self.value[v.index()] = true;
                    self.marked += 1;
                }
            }
            if o.operands.is_empty() {
                self.nullary[o.kind as usize] = true;
            }
            let Some(owner) = o.parent.and_then(|r| m.region(r).parent) else {
                return;
            };
            op = owner;
        }
    }

    fn contains(&self, m: &Module, op: OpId) -> bool {
        let o = m.op(op);
        self.op[op.index()]
            || match o.operands.first() {
                Some(v) => self.value[v.index()],
                None => self.nullary[o.kind as usize],
            }
    }
}

/// No entry (end of a candidate list, empty bucket, unmapped value).
const NONE: u32 = u32::MAX;

/// One visible op: a node of the candidate list of its bucket.
struct Entry {
    op: OpId,
    hash: u64,
    /// The next (earlier) visible op in the same bucket, or [`NONE`].
    next: u32,
}

/// The visible ops, chained by bucket of their [`op_hash`] (equivalent ops have equal
/// hashes), in one table for all scopes: entries are pushed and popped in scope order, and
/// an entry is always the head of its bucket while it is the newest entry, so popping it
/// restores the bucket exactly (leaving a region undoes exactly the entries it added).
///
/// Search order does not matter: an op is only made visible when no visible op is
/// equivalent to it, and equivalence is an equivalence relation, so at most one visible
/// op is equivalent to any given op. (So neither the hash function nor the bucket count
/// can change the result.)
struct State {
    entries: Vec<Entry>,
    /// Head entry of each bucket (a power-of-two count), or [`NONE`].
    buckets: Vec<u32>,
    /// Results of merged ops → the results they were merged into ([`NONE`]: unmapped);
    /// empty until the first merge.
    remap: Vec<u32>,
    /// Number of values (the size of `remap` once needed).
    values: usize,
    merged: usize,
    facts: &'static [KindFacts],
}

/// What cse asks about the kind of every op it visits.
#[derive(Clone, Copy)]
struct KindFacts {
    /// Pure by its kind (see [`pure_kind`]).
    pure: bool,
    commutative: bool,
}

/// [`KindFacts`] of every kind, indexed by `OpKind as usize`; a table built once.
fn kind_facts() -> &'static [KindFacts] {
    static TABLE: OnceLock<Vec<KindFacts>> = OnceLock::new();
    TABLE.get_or_init(|| {
        OpKind::ALL
            .iter()
            .map(|&k| KindFacts {
                pure: pure_kind(k),
                commutative: k.is_commutative(),
            })
            .collect()
    })
}

impl State {
    fn new(values: usize) -> State {
        State {
            entries: Vec::new(),
            buckets: Vec::new(),
            remap: Vec::new(),
            values,
            merged: 0,
            facts: kind_facts(),
        }
    }

    /// CSE of a function body (a fresh scope: no entries are visible).
    fn body(&mut self, m: &mut Module, body: RegionId, ctx: &mut PassContext) {
        // About one entry per op of the body (nested ops come and go): two buckets per
        // entry keep the chains short.
        let want = (2 * m.region(body).ops.len()).next_power_of_two().max(16);
        if self.buckets.len() < want {
            self.buckets = vec![NONE; want];
        }
        self.entries.reserve(m.region(body).ops.len());
        self.region(m, body, ctx);
    }

    /// Whether hash-consing the interesting ops of `region` (as [`State::region`] would,
    /// without changing anything) finds an op equivalent to an earlier visible one.
    fn probe(&mut self, m: &Module, region: RegionId, interest: &Interest) -> bool {
        let scope = self.entries.len();
        for &op in &m.region(region).ops {
            if m.op(op).regions.iter().any(|&r| self.probe(m, r, interest)) {
                return true;
            }
            if !interest.contains(m, op) {
                continue;
            }
            if let Some(hash) = self.candidate(m, op) {
                if self.find_equal(m, op, hash).is_some() {
                    return true;
                }
                self.push(op, hash);
            }
        }
        self.pop_to(scope);
        false
    }

    fn region(&mut self, m: &mut Module, region: RegionId, ctx: &mut PassContext) {
        // Compacted in place: `ops[..kept]` are the ops kept so far.
        let mut ops = std::mem::take(&mut m.region_mut(region).ops);
        let scope = self.entries.len();
        let mut kept = 0;
        for i in 0..ops.len() {
            let op = ops[i];
            if self.remap_operands(m, op) {
                ctx.mark_edited(op);
            }
            for ri in 0..m.op(op).regions.len() {
                let r = m.op(op).regions[ri];
                self.region(m, r, ctx);
            }
            if let Some(hash) = self.candidate(m, op) {
                match self.find_equal(m, op, hash) {
                    Some(earlier) => {
                        if ctx.try_rewrite(NAME, m, op) {
                            self.merge(m, op, earlier);
                            ctx.mark_region_edited(m, region);
                            continue;
                        }
                    }
                    None => self.push(op, hash),
                }
            }
            ops[kept] = op;
            kept += 1;
        }
        ops.truncate(kept);
        m.region_mut(region).ops = ops;
        self.pop_to(scope);
    }

    /// The hash of `op` when it is pure (may be merged), else `None`. Inlined into
    /// both walks (it is asked of every op), like [`State::find_equal`].
    #[inline(always)]
    fn candidate(&self, m: &Module, op: OpId) -> Option<u64> {
        let o = m.op(op);
        let facts = self.facts[o.kind as usize];
        let pure = if o.regions.is_empty() && o.kind != OpKind::Composite {
            facts.pure
        } else {
            is_pure(m, op)
        };
        pure.then(|| op_hash(m, o, facts.commutative))
    }

    /// Replaces the results of `op` by those of the equivalent `earlier` and detaches it.
    fn merge(&mut self, m: &mut Module, op: OpId, earlier: OpId) {
        if self.remap.is_empty() {
            self.remap = vec![NONE; self.values];
        }
        let (o, e) = (m.op(op), m.op(earlier));
        for (&r, &to) in o.results.iter().zip(&e.results) {
            self.remap[r.index()] = to.0;
        }
        m.op_mut(op).parent = None;
        self.merged += 1;
    }

    fn bucket(&self, hash: u64) -> usize {
        hash as usize & (self.buckets.len() - 1)
    }

    fn push(&mut self, op: OpId, hash: u64) {
        let b = self.bucket(hash);
        let next = std::mem::replace(&mut self.buckets[b], self.entries.len() as u32);
        self.entries.push(Entry { op, hash, next });
    }

    /// Forgets the entries pushed since the scope started at `len` entries.
    fn pop_to(&mut self, len: usize) {
        while self.entries.len() > len {
            if let Some(e) = self.entries.pop() {
                let b = self.bucket(e.hash);
                self.buckets[b] = e.next;
            }
        }
    }

    /// Redirects the operands of `op` to the results they were merged into; returns
    /// whether one changed.
    fn remap_operands(&self, m: &mut Module, op: OpId) -> bool {
        if self.remap.is_empty() {
            return false;
        }
        let mut changed = false;
        for v in &mut m.op_mut(op).operands {
            if let Some(&to) = self.remap.get(v.index()).filter(|&&t| t != NONE) {
                *v = ValueId(to);
                changed = true;
            }
        }
        changed
    }

    #[inline(always)]
    fn find_equal(&self, m: &Module, op: OpId, hash: u64) -> Option<OpId> {
        let mut i = self.buckets[self.bucket(hash)];
        while i != NONE {
            let e = &self.entries[i as usize];
            if e.hash == hash && ops_equivalent(m, e.op, op, &mut FxHashMap::default()) {
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

/// A hash of `o` equal for equivalent ops (`commutative`: its kind's).
fn op_hash(m: &Module, o: &Op, commutative: bool) -> u64 {
    let mut h = FxHasher::default();
    o.kind.hash(&mut h);
    match o.operands.as_slice() {
        &[a, b] if commutative => (a.min(b), a.max(b)).hash(&mut h),
        operands @ [_, _, _, ..] if commutative => {
            let mut sorted = operands.to_vec();
            sorted.sort();
            sorted.hash(&mut h);
        }
        operands => operands.hash(&mut h),
    }
    for r in &o.results {
        m.value_type(*r).hash(&mut h);
    }
    hash_attrs::<false>(&o.attrs, &mut h);
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
#[inline]
fn hash_attrs<const ZEROS_ALIKE: bool>(attrs: &NamedAttrs, h: &mut FxHasher) {
    attrs.len().hash(h);
    for (_, a) in attrs.iter() {
        hash_attr::<ZEROS_ALIKE>(a, h);
    }
}

/// Hashes enough of an attribute to spread buckets; equality is decided by
/// [`attrs_identical`] (floats by bits) or, with `ZEROS_ALIKE`, by `==` (where `0.0` and
/// `-0.0` are equal, so they hash alike: `duplicate-function-elimination` and kernel
/// sharing). Inlined into the op hash; nested attributes go through [`hash_items`] and
/// [`hash_dict`].
#[inline]
pub(crate) fn hash_attr<const ZEROS_ALIKE: bool>(a: &Attr, h: &mut FxHasher) {
    std::mem::discriminant(a).hash(h);
    match a {
        Attr::Int(v, _) => v.hash(h),
        Attr::Float(v, _) => (if ZEROS_ALIKE && *v == 0.0 {
            0
        } else {
            v.to_bits()
        })
        .hash(h),
        Attr::Str(s) | Attr::Symbol(s) | Attr::Opaque(s) => s.hash(h),
        Attr::IntArray(_, v) => v.hash(h),
        Attr::Array(items) => hash_items::<ZEROS_ALIKE>(items, h),
        Attr::Dict(d) => hash_dict::<ZEROS_ALIKE>(d, h),
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

/// [`hash_attr`] of the items of an array attribute (out of line: nesting is rare).
#[inline(never)]
fn hash_items<const ZEROS_ALIKE: bool>(items: &[Attr], h: &mut FxHasher) {
    items.iter().for_each(|i| hash_attr::<ZEROS_ALIKE>(i, h));
}

/// [`hash_attrs`] of a dictionary attribute (out of line: nesting is rare).
#[inline(never)]
fn hash_dict<const ZEROS_ALIKE: bool>(d: &NamedAttrs, h: &mut FxHasher) {
    hash_attrs::<ZEROS_ALIKE>(d, h);
}

/// Whether `b` computes the same as `a`; `local` maps values defined inside `a`'s regions to
/// their counterparts in `b`'s (filled by [`regions_equivalent`] as it goes).
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
    oa.regions
        .iter()
        .zip(&ob.regions)
        .all(|(ra, rb)| regions_equivalent(m, *ra, *rb, local))
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
    // The results of equivalent ops correspond for the ops after them (the results of
    // the ops compared by `find_equal` are read by nobody in the comparison: no map
    // entry, and no allocation, for ops without regions).
    a.ops.iter().zip(&b.ops).all(|(&x, &y)| {
        let same = ops_equivalent(m, x, y, local);
        if same {
            for (rx, ry) in m.op(x).results.iter().zip(&m.op(y).results) {
                local.insert(*rx, *ry);
            }
        }
        same
    })
}
