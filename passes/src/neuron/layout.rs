//! NeuronCore layout assignment: which logical dimension of every tensor lies on the 128
//! SBUF partitions.
//!
//! Owns: [`assign_layouts`] and its result [`LayoutPlan`], a side table from value to
//! partition dimension plus the relayouts (physical transposes) and cross-partition
//! reductions the choice implies.
//!
//! # Model
//! A layout is the logical dimension mapped to partitions (`None` for scalars); the
//! remaining dimensions are the free axis in row-major order. Free-axis permutations are
//! absorbed by DMA/engine access patterns (up to 4-D strided, `neuron-facts.md` §1.3), so
//! only a change of the *partition* dimension moves data. Logical `transpose`/`reshape`
//! ops are therefore free relabelings when the partition dimension survives them.
//! Requirements come from the hardware (`neuron-facts.md` §0, §1.4): a matmul contracts
//! over the partition axis of both operands, and its output's partition axis is the
//! stationary operand's free axis; elementwise ops want identical layouts; reductions
//! along the free axis are cheap, across partitions expensive.
//!
//! # Solver
//! Each value picks a partition dimension; every (producer, consumer) edge and every op
//! has a cost in bytes moved. The assignment minimises the total by a greedy forward pass
//! followed by deterministic coordinate-descent sweeps (iterated conditional modes). A
//! conflicting edge becomes a [`Relayout`]; its bytes are what `explain` reports as
//! `transpose_bytes`. Function arguments satisfy every consumer at no cost: they live in
//! HBM and each consumer's DMA load reads them in the layout it wants (and weights are
//! placed in HBM by the compiler, as neuronx-cc does). The costs live in
//! [`super::layout_want`], precomputed per op; candidate layouts are computed once per
//! type; a sweep re-evaluates only the groups whose neighbourhood changed since their last
//! evaluation (the others would keep their choice).
//! Invariant: every value defined in the region (and every region argument) has an entry
//! of `part` (indexed by value id).

use super::graph::{value_bytes, RegionGraph};
use super::layout_want::{CostModel, Want, NONE};
use neuronc_ir::{Module, OpId, ValueId};

/// Partition dimension of a tensor (`None`: scalar / no partition axis).
pub type Part = Option<u8>;

/// A physical transpose the layout forces on one edge.
#[derive(Clone, Debug, PartialEq)]
pub struct Relayout {
    pub value: ValueId,
    pub consumer: OpId,
    pub operand: usize,
    pub from: Part,
    pub to: Part,
    pub bytes: u64,
}

/// Result of layout assignment for one region.
#[derive(Clone, Debug, Default)]
pub struct LayoutPlan {
    /// Partition dimension of every value, indexed by [`ValueId::index`] (`None` for values
    /// without a partition axis and for values outside the region).
    pub part: Vec<Part>,
    pub relayouts: Vec<Relayout>,
    /// Reductions whose reduced dimensions include the operand's partition dimension.
    pub cross_partition_reductions: Vec<OpId>,
    /// Total cost in byte-equivalents.
    pub cost: f64,
}

impl LayoutPlan {
    /// Bytes moved by relayouts (each distinct (value, target layout) counted once).
    pub fn transpose_bytes(&self) -> u64 {
        self.distinct_relayouts().map(|r| r.bytes).sum()
    }
    /// Number of distinct relayouts.
    pub fn transpose_count(&self) -> usize {
        self.distinct_relayouts().count()
    }
    fn distinct_relayouts(&self) -> impl Iterator<Item = &Relayout> {
        let mut seen = rustc_hash::FxHashSet::default();
        self.relayouts
            .iter()
            .filter(move |r| seen.insert((r.value, r.to)))
    }
    pub fn of(&self, v: ValueId) -> Part {
        self.part.get(v.index()).copied().flatten()
    }
}

/// The solver's state: the cost model and the current layout of every value.
struct Solver<'a> {
    m: &'a Module,
    g: &'a RegionGraph,
    cands: &'a Candidates,
    costs: CostModel,
    part: Vec<Part>,
}

/// Assigns layouts to every value of `region` (normally a function body).
pub fn assign_layouts(m: &Module, g: &RegionGraph) -> LayoutPlan {
    let cands = Candidates::new(m);
    let mut s = Solver {
        m,
        g,
        cands: &cands,
        costs: CostModel::new(m, g),
        part: vec![None; m.values.len()],
    };
    for &a in &m.region(g.region).args {
        s.part[a.index()] = cands.of(m, a)[0];
    }
    // Greedy forward pass: each op's results choose given their operands.
    for &op in &g.order {
        for &r in &m.op(op).results {
            s.part[r.index()] = s.best_choice(r);
        }
    }
    // Coordinate descent over groups of values that elementwise ops tie together (a whole
    // chain flips at once), alternating directions; stops when nothing changes.
    // A group with one candidate never moves.
    let all = elementwise_groups(m, g);
    let groups: Vec<(&[ValueId], &[Part])> = all
        .iter()
        .map(|group| (group, cands.of(m, group[0])))
        .filter(|g| g.1.len() > 1)
        .collect();
    s.sweeps(&groups);
    s.finish()
}

/// Groups of values, flattened: group `i` is `items[start[i]..start[i + 1]]`.
struct Groups {
    start: Vec<u32>,
    items: Vec<ValueId>,
}

impl Groups {
    fn iter(&self) -> impl Iterator<Item = &[ValueId]> + '_ {
        self.start
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }
}

/// Values linked by same-shape elementwise ops, in program order of their first member
/// (each group's values in program order).
fn elementwise_groups(m: &Module, g: &RegionGraph) -> Groups {
    // Union-find over value indices; `NONE` marks values not defined by the region's ops.
    let mut parent: Vec<u32> = vec![NONE; m.values.len()];
    fn root(p: &mut [u32], v: u32) -> u32 {
        let mut r = v;
        while p[r as usize] != r {
            r = p[r as usize];
        }
        let mut x = v;
        while p[x as usize] != r {
            let next = p[x as usize];
            p[x as usize] = r;
            x = next;
        }
        r
    }
    let mut values = Vec::with_capacity(m.values.len());
    for &op in &g.order {
        let o = m.op(op);
        for &r in &o.results {
            parent[r.index()] = r.0;
            values.push(r);
        }
        let Some(&res) = o.results.first() else {
            continue;
        };
        if !o.kind.is_elementwise() {
            continue;
        }
        let shape = m.tensor_type(res).map(|t| &t.shape);
        for &v in &o.operands {
            let same = m.tensor_type(v).map(|t| &t.shape) == shape && rank(m, v) > 0;
            if same && parent[v.index()] != NONE {
                let (a, b) = (root(&mut parent, v.0), root(&mut parent, res.0));
                if a != b {
                    parent[b as usize] = a;
                }
            }
        }
    }
    // Group index of each root, in order of first appearance; then a counting sort of
    // the values by group keeps program order within each group.
    let mut index: Vec<u32> = vec![NONE; m.values.len()];
    let mut group_of = Vec::with_capacity(values.len());
    let mut start: Vec<u32> = vec![0];
    for &v in &values {
        let r = root(&mut parent, v.0) as usize;
        if index[r] == NONE {
            index[r] = start.len() as u32 - 1;
            start.push(0);
        }
        group_of.push(index[r]);
        start[index[r] as usize + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut fill = start.clone();
    let mut items = vec![ValueId(0); values.len()];
    for (&v, &gi) in values.iter().zip(&group_of) {
        items[fill[gi as usize] as usize] = v;
        fill[gi as usize] += 1;
    }
    Groups { start, items }
}

impl Solver<'_> {
    /// Up to six coordinate-descent sweeps over `groups`, alternating direction, until a
    /// sweep changes nothing. A group is re-evaluated only when a layout its costs read
    /// changed since its last evaluation: otherwise it would keep its choice (costs are
    /// sums of byte counts and half byte counts, so the comparisons are exact and the
    /// current choice wins ties).
    fn sweeps(&mut self, groups: &[(&[ValueId], &[Part])]) {
        let mut group_of = vec![NONE; self.part.len()];
        for (gi, &(group, _)) in groups.iter().enumerate() {
            for v in group {
                group_of[v.index()] = gi as u32;
            }
        }
        let mut dirty = vec![true; groups.len()];
        for sweep in 0..6 {
            let mut changed = false;
            for step in 0..groups.len() {
                let gi = if sweep % 2 == 0 {
                    groups.len() - 1 - step
                } else {
                    step
                };
                if !std::mem::replace(&mut dirty[gi], false) {
                    continue;
                }
                let (group, cands) = &groups[gi];
                let (moved, touched) = self.improve_group(group, cands);
                changed |= moved;
                if touched {
                    self.mark_dependents(group, &group_of, &mut dirty);
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Marks dirty every group whose costs read a layout of `group`: groups defined by
    /// users of `group` (their def cost reads it as an operand) and groups of the
    /// operands of ops whose first result is in `group` (their use costs read it).
    fn mark_dependents(&self, group: &[ValueId], group_of: &[u32], dirty: &mut [bool]) {
        let mut mark = |v: u32| {
            if v != NONE && group_of[v as usize] != NONE {
                dirty[group_of[v as usize] as usize] = true;
            }
        };
        for &v in group {
            for &(u, _) in self.costs.uses(v.0) {
                mark(self.costs.first_result[u as usize]);
            }
            if let Some(p) = self.costs.def0(v.0) {
                for o in self.costs.operands(p) {
                    mark(o);
                }
            }
        }
    }

    /// Moves all values of `group` to the candidate with the lowest total cost of the
    /// edges and ops around them. Returns whether the choice differs from the layout of
    /// the group's first value, and whether the layout of any value changed (the greedy
    /// pass may have left a group's values disagreeing).
    fn improve_group(&mut self, group: &[ValueId], cands: &[Part]) -> (bool, bool) {
        let current = self.part[group[0].index()];
        let uniform = group.iter().all(|v| self.part[v.index()] == current);
        let mut best: Option<(f64, Part)> = None;
        for &c in cands {
            for &v in group {
                self.part[v.index()] = c;
            }
            let mut cost = 0.0;
            for &v in group {
                cost += self.def_cost(v.0, c);
                for &(u, i) in self.costs.uses(v.0) {
                    let r = self.result_part(u as usize);
                    cost += self.costs.edge_cost(u as usize, i as usize, c, r);
                }
            }
            let better = match best {
                None => true,
                Some((b, _)) => cost < b - 1e-9 || (cost <= b + 1e-9 && c == current),
            };
            if better {
                best = Some((cost, c));
            }
        }
        let choice = best.map_or(current, |(_, c)| c);
        for &v in group {
            self.part[v.index()] = choice;
        }
        (choice != current, choice != current || !uniform)
    }

    /// Greedy choice for `v` given the layouts of its operands only.
    fn best_choice(&self, v: ValueId) -> Part {
        let mut best: Option<(f64, Part)> = None;
        for &c in self.cands.of(self.m, v) {
            let cost = self.def_cost(v.0, c);
            if best.is_none_or(|(b, _)| cost < b - 1e-9) {
                best = Some((cost, c));
            }
        }
        best.and_then(|(_, c)| c)
    }

    /// Layout of the first result of op `pos` (what its operand requirements are keyed on).
    fn result_part(&self, pos: usize) -> Part {
        let r = self.costs.first_result[pos];
        if r == NONE {
            None
        } else {
            self.part[r as usize]
        }
    }

    /// Cost at the definition of `v` when it takes layout `c`: the op's own cost plus
    /// the edges from its operands (zero unless `v` is the first result of an op).
    fn def_cost(&self, v: u32, c: Part) -> f64 {
        let Some(p) = self.costs.def0(v) else {
            return 0.0;
        };
        self.costs.def_cost(p, c, &self.part)
    }

    fn finish(self) -> LayoutPlan {
        let (m, g) = (self.m, self.g);
        let mut plan = LayoutPlan::default();
        for (p, &op) in g.order.iter().enumerate() {
            let r = self.result_part(p);
            if let Some(&res) = m.op(op).results.first() {
                let own = self.costs.op_cost(p, r);
                plan.cost += own;
                if own > 0.0 {
                    plan.relayouts.push(Relayout {
                        value: res,
                        consumer: op,
                        operand: usize::MAX,
                        from: r,
                        to: r,
                        bytes: value_bytes(m, res),
                    });
                }
            }
            for (i, &v) in m.op(op).operands.iter().enumerate() {
                let q = self.part[v.index()];
                let c = self.costs.edge_cost(p, i, q, r);
                if c == 0.0 {
                    continue;
                }
                plan.cost += c;
                let w = self.costs.want(p, i, r);
                if let (Want::Reduce { reduced, .. }, Some(d)) = (&w, q) {
                    if reduced.contains(d) {
                        plan.cross_partition_reductions.push(op);
                        continue;
                    }
                }
                let to = match w {
                    Want::Exact(p) | Want::Reduce { keep: p, .. } => p,
                    Want::OneOf(d) => d.first(),
                    Want::Any => q,
                };
                plan.relayouts.push(Relayout {
                    value: v,
                    consumer: op,
                    operand: i,
                    from: q,
                    to,
                    bytes: value_bytes(m, v),
                });
            }
        }
        plan.part = self.part;
        plan
    }
}

/// The candidate partition dims of every type interned in a module ([`candidates`]),
/// computed once per type: `items[start[t]..start[t + 1]]` are those of type `t`.
struct Candidates {
    start: Vec<u32>,
    items: Vec<Part>,
}

impl Candidates {
    fn new(m: &Module) -> Self {
        let mut start = Vec::with_capacity(m.types.len() + 1);
        let mut items = Vec::new();
        start.push(0);
        for t in 0..m.types.len() as u32 {
            items.extend(candidates(m.types.tensor_of(neuronc_ir::TypeId(t))));
            start.push(items.len() as u32);
        }
        Candidates { start, items }
    }

    /// The candidates of `v`, most preferred first.
    fn of(&self, m: &Module, v: ValueId) -> &[Part] {
        let t = m.value_type(v).0 as usize;
        match (self.start.get(t), self.start.get(t + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            // Unreachable: planning never interns types after building this table.
            _ => &[None],
        }
    }
}

/// Candidate partition dims of a value of type `t`, most preferred first: larger dims
/// first (`[None]` for non-tensors and tensors without a dimension above 1).
fn candidates(t: Option<&neuronc_ir::TensorType>) -> Vec<Part> {
    let Some(t) = t else {
        return vec![None];
    };
    let mut dims: Vec<u8> = (0..t.rank() as u8)
        .filter(|&d| t.shape[d as usize] > 1)
        .collect();
    dims.sort_by_key(|&d| (std::cmp::Reverse(t.shape[d as usize]), d));
    if dims.is_empty() {
        return vec![None];
    }
    dims.into_iter().map(Some).collect()
}

fn rank(m: &Module, v: ValueId) -> usize {
    m.tensor_type(v).map_or(0, |t| t.rank())
}

/// For dimension `d` of `from`, the dimension of `to` that holds the same innermost
/// elements within the same reshape group, if `d` is innermost non-unit in its group.
pub fn reshape_partner(from: &[i64], to: &[i64], d: usize) -> Option<usize> {
    partner_in(&reshape_groups(from, to)?, from, to, d)
}

/// [`reshape_partner`] of every dimension of `from` (the groups computed once).
pub fn reshape_partners(from: &[i64], to: &[i64]) -> Vec<Option<usize>> {
    match reshape_groups(from, to) {
        Some(groups) => (0..from.len())
            .map(|d| partner_in(&groups, from, to, d))
            .collect(),
        None => vec![None; from.len()],
    }
}

/// [`reshape_partner`] given the reshape groups of `from` and `to`.
fn partner_in(
    groups: &[(usize, usize, usize, usize)],
    from: &[i64],
    to: &[i64],
    d: usize,
) -> Option<usize> {
    let (fa, fb, ta, tb) = *groups.iter().find(|(a, b, _, _)| (*a..*b).contains(&d))?;
    let inner = |s: &[i64], a: usize, b: usize| (a..b).rev().find(|&k| s[k] != 1);
    if inner(from, fa, fb) != Some(d) {
        return None;
    }
    let q = inner(to, ta, tb)?;
    // Splitting or merging around the partition dim is a re-tiling when both extents
    // tile the 128 partitions evenly (sub-tiles start at 0/32/64/96, §1.3).
    let aligned = |n: i64| n > 0 && (128 % n == 0 || n % 128 == 0);
    (from[d] == to[q] || aligned(from[d]) && aligned(to[q])).then_some(q)
}

/// Row-major dimension groups with equal products: (from_start, from_end, to_start, to_end).
fn reshape_groups(from: &[i64], to: &[i64]) -> Option<Vec<(usize, usize, usize, usize)>> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < from.len() || j < to.len() {
        let (si, sj) = (i, j);
        let (mut pf, mut pt) = (1i128, 1i128);
        if i < from.len() {
            pf *= from[i] as i128;
            i += 1;
        }
        if j < to.len() {
            pt *= to[j] as i128;
            j += 1;
        }
        while pf != pt {
            if pf < pt && i < from.len() {
                pf *= from[i] as i128;
                i += 1;
            } else if pt < pf && j < to.len() {
                pt *= to[j] as i128;
                j += 1;
            } else {
                return None;
            }
        }
        out.push((si, i, sj, j));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reshape_partner_split_and_merge() {
        // [8, 768] -> [8, 12, 64]: the hidden dim (innermost) maps to the head dim.
        assert_eq!(reshape_partner(&[8, 768], &[8, 12, 64], 1), Some(2));
        assert_eq!(reshape_partner(&[8, 12, 64], &[8, 768], 2), Some(1));
        // The batch dim maps to itself.
        assert_eq!(reshape_partner(&[8, 768], &[8, 12, 64], 0), Some(0));
        // A dim that is not innermost in its group has no partner.
        assert_eq!(reshape_partner(&[8, 12, 64], &[8, 768], 1), None);
        // Mismatched products.
        assert_eq!(reshape_partner(&[6], &[4], 0), None);
    }
}
