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
//! [`super::layout_want`], precomputed per operand edge from the per-type and per-op facts
//! of [`super::layout_spec`] (candidate layouts are computed once per type); a sweep
//! evaluates all candidates of a group in one pass over the edges around it, and
//! re-evaluates only the groups whose neighbourhood changed since their last evaluation
//! (the others would keep their choice). The plan is read off the final layouts op by op
//! ([`super::layout_terms`]), reusing a scan made before the chain moves wherever the
//! layouts an op's costs read did not change.
//! Invariant: every value defined in the region (and every region argument) has an entry
//! of `part` (indexed by value id).

use super::graph::{Csr, RegionGraph};
use super::layout_spec::TypeTable;
use super::layout_want::{CostModel, NONE};
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
pub(super) struct Solver<'a> {
    pub(super) m: &'a Module,
    pub(super) g: &'a RegionGraph,
    pub(super) types: &'a TypeTable,
    pub(super) costs: CostModel,
    pub(super) part: Vec<Part>,
}

/// Assigns layouts to every value of `region` (normally a function body).
pub fn assign_layouts(m: &Module, g: &RegionGraph) -> LayoutPlan {
    let types = TypeTable::new(m);
    let mut s = Solver {
        m,
        g,
        types: &types,
        costs: CostModel::new(m, g, &types),
        part: vec![None; m.values.len()],
    };
    for &a in &m.region(g.region).args {
        s.part[a.index()] = types.cands(m, a)[0];
    }
    s.greedy();
    // Coordinate descent over groups of values that elementwise ops tie together (a whole
    // chain flips at once), alternating directions; stops when nothing changes.
    // A group with one candidate never moves.
    let all = elementwise_groups(&s.costs);
    let groups: Vec<(&[u32], &[Part])> = all
        .lists()
        .map(|group| (group, types.cands(m, ValueId(group[0]))))
        .filter(|g| g.1.len() > 1)
        .collect();
    let mut group_of = vec![NONE; s.part.len()];
    for (gi, &(group, _)) in groups.iter().enumerate() {
        for &v in group {
            group_of[v as usize] = gi as u32;
        }
    }
    // (The scan below reads the layouts these sweeps leave: what they moved is moot.)
    let mut moot = Vec::new();
    s.sweeps(&groups, &group_of, vec![true; groups.len()], &mut moot);
    // Moves along view chains (`layout_chain`) from the relayouts of the plan so far, then
    // settle the groups around them; the plan is that one at the ops they leave alone.
    let terms = s.scan();
    let mut changed = s.chain_moves(&group_of, &groups, &terms);
    if !changed.is_empty() {
        let mut dirty = vec![false; groups.len()];
        s.mark_dependents(&changed, &group_of, &mut dirty);
        s.sweeps(&groups, &group_of, dirty, &mut changed);
    }
    s.finish(terms, &changed)
}

/// Marks dirty the group of value `v` (`NONE`, or a value in no group: nothing).
#[inline]
fn mark_group_of(v: u32, group_of: &[u32], dirty: &mut [bool]) {
    if let Some(&g) = group_of.get(v as usize).filter(|&&g| g != NONE) {
        dirty[g as usize] = true;
    }
}

/// Values linked by same-shape elementwise ops ([`CostModel::links`]), in program order of
/// their first member (each group's values in program order): list `i` is group `i`.
fn elementwise_groups(costs: &CostModel) -> Csr<u32> {
    let results = costs.results();
    // Union-find over indices in `results` (path halving) whose roots are the first
    // members: a parent never follows its child.
    let mut parent: Vec<u32> = (0..results.len() as u32).collect();
    fn root(p: &mut [u32], mut x: u32) -> u32 {
        while p[x as usize] != x {
            let up = p[p[x as usize] as usize];
            p[x as usize] = up;
            x = up;
        }
        x
    }
    for &(v, res) in costs.links() {
        let (a, b) = (root(&mut parent, v), root(&mut parent, res));
        if a != b {
            parent[a.max(b) as usize] = a.min(b);
        }
    }
    // In program order a root opens the next group and any other value joins the group
    // of its parent, which came before it.
    let mut group_of: Vec<u32> = Vec::with_capacity(results.len());
    let mut counts: Vec<u32> = Vec::new();
    for (i, &p) in parent.iter().enumerate() {
        let g = if p as usize == i {
            counts.push(0);
            counts.len() as u32 - 1
        } else {
            group_of[p as usize]
        };
        group_of.push(g);
        counts[g as usize] += 1;
    }
    counts.push(0);
    Csr::bucketed(counts, group_of.into_iter().zip(results.iter().copied()))
}

impl Solver<'_> {
    /// Greedy forward pass: each op's results choose given their operands (the first
    /// result by the cost at its definition, the others their preferred candidate).
    fn greedy(&mut self) {
        let mut sums = Vec::new();
        for &r in self.costs.results() {
            let cands = self.types.cands(self.m, ValueId(r));
            self.part[r as usize] = match self.costs.def0(r) {
                Some(pos) if cands.len() > 1 && self.costs.costly(pos) => {
                    self.costs.best_def(pos, cands, &self.part, &mut sums)
                }
                // Every candidate costs zero (or there is one): the first wins.
                _ => cands[0],
            };
        }
    }

    /// Up to six coordinate-descent sweeps over `groups`, alternating direction, until a
    /// sweep changes nothing. A group is evaluated first if `dirty`, then again only when a
    /// layout its costs read changed since its last evaluation (by a move of another
    /// group): otherwise it would keep its choice (costs are sums of byte counts and half
    /// byte counts, so the comparisons are exact and the current choice wins ties).
    /// The values whose layout changed are appended to `changed_values` (repeats possible).
    fn sweeps(
        &mut self,
        groups: &[(&[u32], &[Part])],
        group_of: &[u32],
        mut dirty: Vec<bool>,
        changed_values: &mut Vec<u32>,
    ) {
        let mut sums = Vec::new();
        let mut moved_values = Vec::new();
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
                let (group, cands) = groups[gi];
                let in_group = |v: u32| group_of[v as usize] == gi as u32;
                let scratch = (&mut sums, &mut moved_values);
                changed |= self.improve_group(group, in_group, cands, scratch);
                if !moved_values.is_empty() {
                    // Only the costs reading a value that moved change.
                    self.mark_dependents(&moved_values, group_of, &mut dirty);
                    changed_values.extend_from_slice(&moved_values);
                    // Its members use each other, so that may mark the group itself; but its
                    // costs read no layout of its own members (`CostModel::group_costs`)
                    // and it now holds the choice they give (costs are exact, the current
                    // choice wins ties): re-evaluating it would change nothing.
                    dirty[gi] = false;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Marks dirty every group whose costs read a layout of `values`: groups defined by
    /// users of a value (their def cost reads it as an operand) and groups of the operands
    /// of ops whose first result is a value (their use costs read it).
    fn mark_dependents(&self, values: &[u32], group_of: &[u32], dirty: &mut [bool]) {
        for &v in values {
            for &e in self.costs.uses(v) {
                mark_group_of(self.costs.user_result(e), group_of, dirty);
            }
            if let Some(p) = self.costs.def0(v) {
                for o in self.costs.operands(p) {
                    mark_group_of(o, group_of, dirty);
                }
            }
        }
    }

    /// Moves all values of `group` (members tested by `in_group`) to the candidate with
    /// the lowest total cost of the edges and ops around them. Returns whether the choice
    /// differs from the layout of the group's first value; leaves in `moved` the members
    /// whose layout changed (the greedy pass may have left a group's values disagreeing).
    fn improve_group(
        &mut self,
        group: &[u32],
        in_group: impl Fn(u32) -> bool,
        cands: &[Part],
        (sums, moved): (&mut Vec<(f64, f64)>, &mut Vec<u32>),
    ) -> bool {
        let current = self.part[group[0] as usize];
        self.costs
            .group_costs(group, in_group, cands, &self.part, sums);
        let mut best: Option<(f64, Part)> = None;
        for (&(cost, _), &c) in sums.iter().zip(cands) {
            let better = match best {
                None => true,
                Some((b, _)) => cost < b - 1e-9 || (cost <= b + 1e-9 && c == current),
            };
            if better {
                best = Some((cost, c));
            }
        }
        let choice = best.map_or(current, |(_, c)| c);
        moved.clear();
        for &v in group {
            if self.part[v as usize] != choice {
                self.part[v as usize] = choice;
                moved.push(v);
            }
        }
        choice != current
    }
}

/// For dimension `d` of `from`, the dimension of `to` that holds the same innermost
/// elements within the same reshape group, if `d` is innermost non-unit in its group.
pub fn reshape_partner(from: &[i64], to: &[i64], d: usize) -> Option<usize> {
    let mut partner = None;
    let grouped = for_each_reshape_partner(from, to, |dd, q| {
        if dd == d {
            partner = Some(q);
        }
    });
    partner.filter(|_| grouped)
}

/// Calls `f(d, q)` for every dimension `d` of `from` with a [`reshape_partner`] `q`, in
/// order, as the row-major dimension groups with equal products are found. Returns false
/// (after calling `f` for the groups before) when the shapes have no such grouping: then
/// no dimension has a partner.
pub(super) fn for_each_reshape_partner(
    from: &[i64],
    to: &[i64],
    mut f: impl FnMut(usize, usize),
) -> bool {
    crate::ir_util::for_each_reshape_group(from, to, |fr, tr| {
        if let Some((d, q)) = group_partner(from, to, fr, tr) {
            f(d, q);
        }
    })
}

/// In the reshape group of dims `fr` of `from` and `tr` of `to`: the innermost non-unit
/// dim of `from` and its partner, the innermost non-unit dim of `to`, if they tile alike.
fn group_partner(
    from: &[i64],
    to: &[i64],
    fr: std::ops::Range<usize>,
    tr: std::ops::Range<usize>,
) -> Option<(usize, usize)> {
    let inner = |s: &[i64], r: std::ops::Range<usize>| r.rev().find(|&k| s[k] != 1);
    let d = inner(from, fr)?;
    let q = inner(to, tr)?;
    // Splitting or merging around the partition dim is a re-tiling when both extents
    // tile the 128 partitions evenly (sub-tiles start at 0/32/64/96, §1.3).
    let aligned = |n: i64| n > 0 && (128 % n == 0 || n % 128 == 0);
    (from[d] == to[q] || aligned(from[d]) && aligned(to[q])).then_some((d, q))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `Solver::sweeps` relies on to skip re-evaluating a group after its own move:
    /// a group's candidate costs do not depend on its members' current layouts.
    #[test]
    fn group_costs_ignore_the_members_own_layouts() {
        let m = neuronc_ir::parse_module(
            "func.func @main(%a: tensor<128x256xf32>, %w: tensor<256x64xf32>) -> tensor<128x64xf32> {
               %0 = stablehlo.exponential %a : tensor<128x256xf32>
               %1 = stablehlo.negate %0 : tensor<128x256xf32>
               %2 = stablehlo.add %1, %0 : tensor<128x256xf32>
               %3 = stablehlo.dot_general %2, %w, contracting_dims = [1] x [0] : (tensor<128x256xf32>, tensor<256x64xf32>) -> tensor<128x64xf32>
               %4 = stablehlo.transpose %1, dims = [1, 0] : (tensor<128x256xf32>) -> tensor<256x128xf32>
               %5 = stablehlo.dot_general %4, %0, contracting_dims = [1] x [0] : (tensor<256x128xf32>, tensor<128x256xf32>) -> tensor<256x256xf32>
               %6 = stablehlo.exponential %5 : tensor<256x256xf32>
               return %3 : tensor<128x64xf32>
             }",
        )
        .expect("parses");
        let g = RegionGraph::new(&m, m.funcs[0].body);
        let types = TypeTable::new(&m);
        let costs = CostModel::new(&m, &g, &types);
        let groups = elementwise_groups(&costs);
        // %0, %1 and %2 (linked by negate and add) form the first group.
        let group = groups.lists().next().expect("a group");
        assert_eq!(group.len(), 3);
        let cands = types.cands(&m, ValueId(group[0]));
        assert!(cands.len() > 1);
        let in_group = |v: u32| group.contains(&v);
        let mut part = vec![None; m.values.len()];
        // Values outside the group: the dot and transpose results on their dim 0.
        for v in 0..m.values.len() as u32 {
            if !in_group(v) && types.cands(&m, ValueId(v)).contains(&Some(0)) {
                part[v as usize] = Some(0);
            }
        }
        let mut first = Vec::new();
        let mut sums = Vec::new();
        for (i, &c) in cands.iter().enumerate() {
            for &v in group {
                part[v as usize] = c;
            }
            costs.group_costs(group, in_group, cands, &part, &mut sums);
            if i == 0 {
                first.clone_from(&sums);
                // The candidates differ (else the test would prove nothing).
                assert!(sums.iter().any(|s| s.0 != sums[0].0));
            } else {
                assert_eq!(sums, first, "members on candidate {i}");
            }
        }
        // Members disagreeing with each other change nothing either.
        part[group[1] as usize] = cands[1];
        costs.group_costs(group, in_group, cands, &part, &mut sums);
        assert_eq!(sums, first);
    }

    /// Groups list their values in program order, and groups in the order of their first
    /// value, also when an op joins two groups that began apart (the expected groups are
    /// read off the program by hand).
    #[test]
    fn elementwise_groups_keep_program_order() {
        let m = neuronc_ir::parse_module(
            "func.func @main(%a: tensor<8x4xf32>, %b: tensor<8x4xf32>) -> tensor<8x4xf32> {
               %0 = stablehlo.negate %a : tensor<8x4xf32>
               %1 = stablehlo.transpose %b, dims = [1, 0] : (tensor<8x4xf32>) -> tensor<4x8xf32>
               %2 = stablehlo.exponential %b : tensor<8x4xf32>
               %3 = stablehlo.abs %1 : tensor<4x8xf32>
               %4 = stablehlo.sqrt %2 : tensor<8x4xf32>
               %5 = stablehlo.add %4, %0 : tensor<8x4xf32>
               %6 = stablehlo.negate %3 : tensor<4x8xf32>
               return %5 : tensor<8x4xf32>
             }",
        )
        .expect("parses");
        let g = RegionGraph::new(&m, m.funcs[0].body);
        let types = TypeTable::new(&m);
        let costs = CostModel::new(&m, &g, &types);
        let result = |i: usize| m.op(g.order[i]).results[0].0;
        // %0 and %2 start two chains that %5 joins; %1 starts a chain that %3 and %6
        // continue.
        let expected: Vec<Vec<u32>> = vec![
            vec![result(0), result(2), result(4), result(5)],
            vec![result(1), result(3), result(6)],
        ];
        let found: Vec<Vec<u32>> = elementwise_groups(&costs)
            .lists()
            .map(<[u32]>::to_vec)
            .collect();
        assert_eq!(found, expected);
    }

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
