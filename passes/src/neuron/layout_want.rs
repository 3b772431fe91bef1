//! The cost model of layout assignment, precomputed per op so the solver's inner loops
//! neither hash, allocate nor look up attributes.
//!
//! Owns: [`CostModel`] (per-op [`Spec`]s of what each operand's layout must be given the
//! op's result layout, per-edge byte counts, per-op own costs) and the [`Want`] it answers
//! with. Ops are addressed by their position in the region order.
//! Invariants: [`CostModel::edge_cost`] and [`CostModel::op_cost`] are pure functions of
//! the module and the two layouts; every cost is `0.0`, the edge's bytes, or bytes times
//! a constant weight, so sums taken in the same order are bit-for-bit reproducible.

use super::graph::{value_bytes, RegionGraph, TypeFacts};
use super::layout::{reshape_partners, Part};
use neuronc_ir::{Attr, Module, OpKind, ValueDef, ValueId};

/// Cost, in byte-equivalents, of a cross-partition *sum* relative to transposing the same
/// bytes. Both stream the data once through TensorE (`neuron-facts.md` §1.4: a sum across
/// partitions is a matmul with a ones vector; a transpose is a matmul with the identity),
/// but the sum leaves one PSUM row to evict where the transpose leaves the whole tensor.
const CROSS_PARTITION_SUM_WEIGHT: f64 = 0.5;
/// Cost of a cross-partition max/min/other reduction: GpSimd partition reduce, which has no
/// published cost (§1.5) and runs on 8 cores of 16 partitions each; assumed 1.5x a transpose.
const CROSS_PARTITION_OTHER_WEIGHT: f64 = 1.5;

/// A set of dimensions (`u8`, as layouts are) that remembers its first element.
#[derive(Clone, Copy, Debug, Default)]
pub struct DimSet {
    bits: [u64; 4],
    first: Option<u8>,
}

impl DimSet {
    fn from_i64(dims: &[i64]) -> DimSet {
        let mut s = DimSet::default();
        for &d in dims {
            s.insert(d as u8);
        }
        s
    }
    fn insert(&mut self, d: u8) {
        self.first.get_or_insert(d);
        self.bits[usize::from(d / 64)] |= 1 << (d % 64);
    }
    pub fn contains(&self, d: u8) -> bool {
        self.bits[usize::from(d / 64)] & (1 << (d % 64)) != 0
    }
    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }
    /// The first dimension inserted.
    pub fn first(&self) -> Option<u8> {
        self.first
    }
}

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
    /// reduction (costing `weight` per byte) when it is one of `reduced`.
    Reduce {
        keep: Part,
        reduced: DimSet,
        weight: f64,
    },
}

/// Per-op rule turning the result layout into operand requirements.
enum Spec {
    Any,
    /// Operands of the result's rank want the result's layout (elementwise, slices, ...).
    SameRank,
    /// `permutation` of a transpose.
    Transpose(Box<[i64]>),
    Broadcast {
        dims: Box<[i64]>,
        src: Box<[i64]>,
        dst: Box<[i64]>,
    },
    /// Partner operand dimension of every result dimension (`None`: no partner).
    Reshape(Box<[Part]>),
    /// `kept[i]`: the dims of operand `i` that survive, in order.
    Reduce {
        kept: Box<[Box<[u8]>]>,
        reduced: DimSet,
        weight: f64,
    },
    /// Contraction dims of the first operand and of the others.
    Contract(DimSet, DimSet),
}

/// Own cost of an op's result layout.
enum OwnCost {
    Zero,
    /// A dot_general whose result dims below `batch` are batch dims.
    Dot {
        batch: usize,
        bytes: f64,
    },
    /// A convolution whose output feature dim is `feature`.
    Conv {
        feature: i64,
        bytes: f64,
    },
}

/// How an edge's cost depends on the layouts at its ends (precomputed from the op's
/// [`Spec`] and the edge, so that the solver's inner loop dispatches once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EdgeRule {
    /// Always free: a function argument, a scalar, or an operand the op has no wish for.
    Free,
    /// The operand wants the result's layout (elementwise-like ops, same rank).
    SameAsResult,
    /// Anything else: ask [`CostModel::want`].
    General,
}

/// One operand edge.
struct Edge {
    /// The operand.
    value: u32,
    /// Bytes of the operand (`None` for function arguments: they cost nothing).
    bytes: Option<f64>,
    rank0: bool,
    same_rank: bool,
    rule: EdgeRule,
}

/// "No op" / "no value".
pub const NONE: u32 = u32::MAX;

/// Precomputed costs and dataflow of one region, in compact position-indexed tables.
pub struct CostModel {
    specs: Vec<Spec>,
    own: Vec<OwnCost>,
    /// Operand edges of op `pos`: `edges[edge_start[pos]..edge_start[pos + 1]]`.
    edge_start: Vec<u32>,
    edges: Vec<Edge>,
    /// First result of each op (`NONE` if it has none).
    pub first_result: Vec<u32>,
    /// For each value: the position of the op whose first result it is, else `NONE`.
    def0: Vec<u32>,
    /// Direct uses of each value as (user position, operand index), in program order.
    use_start: Vec<u32>,
    uses: Vec<(u32, u32)>,
}

fn rank(m: &Module, v: ValueId) -> usize {
    m.tensor_type(v).map_or(0, |t| t.rank())
}

/// Function arguments live in HBM and are DMA-loaded straight into each consumer's layout.
fn is_function_arg(m: &Module, v: ValueId) -> bool {
    matches!(m.value(v).def, ValueDef::RegionArg(r, _) if m.region(r).parent.is_none())
}

impl CostModel {
    pub fn new(m: &Module, g: &RegionGraph) -> CostModel {
        let n = g.order.len();
        let mut edge_start = Vec::with_capacity(n + 1);
        let operands: usize = g.order.iter().map(|&op| m.op(op).operands.len()).sum();
        let mut edges = Vec::with_capacity(operands);
        let mut first_result = Vec::with_capacity(n);
        let mut def0 = vec![NONE; m.values.len()];
        let mut use_count = vec![0u32; m.values.len() + 1];
        let facts = TypeFacts::new(m);
        edge_start.push(0);
        for (pos, &op) in g.order.iter().enumerate() {
            let o = m.op(op);
            let res_rank = o.results.first().map(|&r| facts.of(m, r).rank.unwrap_or(0));
            for &v in &o.operands {
                let f = facts.of(m, v);
                let rank = f.rank.unwrap_or(0);
                edges.push(Edge {
                    value: v.0,
                    bytes: (!is_function_arg(m, v)).then_some(f.bytes as f64),
                    rank0: rank == 0,
                    same_rank: res_rank == Some(rank),
                    rule: EdgeRule::General,
                });
                use_count[v.index() + 1] += 1;
            }
            edge_start.push(edges.len() as u32);
            first_result.push(o.results.first().map_or(NONE, |r| r.0));
            if let Some(r) = o.results.first() {
                def0[r.index()] = pos as u32;
            }
        }
        // Counting sort of the edges by value keeps program order per value.
        for i in 1..use_count.len() {
            use_count[i] += use_count[i - 1];
        }
        let use_start = use_count.clone();
        let mut uses = vec![(0, 0); edges.len()];
        for pos in 0..n {
            let (a, b) = (edge_start[pos] as usize, edge_start[pos + 1] as usize);
            for (i, e) in edges[a..b].iter().enumerate() {
                let slot = &mut use_count[e.value as usize];
                uses[*slot as usize] = (pos as u32, i as u32);
                *slot += 1;
            }
        }
        let specs: Vec<Spec> = g.order.iter().map(|&op| spec(m, op)).collect();
        for (pos, spec) in specs.iter().enumerate() {
            let (a, b) = (edge_start[pos] as usize, edge_start[pos + 1] as usize);
            for e in &mut edges[a..b] {
                e.rule = edge_rule(spec, e);
            }
        }
        CostModel {
            specs,
            own: g.order.iter().map(|&op| own_cost(m, op)).collect(),
            edge_start,
            edges,
            first_result,
            def0,
            use_start,
            uses,
        }
    }

    /// Operand values of op `pos`, in operand order.
    pub fn operands(&self, pos: usize) -> impl Iterator<Item = u32> + '_ {
        let (a, b) = (
            self.edge_start[pos] as usize,
            self.edge_start[pos + 1] as usize,
        );
        self.edges[a..b].iter().map(|e| e.value)
    }

    /// Position of the op whose first result is value `v`, if any.
    pub fn def0(&self, v: u32) -> Option<usize> {
        let p = self.def0[v as usize];
        (p != NONE).then_some(p as usize)
    }

    /// Direct uses of value `v`: (user position, operand index).
    pub fn uses(&self, v: u32) -> &[(u32, u32)] {
        &self.uses[self.use_start[v as usize] as usize..self.use_start[v as usize + 1] as usize]
    }

    /// What op `pos` wants of operand `i` given result layout `r`.
    pub fn want(&self, pos: usize, i: usize, r: Part) -> Want {
        let e = &self.edges[self.edge_start[pos] as usize + i];
        if e.rank0 {
            return Want::Any;
        }
        match &self.specs[pos] {
            Spec::Any => Want::Any,
            Spec::SameRank if e.same_rank => Want::Exact(r),
            Spec::SameRank => Want::Any,
            Spec::Transpose(perm) => {
                Want::Exact(r.and_then(|d| perm.get(d as usize).map(|&p| p as u8)))
            }
            Spec::Broadcast { dims, src, dst } => {
                let Some(p) = r else { return Want::Any };
                match dims.iter().position(|&d| d == p as i64) {
                    Some(j) if src.get(j) == dst.get(p as usize) => Want::Exact(Some(j as u8)),
                    // The partition axis is created by the broadcast: replicate.
                    _ => Want::Any,
                }
            }
            Spec::Reshape(partner) => match r {
                None => Want::Exact(None),
                Some(p) => Want::Exact(partner.get(p as usize).copied().flatten()),
            },
            Spec::Reduce {
                kept,
                reduced,
                weight,
            } => match kept.get(i) {
                None => Want::Any,
                Some(kept) => Want::Reduce {
                    keep: r.and_then(|rd| kept.get(rd as usize).copied()),
                    reduced: *reduced,
                    weight: *weight,
                },
            },
            Spec::Contract(lhs, rhs) => Want::OneOf(if i == 0 { *lhs } else { *rhs }),
        }
    }

    /// Cost on the edge into operand `i` of op `pos` when the operand has layout `q` and
    /// the op's result has layout `r`.
    pub fn edge_cost(&self, pos: usize, i: usize, q: Part, r: Part) -> f64 {
        let e = &self.edges[self.edge_start[pos] as usize + i];
        self.cost_of(e, pos, i, q, r)
    }

    /// [`CostModel::edge_cost`] of edge `e` (operand `i` of op `pos`).
    #[inline]
    fn cost_of(&self, e: &Edge, pos: usize, i: usize, q: Part, r: Part) -> f64 {
        let bytes = match (e.rule, e.bytes) {
            (EdgeRule::Free, _) | (_, None) => return 0.0,
            (EdgeRule::SameAsResult, Some(bytes)) => return if q != r { bytes } else { 0.0 },
            (EdgeRule::General, Some(bytes)) => bytes,
        };
        match self.want(pos, i, r) {
            Want::Any => 0.0,
            Want::Exact(p) => {
                if p == q {
                    0.0
                } else {
                    bytes
                }
            }
            Want::OneOf(dims) => match q {
                Some(d) if dims.contains(d) => 0.0,
                _ if dims.is_empty() => 0.0,
                _ => bytes,
            },
            Want::Reduce {
                keep,
                reduced,
                weight,
            } => match q {
                Some(d) if reduced.contains(d) => bytes * weight,
                _ if q == keep => 0.0,
                _ => bytes,
            },
        }
    }

    /// Cost at op `pos` when its result takes layout `r` and operand `i` has layout
    /// `part[operands[i]]`: [`CostModel::op_cost`] plus every [`CostModel::edge_cost`],
    /// summed in operand order.
    pub fn def_cost(&self, pos: usize, r: Part, part: &[Part]) -> f64 {
        let mut cost = self.op_cost(pos, r);
        let (a, b) = (
            self.edge_start[pos] as usize,
            self.edge_start[pos + 1] as usize,
        );
        for (i, e) in self.edges[a..b].iter().enumerate() {
            if e.rule != EdgeRule::Free {
                cost += self.cost_of(e, pos, i, part[e.value as usize], r);
            }
        }
        cost
    }

    /// Cost of op `pos`'s result layout by itself (matmul output on a free axis).
    pub fn op_cost(&self, pos: usize, r: Part) -> f64 {
        match self.own[pos] {
            OwnCost::Zero => 0.0,
            // Result dims: batch dims first; the stationary operand's free axis must
            // become the output partition axis, so a batch dim there needs a relayout.
            OwnCost::Dot { batch, bytes } => match r {
                Some(p) if (p as usize) < batch => bytes,
                _ => 0.0,
            },
            OwnCost::Conv { feature, bytes } => match r {
                Some(p) if p as i64 != feature => bytes,
                _ => 0.0,
            },
        }
    }
}

/// How edge `e` into an op with spec `spec` is costed; `Free` and `SameAsResult` give the
/// same costs as [`CostModel::want`] would.
fn edge_rule(spec: &Spec, e: &Edge) -> EdgeRule {
    match spec {
        _ if e.bytes.is_none() || e.rank0 => EdgeRule::Free,
        Spec::Any => EdgeRule::Free,
        Spec::SameRank if e.same_rank => EdgeRule::SameAsResult,
        Spec::SameRank => EdgeRule::Free,
        _ => EdgeRule::General,
    }
}

fn own_cost(m: &Module, op: neuronc_ir::OpId) -> OwnCost {
    let o = m.op(op);
    if !matches!(o.kind, OpKind::DotGeneral | OpKind::Convolution) {
        return OwnCost::Zero;
    }
    let Some(&res) = o.results.first() else {
        return OwnCost::Zero;
    };
    let bytes = value_bytes(m, res) as f64;
    match (o.kind, o.attrs.get("dot_dimension_numbers")) {
        (OpKind::DotGeneral, Some(Attr::DotDims(d))) => OwnCost::Dot {
            batch: d.lhs_batching.len(),
            bytes,
        },
        (OpKind::Convolution, _) => match o.attrs.get("dimension_numbers") {
            Some(Attr::ConvDims(cd)) => OwnCost::Conv {
                feature: cd.output_feature,
                bytes,
            },
            _ => OwnCost::Zero,
        },
        _ => OwnCost::Zero,
    }
}

fn spec(m: &Module, op: neuronc_ir::OpId) -> Spec {
    let o = m.op(op);
    match o.kind {
        OpKind::Transpose => {
            Spec::Transpose(o.attrs.i64_array("permutation").unwrap_or_default().into())
        }
        OpKind::BroadcastInDim => {
            let (Some(src), Some(dst)) =
                (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0]))
            else {
                return Spec::Any;
            };
            Spec::Broadcast {
                dims: o
                    .attrs
                    .i64_array("broadcast_dimensions")
                    .unwrap_or_default()
                    .into(),
                src: src.shape.to_vec().into(),
                dst: dst.shape.to_vec().into(),
            }
        }
        OpKind::Reshape => {
            let (Some(src), Some(dst)) =
                (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0]))
            else {
                return Spec::Any;
            };
            Spec::Reshape(
                reshape_partners(&dst.shape, &src.shape)
                    .into_iter()
                    .map(|q| q.map(|q| q as u8))
                    .collect(),
            )
        }
        OpKind::Reduce => reduce_spec(m, op),
        OpKind::DotGeneral => match o.attrs.get("dot_dimension_numbers") {
            Some(Attr::DotDims(d)) => Spec::Contract(
                DimSet::from_i64(&d.lhs_contracting),
                DimSet::from_i64(&d.rhs_contracting),
            ),
            _ => Spec::Any,
        },
        OpKind::Convolution => match o.attrs.get("dimension_numbers") {
            Some(Attr::ConvDims(cd)) => Spec::Contract(
                DimSet::from_i64(&[cd.input_feature]),
                DimSet::from_i64(&[cd.kernel_input_feature]),
            ),
            _ => Spec::Any,
        },
        OpKind::Slice
        | OpKind::Pad
        | OpKind::Reverse
        | OpKind::Concatenate
        | OpKind::DynamicUpdateSlice
        | OpKind::DynamicSlice => Spec::SameRank,
        k if k.is_elementwise() => Spec::SameRank,
        _ => Spec::Any,
    }
}

fn reduce_spec(m: &Module, op: neuronc_ir::OpId) -> Spec {
    let o = m.op(op);
    let n = o.operands.len() / 2;
    let dims: Vec<u8> = o
        .attrs
        .i64_array("dimensions")
        .unwrap_or_default()
        .iter()
        .map(|&d| d as u8)
        .collect();
    let mut reduced = DimSet::default();
    for &d in &dims {
        reduced.insert(d);
    }
    // Kept operand dims in order map onto result dims.
    let kept = o.operands[..n]
        .iter()
        .map(|&v| {
            (0..rank(m, v) as u8)
                .filter(|d| !dims.contains(d))
                .collect::<Box<[u8]>>()
        })
        .collect();
    let sum_body = o
        .regions
        .first()
        .is_some_and(|&r| m.region(r).ops.iter().any(|&x| m.op(x).kind == OpKind::Add));
    let weight = if sum_body {
        CROSS_PARTITION_SUM_WEIGHT
    } else {
        CROSS_PARTITION_OTHER_WEIGHT
    };
    Spec::Reduce {
        kept,
        reduced,
        weight,
    }
}
