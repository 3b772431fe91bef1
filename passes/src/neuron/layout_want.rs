//! The cost model of layout assignment, precomputed per operand edge so the solver's inner
//! loops neither hash, allocate, look up attributes nor dispatch on op kinds.
//!
//! Owns: [`CostModel`] (per edge: what the operand's layout must be for every layout of
//! the op's result, as a small table of [`Target`]s; per-op own costs; the dataflow in
//! compact position-indexed tables; the operand/result pairs elementwise grouping ties)
//! and the [`Want`] it answers with. Ops are addressed by their position in the region
//! order, edges by their index in the flattened operand lists.
//! Invariants: the cost of an edge and [`CostModel::op_cost`] are pure functions of the
//! module and the two layouts; every cost is `0.0`, the edge's bytes, or bytes times a
//! constant weight, so sums taken in the same order are bit-for-bit reproducible. A
//! result layout is `None` or a dimension below the result's rank (a candidate of its
//! type), which is the range the tables cover.

use super::graph::{Csr, RegionGraph};
use super::layout::Part;
use super::layout_spec::{push_kept, DimSet, OwnCost, Spec, Target, TypeRow, TypeTable, MISSING};
use neuronc_ir::{Module, Op, TypeId, Value, ValueDef};
use rustc_hash::FxHashMap;

pub use super::layout_spec::NONE;

/// What an op needs of one operand's layout given its result layout.
#[derive(Clone, Copy, Debug)]
pub enum Want {
    /// No preference (scalars, opaque ops that go through HBM anyway).
    Any,
    /// Exactly this partition dimension, else a transpose of the operand.
    Exact(Part),
    /// One of these dimensions (matmul contraction), else a transpose.
    OneOf(DimSet),
    /// Reduce input: `Exact(keep)` when the partition dim is kept, or a cross-partition
    /// reduction when it is one of `reduced`.
    Reduce { keep: Part, reduced: DimSet },
}

/// How an edge's cost depends on the layouts at its ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Always free: a function argument, a scalar, or an operand the op has no wish for.
    Free,
    /// The operand wants the result's layout (elementwise-like ops, same rank).
    SameAsResult,
    /// The operand wants the edge's [`Target`] for the result layout.
    Table,
    /// The operand wants one of the dimensions of the edge's set (contraction).
    OneOf,
    /// A reduce input: the edge's target is `keep`, its set the reduced dimensions.
    Reduce,
}

/// One operand edge.
struct Edge {
    /// The operand.
    value: u32,
    /// First result of the user op (`NONE` if it has none): the layout the edge's
    /// requirement is keyed on.
    res: u32,
    /// Targets of the result layouts `None, Some(0), Some(1), ...` start at
    /// `targets[tab]` (rules `Table` and `Reduce`).
    tab: u32,
    /// Index in `sets` (rules `OneOf` and `Reduce`).
    set: u32,
    /// Bytes of the operand.
    bytes: f64,
    rule: Rule,
}

/// Function arguments live in HBM and are DMA-loaded straight into each consumer's
/// layout: their edges are free.
fn is_function_arg(m: &Module, value: &Value) -> bool {
    matches!(value.def, ValueDef::RegionArg(r, _) if m.region(r).parent.is_none())
}

/// One op.
struct OpRow {
    /// Operand edges: `edges[edge_start..edge_end]`.
    edge_start: u32,
    edge_end: u32,
    /// First result (`NONE` if it has none).
    res: u32,
    /// Whether the cost at the op can depend on layouts (some edge is not free, or the
    /// op has an own cost).
    costly: bool,
    own: OwnCost,
}

/// Precomputed costs and dataflow of one region, in compact position-indexed tables.
pub struct CostModel {
    ops: Vec<OpRow>,
    edges: Vec<Edge>,
    targets: Vec<Target>,
    /// Dimension sets of rules `OneOf` and `Reduce`, with the cross-partition weight of
    /// the latter.
    sets: Vec<(DimSet, f64)>,
    /// Results of all ops, in program order.
    results: Vec<u32>,
    /// (operand, first result) of elementwise ops where the operand has the result's
    /// shape (rank > 0) and is a result of an earlier op, in program order, each as its
    /// index in `results` (so the operand's is the smaller).
    links: Vec<(u32, u32)>,
    /// For each value: the position of the op whose first result it is, else `NONE`.
    def0: Vec<u32>,
    /// Direct uses of each value as edge indices, in program order.
    uses: Csr<u32>,
}

/// Construction scratch of [`CostModel::new`].
struct Built {
    /// Per value: its index in `CostModel::results` once an op added so far defines it,
    /// else `NONE`.
    result_index: Vec<u32>,
    /// (operand type, result type) of a reshape -> its targets in `CostModel::targets`.
    reshape_tabs: FxHashMap<(TypeId, TypeId), u32>,
}

impl CostModel {
    pub fn new(m: &Module, g: &RegionGraph, types: &TypeTable) -> CostModel {
        let n = g.order.len();
        let mut c = CostModel {
            ops: Vec::with_capacity(n),
            // Room for about three operands per op, and below two results and two links
            // per op (binary elementwise ops link both operands; multi-result ops): growing
            // the lists would copy them, and room never used costs nothing.
            edges: Vec::with_capacity(3 * n),
            targets: Vec::new(),
            sets: Vec::new(),
            results: Vec::with_capacity(2 * n),
            links: Vec::with_capacity(2 * n),
            def0: vec![NONE; m.values.len()],
            uses: Csr::default(),
        };
        let mut built = Built {
            result_index: vec![NONE; m.values.len()],
            reshape_tabs: FxHashMap::default(),
        };
        for (pos, &op) in g.order.iter().enumerate() {
            c.add_op(m, types, pos, m.op(op), &mut built);
        }
        c.index_uses(m.values.len());
        c
    }

    /// Appends the op `o` at position `pos`: its results, edges, targets and own cost.
    fn add_op(&mut self, m: &Module, types: &TypeTable, pos: usize, o: &Op, built: &mut Built) {
        let res = o.results.first().map_or(NONE, |r| r.0);
        let res_index = self.results.len() as u32;
        for r in &o.results {
            built.result_index[r.index()] = self.results.len() as u32;
            self.results.push(r.0);
        }
        let res_row = match o.results.first() {
            Some(&r) => types.row(m, r),
            None => &MISSING,
        };
        let edge_start = self.edges.len() as u32;
        let costly = if o.kind.is_elementwise() {
            let first = (res, res_index);
            self.add_elementwise_edges(m, types, o, first, res_row, &built.result_index)
        } else {
            self.add_edges(m, types, o, res, res_row, &mut built.reshape_tabs)
        };
        if res != NONE {
            self.def0[res as usize] = pos as u32;
        }
        let own = OwnCost::of(m, o);
        self.ops.push(OpRow {
            edge_start,
            edge_end: self.edges.len() as u32,
            res,
            costly: costly || !matches!(own, OwnCost::Zero),
            own,
        });
    }

    /// Appends the edges of an elementwise op (rule [`Spec::SameRank`]) with first result
    /// `res` (at `res_index` in `results`), and its links; returns whether some edge is not
    /// free.
    fn add_elementwise_edges(
        &mut self,
        m: &Module,
        types: &TypeTable,
        o: &Op,
        (res, res_index): (u32, u32),
        res_row: &TypeRow,
        result_index: &[u32],
    ) -> bool {
        let mut costly = false;
        for &v in &o.operands {
            let value = m.value(v);
            let row = types.row_of(value.ty);
            let index = result_index[v.index()];
            if row.shape != NONE && row.shape == res_row.shape && index != NONE {
                self.links.push((index, res_index));
            }
            let same = row.rank != 0
                && !is_function_arg(m, value)
                && row.rank == res_row.rank
                && res != NONE;
            costly |= same;
            self.edges.push(Edge {
                value: v.0,
                res,
                tab: 0,
                set: 0,
                bytes: row.bytes,
                rule: if same { Rule::SameAsResult } else { Rule::Free },
            });
        }
        costly
    }

    /// Appends the edges (and their targets and sets) of a non-elementwise op with first
    /// result `res`; returns whether some edge is not free.
    fn add_edges(
        &mut self,
        m: &Module,
        types: &TypeTable,
        o: &Op,
        res: u32,
        res_row: &TypeRow,
        reshape_tabs: &mut FxHashMap<(TypeId, TypeId), u32>,
    ) -> bool {
        let spec = Spec::of(m, o, false);
        let set = self.sets.len() as u32;
        match &spec {
            Spec::Contract(lhs, rhs) => self.sets.extend([(*lhs, 0.0), (*rhs, 0.0)]),
            Spec::Reduce { dims, weight, .. } => {
                let mut reduced = DimSet::default();
                dims.iter().for_each(|&d| reduced.insert(d as u8));
                self.sets.push((reduced, *weight));
            }
            _ => {}
        }
        // Targets shared by all edges of the op (they do not depend on the operand).
        let mut shared: Option<u32> = None;
        let mut costly = false;
        for (i, &v) in o.operands.iter().enumerate() {
            let value = m.value(v);
            let row = types.row_of(value.ty);
            let mut e = Edge {
                value: v.0,
                res,
                tab: 0,
                set,
                bytes: row.bytes,
                rule: Rule::Free,
            };
            if row.rank != 0 && !is_function_arg(m, value) {
                let (rank, res_rank) = (row.rank, res_row.rank);
                match &spec {
                    Spec::Any => {}
                    Spec::SameRank if res_rank == rank && res != NONE => {
                        e.rule = Rule::SameAsResult
                    }
                    Spec::SameRank => {}
                    Spec::Transpose(_) | Spec::Broadcast { .. } | Spec::Reshape { .. } => {
                        e.rule = Rule::Table;
                        e.tab = *shared.get_or_insert_with(|| {
                            // A reshape's targets depend on its two types only: one
                            // table per pair (repeated layers repeat their reshapes).
                            let key = matches!(spec, Spec::Reshape { .. })
                                .then(|| (value.ty, m.value_type(o.results[0])));
                            if let Some(&tab) = key.as_ref().and_then(|k| reshape_tabs.get(k)) {
                                return tab;
                            }
                            let tab = self.targets.len() as u32;
                            spec.push_targets(&mut self.targets, res_rank);
                            if let Some(k) = key {
                                reshape_tabs.insert(k, tab);
                            }
                            tab
                        });
                    }
                    Spec::Reduce { inputs, dims, .. } if i < *inputs => {
                        e.rule = Rule::Reduce;
                        e.tab = self.targets.len() as u32;
                        push_kept(&mut self.targets, dims, rank, res_rank);
                    }
                    Spec::Reduce { .. } => {}
                    Spec::Contract(..) => {
                        e.rule = Rule::OneOf;
                        e.set = set + u32::from(i != 0);
                    }
                }
            }
            costly |= e.rule != Rule::Free;
            self.edges.push(e);
        }
        costly
    }

    /// The edges by operand value (program order per value), over `values` values.
    fn index_uses(&mut self, values: usize) {
        let mut counts = vec![0u32; values + 1];
        for e in &self.edges {
            counts[e.value as usize] += 1;
        }
        let keyed = self.edges.iter().enumerate();
        self.uses = Csr::bucketed(counts, keyed.map(|(ei, e)| (e.value, ei as u32)));
    }

    /// Results of all ops, in program order.
    pub fn results(&self) -> &[u32] {
        &self.results
    }

    /// The (operand, first result) pairs that elementwise ops tie into one layout group,
    /// as indices in [`CostModel::results`] (the operand's is the smaller).
    pub fn links(&self) -> &[(u32, u32)] {
        &self.links
    }

    fn edges_of(&self, pos: usize) -> &[Edge] {
        let op = &self.ops[pos];
        &self.edges[op.edge_start as usize..op.edge_end as usize]
    }

    /// Operand values of op `pos`, in operand order.
    pub fn operands(&self, pos: usize) -> impl Iterator<Item = u32> + '_ {
        self.edges_of(pos).iter().map(|e| e.value)
    }

    /// Position of the op whose first result is value `v`, if any.
    pub fn def0(&self, v: u32) -> Option<usize> {
        let p = *self.def0.get(v as usize)?;
        (p != NONE).then_some(p as usize)
    }

    /// First result of op `pos` (`NONE` if it has none).
    pub fn first_result(&self, pos: usize) -> u32 {
        self.ops[pos].res
    }

    /// Whether the cost at op `pos` (its own cost and its edges') can be nonzero.
    pub fn costly(&self, pos: usize) -> bool {
        self.ops[pos].costly
    }

    /// Direct uses of value `v`, as edge indices.
    pub fn uses(&self, v: u32) -> &[u32] {
        self.uses.of(v)
    }

    /// First result of the user op of edge `ei` (`NONE` if it has none).
    pub fn user_result(&self, ei: u32) -> u32 {
        self.edges[ei as usize].res
    }

    /// The cost of every candidate layout of a group of values that take one layout
    /// together (`group`, members tested by `in_group`): `sums[k].0` is
    /// `Σ_v (cost at the op whose first result is v + Σ costs of the uses of v)` when the
    /// whole group takes `cands[k]` and every other value keeps its layout in `part`, each
    /// added up in operand order (`sums[k].1` is scratch). Edges that cost zero whatever
    /// the group's layout (free edges, and edges wanting the result's layout between two
    /// members) are skipped: adding their zero would change no sum.
    pub fn group_costs(
        &self,
        group: &[u32],
        in_group: impl Fn(u32) -> bool,
        cands: &[Part],
        part: &[Part],
        sums: &mut Vec<(f64, f64)>,
    ) {
        sums.clear();
        sums.resize(cands.len(), (0.0, 0.0));
        for &v in group {
            if let Some(p) = self.def0(v) {
                let op = &self.ops[p];
                for ((cost, def), &c) in sums.iter_mut().zip(cands) {
                    *cost += *def;
                    *def = op.own.at(c);
                }
                for e in &self.edges[op.edge_start as usize..op.edge_end as usize] {
                    self.add_def_edge(e, in_group(e.value), cands, part, sums);
                }
            }
            for &ei in self.uses(v) {
                let e = &self.edges[ei as usize];
                let inner = e.res != NONE && in_group(e.res);
                self.add_use_edge(e, inner, cands, part, sums);
            }
        }
        for (cost, def) in sums.iter_mut() {
            *cost += *def;
        }
    }

    /// Adds edge `e` into the op defining a group member (the result's layout varies with
    /// the candidate; so does the operand's when `inner`) to the pending definition costs.
    #[inline(always)]
    fn add_def_edge(
        &self,
        e: &Edge,
        inner: bool,
        cands: &[Part],
        part: &[Part],
        sums: &mut [(f64, f64)],
    ) {
        let q = part[e.value as usize];
        match e.rule {
            Rule::Free => {}
            Rule::SameAsResult if inner => {}
            Rule::SameAsResult => {
                for ((_, def), &c) in sums.iter_mut().zip(cands) {
                    if q != c {
                        *def += e.bytes;
                    }
                }
            }
            _ => {
                for ((_, def), &c) in sums.iter_mut().zip(cands) {
                    *def += self.cost_of(e, if inner { c } else { q }, c);
                }
            }
        }
    }

    /// Adds edge `e` from a group member (the operand's layout varies with the candidate;
    /// so does the user's result's when `inner`) to the costs, after the pending
    /// definition costs.
    #[inline(always)]
    fn add_use_edge(
        &self,
        e: &Edge,
        inner: bool,
        cands: &[Part],
        part: &[Part],
        sums: &mut [(f64, f64)],
    ) {
        let r = match e.res {
            NONE => None,
            r => part[r as usize],
        };
        match e.rule {
            Rule::Free => {}
            Rule::SameAsResult if inner => {}
            Rule::SameAsResult => {
                for ((cost, def), &c) in sums.iter_mut().zip(cands) {
                    *cost += *def;
                    *def = 0.0;
                    if r != c {
                        *cost += e.bytes;
                    }
                }
            }
            _ => {
                for ((cost, def), &c) in sums.iter_mut().zip(cands) {
                    *cost += *def;
                    *def = 0.0;
                    *cost += self.cost_of(e, c, if inner { c } else { r });
                }
            }
        }
    }

    /// The target of edge `e` for result layout `r` (`None`: no preference).
    #[inline(always)]
    fn target(&self, e: &Edge, r: Part) -> Target {
        let slot = r.map_or(0, |d| usize::from(d) + 1);
        // Out-of-range layouts are not candidates of the result: unreachable.
        self.targets.get(e.tab as usize + slot).copied().flatten()
    }

    /// What op `pos` wants of operand `i` given result layout `r`.
    pub fn want(&self, pos: usize, i: usize, r: Part) -> Want {
        let e = &self.edges_of(pos)[i];
        match e.rule {
            Rule::Free => Want::Any,
            Rule::SameAsResult => Want::Exact(r),
            Rule::Table => self.target(e, r).map_or(Want::Any, Want::Exact),
            Rule::OneOf => Want::OneOf(self.sets[e.set as usize].0),
            Rule::Reduce => Want::Reduce {
                keep: self.target(e, r).flatten(),
                reduced: self.sets[e.set as usize].0,
            },
        }
    }

    /// The edges into op `pos` that cost something when its result has layout `r` and
    /// operands have their layouts in `part`: (operand index, operand, its layout, cost).
    pub fn costly_edges<'s>(
        &'s self,
        pos: usize,
        r: Part,
        part: &'s [Part],
    ) -> impl Iterator<Item = (usize, u32, Part, f64)> + 's {
        self.edges_of(pos)
            .iter()
            .enumerate()
            .filter(|(_, e)| e.rule != Rule::Free)
            .filter_map(move |(i, e)| {
                let q = part[e.value as usize];
                let cost = self.cost_of(e, q, r);
                (cost != 0.0).then_some((i, e.value, q, cost))
            })
    }

    /// Cost on the edge `e` when the operand has layout `q` and the user's result has
    /// layout `r`.
    #[inline(always)]
    fn cost_of(&self, e: &Edge, q: Part, r: Part) -> f64 {
        let missed = |hit: bool| if hit { 0.0 } else { e.bytes };
        match e.rule {
            Rule::Free => 0.0,
            Rule::SameAsResult => missed(q == r),
            Rule::Table => match self.target(e, r) {
                None => 0.0,
                Some(p) => missed(p == q),
            },
            Rule::OneOf => {
                let dims = &self.sets[e.set as usize].0;
                missed(q.is_some_and(|d| dims.contains(d)) || dims.is_empty())
            }
            Rule::Reduce => {
                let (reduced, weight) = &self.sets[e.set as usize];
                match q {
                    Some(d) if reduced.contains(d) => e.bytes * weight,
                    _ => missed(self.target(e, r) == Some(q)),
                }
            }
        }
    }

    /// The greedy choice for the first result of op `pos` among `cands`, given the
    /// layouts of its operands in `part`: the first candidate with the lowest cost at the
    /// op (its own cost plus the cost of every edge, summed in operand order; `sums` is
    /// scratch).
    pub fn best_def(&self, pos: usize, cands: &[Part], part: &[Part], sums: &mut Vec<f64>) -> Part {
        let op = &self.ops[pos];
        sums.clear();
        sums.extend(cands.iter().map(|&c| op.own.at(c)));
        for e in &self.edges[op.edge_start as usize..op.edge_end as usize] {
            if e.rule != Rule::Free {
                let q = part[e.value as usize];
                for (sum, &c) in sums.iter_mut().zip(cands) {
                    *sum += self.cost_of(e, q, c);
                }
            }
        }
        let (mut best, mut choice) = (f64::INFINITY, None);
        for (&cost, &c) in sums.iter().zip(cands) {
            if cost < best - 1e-9 {
                (best, choice) = (cost, c);
            }
        }
        choice
    }

    /// Position of the op that edge `ei` is an operand of.
    pub fn edge_op(&self, ei: u32) -> usize {
        match self.def0(self.edges[ei as usize].res) {
            Some(pos) => pos,
            // An op without results (a terminator): search the op rows.
            None => self.ops.partition_point(|op| op.edge_end <= ei),
        }
    }

    /// The whole cost at op `pos` under `part`: its own cost for its result's layout plus
    /// the cost of each of its operand edges, in operand order.
    pub fn cost_at(&self, pos: usize, part: &[Part]) -> f64 {
        let r = match self.ops[pos].res {
            NONE => None,
            v => part[v as usize],
        };
        let edges = self.costly_edges(pos, r, part).map(|(.., c)| c);
        edges.fold(self.op_cost(pos, r), |a, c| a + c)
    }

    /// Cost of op `pos`'s result layout by itself (matmul output on a free axis).
    pub fn op_cost(&self, pos: usize, r: Part) -> f64 {
        self.ops[pos].own.at(r)
    }
}
