//! Lowering of a fusion/layout plan to engine instructions, with on-chip memory planning.
//!
//! Owns: [`lower`], [`EngineOptions`], [`EngineError`] and the per-kernel driver
//! ([`Lowerer`]); the instruction emission for each kind of work is in `emit_ops`, the
//! kernel order in `kernel_order`.
//!
//! # How a kernel is lowered
//! Kernels are visited in a topological order of the kernel graph (ties: kernels whose
//! outputs no other kernel reads — optimizer updates — as soon as they are ready, so a
//! gradient is consumed while it is still resident; then program order).
//! Each kernel's iteration space is tiled ([`Tiling`]); tiles are grouped into at most
//! `max_records` instruction records so pipelining across engines survives while the
//! program stays small. Per record, every op of the kernel emits its instruction record;
//! relabelling ops pass their producers through, and so do ops merged into a consumer's
//! combined instruction (`combine`: `activation`, `tensor_scalar`,
//! `scalar_tensor_tensor`). Kernel inputs come from SBUF when a previous kernel left them
//! resident, else from HBM by DMA — streamed per record into
//! double-buffered slots for elementwise/reduction kernels, loaded whole (in pieces)
//! for matmul and opaque kernels. Kernel outputs that a later kernel reads stay resident
//! in SBUF (first-fit over the partition address space); when SBUF is full the resident
//! tensor whose next use is furthest away is spilled to HBM (Belady). Outputs returned by
//! the function are stored to HBM. Under auto-cast, FP32 values only matmuls read are
//! held as BF16 (`narrow`); splat constants are never stored, each consumer fills its own
//! slots. Flexible work goes to the engine with the least work in a window of kernels
//! around the current one (`balance`).
//! Invariants: instruction ids are topological; every reuse of an SBUF range or PSUM bank
//! carries a dependency on the previous tenant's last accessors of *that* range (a
//! kernel's local ranges are handed on one by one, each with its own last accessors, so
//! the next kernels' loads into them need not wait for the whole kernel); a kernel whose
//! own tiles cannot fit in SBUF even after spilling everything, streaming a matmul's
//! contraction in chunks and reducing rows in pieces (where nothing in the kernel reads
//! a reduction's result), fails with [`EngineError::SbufOverflow`] giving the numbers.

use crate::engine::classify::{op_work, OpWork};
use crate::engine::cost::CoreModel;
use crate::engine::isa::{BufId, Engine, Instr, InstrId, Mem, Opcode, Program, DMA_QUEUES};
use crate::engine::memory::{Placement, PsumBanks, SbufAllocator};
use crate::engine::tiling::{arg_read_bytes, elems_bytes, resident_bytes_pp, root, split};
use neuronc_ir::{Func, Module, OpId, ValueId};
use neuronc_passes::neuron::fusion::Kernel;
use neuronc_passes::neuron::NeuronPlan;
use rustc_hash::{FxHashMap, FxHashSet};
use std::cmp::Reverse;

/// `--auto-cast`: which operands run in BF16 on TensorE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AutoCast {
    /// Keep the program's types (FP32 matmuls pay the ~4× penalty, facts §1.4).
    None,
    /// Matmul inputs in BF16 (the torch-neuronx default for training).
    #[default]
    Matmult,
    /// Everything in BF16.
    All,
}

impl AutoCast {
    pub fn parse(s: &str) -> Option<AutoCast> {
        match s {
            "none" => Some(AutoCast::None),
            "matmult" => Some(AutoCast::Matmult),
            "all" => Some(AutoCast::All),
            _ => None,
        }
    }
}

/// Options of the engine back end.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub model: CoreModel,
    pub auto_cast: AutoCast,
    /// Most instruction records per op per kernel (tiles beyond that share records).
    pub max_records: u32,
    /// Merge producers into their consumers' instructions ([`crate::engine::combine`]).
    pub combine: bool,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            model: CoreModel::trn1(),
            auto_cast: AutoCast::Matmult,
            max_records: 16,
            combine: true,
        }
    }
}

/// Errors of the engine back end.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum EngineError {
    #[error(
        "kernel {kernel} ({op}) needs {needed} bytes per SBUF partition for its tiles, but only {available} of \
         {capacity} bytes per partition can be freed"
    )]
    SbufOverflow {
        kernel: usize,
        op: String,
        needed: u64,
        available: u64,
        capacity: u64,
    },
    #[error("the kernel graph has a cycle through kernel {0}")]
    KernelCycle(usize),
}

/// Roofline bookkeeping collected while lowering.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Work {
    /// Ideal work that only one engine can do (Tensor, Vector, Scalar, GpSimd), seconds.
    pub fixed: [f64; 4],
    /// Ideal work that several of Vector/Scalar/GpSimd can do, at the cheapest engine.
    pub flexible: f64,
    /// Part of `flexible` that only Vector or GpSimd can do (two-input ops): on v2 it all
    /// passes through their shared SBUF port.
    pub vector_or_pool: f64,
    /// Bytes of the function's arguments and results (read once, written once).
    pub compulsory_hbm_bytes: u64,
    /// Bytes moved by all DMA instructions.
    pub hbm_bytes: u64,
}

/// A lowered function.
#[derive(Clone, Debug, Default)]
pub struct Lowered {
    pub program: Program,
    pub work: Work,
    /// Kernels that emitted at least one instruction.
    pub kernels: usize,
    /// Highest SBUF bytes per partition allocated at once.
    pub sbuf_peak_pp: u64,
    /// PSUM accumulation groups: (first writer, last reader, banks).
    pub psum_groups: Vec<(InstrId, InstrId, u8)>,
}

/// Where a (root) value's data is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Avail {
    /// SBUF residence: (buffer, offset, bytes per partition).
    pub sbuf: Option<(BufId, u64, u64)>,
    /// HBM copy, if any.
    pub hbm: Option<BufId>,
    /// Instructions that produce it, one per record of its producer (SBUF), or that
    /// store it (HBM); empty for function arguments.
    pub pieces: Vec<InstrId>,
    pub hbm_pieces: Vec<InstrId>,
    /// Where each of `pieces` (`hbm_pieces`) ends in its producer's walk; empty if unknown.
    pub piece_ends: Vec<u64>,
    pub hbm_piece_ends: Vec<u64>,
    /// Instructions that read it while resident.
    pub readers: Vec<InstrId>,
}

/// Lowering state.
pub(crate) struct Lowerer<'a> {
    pub m: &'a Module,
    pub plan: &'a NeuronPlan,
    /// The kernels being lowered (the plan's, with any cyclic ones split).
    pub kernels: Vec<Kernel>,
    pub opts: &'a EngineOptions,
    pub prog: Program,
    pub sbuf: SbufAllocator,
    pub psum: PsumBanks,
    pub avail: FxHashMap<ValueId, Avail>,
    /// Roots currently resident in SBUF.
    pub resident: std::collections::BTreeSet<ValueId>,
    /// Kernel positions that read each root, ascending.
    pub uses: FxHashMap<ValueId, Vec<usize>>,
    pub returned: FxHashSet<ValueId>,
    /// Accumulated busy time per compute engine (load balancing).
    pub busy: [f64; 4],
    pub dma_busy: [f64; DMA_QUEUES as usize],
    pub work: Work,
    pub psum_groups: Vec<(InstrId, InstrId, u8)>,
    pub hbm_next: u64,
    pub cross: FxHashSet<OpId>,
    /// Kernel-local allocations not yet freed: (offset, bytes, accessors). The last
    /// [`LOCAL_LAG`] kernels keep theirs so that consecutive kernels use different
    /// addresses and can overlap in time.
    pub local_frees: std::collections::VecDeque<LocalAlloc>,
    /// Roots stored as BF16 under auto-cast ([`crate::engine::narrow`]).
    pub narrow: FxHashSet<ValueId>,
    /// FP32 roots whose HBM copy was written as BF16 because every later reader only
    /// feeds it to matmuls (`narrow::matmul_only_reads`); their loads move BF16.
    pub hbm_bf16: FxHashSet<ValueId>,
    /// `(root, position)`: the kernel at that position reads the root only as matmul
    /// operands (empty without auto-cast).
    pub mm_reads: FxHashSet<(ValueId, usize)>,
    /// Splat constants that kernels write into their own slots instead of loading.
    pub splats: FxHashSet<ValueId>,
    /// Forced single-engine work still to come ([`crate::engine::balance`]).
    pub ahead: crate::engine::balance::Lookahead,
    /// Position of the kernel being lowered.
    pub pos: usize,
    /// Share of the current kernel's tiles not yet emitted (for [`Lowerer::pick`]).
    pub left: f64,
    /// Scratch for [`Lowerer::push`]: the last instruction whose dependency list saw
    /// each instruction id (plus one).
    dep_stamp: Vec<InstrId>,
}

/// A kernel's local SBUF ranges: offset, bytes per partition, and the instructions that
/// accessed the range last (which its next tenant waits for).
pub type LocalAlloc = Vec<(u64, u64, Vec<InstrId>)>;

pub(crate) use crate::engine::kernel_order::kernels_in_order;

/// Number of kernels whose local buffers stay allocated after they are lowered.
const LOCAL_LAG: usize = 2;

/// Lowers `func` under `plan` to an engine program, placing SBUF tensors by `placement`.
pub fn lower(
    m: &Module,
    func: &Func,
    plan: &NeuronPlan,
    opts: &EngineOptions,
    placement: Placement,
) -> Result<Lowered, EngineError> {
    let (kernels, order) = kernels_in_order(m, plan)?;
    let mut lw = Lowerer::new(m, plan, opts);
    lw.sbuf = SbufAllocator::with_placement(opts.model.sbuf_partition_bytes, placement);
    lw.kernels = kernels;
    lw.prepare(func, &order);
    lw.ahead = lw.lookahead(&order);
    let mut kernels = 0;
    for (pos, &k) in order.iter().enumerate() {
        lw.pos = pos;
        let busy = lw.busy;
        lw.ahead.record(pos, busy);
        let before = lw.prog.instrs.len();
        lw.lower_kernel(k, pos)?;
        lw.release_after(pos);
        while lw.local_frees.len() > LOCAL_LAG {
            if let Some(ranges) = lw.local_frees.pop_front() {
                lw.free_local(ranges);
            }
        }
        if lw.prog.instrs.len() > before {
            kernels += 1;
        }
    }
    Ok(Lowered {
        sbuf_peak_pp: lw.sbuf.peak(),
        program: lw.prog,
        work: lw.work,
        kernels,
        psum_groups: lw.psum_groups,
    })
}

impl<'a> Lowerer<'a> {
    fn new(m: &'a Module, plan: &'a NeuronPlan, opts: &'a EngineOptions) -> Self {
        Lowerer {
            m,
            plan,
            kernels: Vec::new(),
            opts,
            prog: Program::default(),
            sbuf: SbufAllocator::new(opts.model.sbuf_partition_bytes),
            psum: PsumBanks::new(opts.model.psum_banks),
            avail: FxHashMap::default(),
            resident: Default::default(),
            uses: FxHashMap::default(),
            returned: FxHashSet::default(),
            busy: [0.0; 4],
            dma_busy: [0.0; DMA_QUEUES as usize],
            work: Work::default(),
            psum_groups: Vec::new(),
            hbm_next: 0,
            cross: plan
                .layout
                .cross_partition_reductions
                .iter()
                .copied()
                .collect(),
            local_frees: Default::default(),
            narrow: FxHashSet::default(),
            hbm_bf16: FxHashSet::default(),
            mm_reads: FxHashSet::default(),
            splats: FxHashSet::default(),
            ahead: Default::default(),
            pos: 0,
            left: 0.0,
            dep_stamp: Vec::new(),
        }
    }

    /// Function arguments start in HBM; records each root's uses and the returned roots.
    fn prepare(&mut self, func: &Func, order: &[usize]) {
        let m = self.m;
        for &a in &m.region(func.body).args {
            self.place_in_hbm(a);
        }
        for (pos, &k) in order.iter().enumerate() {
            for &v in &self.kernels[k].inputs {
                let r = root(m, v);
                let u = self.uses.entry(r).or_default();
                if u.last() != Some(&pos) {
                    u.push(pos);
                }
            }
        }
        if let Some(&term) = m.region(func.body).ops.last() {
            if m.op(term).kind.is_terminator() {
                for &v in &m.op(term).operands {
                    self.returned.insert(root(m, v));
                }
            }
        }
        if self.opts.auto_cast != AutoCast::None {
            self.narrow = crate::engine::narrow::narrow_roots(m, &self.plan.graph, &self.returned);
            self.mm_reads = crate::engine::narrow::matmul_only_reads(
                m,
                &self.plan.graph,
                &self.kernels,
                order,
                &self.returned,
            );
        }
        // Compulsory traffic: arguments some kernel reads (only the rows gathers take, for
        // tables nothing else reads), results some kernel computes.
        let args: FxHashSet<ValueId> = m.region(func.body).args.iter().copied().collect();
        let arg_bytes = arg_read_bytes(m, func.body, &args);
        let read: u64 = args
            .iter()
            .filter(|a| self.uses.contains_key(a))
            .map(|a| {
                arg_bytes
                    .get(a)
                    .copied()
                    .unwrap_or_else(|| elems_bytes(m, *a).1)
            })
            .sum();
        let mut written: Vec<ValueId> = self
            .returned
            .iter()
            .copied()
            .filter(|r| !args.contains(r))
            .collect();
        written.sort_unstable();
        self.work.compulsory_hbm_bytes =
            read + written.iter().map(|&v| elems_bytes(m, v).1).sum::<u64>();
    }

    /// Records that root `v` lives only in HBM, in a fresh buffer.
    pub fn place_in_hbm(&mut self, v: ValueId) {
        let hbm = self.hbm_buffer(v);
        self.avail.insert(
            v,
            Avail {
                hbm: Some(hbm),
                ..Avail::default()
            },
        );
    }

    /// Whether `v`'s root is held as BF16 (narrowed, or its HBM copy was written as
    /// BF16 and every copy loaded from it since is BF16).
    pub fn stored_bf16(&self, v: ValueId) -> bool {
        let r = root(self.m, v);
        self.narrow.contains(&r) || self.hbm_bf16.contains(&r)
    }

    /// Whether root `r`'s HBM copy may be written as BF16 now: auto-cast is on, `r` is
    /// an FP32 value that is neither returned nor already narrow, and every kernel from
    /// position `from` on that reads it reads it only as matmul operands.
    pub fn bf16_from(&self, r: ValueId, from: usize) -> bool {
        let Some(uses) = self.uses.get(&r) else {
            return false;
        };
        let later = &uses[uses.partition_point(|&p| p < from)..];
        !later.is_empty()
            && !self.returned.contains(&r)
            && !self.narrow.contains(&r)
            && later.iter().all(|&p| self.mm_reads.contains(&(r, p)))
    }

    /// Bytes of value `v` as stored (BF16 for narrowed roots and their views).
    pub fn bytes_of(&self, v: ValueId) -> u64 {
        let bytes = elems_bytes(self.m, v).1;
        if self.stored_bf16(v) {
            bytes / 2
        } else {
            bytes
        }
    }

    /// SBUF bytes per partition to hold all of `v` as stored.
    pub fn resident_pp(&self, v: ValueId) -> u64 {
        let pp = resident_bytes_pp(self.m, &self.plan.layout, v);
        if self.stored_bf16(v) {
            pp.div_ceil(2)
        } else {
            pp
        }
    }

    /// An HBM buffer for value `v`.
    pub fn hbm_buffer(&mut self, v: ValueId) -> BufId {
        self.hbm_buffer_sized(v, self.bytes_of(v))
    }

    /// [`Lowerer::hbm_buffer`] of `bytes` bytes.
    pub fn hbm_buffer_sized(&mut self, v: ValueId, bytes: u64) -> BufId {
        let off = self.hbm_next;
        self.hbm_next += bytes.div_ceil(64) * 64;
        self.prog.buffer(format!("{v}"), Mem::Hbm, off, bytes)
    }

    /// SBUF bytes per partition held by residents in `keep` and by unfreed local buffers.
    pub fn resident_pinned(&self, keep: &FxHashSet<ValueId>) -> u64 {
        let res: u64 = keep
            .iter()
            .filter_map(|r| self.avail.get(r))
            .filter_map(|a| a.sbuf.map(|s| s.2))
            .sum();
        res + self
            .local_frees
            .iter()
            .flat_map(|l| l.iter().map(|r| r.1))
            .sum::<u64>()
    }

    /// Frees a kernel's local ranges, each guarded by its last accessors.
    pub fn free_local(&mut self, ranges: LocalAlloc) {
        for (off, bytes, acc) in ranges {
            self.sbuf.free(off, bytes, acc);
        }
    }

    /// Frees the residents whose last use is kernel position `pos`.
    fn release_after(&mut self, pos: usize) {
        let mut dead: Vec<ValueId> = self
            .resident
            .iter()
            .filter(|r| {
                self.uses
                    .get(r)
                    .and_then(|u| u.last())
                    .is_none_or(|&l| l <= pos)
            })
            .copied()
            .collect();
        dead.sort_unstable();
        for r in dead {
            self.drop_resident(r);
        }
    }

    /// Frees the SBUF copy of `r` (its readers and writers guard the range's next tenant).
    pub fn drop_resident(&mut self, r: ValueId) {
        self.resident.remove(&r);
        if let Some(a) = self.avail.get_mut(&r) {
            if let Some((_, off, bytes)) = a.sbuf.take() {
                let mut acc = std::mem::take(&mut a.readers);
                acc.extend_from_slice(&a.pieces);
                acc.extend_from_slice(&a.hbm_pieces);
                self.sbuf.free(off, bytes, acc);
            }
        }
    }

    /// Next kernel position after `pos` that reads `r` (usize::MAX if none).
    pub fn next_use(&self, r: ValueId, pos: usize) -> usize {
        self.uses
            .get(&r)
            .and_then(|u| u.iter().find(|&&p| p > pos).copied())
            .unwrap_or(usize::MAX)
    }

    /// Allocates `bytes` per partition, spilling residents not in `keep` (furthest next
    /// use first) until it fits. `None` when even that is not enough.
    pub fn alloc_spilling(
        &mut self,
        bytes: u64,
        pos: usize,
        keep: &FxHashSet<ValueId>,
    ) -> Option<(u64, Vec<InstrId>)> {
        loop {
            if let Some(g) = self.sbuf.alloc(bytes) {
                return Some((g.offset, g.war));
            }
            if let Some(ranges) = self.local_frees.pop_front() {
                // Give up the overlap with recent kernels before spilling tensors.
                self.free_local(ranges);
                continue;
            }
            let victim = self
                .resident
                .iter()
                .filter(|r| !keep.contains(r))
                .max_by_key(|&&r| (self.next_use(r, pos), Reverse(r)))
                .copied()?;
            self.spill(victim);
        }
    }

    /// Stores a resident tensor to HBM (if it has no HBM copy yet) and frees its SBUF.
    pub fn spill(&mut self, r: ValueId) {
        let Some(a) = self.avail.get(&r) else { return };
        if a.hbm.is_none() {
            let pieces = a.pieces.clone();
            let sb = a.sbuf.map(|(b, _, _)| b);
            let cast = self.bf16_from(r, self.pos);
            if cast {
                self.hbm_bf16.insert(r);
            }
            let bytes = self.bytes_of(r);
            let buf = self.hbm_buffer(r);
            let n = pieces.len().max(1) as u64;
            let mut stores = Vec::new();
            for (i, &p) in pieces.iter().enumerate() {
                let share = bytes * (i as u64 + 1) / n - bytes * i as u64 / n;
                let dma = if cast { Self::dma_cast } else { Self::dma };
                let reads = sb.into_iter().collect();
                let id = dma(
                    self,
                    Opcode::Spill,
                    u32::MAX,
                    share,
                    128,
                    vec![p],
                    reads,
                    vec![buf],
                );
                stores.push(id);
            }
            if let Some(a) = self.avail.get_mut(&r) {
                a.hbm = Some(buf);
                a.hbm_pieces = stores;
                a.hbm_piece_ends = a.piece_ends.clone(); // one store per piece
            }
        }
        self.drop_resident(r);
    }

    /// Emits a DMA record of `bytes` over `parts` partitions, provisionally on the
    /// least-loaded queues (the scheduler picks the queues it runs on, and how many).
    #[allow(clippy::too_many_arguments)]
    pub fn dma(
        &mut self,
        op: Opcode,
        kernel: u32,
        bytes: u64,
        parts: u32,
        deps: Vec<InstrId>,
        reads: Vec<BufId>,
        writes: Vec<BufId>,
    ) -> InstrId {
        let parts = parts.clamp(1, 128);
        let bpp = bytes.div_ceil(parts as u64).max(1);
        // A transfer is spread over `lanes` queues (a power of two, one per 32 KiB), like
        // a scatter-gather list split across the 16 DMA engines (facts §1.3).
        let lanes = (bytes / (32 * 1024)).clamp(1, DMA_QUEUES as u64).ilog2();
        let lanes = 1usize << lanes;
        let model = &self.opts.model;
        let bw_time = model.dma_s(bpp, parts) - model.dma_fixed_s;
        let mut dur = model.dma_fixed_s + bw_time / lanes as f64;
        if op == Opcode::DmaTranspose {
            // Element-granular descriptors: assume a quarter of the streaming rate [U].
            dur = model.dma_fixed_s + 4.0 * bw_time / lanes as f64;
        }
        let busy = self.dma_busy;
        let load = |q: usize| (q..q + lanes).map(|i| busy[i]).fold(0.0, f64::max);
        let q = (0..DMA_QUEUES as usize)
            .step_by(lanes)
            .min_by(|&a, &b| load(a).total_cmp(&load(b)))
            .unwrap_or(0);
        let until = load(q) + dur;
        for b in &mut self.dma_busy[q..q + lanes] {
            *b = until;
        }
        self.work.hbm_bytes += bytes;
        self.push(Instr {
            id: 0,
            engine: Engine::Dma(q as u8),
            op,
            kernel,
            partitions: parts,
            free: bpp.min(u32::MAX as u64) as u32,
            count: 1,
            elem_bytes: 1,
            span: lanes as u8,
            reads,
            writes,
            deps,
            duration_s: dur,
            ideal_s: self.opts.model.dma_ideal_s(bytes),
        })
    }

    /// [`Lowerer::dma`] of an FP32 tensor written to HBM as `hbm_bytes` of BF16 (facts
    /// §2.3: DMA casts through FP32). Costed at the bytes of its FP32 side [U]: whether
    /// the DMA engines stream the narrower side faster is not documented. HBM traffic is
    /// the BF16 bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn dma_cast(
        &mut self,
        op: Opcode,
        kernel: u32,
        hbm_bytes: u64,
        parts: u32,
        deps: Vec<InstrId>,
        reads: Vec<BufId>,
        writes: Vec<BufId>,
    ) -> InstrId {
        let id = self.dma(op, kernel, 2 * hbm_bytes, parts, deps, reads, writes);
        self.work.hbm_bytes -= hbm_bytes;
        self.prog.instrs[id as usize].ideal_s = self.opts.model.dma_ideal_s(hbm_bytes);
        id
    }

    /// Appends an instruction (deduplicating its dependencies) and returns its id.
    pub fn push(&mut self, mut ins: Instr) -> InstrId {
        let id = self.prog.instrs.len() as InstrId;
        ins.id = id;
        // Dependency lists repeat ids (every record's readers of a resident tensor, say):
        // drop repeats in O(n) with a stamp per instruction before sorting what is left.
        if ins.deps.len() > 16 {
            self.dep_stamp.resize(id as usize, 0);
            let stamp = id + 1;
            let marks = &mut self.dep_stamp;
            ins.deps.retain(|&d| {
                let seen = marks.get(d as usize).is_some_and(|&s| s == stamp);
                if let Some(s) = marks.get_mut(d as usize) {
                    *s = stamp;
                }
                !seen
            });
        }
        ins.deps.sort_unstable();
        ins.deps.dedup();
        if let Some(i) = ins.engine.index().checked_sub(0).filter(|&i| i < 4) {
            self.busy[i] += ins.duration_s;
        }
        self.prog.instrs.push(ins);
        id
    }

    /// The engine among `engines` that finishes `cost(e)` of new work first, counting the
    /// v2 shared SBUF port of Vector and GpSimd as one resource, the current kernel's work
    /// (done and forced) and, weighted less, that of the kernels around it
    /// ([`crate::engine::balance`]).
    pub fn pick(&self, engines: &[Engine], cost: impl Fn(Engine) -> f64) -> Engine {
        let (recent, ahead) = self.ahead.loads(self.pos, self.busy, self.left);
        let load = |e: Engine| {
            let i = e.index();
            let shared =
                self.opts.model.shared_ports && matches!(e, Engine::Vector | Engine::GpSimd);
            if shared {
                recent[1] + recent[3] + ahead[1] + ahead[3]
            } else {
                recent.get(i).copied().unwrap_or(0.0) + ahead.get(i).copied().unwrap_or(0.0)
            }
        };
        let mut best = engines[0];
        let mut best_t = f64::INFINITY;
        for &e in engines {
            let t = load(e) + cost(e);
            if t < best_t {
                best_t = t;
                best = e;
            }
        }
        best
    }

    /// Records the ideal work of an op for the roofline.
    pub fn account(&mut self, engines: &[Engine], ideal: impl Fn(Engine) -> f64) {
        if let [only] = engines {
            self.work.fixed[only.index().min(3)] += ideal(*only);
        } else {
            let t = engines
                .iter()
                .map(|&e| ideal(e))
                .fold(f64::INFINITY, f64::min);
            self.work.flexible += t;
            if engines
                .iter()
                .all(|e| matches!(e, Engine::Vector | Engine::GpSimd))
            {
                self.work.vector_or_pool += t;
            }
        }
    }

    /// The work of `op`, given whether its kernel computes.
    pub fn work_of(&self, op: OpId, computes: bool) -> OpWork {
        op_work(
            self.m,
            op,
            self.cross.contains(&op) || self.reduces_partitions(op),
            computes,
        )
    }

    /// Whether a reduce reduces its operand's partition dimension (checked here too, so
    /// the lowering agrees with the layout it tiles by).
    fn reduces_partitions(&self, op: OpId) -> bool {
        let o = self.m.op(op);
        if o.kind != neuronc_ir::OpKind::Reduce {
            return false;
        }
        let dims = o.attrs.i64_array("dimensions").unwrap_or_default();
        let part = o.operands.first().and_then(|&v| self.plan.layout.of(v));
        part.is_some_and(|p| dims.contains(&(p as i64)))
    }

    /// Lowers kernel `k` at position `pos` of the kernel order.
    fn lower_kernel(&mut self, k: usize, pos: usize) -> Result<(), EngineError> {
        let kernel = &self.kernels[k];
        let mut ops: Vec<OpId> = kernel
            .ops
            .iter()
            .chain(&kernel.duplicated)
            .copied()
            .collect();
        ops.sort_by_key(|o| self.plan.graph.pos.get(o).copied().unwrap_or(usize::MAX));
        let pre: Vec<OpWork> = ops.iter().map(|&o| self.work_of(o, false)).collect();
        let computes = pre
            .iter()
            .filter(|w| !matches!(w, OpWork::Relabel | OpWork::HbmConstant))
            .count();
        let works: Vec<OpWork> = ops.iter().map(|&o| self.work_of(o, computes > 1)).collect();
        // Large constants live in HBM.
        for (i, w) in works.iter().enumerate() {
            if *w == OpWork::HbmConstant {
                for &r in &self.m.op(ops[i]).results {
                    self.place_in_hbm(r);
                }
            }
        }
        let mut needed = self.needed_roots(k, &ops);
        // A splat constant is not materialized: each consumer fills its own slots.
        needed.retain(|&r| {
            let splat = !self.returned.contains(&r)
                && neuronc_passes::ir_util::splat_of(self.m, r).is_some();
            if splat {
                self.splats.insert(r);
            }
            !splat
        });
        let has_work = works
            .iter()
            .any(|w| !matches!(w, OpWork::Relabel | OpWork::HbmConstant));
        if !has_work && needed.is_empty() {
            return Ok(());
        }
        crate::engine::emit_ops::lower_compute(self, k, pos, &ops, &works, &needed)
    }

    /// Roots produced by this kernel's own ops that must be materialized (read by a later
    /// kernel or returned), in value order.
    fn needed_roots(&self, k: usize, ops: &[OpId]) -> Vec<ValueId> {
        let own: FxHashSet<OpId> = self.kernels[k].ops.iter().copied().collect();
        let mut out: Vec<ValueId> = ops
            .iter()
            .filter(|o| own.contains(o))
            .flat_map(|&o| self.m.op(o).results.iter().copied())
            .filter(|&v| root(self.m, v) == v && !self.avail.contains_key(&v))
            .filter(|v| self.returned.contains(v) || self.uses.contains_key(v))
            .collect();
        out.sort_unstable();
        out
    }

    /// Splits `bytes` into DMA pieces of at least 512 KiB (at most 8).
    pub fn pieces(bytes: u64) -> Vec<u32> {
        split(bytes.div_ceil(512 * 1024), 8)
    }
}

/// Convenience for emitters: tiles of `v` covered by a record of `count` of `tiles` tiles.
pub fn share(total: u64, count: u32, tiles: u64) -> u64 {
    (total * count as u64).div_ceil(tiles.max(1))
}
