//! Fusion planning for the NeuronCore: which ops run together as one kernel, with the
//! reason for every decision.
//!
//! Owns: [`plan_fusion`], [`FusionPlan`], [`Kernel`], the fusion [`Rule`]s and the HBM
//! traffic accounting that `explain` reports.
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

use super::graph::{value_bytes, RegionGraph};
use neuronc_ir::{Module, OpId, OpKind, ValueDef, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BinaryHeap;

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
}

impl Default for FusionConfig {
    fn default() -> Self {
        FusionConfig {
            max_inputs: 16,
            sbuf_partition_bytes: SBUF_PARTITION_BYTES,
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
        k if k.is_elementwise() && !k.has_side_effect() => OpClass::Loop,
        _ => OpClass::Opaque,
    }
}

fn widening(m: &Module, op: OpId) -> bool {
    let o = m.op(op);
    match (m.tensor_type(o.operands[0]), m.tensor_type(o.results[0])) {
        (Some(a), Some(b)) => a.elem.bits() <= b.elem.bits(),
        _ => false,
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
    /// Resident reduction rows would exceed the per-partition SBUF budget.
    SbufCapacity { per_partition_bytes: u64 },
    /// Too many distinct external inputs.
    TooManyInputs { inputs: usize },
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
    pub kernel_of: FxHashMap<OpId, usize>,
    /// HBM traffic with every op as its own kernel.
    pub hbm_bytes_unfused: u64,
}

impl FusionPlan {
    pub fn hbm_bytes(&self) -> u64 {
        self.kernels.iter().map(|k| k.hbm_bytes).sum()
    }
}

struct Planner<'a> {
    m: &'a Module,
    g: &'a RegionGraph,
    cfg: &'a FusionConfig,
    kernel_of: FxHashMap<OpId, usize>,
    members: Vec<FxHashSet<OpId>>,
    dup: Vec<FxHashSet<OpId>>,
    rejections: Vec<Rejection>,
}

/// Plans kernels for the region of `g`.
pub fn plan_fusion(m: &Module, g: &RegionGraph, cfg: &FusionConfig) -> FusionPlan {
    let mut p = Planner {
        m,
        g,
        cfg,
        kernel_of: FxHashMap::default(),
        members: Vec::new(),
        dup: Vec::new(),
        rejections: Vec::new(),
    };
    for &op in g.order.iter().rev() {
        if m.op(op).kind.is_terminator() || p.kernel_of.contains_key(&op) {
            continue;
        }
        let k = p.members.len();
        p.members.push(FxHashSet::from_iter([op]));
        p.dup.push(FxHashSet::default());
        p.kernel_of.insert(op, k);
        p.grow(k);
    }
    p.finish()
}

impl Planner<'_> {
    /// Absorbs producers into kernel `k`, latest first, until none is left to try.
    fn grow(&mut self, k: usize) {
        let mut tried: FxHashSet<OpId> = FxHashSet::default();
        let mut heap: BinaryHeap<(usize, OpId)> = BinaryHeap::new();
        let seed: Vec<OpId> = self.members[k].iter().copied().collect();
        for op in seed {
            self.push_producers(op, &mut heap);
        }
        while let Some((_, p)) = heap.pop() {
            if !tried.insert(p) || !self.is_candidate(p, k) {
                continue;
            }
            match self.check(p, k) {
                Ok(duplicate) => {
                    if duplicate {
                        self.dup[k].insert(p);
                    } else {
                        self.members[k].insert(p);
                        self.kernel_of.insert(p, k);
                    }
                    self.push_producers(p, &mut heap);
                }
                Err(rule) => self.rejections.push(Rejection {
                    producer: p,
                    kernel: k,
                    rule,
                }),
            }
        }
    }

    fn push_producers(&self, op: OpId, heap: &mut BinaryHeap<(usize, OpId)>) {
        for &v in &self.m.op(op).operands {
            if let Some(p) = self.g.producer(self.m, v) {
                heap.push((self.g.pos[&p], p));
            }
        }
    }

    /// Whether producer `p` may still be tried for kernel `k`: unowned, or cheap and
    /// owned elsewhere (then it is copied).
    fn is_candidate(&self, p: OpId, k: usize) -> bool {
        if self.members[k].contains(&p) || self.dup[k].contains(&p) {
            return false;
        }
        !self.kernel_of.contains_key(&p) || self.is_cheap_elsewhere(p, k)
    }

    /// A cheap op already owned by another kernel can still be copied into `k`.
    fn is_cheap_elsewhere(&self, p: OpId, k: usize) -> bool {
        self.kernel_of.get(&p).is_some_and(|&pk| pk != k)
            && !self.dup[k].contains(&p)
            && classify(self.m, p) <= OpClass::Cheap
    }

    /// Decides whether producer `p` joins kernel `k`: `Ok(true)` duplicates it,
    /// `Ok(false)` moves it in, `Err` names the refusing rule.
    fn check(&self, p: OpId, k: usize) -> Result<bool, Rule> {
        let class = classify(self.m, p);
        if class == OpClass::Opaque {
            return Err(Rule::OpaqueOp(self.m.op(p).kind));
        }
        if let Some(&o) = self.members[k]
            .iter()
            .find(|&&o| classify(self.m, o) == OpClass::Opaque)
        {
            return Err(Rule::OpaqueOp(self.m.op(o).kind));
        }
        let has_matmul = self.members[k]
            .iter()
            .any(|&o| classify(self.m, o) == OpClass::Matmul);
        if let Some(rule) = self.matmul_rule(p, class, k, has_matmul) {
            return Err(rule);
        }
        if class == OpClass::Reduce
            || self.members[k]
                .iter()
                .any(|&o| classify(self.m, o) == OpClass::Reduce)
        {
            self.reduction_rules(p, k)?;
        }
        let outside = self.has_users_outside(p, k);
        let duplicate = outside && class <= OpClass::Cheap;
        // Non-cheap producers are never recomputed: they become an extra kernel output
        // (multi-output fusion), which is only legal without a cycle.
        if outside && !duplicate && self.creates_cycle(p, k) {
            return Err(Rule::WouldCreateCycle);
        }
        // Scalars ride along in instruction operands; only tensors need a DMA stream.
        let is_tensor = |v: &ValueId| self.m.tensor_type(*v).is_some_and(|t| t.rank() > 0);
        let inputs = self
            .inputs_with(p, k)
            .iter()
            .filter(|v| is_tensor(v))
            .count();
        if inputs > self.cfg.max_inputs {
            return Err(Rule::TooManyInputs { inputs });
        }
        Ok(duplicate)
    }

    fn matmul_rule(&self, p: OpId, class: OpClass, k: usize, has_matmul: bool) -> Option<Rule> {
        if class == OpClass::Matmul {
            if has_matmul {
                return Some(Rule::OneMatmulPerKernel);
            }
            // Epilogue: everything already in the kernel must be elementwise-ish.
            let epilogue = |o: OpId| match classify(self.m, o) {
                OpClass::Free | OpClass::Cheap => true,
                OpClass::Loop => self.m.op(o).kind.is_elementwise(),
                _ => false,
            };
            let ok = self.members[k].iter().all(|&o| epilogue(o));
            return (!ok).then_some(Rule::MatmulEpilogueOnly);
        }
        if has_matmul {
            if class > OpClass::Cheap && self.reaches_matmul(p, k) {
                return Some(Rule::MatmulPrologueNotCheap);
            }
            if class == OpClass::Reduce {
                return Some(Rule::MatmulEpilogueOnly);
            }
        }
        None
    }

    /// Whether `p` feeds the kernel's matmul (directly or through other kernel ops):
    /// then it is a prologue rather than a side input of the epilogue.
    fn reaches_matmul(&self, p: OpId, k: usize) -> bool {
        let mut stack: Vec<OpId> = self.users_in(p, k).collect();
        let mut seen: FxHashSet<OpId> = FxHashSet::default();
        while let Some(u) = stack.pop() {
            if !seen.insert(u) {
                continue;
            }
            if classify(self.m, u) == OpClass::Matmul {
                return true;
            }
            stack.extend(self.users_in(u, k));
        }
        false
    }

    fn reduction_rules(&self, p: OpId, k: usize) -> Result<(), Rule> {
        if classify(self.m, p) == OpClass::Reduce
            && self
                .users_in(p, k)
                .any(|u| classify(self.m, u) == OpClass::Reduce)
        {
            return Err(Rule::ReduceIntoReduce);
        }
        let mut rows = self.members[k]
            .iter()
            .chain([&p])
            .filter(|&&o| classify(self.m, o) == OpClass::Reduce)
            .map(|&o| self.row_shape(o));
        if let Some(first) = rows.next() {
            if rows.any(|r| r != first) {
                return Err(Rule::MismatchedReductions);
            }
            let per_partition = self.resident_row_bytes(p, k, &first);
            if per_partition > self.cfg.sbuf_partition_bytes {
                return Err(Rule::SbufCapacity {
                    per_partition_bytes: per_partition,
                });
            }
        }
        Ok(())
    }

    /// (operand shape, reduced dims) of a reduce.
    fn row_shape(&self, op: OpId) -> (Vec<i64>, Vec<i64>) {
        let o = self.m.op(op);
        let shape = self
            .m
            .tensor_type(o.operands[0])
            .map(|t| t.shape.to_vec())
            .unwrap_or_default();
        (shape, o.attrs.i64_array("dimensions").unwrap_or_default())
    }

    /// Bytes per partition to keep one reduced row of every tensor of the kernel resident.
    fn resident_row_bytes(&self, p: OpId, k: usize, row: &(Vec<i64>, Vec<i64>)) -> u64 {
        let row_elems: u64 = row
            .1
            .iter()
            .filter_map(|&d| row.0.get(d as usize))
            .map(|&n| n.max(0) as u64)
            .product();
        let full: u64 = row.0.iter().map(|&n| n.max(0) as u64).product();
        self.members[k]
            .iter()
            .chain([&p])
            .flat_map(|&o| self.m.op(o).results.iter().copied())
            .filter_map(|v| self.m.tensor_type(v))
            .filter(|t| t.num_elements() == full)
            .map(|t| row_elems * t.elem.byte_width() as u64)
            .sum()
    }

    fn users_in(&self, p: OpId, k: usize) -> impl Iterator<Item = OpId> + '_ {
        let members = &self.members[k];
        let dup = &self.dup[k];
        self.m
            .op(p)
            .results
            .iter()
            .flat_map(move |&r| self.g.users_of(r).iter().map(|&(u, _)| u))
            .filter(move |u| members.contains(u) || dup.contains(u))
    }

    /// Whether `p` has a user that is not owned by kernel `k`. Users merely copied into
    /// `k` count as outside: their originals stay alive for their other users.
    fn has_users_outside(&self, p: OpId, k: usize) -> bool {
        self.m.op(p).results.iter().any(|&r| {
            self.g
                .users_of(r)
                .iter()
                .any(|&(u, _)| !self.members[k].contains(&u))
        })
    }

    /// Whether some user of `p` outside kernel `k` reaches `k` (bounded forward search:
    /// ops after the last op of `k` cannot lead back into it). A user that already
    /// belongs to another kernel stands for all of that kernel's ops.
    fn creates_cycle(&self, p: OpId, k: usize) -> bool {
        let last = self.members[k]
            .iter()
            .map(|o| self.g.pos[o])
            .max()
            .unwrap_or(0);
        let mut stack: Vec<OpId> = Vec::new();
        let mut seen: FxHashSet<OpId> = FxHashSet::default();
        let mut seen_kernels: FxHashSet<usize> = FxHashSet::default();
        let users = |op: OpId, out: &mut Vec<OpId>| {
            for &r in &self.m.op(op).results {
                out.extend(self.g.users_of(r).iter().map(|&(x, _)| x));
            }
        };
        users(p, &mut stack);
        stack.retain(|u| !self.members[k].contains(u));
        while let Some(u) = stack.pop() {
            if !seen.insert(u) || self.g.pos.get(&u).is_none_or(|&pos| pos > last) {
                continue;
            }
            match self.kernel_of.get(&u) {
                Some(&uk) if uk == k => return true,
                Some(&uk) => {
                    if seen_kernels.insert(uk) {
                        for &o in &self.members[uk] {
                            users(o, &mut stack);
                        }
                    }
                }
                None => users(u, &mut stack),
            }
        }
        false
    }

    /// Distinct external inputs of kernel `k` if `p` joined it.
    fn inputs_with(&self, p: OpId, k: usize) -> FxHashSet<ValueId> {
        let inside =
            |op: OpId| op == p || self.members[k].contains(&op) || self.dup[k].contains(&op);
        let mut inputs = FxHashSet::default();
        for &op in self.members[k].iter().chain(self.dup[k].iter()).chain([&p]) {
            for &v in &self.m.op(op).operands {
                let internal = matches!(self.m.value(v).def, ValueDef::Result(d, _) if inside(d));
                if !internal {
                    inputs.insert(v);
                }
            }
        }
        inputs
    }

    /// A kernel of cheap ops whose every user got its own copy: it need not run.
    fn fully_duplicated(&self, k: usize) -> bool {
        self.members[k].iter().all(|&o| {
            classify(self.m, o) <= OpClass::Cheap
                && self.m.op(o).results.iter().all(|&r| {
                    self.g.users_of(r).iter().all(|&(u, _)| {
                        self.kernel_of
                            .get(&u)
                            .is_some_and(|&uk| uk != k && self.dup[uk].contains(&o))
                    })
                })
        }) && self.members[k]
            .iter()
            .any(|&o| !self.m.op(o).results.is_empty())
    }

    fn finish(self) -> FusionPlan {
        let m = self.m;
        let mut kernels = Vec::with_capacity(self.members.len());
        let mut renumber: FxHashMap<usize, usize> = FxHashMap::default();
        let kept: Vec<usize> = (0..self.members.len())
            .filter(|&k| !self.fully_duplicated(k))
            .collect();
        let all_inputs: Vec<FxHashSet<ValueId>> = kept
            .iter()
            .map(|&k| {
                self.inputs_with(
                    *self.members[k]
                        .iter()
                        .next()
                        .expect("kernels are non-empty"),
                    k,
                )
            })
            .collect();
        // A kernel never reads its own results as inputs, so "read by another kernel" is
        // "read by some kernel".
        let read_by_some_kernel: FxHashSet<ValueId> =
            all_inputs.iter().flatten().copied().collect();
        for (ki, &k) in kept.iter().enumerate() {
            renumber.insert(k, kernels.len());
            let mut ops: Vec<OpId> = self.members[k].iter().copied().collect();
            ops.sort_by_key(|o| self.g.pos[o]);
            let mut duplicated: Vec<OpId> = self.dup[k].iter().copied().collect();
            duplicated.sort_by_key(|o| self.g.pos[o]);
            let mut inputs: Vec<ValueId> = all_inputs[ki].iter().copied().collect();
            inputs.sort_unstable();
            // Outputs: results used by ops outside the kernel, or read by another kernel
            // (including through the copies of cheap ops duplicated into it).
            let outputs: Vec<ValueId> = ops
                .iter()
                .flat_map(|&o| m.op(o).results.iter().copied())
                .filter(|&r| {
                    self.g
                        .users_of(r)
                        .iter()
                        .any(|&(u, _)| self.kernel_of.get(&u) != Some(&k))
                        || read_by_some_kernel.contains(&r)
                })
                .collect();
            let moves_data = ops.iter().any(|&o| classify(m, o) >= OpClass::Loop);
            let hbm_bytes = if moves_data {
                inputs
                    .iter()
                    .chain(&outputs)
                    .map(|&v| value_bytes(m, v))
                    .sum()
            } else {
                0
            };
            kernels.push(Kernel {
                ops,
                duplicated,
                inputs,
                outputs,
                hbm_bytes,
            });
        }
        let hbm_bytes_unfused = unfused_bytes(m, self.g);
        let kernel_of = self
            .kernel_of
            .iter()
            .filter_map(|(&o, k)| Some((o, *renumber.get(k)?)))
            .collect();
        let rejections = self
            .rejections
            .into_iter()
            .filter_map(|r| {
                Some(Rejection {
                    kernel: *renumber.get(&r.kernel)?,
                    ..r
                })
            })
            .collect();
        FusionPlan {
            kernels,
            rejections,
            kernel_of,
            hbm_bytes_unfused,
        }
    }
}

/// HBM bytes if every op (but the terminator) were its own kernel.
fn unfused_bytes(m: &Module, g: &RegionGraph) -> u64 {
    g.order
        .iter()
        .filter(|&&o| !m.op(o).kind.is_terminator())
        .map(|&o| {
            let op = m.op(o);
            op.operands
                .iter()
                .chain(&op.results)
                .map(|&v| value_bytes(m, v))
                .sum::<u64>()
        })
        .sum()
}
