//! Fusion planning for the NeuronCore: which ops run together as one kernel, with the
//! reason for every decision.
//!
//! Owns: [`plan_fusion`], [`FusionPlan`], [`Kernel`], the fusion [`Rule`]s (with `Rows`,
//! the interned reduction rows they compare) and the HBM traffic accounting that `explain`
//! reports.
//!
//! # Algorithm
//! Consumer-first greedy growth, as in XLA's instruction fusion: ops are visited from the
//! end of the region; each unfused op seeds a kernel, which then repeatedly absorbs the
//! producer (of any of its ops) that is latest in program order, until every producer is
//! absorbed or refused. A producer that also feeds ops outside the kernel is either
//! duplicated (cheap ops: broadcasts, iotas, constants, converts, relabels) or becomes an
//! extra kernel output (multi-output fusion) when that creates no cycle. Every refusal
//! names the [`Rule`] that refused it.
//! Invariants: every op of the region except the terminator belongs to exactly one
//! kernel (duplicated cheap ops additionally appear as copies in consumer kernels); the
//! kernel graph is acyclic; the plan is deterministic.

use super::graph::{value_bytes, OpMap, RegionGraph, TypeFacts};
use super::planner::{Grown, Planner};
use neuronc_ir::{Module, Op, OpId, OpKind, ValueId};
use rustc_hash::FxHashMap;

/// SBUF bytes per partition on NeuronCore-v2 (`neuron-facts.md` §1.3: 24 MiB = 128 × 192 KiB).
pub const SBUF_PARTITION_BYTES: u64 = 192 * 1024;
/// Number of SBUF partitions (`neuron-facts.md` §1.3).
pub const PARTITIONS: u64 = 128;

/// Knobs of the fusion planner.
#[derive(Clone, Debug)]
pub struct FusionConfig {
    /// Most distinct external inputs one kernel may read (each needs its own DMA stream;
    /// 16 DMA engines per core, `neuron-facts.md` §1.3).
    pub max_inputs: usize,
    /// Per-partition SBUF budget for resident rows of reduction kernels.
    pub sbuf_partition_bytes: u64,
    /// Most nodes one multi-output cycle check may reach before it gives up and the
    /// producer stays out of the kernel (bounds the planner's time on graphs with many
    /// long-range edges; real traces reach at most a few hundred).
    pub cycle_check_limit: usize,
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig {
            max_inputs: 16,
            sbuf_partition_bytes: SBUF_PARTITION_BYTES,
            cycle_check_limit: 2048,
        }
    }
}

/// How the planner treats an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum OpClass {
    /// Pure relabeling (reshape, transpose, tuple plumbing): moves no data.
    Free,
    /// Cheap to recompute: may be duplicated into several kernels.
    Cheap,
    /// Elementwise or data-movement loop op (slice, pad, concatenate, select, ...).
    Loop,
    /// A reduction (`stablehlo.reduce`).
    Reduce,
    /// A TensorE contraction (dot_general, convolution).
    Matmul,
    /// Everything else: its own kernel (gather, scatter, sort, while, custom_call, ...).
    Opaque,
}

/// Classifies an op for fusion.
pub fn classify(m: &Module, op: OpId) -> OpClass {
    let o = m.op(op);
    match o.kind {
        OpKind::Reshape | OpKind::Transpose | OpKind::Tuple | OpKind::GetTupleElement => {
            OpClass::Free
        }
        OpKind::BroadcastInDim | OpKind::Iota => OpClass::Cheap,
        OpKind::Constant => {
            let small = o
                .results
                .first()
                .is_some_and(|&r| value_bytes(m, r) <= 4096);
            let splat =
                matches!(o.attrs.get("value"), Some(neuronc_ir::Attr::Elements(e)) if e.is_splat());
            if small || splat {
                OpClass::Cheap
            } else {
                OpClass::Opaque
            }
        }
        OpKind::Convert if widening(m, op) => OpClass::Cheap,
        OpKind::Reduce => OpClass::Reduce,
        OpKind::DotGeneral | OpKind::Dot | OpKind::Convolution => OpClass::Matmul,
        OpKind::Slice
        | OpKind::Pad
        | OpKind::Concatenate
        | OpKind::Reverse
        | OpKind::DynamicSlice => OpClass::Loop,
        k if elementwise_pure(k.traits()) => OpClass::Loop,
        _ => OpClass::Opaque,
    }
}

/// Elementwise and free of side effects (one trait lookup for both).
fn elementwise_pure(t: neuronc_ir::Traits) -> bool {
    t.contains(neuronc_ir::Traits::ELEMENTWISE) && !t.contains(neuronc_ir::Traits::SIDE_EFFECT)
}

fn widening(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    match (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0])) {
        (Some(a), Some(b)) => a.elem.bits() <= b.elem.bits(),
        _ => false,
    }
}

/// The distinct reduction rows of a region, interned: a reduce's row is its (operand
/// shape, reduced dims), and two reduces have the same row iff they have the same id.
#[derive(Default)]
pub(super) struct Rows {
    /// Key `[rank, shape.., dims..]` (the rank makes the split unambiguous) -> row id.
    ids: FxHashMap<Vec<i64>, u32>,
    /// Scratch for the key being looked up.
    key: Vec<i64>,
    /// Per row: (elements of one reduced row, elements of the whole operand).
    pub(super) sizes: Vec<(u64, u64)>,
}

impl Rows {
    /// The id of the row of reduce `o`.
    pub(super) fn intern(&mut self, m: &Module, o: &Op) -> u32 {
        let shape: &[i64] = o
            .operands
            .first()
            .and_then(|&v| m.tensor_type(v))
            .map_or(&[], |t| &t.shape);
        let owned;
        let dims: &[i64] = match o.attrs.get("dimensions") {
            Some(neuronc_ir::Attr::IntArray(_, d)) => d,
            other => {
                owned = other
                    .and_then(neuronc_ir::Attr::as_i64_array)
                    .unwrap_or_default();
                &owned
            }
        };
        self.key.clear();
        self.key.push(shape.len() as i64);
        self.key.extend_from_slice(shape);
        self.key.extend_from_slice(dims);
        if let Some(&id) = self.ids.get(self.key.as_slice()) {
            return id;
        }
        let id = self.sizes.len() as u32;
        let row_elems = dims
            .iter()
            .filter_map(|&d| shape.get(d as usize))
            .map(|&n| n.max(0) as u64)
            .product();
        let full = shape.iter().map(|&n| n.max(0) as u64).product();
        self.ids.insert(self.key.clone(), id);
        self.sizes.push((row_elems, full));
        id
    }
}

/// Why a producer was not fused into a consumer kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Gather, scatter, sort, control flow, custom calls, large constants run alone.
    OpaqueOp(OpKind),
    /// At most one TensorE contraction per kernel.
    OneMatmulPerKernel,
    /// A matmul kernel takes only elementwise epilogues (no reductions or loops after it).
    MatmulEpilogueOnly,
    /// Only cheap ops (converts, broadcasts, relabels) may feed a matmul inside its kernel.
    MatmulPrologueNotCheap,
    /// A reduction's result may not feed another reduction directly in one kernel.
    ReduceIntoReduce,
    /// All reductions of a kernel must reduce rows of the same shape.
    MismatchedReductions,
    /// Fusing would create a cycle between kernels (a user outside leads back in).
    WouldCreateCycle,
    /// Proving that fusing creates no cycle would reach more nodes than the limit.
    CycleCheckLimit { limit: usize },
    /// Resident reduction rows would exceed the per-partition SBUF budget.
    SbufCapacity {
        per_partition_bytes: u64,
        budget: u64,
    },
    /// Too many distinct external inputs.
    TooManyInputs { inputs: usize, limit: usize },
}

impl Rule {
    /// Kebab-case rule name, as shown by `explain`.
    pub fn name(&self) -> &'static str {
        match self {
            Rule::OpaqueOp(_) => "opaque-op",
            Rule::OneMatmulPerKernel => "one-matmul-per-kernel",
            Rule::MatmulEpilogueOnly => "matmul-epilogue-only",
            Rule::MatmulPrologueNotCheap => "matmul-prologue-not-cheap",
            Rule::ReduceIntoReduce => "no-reduce-into-reduce",
            Rule::MismatchedReductions => "mismatched-reductions",
            Rule::WouldCreateCycle => "would-create-cycle",
            Rule::CycleCheckLimit { .. } => "cycle-check-limit",
            Rule::SbufCapacity { .. } => "sbuf-capacity",
            Rule::TooManyInputs { .. } => "too-many-inputs",
        }
    }
}

/// A refused fusion candidate.
#[derive(Clone, Debug, PartialEq)]
pub struct Rejection {
    pub producer: OpId,
    pub kernel: usize,
    pub rule: Rule,
}

/// One planned kernel.
#[derive(Clone, Debug, Default)]
pub struct Kernel {
    /// Ops owned by the kernel, in program order.
    pub ops: Vec<OpId>,
    /// Cheap ops copied into this kernel (they also stay where they were).
    pub duplicated: Vec<OpId>,
    /// Distinct values read from outside the kernel.
    pub inputs: Vec<ValueId>,
    /// Values used outside the kernel (or returned).
    pub outputs: Vec<ValueId>,
    /// Bytes read from and written to HBM (0 for kernels that only relabel).
    pub hbm_bytes: u64,
}

/// The fusion decisions for one region.
#[derive(Clone, Debug, Default)]
pub struct FusionPlan {
    pub kernels: Vec<Kernel>,
    pub rejections: Vec<Rejection>,
    /// Kernel index of every op of the region (except the terminator).
    pub kernel_of: OpMap<usize>,
}

impl FusionPlan {
    pub fn hbm_bytes(&self) -> u64 {
        self.kernels.iter().map(|k| k.hbm_bytes).sum()
    }
}

/// Plans kernels for the region of `g`.
pub fn plan_fusion(m: &Module, g: &RegionGraph, cfg: &FusionConfig) -> FusionPlan {
    plan_kernels(m, &g.order, Some(g), cfg)
}

/// Greedy consumer-first kernel growth over a region given by its ops in program order
/// (`order`). A [`RegionGraph`] of the region (`graph`) is only read for the values the
/// ops' regions capture, and is not needed: without one, layout assignment can build it
/// meanwhile on another thread ([`super::plan_function`]).
pub(super) fn plan_kernels(
    m: &Module,
    order: &[OpId],
    graph: Option<&RegionGraph>,
    cfg: &FusionConfig,
) -> FusionPlan {
    let mut p = Planner::new(m, order, graph, cfg);
    for i in (0..order.len()).rev() {
        if p.is_owned(i) || m.op(order[i]).kind.is_terminator() {
            continue;
        }
        p.seed(i);
    }
    let grown = p.into_grown();
    finish(m, order, grown)
}

/// Turns grown kernels into the plan: drops kernels whose every user got a copy,
/// renumbers the rest, and computes outputs and HBM traffic.
fn finish(m: &Module, order: &[OpId], mut grown: Grown) -> FusionPlan {
    let pos_op = |&i: &u32| order[i as usize];
    let facts = TypeFacts::new(m);
    let nk = grown.members.len();
    // A kernel whose ops were all copied into their users' kernels is dropped, unless
    // some kernel reads one of its results as an input (a copy that could not take its
    // producer along, e.g. past the operand limit): then it must still compute it.
    let mut read_as_input = vec![false; m.values.len()];
    for v in grown.inputs.items() {
        read_as_input[v.index()] = true;
    }
    let kept: Vec<u32> = (0..nk as u32)
        .filter(|&k| {
            !grown.fully_duplicated(k as usize)
                || grown
                    .members
                    .of(k)
                    .iter()
                    .flat_map(|&o| grown.results_of(o))
                    .any(|&r| read_as_input[r as usize])
        })
        .collect();
    let mut renumber = vec![usize::MAX; nk];
    for (new, &k) in kept.iter().enumerate() {
        renumber[k as usize] = new;
    }
    // A kernel never reads its own results as inputs, so "read by another kernel" is
    // "read by some kernel".
    let mut read_by_some_kernel = vec![false; m.values.len()];
    for &k in &kept {
        for &v in grown.inputs.of(k) {
            read_by_some_kernel[v.index()] = true;
        }
    }
    let mut kernels = Vec::with_capacity(kept.len());
    for &k in &kept {
        grown.inputs.of_mut(k).sort_unstable();
        let own = grown.members.of(k);
        let inputs = grown.inputs.of(k).to_vec();
        // Outputs: results used by ops outside the kernel, or read by another kernel
        // (including through the copies of cheap ops duplicated into it).
        let mut outputs = Vec::new();
        for &o in own {
            let results = grown.results_of(o);
            for &r in results {
                let used_outside = if results.len() == 1 {
                    // The users of the op are those of its only result.
                    let users = grown.users.of(o).iter();
                    users
                        .map(|&u| grown.kernel_of[u as usize])
                        .any(|uk| uk != k)
                } else {
                    // The users of this result: the op's users that read it.
                    let users = grown.users.of(o).iter();
                    users
                        .filter(|&&u| grown.operands.of(u).contains(&r))
                        .map(|&u| grown.kernel_of[u as usize])
                        .any(|uk| uk != k)
                };
                if used_outside || read_by_some_kernel[r as usize] {
                    outputs.push(ValueId(r));
                }
            }
        }
        let moves_data = own
            .iter()
            .any(|&i| grown.class[i as usize] >= OpClass::Loop);
        let hbm_bytes = if moves_data {
            inputs
                .iter()
                .chain(&outputs)
                .map(|&v| facts.bytes(m, v))
                .sum()
        } else {
            0
        };
        kernels.push(Kernel {
            ops: own.iter().map(pos_op).collect(),
            duplicated: grown.dup.of(k).iter().map(pos_op).collect(),
            inputs,
            outputs,
            hbm_bytes,
        });
    }
    let mut kernel_of = OpMap::with_capacity(m.ops.len());
    for (i, &k) in grown.kernel_of.iter().enumerate() {
        if let Some(&new) = renumber.get(k as usize).filter(|&&n| n != usize::MAX) {
            kernel_of.insert(order[i], new);
        }
    }
    let rejections = grown
        .rejections
        .into_iter()
        .filter_map(|r| {
            let new = *renumber.get(r.kernel).filter(|&&n| n != usize::MAX)?;
            Some(Rejection { kernel: new, ..r })
        })
        .collect();
    FusionPlan {
        kernels,
        rejections,
        kernel_of,
    }
}

/// HBM bytes if every op (but the terminator) of a region, given by its ops (`order`),
/// were its own kernel: the baseline `explain` compares the fusion plan's traffic with.
pub fn unfused_hbm_bytes(m: &Module, order: &[OpId]) -> u64 {
    let facts = TypeFacts::new(m);
    let mut total = 0u64;
    for &o in order {
        let op = m.op(o);
        if op.kind.is_terminator() {
            continue;
        }
        for &v in &op.operands {
            total = total.wrapping_add(facts.bytes(m, v));
        }
        for &v in &op.results {
            total = total.wrapping_add(facts.bytes(m, v));
        }
    }
    total
}
