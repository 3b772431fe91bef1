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
//! placed in HBM by the compiler, as neuronx-cc does).
//! Invariant: every value defined in the region (and every region argument) has an entry.

use super::graph::{value_bytes, RegionGraph};
use neuronc_ir::{Attr, Module, OpId, OpKind, ValueId};
use rustc_hash::FxHashMap;

/// Partition dimension of a tensor (`None`: scalar / no partition axis).
pub type Part = Option<u8>;

/// Cost, in byte-equivalents, of a cross-partition *sum* relative to transposing the same
/// bytes. Both stream the data once through TensorE (`neuron-facts.md` §1.4: a sum across
/// partitions is a matmul with a ones vector; a transpose is a matmul with the identity),
/// but the sum leaves one PSUM row to evict where the transpose leaves the whole tensor.
const CROSS_PARTITION_SUM_WEIGHT: f64 = 0.5;
/// Cost of a cross-partition max/min/other reduction: GpSimd partition reduce, which has no
/// published cost (§1.5) and runs on 8 cores of 16 partitions each; assumed 1.5x a transpose.
const CROSS_PARTITION_OTHER_WEIGHT: f64 = 1.5;

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
    pub part: FxHashMap<ValueId, Part>,
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
        self.part.get(&v).copied().flatten()
    }
}

/// What an op needs of one operand's layout given its result layout.
enum Want {
    /// No preference (scalars, opaque ops that go through HBM anyway).
    Any,
    /// Exactly this partition dimension, else a transpose of the operand.
    Exact(Part),
    /// One of these dimensions (matmul contraction), else a transpose.
    OneOf(Vec<u8>),
    /// Reduce input: `Exact(keep)` when the partition dim is kept, or a cross-partition
    /// reduction (costing `weight` per byte) when it is one of `reduced`.
    Reduce {
        keep: Part,
        reduced: Vec<u8>,
        weight: f64,
    },
}

/// Assigns layouts to every value of `region` (normally a function body).
pub fn assign_layouts(m: &Module, g: &RegionGraph) -> LayoutPlan {
    let mut part: FxHashMap<ValueId, Part> = FxHashMap::default();
    for &a in &m.region(g.region).args {
        part.insert(a, candidates(m, a)[0]);
    }
    // Greedy forward pass: each op's results choose given their operands.
    for &op in &g.order {
        for &r in &m.op(op).results {
            let best = best_choice(m, &part, r);
            part.insert(r, best);
        }
    }
    // Coordinate descent over groups of values that elementwise ops tie together (a whole
    // chain flips at once), alternating directions; stops when nothing changes.
    let groups = elementwise_groups(m, g);
    for sweep in 0..6 {
        let mut changed = false;
        let order: Vec<&Vec<ValueId>> = if sweep % 2 == 0 {
            groups.iter().rev().collect()
        } else {
            groups.iter().collect()
        };
        for group in order {
            changed |= improve_group(m, g, &mut part, group);
        }
        if !changed {
            break;
        }
    }
    finish(m, g, part)
}

/// Values linked by same-shape elementwise ops, in program order of their first member.
fn elementwise_groups(m: &Module, g: &RegionGraph) -> Vec<Vec<ValueId>> {
    let mut parent: FxHashMap<ValueId, ValueId> = FxHashMap::default();
    fn root(p: &mut FxHashMap<ValueId, ValueId>, v: ValueId) -> ValueId {
        let mut r = v;
        while let Some(&n) = p.get(&r) {
            if n == r {
                break;
            }
            r = n;
        }
        p.insert(v, r);
        r
    }
    let mut values = Vec::new();
    for &op in &g.order {
        let o = m.op(op);
        for &r in &o.results {
            parent.insert(r, r);
            values.push(r);
        }
        let Some(&res) = o.results.first() else {
            continue;
        };
        if !o.kind.is_elementwise() {
            continue;
        }
        let shape = m.tensor_type(res).map(|t| t.shape.clone());
        for &v in &o.operands {
            let same = m.tensor_type(v).map(|t| t.shape.clone()) == shape && rank(m, v) > 0;
            if same && parent.contains_key(&v) {
                let (a, b) = (root(&mut parent, v), root(&mut parent, res));
                if a != b {
                    parent.insert(b, a);
                }
            }
        }
    }
    let mut index: FxHashMap<ValueId, usize> = FxHashMap::default();
    let mut groups: Vec<Vec<ValueId>> = Vec::new();
    for v in values {
        let r = root(&mut parent, v);
        let i = *index.entry(r).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[i].push(v);
    }
    groups
}

/// Moves all values of `group` to the candidate with the lowest total cost of the edges
/// and ops around them. Returns whether the choice changed.
fn improve_group(
    m: &Module,
    g: &RegionGraph,
    part: &mut FxHashMap<ValueId, Part>,
    group: &[ValueId],
) -> bool {
    let current = part.get(&group[0]).copied().flatten();
    let mut best: Option<(f64, Part)> = None;
    for c in candidates(m, group[0]) {
        for &v in group {
            part.insert(v, c);
        }
        let mut cost = 0.0;
        for &v in group {
            cost += def_cost(m, part, v, c);
            for &(u, i) in g.users_of(v) {
                if i != usize::MAX {
                    cost += edge_cost(m, u, i, c, result_part(m, part, u));
                }
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
        part.insert(v, choice);
    }
    choice != current
}

/// Candidate partition dims of a value, most preferred first: larger dims first.
fn candidates(m: &Module, v: ValueId) -> Vec<Part> {
    let Some(t) = m.tensor_type(v) else {
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

/// Greedy choice for `v` given the layouts of its operands only.
fn best_choice(m: &Module, part: &FxHashMap<ValueId, Part>, v: ValueId) -> Part {
    let mut best: Option<(f64, Part)> = None;
    for c in candidates(m, v) {
        let cost = def_cost(m, part, v, c);
        if best.is_none_or(|(b, _)| cost < b - 1e-9) {
            best = Some((cost, c));
        }
    }
    best.and_then(|(_, c)| c)
}

/// Layout of an op's first result (what its operand requirements are keyed on).
fn result_part(m: &Module, part: &FxHashMap<ValueId, Part>, op: OpId) -> Part {
    m.op(op)
        .results
        .first()
        .and_then(|r| part.get(r).copied())
        .flatten()
}

/// Cost at the definition of `v` when it takes layout `c`: the op's own cost plus the
/// edges from its operands.
fn def_cost(m: &Module, part: &FxHashMap<ValueId, Part>, v: ValueId, c: Part) -> f64 {
    let neuronc_ir::ValueDef::Result(op, idx) = m.value(v).def else {
        return 0.0;
    };
    if idx != 0 {
        return 0.0;
    }
    let mut cost = op_cost(m, op, c);
    for (i, &o) in m.op(op).operands.iter().enumerate() {
        let q = part.get(&o).copied().flatten();
        cost += edge_cost(m, op, i, q, c);
    }
    cost
}

/// Cost of an op's result layout by itself (matmul output on a free axis).
fn op_cost(m: &Module, op: OpId, r: Part) -> f64 {
    let o = m.op(op);
    let Some(&res) = o.results.first() else {
        return 0.0;
    };
    let bytes = value_bytes(m, res) as f64;
    match o.kind {
        OpKind::DotGeneral => {
            let Some(Attr::DotDims(d)) = o.attrs.get("dot_dimension_numbers") else {
                return 0.0;
            };
            // Result dims: batch dims first; the stationary operand's free axis must
            // become the output partition axis, so a batch dim there needs a relayout.
            match r {
                Some(p) if (p as usize) < d.lhs_batching.len() => bytes,
                _ => 0.0,
            }
        }
        OpKind::Convolution => match (&o.attrs.get("dimension_numbers"), r) {
            (Some(Attr::ConvDims(cd)), Some(p)) if p as i64 != cd.output_feature => bytes,
            _ => 0.0,
        },
        _ => 0.0,
    }
}

/// Cost on the edge into operand `i` of `op` when the operand has layout `q` and the
/// op's result has layout `r`.
fn edge_cost(m: &Module, op: OpId, i: usize, q: Part, r: Part) -> f64 {
    let o = m.op(op);
    let Some(&v) = o.operands.get(i) else {
        return 0.0;
    };
    if is_function_arg(m, v) {
        return 0.0;
    }
    let bytes = value_bytes(m, v) as f64;
    match want(m, op, i, r) {
        Want::Any => 0.0,
        Want::Exact(p) => {
            if p == q {
                0.0
            } else {
                bytes
            }
        }
        Want::OneOf(dims) => match q {
            Some(d) if dims.contains(&d) => 0.0,
            _ if dims.is_empty() => 0.0,
            _ => bytes,
        },
        Want::Reduce {
            keep,
            reduced,
            weight,
        } => match q {
            Some(d) if reduced.contains(&d) => bytes * weight,
            _ if q == keep => 0.0,
            _ => bytes,
        },
    }
}

/// Function arguments live in HBM and are DMA-loaded straight into each consumer's layout.
fn is_function_arg(m: &Module, v: ValueId) -> bool {
    matches!(m.value(v).def, neuronc_ir::ValueDef::RegionArg(r, _) if m.region(r).parent.is_none())
}

fn rank(m: &Module, v: ValueId) -> usize {
    m.tensor_type(v).map_or(0, |t| t.rank())
}

/// What `op` wants of operand `i` given result layout `r`.
fn want(m: &Module, op: OpId, i: usize, r: Part) -> Want {
    let o = m.op(op);
    let v = o.operands[i];
    if rank(m, v) == 0 {
        return Want::Any;
    }
    let same_rank = o
        .results
        .first()
        .is_some_and(|&res| rank(m, res) == rank(m, v));
    match o.kind {
        OpKind::Transpose => {
            let perm = o.attrs.i64_array("permutation").unwrap_or_default();
            Want::Exact(r.and_then(|d| perm.get(d as usize).map(|&p| p as u8)))
        }
        OpKind::BroadcastInDim => broadcast_want(m, op, r),
        OpKind::Reshape => reshape_want(m, op, r),
        OpKind::Reduce => reduce_want(m, op, i, r),
        OpKind::DotGeneral => match o.attrs.get("dot_dimension_numbers") {
            Some(Attr::DotDims(d)) => {
                let c = if i == 0 {
                    &d.lhs_contracting
                } else {
                    &d.rhs_contracting
                };
                Want::OneOf(c.iter().map(|&x| x as u8).collect())
            }
            _ => Want::Any,
        },
        OpKind::Convolution => match o.attrs.get("dimension_numbers") {
            Some(Attr::ConvDims(cd)) => {
                let d = if i == 0 {
                    cd.input_feature
                } else {
                    cd.kernel_input_feature
                };
                Want::OneOf(vec![d as u8])
            }
            _ => Want::Any,
        },
        OpKind::Slice
        | OpKind::Pad
        | OpKind::Reverse
        | OpKind::Concatenate
        | OpKind::DynamicUpdateSlice
        | OpKind::DynamicSlice
            if same_rank =>
        {
            Want::Exact(r)
        }
        k if k.is_elementwise() && same_rank => Want::Exact(r),
        _ => Want::Any,
    }
}

fn broadcast_want(m: &Module, op: OpId, r: Part) -> Want {
    let o = m.op(op);
    let dims = o
        .attrs
        .i64_array("broadcast_dimensions")
        .unwrap_or_default();
    let (Some(src), Some(dst)) = (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0])) else {
        return Want::Any;
    };
    let Some(p) = r else { return Want::Any };
    match dims.iter().position(|&d| d == p as i64) {
        Some(j) if src.shape.get(j) == dst.shape.get(p as usize) => Want::Exact(Some(j as u8)),
        // The partition axis is created by the broadcast: replicate across partitions.
        _ => Want::Any,
    }
}

/// Reshape keeps the partition dim when it maps to the innermost non-unit dim of the
/// same row-major group on both sides (splitting or merging dims around it is a free
/// re-tiling).
fn reshape_want(m: &Module, op: OpId, r: Part) -> Want {
    let o = m.op(op);
    let (Some(src), Some(dst)) = (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0])) else {
        return Want::Any;
    };
    let Some(p) = r else { return Want::Exact(None) };
    match reshape_partner(&dst.shape, &src.shape, p as usize) {
        Some(q) => Want::Exact(Some(q as u8)),
        None => Want::Exact(None),
    }
}

/// For dimension `d` of `from`, the dimension of `to` that holds the same innermost
/// elements within the same reshape group, if `d` is innermost non-unit in its group.
pub fn reshape_partner(from: &[i64], to: &[i64], d: usize) -> Option<usize> {
    let groups = reshape_groups(from, to)?;
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

fn reduce_want(m: &Module, op: OpId, i: usize, r: Part) -> Want {
    let o = m.op(op);
    let n = o.operands.len() / 2;
    if i >= n {
        return Want::Any;
    }
    let reduced: Vec<u8> = o
        .attrs
        .i64_array("dimensions")
        .unwrap_or_default()
        .iter()
        .map(|&d| d as u8)
        .collect();
    // Kept operand dims in order map onto result dims.
    let keep = r.and_then(|rd| {
        (0..rank(m, o.operands[i]) as u8)
            .filter(|d| !reduced.contains(d))
            .nth(rd as usize)
    });
    let sum_body = o
        .regions
        .first()
        .is_some_and(|&r| m.region(r).ops.iter().any(|&x| m.op(x).kind == OpKind::Add));
    let weight = if sum_body {
        CROSS_PARTITION_SUM_WEIGHT
    } else {
        CROSS_PARTITION_OTHER_WEIGHT
    };
    Want::Reduce {
        keep,
        reduced,
        weight,
    }
}

fn finish(m: &Module, g: &RegionGraph, part: FxHashMap<ValueId, Part>) -> LayoutPlan {
    let mut plan = LayoutPlan::default();
    for &op in &g.order {
        let r = result_part(m, &part, op);
        if let Some(&res) = m.op(op).results.first() {
            plan.cost += op_cost(m, op, r);
            if op_cost(m, op, r) > 0.0 {
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
            let q = part.get(&v).copied().flatten();
            let c = edge_cost(m, op, i, q, r);
            if c == 0.0 {
                continue;
            }
            plan.cost += c;
            let w = want(m, op, i, r);
            if let (Want::Reduce { reduced, .. }, Some(d)) = (&w, q) {
                if reduced.contains(&d) {
                    plan.cross_partition_reductions.push(op);
                    continue;
                }
            }
            let to = match w {
                Want::Exact(p) | Want::Reduce { keep: p, .. } => p,
                Want::OneOf(d) => d.first().copied(),
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
    plan.part = part;
    plan
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
