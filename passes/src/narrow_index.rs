//! `narrow-index`: rewrites signless i64 integer computations to i32 where the range
//! analysis ([`crate::range`]) proves that every narrowed value fits in i32.
//!
//! # What is narrowed
//! A *member* is an op of a kind whose result on in-range operands is the same in i32 and
//! i64 (iota, convert, add/sub/mul/neg/abs/div/rem, max/min/clamp/select, sign, and/or/xor/
//! not, compare, shape ops, gather/dynamic_slice/dynamic_update_slice/scatter, and
//! `reduce`/`reduce_window`/`scatter` with such a body). Its *narrowed slots* are its i64
//! operands and results (for index consumers the index operands, plus the data when that
//! fits too); every narrowed slot must have a range within i32 and all of them are retyped
//! together. Constants are not members: a constant used by a member gets an i32 twin.
//! Only signless `i64` is narrowed (to `i32`); `ui64` is left alone.
//!
//! # When
//! Members connected through narrowed values form a component. A component is rewritten
//! only if the graph gets better on both counts:
//! * the conversions it needs at its boundary — `convert i64 -> i32` of values that come
//!   from elsewhere (sound: they are proven in range), `convert i32 -> i64` of results that
//!   a non-member (or a non-narrowed slot, or a terminator) still reads as i64 — are fewer
//!   than its members, so the number of ops touching i64 strictly drops and a lone op
//!   between i64 neighbours is left alone;
//! * the bytes of its narrowed slots (8 per element before, 4 after) plus 12 bytes per
//!   element of each boundary convert (read i32/i64, write the other) strictly drop: an
//!   `iota -> broadcast` feeding an i64 compare of unknown labels is not narrowed, since
//!   converting the broadcast result back would move more bytes than it saves.
//!
//! Converts that become `i32 -> i32` disappear (`compare(convert(a), convert(b))` →
//! `compare(a, b)`, `convert(convert(x))` folds).
//!
//! Invariants: decisions are made on the analysis of the input module, components are
//! disjoint and rewritten in walk order (deterministic); each member is one traced
//! rewrite named `narrow-index/<op>` and a component is applied only when there is fuel
//! for all of its members, so `--opt-fuel` never leaves a half-narrowed component.
//!
//! Inside fixpoint groups ([`crate::edits`]) it marks the members it retypes (and the ops
//! of their bodies), the ops whose operands it redirects and the owners of regions that
//! lose a dropped convert. It is idempotent: a component left alone is rejected again (its
//! members, ranges and boundary do not change when other components are narrowed, since
//! a member reading another's narrowed result belongs to the same component), and the
//! converts at a narrowed component's boundary form components that fail the cost test.

use crate::context::{Changed, PassContext};
use crate::error::PassError;
use crate::ir_util::{def_op, parent_regions};
use crate::pass::Pass;
use crate::range::{elem, Interval, Ranges};
use neuronc_ir::{
    Attr, DenseData, DenseElements, ElemType, Module, NamedAttrs, OpId, OpKind, RegionId, TypeId,
    ValueDef, ValueId,
};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

const I64: ElemType = ElemType::Int(64);
const I32: ElemType = ElemType::Int(32);

/// The `narrow-index` pass.
pub struct NarrowIndex;

impl Pass for NarrowIndex {
    fn name(&self) -> &'static str {
        "narrow-index"
    }
    fn run(&self, module: &mut Module, ctx: &mut PassContext) -> Result<Changed, PassError> {
        let types = &module.types;
        let any_i64 = (0..types.len() as u32)
            .any(|i| types.tensor_of(TypeId(i)).is_some_and(|t| t.elem == I64));
        if !any_i64 {
            return Ok(Changed::No);
        }
        let plan = Plan::build(module);
        // A changing run ends by removing the ops it left dead ([`Editor::finish`]).
        let changed = plan.apply(module, ctx);
        Ok(Changed::from_bool(changed))
    }
    fn tracks_edits(&self) -> bool {
        true
    }
}

/// Kinds that may be members (besides the body-only `constant` and `return`).
const NARROWABLE: &[OpKind] = {
    use OpKind::*;
    &[
        Iota,
        Convert,
        Add,
        Subtract,
        Multiply,
        Negate,
        Abs,
        Divide,
        Remainder,
        Maximum,
        Minimum,
        Clamp,
        Select,
        Compare,
        Sign,
        And,
        Or,
        Xor,
        Not,
        BroadcastInDim,
        Broadcast,
        Reshape,
        Transpose,
        Slice,
        Reverse,
        Concatenate,
        Pad,
        DynamicSlice,
        DynamicUpdateSlice,
        Gather,
        Reduce,
        ReduceWindow,
        Scatter,
    ]
};

/// Number of live ops that read or write an i64 value, constants excluded (the measure
/// this pass reduces).
pub fn count_i64_ops(m: &Module) -> usize {
    let mut n = 0;
    m.walk_ops(|op| {
        let o = m.op(op);
        let touches = o.operands.iter().chain(&o.results).any(|&v| is_i64(m, v));
        if touches && o.kind != OpKind::Constant {
            n += 1;
        }
    });
    n
}

fn is_i64(m: &Module, v: ValueId) -> bool {
    elem(m, v) == Some(I64)
}

fn fits_i32(r: &Ranges, v: ValueId) -> bool {
    r.get(v).is_some_and(|iv| iv.fits(I32))
}

/// One member op and the slots it narrows.
#[derive(Clone, Debug)]
struct Member {
    op: OpId,
    operands: Vec<usize>,
    results: Vec<usize>,
    /// Retype the i64 values of its body.
    body: bool,
    /// Only index operands are narrowed.
    index_only: bool,
}

/// The operand positions that are indices, for ops that consume indices.
fn index_operands(m: &Module, op: OpId) -> Option<std::ops::Range<usize>> {
    let o = m.op(op);
    let n = o.operands.len();
    match o.kind {
        OpKind::Gather => Some(1..2),
        OpKind::DynamicSlice => Some(1..n),
        OpKind::DynamicUpdateSlice => Some(2..n),
        OpKind::Scatter => {
            let k = n.saturating_sub(1) / 2;
            Some(k..k + 1)
        }
        _ => None,
    }
}

fn classify(m: &Module, r: &Ranges, op: OpId) -> Option<Member> {
    let o = m.op(op);
    let touches = o.operands.iter().chain(&o.results).any(|&v| is_i64(m, v));
    if !touches || !NARROWABLE.contains(&o.kind) {
        return None;
    }
    let ops: Vec<usize> = (0..o.operands.len())
        .filter(|&i| is_i64(m, o.operands[i]))
        .collect();
    let res: Vec<usize> = (0..o.results.len())
        .filter(|&i| is_i64(m, o.results[i]))
        .collect();
    let all_fit = |ops: &[usize], res: &[usize]| {
        ops.iter().all(|&i| fits_i32(r, o.operands[i]))
            && res.iter().all(|&i| fits_i32(r, o.results[i]))
    };
    let data_ok = |ops: &[usize], res: &[usize]| {
        (!ops.is_empty() || !res.is_empty())
            && all_fit(ops, res)
            && (o.kind != OpKind::Convert || convert_ok(m, r, op))
            && (o.regions.is_empty() || body_ok(m, r, op))
    };
    let member = |operands: Vec<usize>, results: Vec<usize>, index_only: bool| Member {
        op,
        body: !index_only && !o.regions.is_empty(),
        operands,
        results,
        index_only,
    };
    let Some(index) = index_operands(m, op) else {
        return data_ok(&ops, &res).then(|| member(ops, res, false));
    };
    let (idx, data): (Vec<usize>, Vec<usize>) = ops.into_iter().partition(|i| index.contains(i));
    if !all_fit(&idx, &[]) {
        None
    } else if data_ok(&data, &res) {
        Some(member(
            idx.iter().chain(&data).copied().collect(),
            res,
            false,
        ))
    } else {
        (!idx.is_empty()).then(|| member(idx, Vec::new(), true))
    }
}

/// A convert out of i64 gives the same result from the i32 value when the target is an
/// integer of at most 32 bits (same low bits), `i1`, f32/f64 (both round the exact value
/// once), or any type that holds the whole range exactly.
fn convert_ok(m: &Module, r: &Ranges, op: OpId) -> bool {
    let o = m.op(op);
    let (src, dst) = (elem(m, o.operands[0]), elem(m, o.results[0]));
    if src != Some(I64) {
        return true;
    }
    let Some(iv) = r.get(o.operands[0]) else {
        return false;
    };
    match dst {
        Some(ElemType::I1 | ElemType::F32 | ElemType::F64) => true,
        Some(ElemType::Int(b) | ElemType::UInt(b)) if b <= 32 => true,
        Some(e @ ElemType::UInt(64)) => iv.fits(e),
        Some(ElemType::F16) => Interval::new(-2048, 2048).contains(iv),
        Some(ElemType::BF16) => Interval::new(-256, 256).contains(iv),
        _ => false,
    }
}

/// A body can be retyped when it is flat, made of member kinds (plus constants), reads no
/// i64 value from outside, and all its i64 values fit in i32.
fn body_ok(m: &Module, r: &Ranges, op: OpId) -> bool {
    m.op(op).regions.iter().all(|&region| {
        let reg = m.region(region);
        let local = |v: ValueId| match m.value(v).def {
            ValueDef::RegionArg(rg, _) => rg == region,
            ValueDef::Result(d, _) => m.op(d).parent == Some(region),
        };
        reg.args.iter().all(|&a| !is_i64(m, a) || fits_i32(r, a))
            && reg.ops.iter().all(|&inner| {
                let o = m.op(inner);
                let kind_ok = matches!(o.kind, OpKind::Constant | OpKind::Return)
                    || (NARROWABLE.contains(&o.kind) && o.regions.is_empty());
                kind_ok
                    && o.regions.is_empty()
                    && o.operands.iter().all(|&v| !is_i64(m, v) || local(v))
                    && o.operands
                        .iter()
                        .chain(&o.results)
                        .all(|&v| !is_i64(m, v) || fits_i32(r, v))
                    && (o.kind != OpKind::Convert || convert_ok(m, r, inner))
            })
    })
}

/// Regions whose ops are considered: function bodies and control-flow bodies (reduction
/// bodies are handled with their op).
fn scanned_region(m: &Module, region: RegionId) -> bool {
    match m.region(region).parent {
        None => true,
        Some(p) => matches!(m.op(p).kind, OpKind::While | OpKind::If | OpKind::Case),
    }
}

/// The members, their components and the decisions, computed on the input module.
struct Plan {
    members: Vec<Member>,
    /// Member index of each member op.
    index: FxHashMap<OpId, usize>,
    /// Narrowed result values, with the member defining them.
    narrowed: FxHashMap<ValueId, usize>,
    /// Uses of narrowed values that must keep reading i64: `(user, operand index)`.
    wide_uses: FxHashMap<ValueId, Vec<(OpId, usize)>>,
    /// Components (member indices, in walk order) that pass the cost test.
    accepted: Vec<Vec<usize>>,
}

impl Plan {
    fn build(m: &Module) -> Plan {
        // Candidates: what `classify` can accept before it looks at ranges (member kind,
        // touches i64, in a scanned region). The range analysis runs only if there is one.
        let i64_type: Vec<bool> = (0..m.types.len() as u32)
            .map(|i| m.types.tensor_of(TypeId(i)).is_some_and(|t| t.elem == I64))
            .collect();
        let is64 = |v: &ValueId| i64_type[m.value_type(*v).0 as usize];
        let mut candidates = Vec::new();
        // Ops reading an i64 value, in walk order: the only possible users of narrowed
        // values (see `collect_wide_uses`).
        let mut i64_users = Vec::new();
        m.walk_ops(|op| {
            let o = m.op(op);
            let reads = o.operands.iter().any(is64);
            if reads {
                i64_users.push(op);
            }
            if (reads || o.results.iter().any(is64))
                && NARROWABLE.contains(&o.kind)
                && o.parent.is_some_and(|p| scanned_region(m, p))
            {
                candidates.push(op);
            }
        });
        let mut members = Vec::new();
        if !candidates.is_empty() {
            let ranges = Ranges::analyze_for(m, &candidates);
            members.extend(candidates.iter().filter_map(|&op| classify(m, &ranges, op)));
        }
        let index: FxHashMap<OpId, usize> = members
            .iter()
            .enumerate()
            .map(|(i, mb)| (mb.op, i))
            .collect();
        let mut narrowed = FxHashMap::default();
        for (i, mb) in members.iter().enumerate() {
            for &r in &mb.results {
                narrowed.insert(m.op(mb.op).results[r], i);
            }
        }
        let mut plan = Plan {
            members,
            index,
            narrowed,
            wide_uses: FxHashMap::default(),
            accepted: Vec::new(),
        };
        plan.collect_wide_uses(m, &i64_users);
        plan.decide(m);
        plan
    }

    /// Whether operand `i` of `op` is a narrowed slot of a member.
    fn narrowed_slot(&self, op: OpId, i: usize) -> bool {
        self.index
            .get(&op)
            .is_some_and(|&k| self.members[k].operands.contains(&i))
    }

    /// `i64_users`: every live op reading an i64 value, in walk order (narrowed values
    /// are i64, so no other op uses one).
    fn collect_wide_uses(&mut self, m: &Module, i64_users: &[OpId]) {
        let mut wide: FxHashMap<ValueId, Vec<(OpId, usize)>> = FxHashMap::default();
        for &op in i64_users {
            for (i, v) in m.op(op).operands.iter().enumerate() {
                if self.narrowed.contains_key(v) && !self.narrowed_slot(op, i) {
                    wide.entry(*v).or_default().push((op, i));
                }
            }
        }
        self.wide_uses = wide;
    }

    /// Union-find over members linked by narrowed values, then the cost test.
    fn decide(&mut self, m: &Module) {
        let n = self.members.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for (i, mb) in self.members.iter().enumerate() {
            for &s in &mb.operands {
                if let Some(&j) = self.narrowed.get(&m.op(mb.op).operands[s]) {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
        let mut comps: FxHashMap<usize, Vec<usize>> = FxHashMap::default();
        for i in 0..n {
            let root = find(&mut parent, i);
            comps.entry(root).or_default().push(i);
        }
        let mut roots: Vec<usize> = comps.keys().copied().collect();
        roots.sort_unstable();
        for root in roots {
            let comp = comps.remove(&root).unwrap_or_default();
            if self.profitable(m, &comp) {
                self.accepted.push(comp);
            }
        }
    }

    /// The cost test (see the module docs): fewer ops touching i64 *and* fewer bytes
    /// moved, counting each boundary convert as reading and writing its elements.
    fn profitable(&self, m: &Module, comp: &[usize]) -> bool {
        let (ins, outs) = self.boundary(m, comp);
        if ins.len() + outs.len() >= comp.len() {
            return false;
        }
        let elems = |v: ValueId| m.tensor_type(v).map_or(0, |t| t.num_elements());
        let slots: u64 = comp
            .iter()
            .map(|&k| {
                let mb = &self.members[k];
                let o = m.op(mb.op);
                let ops = mb.operands.iter().map(|&i| elems(o.operands[i]));
                let res = mb.results.iter().map(|&i| elems(o.results[i]));
                ops.chain(res).sum::<u64>()
            })
            .sum();
        let converts: u64 = ins.iter().chain(&outs).map(|&v| elems(v)).sum();
        slots * 4 + converts * 12 < slots * 8
    }

    /// The values a component must convert in (i64 → i32) and out (i32 → i64).
    fn boundary(&self, m: &Module, comp: &[usize]) -> (Vec<ValueId>, Vec<ValueId>) {
        let mut ins = Vec::new();
        let mut outs = Vec::new();
        for &k in comp {
            let mb = &self.members[k];
            let o = m.op(mb.op);
            for &s in &mb.operands {
                let v = o.operands[s];
                let constant = def_op(m, v).is_some_and(|d| m.op(d).kind == OpKind::Constant);
                if !self.narrowed.contains_key(&v) && !constant && !ins.contains(&v) {
                    ins.push(v);
                }
            }
            for &r in &mb.results {
                let v = o.results[r];
                if self.wide_uses.contains_key(&v) {
                    outs.push(v);
                }
            }
        }
        (ins, outs)
    }

    fn apply(&self, m: &mut Module, ctx: &mut PassContext) -> bool {
        let mut ed = Editor::default();
        for comp in &self.accepted {
            if ctx.fuel().is_some_and(|f| f < comp.len() as u64) {
                ctx.note_incomplete();
                continue;
            }
            for &k in comp {
                let rule = self.rule_name(m, k);
                if !ctx.try_rewrite(&rule, m, self.members[k].op) {
                    return ed.finish(m, ctx);
                }
            }
            self.rewrite(m, &mut ed, comp);
            ed.changed = true;
        }
        ed.finish(m, ctx)
    }

    fn rule_name(&self, m: &Module, k: usize) -> String {
        let mb = &self.members[k];
        if self.becomes_identity(m, mb) {
            return "narrow-index/convert-fold".into();
        }
        let kind = m.op(mb.op).kind.short_name().replace('_', "-");
        let suffix = if mb.index_only { "-indices" } else { "" };
        format!("narrow-index/{kind}{suffix}")
    }

    /// A member convert that ends up `i32 -> i32`.
    fn becomes_identity(&self, m: &Module, mb: &Member) -> bool {
        let o = m.op(mb.op);
        if o.kind != OpKind::Convert {
            return false;
        }
        let post = |v: ValueId, narrowed: bool| if narrowed { Some(I32) } else { elem(m, v) };
        post(o.operands[0], !mb.operands.is_empty()) == post(o.results[0], !mb.results.is_empty())
    }

    fn rewrite(&self, m: &mut Module, ed: &mut Editor, comp: &[usize]) {
        for &k in comp {
            let mb = &self.members[k];
            ed.edited.push(mb.op);
            for &s in &mb.operands {
                let v = m.op(mb.op).operands[s];
                let nv = if self.narrowed.contains_key(&v) {
                    v
                } else {
                    ed.narrow_input(m, v)
                };
                if nv != v {
                    ed.seeds.extend(def_op(m, v));
                }
                m.op_mut(mb.op).operands[s] = nv;
            }
            for &r in &mb.results {
                let v = m.op(mb.op).results[r];
                retype(m, v);
            }
            if mb.body {
                for region in m.op(mb.op).regions.clone() {
                    retype_region(m, region);
                    m.walk_region(region, &mut |op| ed.edited.push(op));
                }
            }
        }
        for &k in comp {
            let mb = &self.members[k];
            for &r in &mb.results {
                let v = m.op(mb.op).results[r];
                if let Some(uses) = self.wide_uses.get(&v) {
                    let w = ed.widen_output(m, mb.op, v);
                    ed.seeds.push(mb.op);
                    for &(user, i) in uses {
                        m.op_mut(user).operands[i] = w;
                        ed.edited.push(user);
                    }
                }
            }
            if self.becomes_identity(m, mb) {
                let o = m.op(mb.op);
                ed.identity.insert(o.results[0], o.operands[0]);
                ed.erased.insert(mb.op);
            }
        }
    }
}

/// `tensor<...xi64>` → `tensor<...xi32>` for one value, in place.
fn retype(m: &mut Module, v: ValueId) {
    if let Some(t) = m.tensor_type(v) {
        let shape = t.shape.clone();
        let ty = m.types.tensor(I32, &shape);
        m.values[v.index()].ty = ty;
    }
}

/// Retypes every i64 value of a (flat) body region; i64 constants are re-encoded.
fn retype_region(m: &mut Module, region: RegionId) {
    for a in m.region(region).args.clone() {
        if is_i64(m, a) {
            retype(m, a);
        }
    }
    for op in m.region(region).ops.clone() {
        if m.op(op).kind == OpKind::Constant && is_i64(m, m.op(op).results[0]) {
            if let Some(attr) = narrow_constant_attr(m, op) {
                m.op_mut(op).attrs.set("value", attr);
            }
        }
        for r in m.op(op).results.clone() {
            if is_i64(m, r) {
                retype(m, r);
            }
        }
    }
}

/// The `value` attribute of an i64 constant re-encoded as i32 (values must fit; they do
/// for every constant a member reads, by the range test), read straight from the
/// little-endian bytes (index tables can be large).
fn narrow_constant_attr(m: &mut Module, op: OpId) -> Option<Attr> {
    let Some(Attr::Elements(e)) = m.op(op).attrs.get("value") else {
        return None;
    };
    let e = e.clone();
    if e.elem != I64 {
        return None;
    }
    let shape = m.types.tensor_of(e.ty)?.shape.clone();
    let ty = m.types.tensor(I32, &shape);
    let narrow = |c: &[u8]| -> Option<[u8; 4]> {
        let v = i64::from_le_bytes(c.try_into().ok()?);
        Some(i32::try_from(v).ok()?.to_le_bytes())
    };
    let data = match &e.data {
        DenseData::Splat(b) => DenseData::Splat(Box::new(narrow(b)?)),
        DenseData::Full(b) => {
            let mut bytes = Vec::with_capacity(e.len as usize * 4);
            for c in b.chunks_exact(8).take(e.len as usize) {
                bytes.extend_from_slice(&narrow(c)?);
            }
            DenseData::Full(Arc::from(bytes))
        }
    };
    let dense = DenseElements {
        ty,
        elem: I32,
        len: e.len,
        data,
    };
    Some(Attr::Elements(Arc::new(dense)))
}

/// Edits collected while rewriting, placed in one pass per region at the end.
#[derive(Default)]
struct Editor {
    /// i32 versions of i64 values (converts or constant twins), by original value.
    narrow: FxHashMap<ValueId, ValueId>,
    after: FxHashMap<OpId, Vec<OpId>>,
    at_start: FxHashMap<RegionId, Vec<OpId>>,
    identity: FxHashMap<ValueId, ValueId>,
    erased: FxHashSet<OpId>,
    changed: bool,
    /// Existing ops edited in place (for the edit log of fixpoint groups).
    edited: Vec<OpId>,
    /// Ops that may be dead at the end: created ones and producers of values that lost a
    /// use ([`crate::dce::cleanup_dead_ops_from`]).
    seeds: Vec<OpId>,
}

impl Editor {
    /// The i32 version of `v` (in range by the plan): a twin constant or a convert.
    fn narrow_input(&mut self, m: &mut Module, v: ValueId) -> ValueId {
        if let Some(&n) = self.narrow.get(&v) {
            return n;
        }
        let ty = narrow_type(m, v);
        let def = def_op(m, v);
        let twin = def
            .filter(|&d| m.op(d).kind == OpKind::Constant)
            .and_then(|d| narrow_constant_attr(m, d))
            .map(|attr| {
                let mut attrs = NamedAttrs::new();
                attrs.set("value", attr);
                m.create_op(OpKind::Constant, Vec::new(), &[ty], attrs)
            });
        let new =
            twin.unwrap_or_else(|| m.create_op(OpKind::Convert, vec![v], &[ty], NamedAttrs::new()));
        self.seeds.push(new);
        self.place_after_def(m, v, new);
        let n = m.op(new).results[0];
        self.narrow.insert(v, n);
        n
    }

    /// A `convert` of the narrowed result `v` of `def` back to i64, placed after `def`.
    fn widen_output(&mut self, m: &mut Module, def: OpId, v: ValueId) -> ValueId {
        let shape = m
            .tensor_type(v)
            .map(|t| t.shape.clone())
            .unwrap_or_default();
        let ty = m.types.tensor(I64, &shape);
        let new = m.create_op(OpKind::Convert, vec![v], &[ty], NamedAttrs::new());
        self.seeds.push(new);
        self.place(m, def, new);
        m.op(new).results[0]
    }

    fn place_after_def(&mut self, m: &mut Module, v: ValueId, new: OpId) {
        match m.value(v).def {
            ValueDef::Result(d, _) => self.place(m, d, new),
            ValueDef::RegionArg(r, _) => {
                m.op_mut(new).parent = Some(r);
                self.at_start.entry(r).or_default().push(new);
            }
        }
    }

    fn place(&mut self, m: &mut Module, anchor: OpId, new: OpId) {
        let (loc, span, parent) = {
            let a = m.op(anchor);
            (a.loc, a.span, a.parent)
        };
        let o = m.op_mut(new);
        o.loc = loc;
        o.span = span;
        o.parent = parent;
        self.after.entry(anchor).or_default().push(new);
        self.changed = true;
    }

    /// Places the new ops, drops identity converts and redirects their uses; marks the
    /// edited ops in `ctx`; if anything changed, removes the ops left dead.
    fn finish(mut self, m: &mut Module, ctx: &mut PassContext) -> bool {
        self.changed |= !self.erased.is_empty();
        // The regions that get new ops or lose erased ones.
        let placed = self.after.values().chain(self.at_start.values()).flatten();
        let regions = parent_regions(m, placed.chain(&self.erased).copied());
        // The ops the rebuild has to look up (erased, or followed by new ops): few.
        let mut marked = vec![false; m.ops.len()];
        for op in self.erased.iter().chain(self.after.keys()) {
            marked[op.index()] = true;
        }
        for region in regions {
            let old = std::mem::take(&mut m.region_mut(region).ops);
            let mut ops = self.at_start.remove(&region).unwrap_or_default();
            ops.reserve(old.len());
            for op in old {
                if !marked.get(op.index()).copied().unwrap_or(true) {
                    ops.push(op);
                    continue;
                }
                if !self.erased.contains(&op) {
                    ops.push(op);
                }
                ops.extend(self.after.remove(&op).unwrap_or_default());
            }
            m.region_mut(region).ops = ops;
        }
        // Their regions no longer list them.
        for &op in &self.erased {
            let operands = m.op(op).operands.iter();
            self.seeds.extend(operands.filter_map(|&v| def_op(m, v)));
            if let Some(region) = m.op(op).parent {
                ctx.mark_region_edited(m, region);
            }
            m.op_mut(op).parent = None;
        }
        if !self.identity.is_empty() {
            self.redirect_identities(m, ctx);
        }
        for &op in &self.edited {
            ctx.mark_edited(op);
        }
        if self.changed {
            crate::dce::cleanup_dead_ops_from(m, ctx, self.seeds);
        }
        self.changed
    }

    /// Redirects every use of a dropped identity convert's result to the value it
    /// forwarded (following chains of them).
    fn redirect_identities(&self, m: &mut Module, ctx: &mut PassContext) {
        let mut to = vec![u32::MAX; m.values.len()];
        for (&from, &first) in &self.identity {
            let mut last = first;
            while let Some(&next) = self.identity.get(&last) {
                last = next;
            }
            to[from.index()] = last.0;
        }
        for f in 0..m.funcs.len() {
            let body = m.funcs[f].body;
            rename_operands(m, body, &to, ctx);
        }
    }
}

/// Renames operands through `to` (indexed by value; `u32::MAX`: not renamed) in the ops
/// of `region` and of the regions nested in them, marking the ops it changes as edited.
fn rename_operands(m: &mut Module, region: RegionId, to: &[u32], ctx: &mut PassContext) {
    for i in 0..m.region(region).ops.len() {
        let op = m.region(region).ops[i];
        let mut changed = false;
        for v in &mut m.op_mut(op).operands {
            if let Some(&n) = to.get(v.index()).filter(|&&n| n != u32::MAX) {
                *v = ValueId(n);
                changed = true;
            }
        }
        if changed {
            ctx.mark_edited(op);
        }
        for j in 0..m.op(op).regions.len() {
            let r = m.op(op).regions[j];
            rename_operands(m, r, to, ctx);
        }
    }
}

fn narrow_type(m: &mut Module, v: ValueId) -> TypeId {
    let shape = m
        .tensor_type(v)
        .map(|t| t.shape.clone())
        .unwrap_or_default();
    m.types.tensor(I32, &shape)
}
