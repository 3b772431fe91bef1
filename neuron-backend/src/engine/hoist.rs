//! Record-invariant work of a kernel: computed once, whole, in the kernel's first record.
//!
//! Owns: [`Hoist`] (what a kernel hoists), [`plan`] (which ops and values are invariant)
//! and [`emit_first`] (their instructions, before the first record's other ops).
//!
//! # Why
//! A kernel is emitted record by record, each op of a record covering its share of the
//! op's elements. A value smaller than the kernel's iteration space that depends only on
//! data every record sees whole (BERT's `[q, k]` attention mask, recomputed inside each
//! attention kernel and broadcast over the 12 heads the records walk) is the same in
//! every record, yet each record paid an instruction for a sliver of it (`[128x11]`),
//! with the fixed costs of every instruction (about 60 cycles per access request, a
//! 64-cycle minimum initiation interval, `neuron-facts.md` §1.3), and each record's
//! share of a relayout of it rounded up to a whole 128 × 128 TensorE transpose block and
//! its PSUM eviction: 12 transposes for one block of data (§1.4: transpose is
//! `matmul(x, identity)`). Computed once it is the same elementwise work in one
//! instruction per op, and one relayout of its bytes.
//!
//! # Rule
//! Only kernels of more than one record hoist. An op is hoisted when its work is
//! elementwise, an `iota`, or a relabel; every value it reads is invariant; none of its
//! results is a kernel output; unless it is a relabel, its result has fewer elements
//! than the kernel's largest value (an op as large as the iteration space is per-record
//! work); and every reader of its results in the kernel is hoisted too or is a broadcast
//! whose operand every record reads whole: records walk the iteration space in row-major
//! blocks of `elements / records`, so the broadcast's operand must land only on the
//! trailing dimensions one block covers, and not on the partition dimension when the
//! records split it (a per-row vector broadcast along the free axis stays per record:
//! each record reads its own rows). Invariant values: the results of hoisted ops, and
//! the kernel inputs every record sees whole (splat constants, inputs resident in SBUF or
//! loaded whole; not inputs streamed per record).
//! Invariants: a hoisted op emits one instruction (count 1) over all its elements, in
//! the first record, after that record's loads and before its other ops; later records
//! emit nothing for it and their readers wait for that instruction; a relayout of an
//! invariant value that a broadcast every record reads whole consumes moves the plan's
//! bytes once (in the first record) and later records read the relaid copy; other
//! relayouts stay per record (a matmul record reads only its slice of an operand). The
//! slot of a hoisted value holds all of it (`kernel_io::plan_memory`). Hoisting never
//! changes what is computed (the functional simulator runs the IR ops).
//!
//! Measured (`neuronc-rs compile`, predicted time): BERT-base inference 1×128 with
//! `--recompute-for-contraction=on` 1.371 -> 1.357 ms (the mask's 144 transposes become
//! 12), LayoutLM 1×128 1.353 -> 1.347 ms; BERT/LayoutLM at 1×512 and 4×128, the
//! training step, and every trace without the flag are unchanged (their masks vary
//! per batch row or per record).

use crate::engine::classify::OpWork;
use crate::engine::emit_ops::{emit_op, Kx, Mm, Src};
use crate::engine::isa::InstrId;
use crate::engine::kernel_io::WHOLE_LOAD_SHARE;
use crate::engine::lower::Lowerer;
use crate::engine::tiling::{elems_bytes, root, Tiling};
use neuronc_ir::{OpId, OpKind, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// What a kernel hoists, and the instructions that computed it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Hoist {
    /// Indices (into the kernel's op list) of the hoisted ops.
    pub ops: FxHashSet<usize>,
    /// Invariant values: hoisted ops' results and whole inputs.
    pub vals: FxHashSet<ValueId>,
    /// Results of hoisted ops that emit an instruction (their slots hold all of them).
    pub computed: FxHashSet<ValueId>,
    /// Producers of the hoisted ops' results, from the first record.
    pub prod: FxHashMap<ValueId, Vec<InstrId>>,
    /// Broadcasts (not hoisted) that every record reads whole: a relayout of their
    /// invariant operand is done once.
    pub whole_readers: FxHashSet<OpId>,
    /// Relayouts of invariant operands done once: (consumer, operand) → instruction.
    pub relaid: FxHashMap<(OpId, usize), InstrId>,
}

/// How a kernel's records split its iteration space: `records` records of about
/// `per_record` consecutive elements each (row-major), and whether they split the
/// partition dimension (a matmul's stationary tiles, a streamed kernel's partition
/// tiles).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Walk {
    pub records: usize,
    pub split_partitions: bool,
}

/// The invariant ops and values of a kernel (`ops` in program order, `works` after
/// combining) walked as `walk`, reading kernel inputs `inputs`; `whole(v)`: input `v` is
/// seen whole by every record. Empty for a kernel of one record.
pub(crate) fn plan(
    lw: &Lowerer,
    ops: &[OpId],
    works: &[OpWork],
    walk: Walk,
    inputs: &[ValueId],
    needed: &[ValueId],
    whole: impl Fn(ValueId) -> bool,
) -> Hoist {
    let m = lw.m;
    let mut h = Hoist::default();
    if walk.records <= 1 {
        return h;
    }
    let largest = ops
        .iter()
        .flat_map(|&o| m.op(o).results.iter())
        .map(|&r| elems_bytes(m, r).0)
        .max()
        .unwrap_or(0);
    let per_record = largest / walk.records as u64;
    let whole_inputs: FxHashSet<ValueId> = inputs.iter().copied().filter(|&v| whole(v)).collect();
    let mut cand: Vec<bool> = ops
        .iter()
        .zip(works)
        .map(|(&op, w)| {
            let o = m.op(op);
            let relabel = *w == OpWork::Relabel;
            let kind_ok = match w {
                OpWork::Relabel | OpWork::Elementwise { .. } => true,
                OpWork::Pool { .. } => o.kind == OpKind::Iota,
                _ => false,
            };
            let small = o.results.iter().all(|&r| elems_bytes(m, r).0 < largest);
            kind_ok
                && o.regions.is_empty()
                && (relabel || small)
                && !o.results.iter().any(|r| needed.contains(r))
        })
        .collect();
    let index: FxHashMap<OpId, usize> = ops.iter().enumerate().map(|(i, &o)| (o, i)).collect();
    // Forward: operands invariant; backward: every reader hoisted too, or a broadcast
    // that every record reads whole. Repeated until neither removes an op.
    loop {
        let mut vals = whole_inputs.clone();
        for (i, &op) in ops.iter().enumerate() {
            let o = m.op(op);
            cand[i] = cand[i] && o.operands.iter().all(|v| vals.contains(v));
            if cand[i] {
                vals.extend(o.results.iter().copied());
            }
        }
        let mut changed = false;
        for i in (0..ops.len()).rev() {
            if !cand[i] {
                continue;
            }
            let read_ok = m.op(ops[i]).results.iter().all(|&r| {
                // Readers in other kernels read their own copy (kernel outputs never
                // hoist).
                lw.plan.graph.users_of(m, r).iter().all(|&(u, _)| {
                    index.get(&u).is_none_or(|&j| {
                        cand[j]
                            || (works[j] == OpWork::Relabel && read_whole(lw, u, walk, per_record))
                    })
                })
            });
            if !read_ok {
                cand[i] = false;
                changed = true;
            }
        }
        if !changed {
            h.vals = vals;
            break;
        }
    }
    for (i, &op) in ops.iter().enumerate() {
        let o = m.op(op);
        let reads_invariant = o.operands.first().is_some_and(|v| h.vals.contains(v));
        if !cand[i] && reads_invariant && read_whole(lw, op, walk, per_record) {
            h.whole_readers.insert(op);
        }
        if cand[i] {
            h.ops.insert(i);
            if works[i] != OpWork::Relabel {
                h.computed.extend(m.op(op).results.iter().copied());
            }
        }
    }
    h
}

/// Whether every record reads all of the operand of `op`, a broadcast into the kernel's
/// iteration space: the dimensions its operand's data lands on (non-unit source
/// dimensions) all lie in the trailing block of dimensions that one record's
/// `per_record` row-major elements cover, and not on the partition dimension when the
/// records split it.
fn read_whole(lw: &Lowerer, op: OpId, walk: Walk, per_record: u64) -> bool {
    let m = lw.m;
    let o = m.op(op);
    if o.kind != OpKind::BroadcastInDim {
        return false;
    }
    let (Some(&src), Some(&res)) = (o.operands.first(), o.results.first()) else {
        return false;
    };
    let (Some(st), Some(rt)) = (m.tensor_type(src), m.tensor_type(res)) else {
        return false;
    };
    let dims = o
        .attrs
        .i64_array("broadcast_dimensions")
        .unwrap_or_default();
    let data: Vec<usize> = st
        .shape
        .iter()
        .zip(&dims)
        .filter(|(&e, _)| e > 1)
        .map(|(_, &d)| d as usize)
        .collect();
    let Some(&first) = data.iter().min() else {
        return true;
    };
    let block: u64 = rt.shape[first.min(rt.shape.len())..]
        .iter()
        .map(|&e| e.max(0) as u64)
        .product();
    let part = lw.plan.layout.of(res);
    block <= per_record
        && !(walk.split_partitions && part.is_some_and(|p| data.contains(&(p as usize))))
}

/// [`plan`] for kernel `k` (context `kx`) before its memory is planned: inputs count as
/// whole when they are splats, resident, or small enough to be loaded whole (`whole`:
/// the kernel loads its inputs whole when they fit).
#[allow(clippy::too_many_arguments)]
pub(crate) fn before_memory(
    lw: &Lowerer,
    k: usize,
    kx: &Kx,
    mm: Option<&Mm>,
    ops: &[OpId],
    works: &[OpWork],
    needed: &[ValueId],
    whole: bool,
) -> Hoist {
    let seen_whole = |v: ValueId| {
        let r = root(lw.m, v);
        let fits = lw.resident_pp(r) <= lw.sbuf.capacity() / WHOLE_LOAD_SHARE;
        lw.splats.contains(&r)
            || lw.avail.get(&r).is_some_and(|a| a.sbuf.is_some())
            || (whole && fits)
    };
    let walk = walk_of(kx, mm);
    plan(
        lw,
        ops,
        works,
        walk,
        &lw.kernels[k].inputs,
        needed,
        seen_whole,
    )
}

/// [`plan`] for kernel context `kx` once its inputs' sources are known: drops what
/// reads an input streamed per record (an input planned whole may have been streamed
/// when SBUF was short).
pub(crate) fn refine(
    lw: &Lowerer,
    kx: &Kx,
    mm: Option<&Mm>,
    ops: &[OpId],
    works: &[OpWork],
    needed: &[ValueId],
) -> Hoist {
    let inputs: Vec<ValueId> = kx.inputs.iter().map(|(v, _)| *v).collect();
    let streamed: FxHashSet<ValueId> = kx
        .inputs
        .iter()
        .filter(|(_, s)| matches!(s, Src::Stream { .. }))
        .map(|(v, _)| *v)
        .collect();
    plan(lw, ops, works, walk_of(kx, mm), &inputs, needed, |v| {
        kx.hoist.vals.contains(&v) && !streamed.contains(&v)
    })
}

/// How the records of kernel context `kx` (with matmul `mm`) split its iteration space.
fn walk_of(kx: &Kx, mm: Option<&Mm>) -> Walk {
    Walk {
        records: kx.tiling.records(),
        split_partitions: mm.map_or(kx.tiling.p_tiles > 1, |mm| mm.ms > 128),
    }
}

/// Emits the hoisted ops in record `c == 0` as one record of one tile covering all their
/// elements, and in every record makes their results' producers those instructions.
#[allow(clippy::too_many_arguments)]
pub(crate) fn emit_first(
    lw: &mut Lowerer,
    kx: &mut Kx,
    c: usize,
    ops: &[OpId],
    works: &[OpWork],
    mm: Option<&Mm>,
    relayouts: &FxHashMap<(OpId, usize), u64>,
) {
    if kx.hoist.ops.is_empty() {
        return;
    }
    if c == 0 {
        let mut hoisted: Vec<usize> = kx.hoist.ops.iter().copied().collect();
        hoisted.sort_unstable();
        let one = Tiling {
            parts: kx.tiling.parts,
            free: kx.tiling.free,
            p_tiles: 1,
            f_tiles: 1,
            counts: vec![1],
        };
        let tiling = std::mem::replace(&mut kx.tiling, one);
        for i in hoisted {
            emit_op(lw, kx, c, 1, 0, i, ops[i], &works[i], mm, relayouts);
            for &r in &lw.m.op(ops[i]).results {
                let p = kx.prod.get(&r).cloned().unwrap_or_default();
                kx.hoist.prod.insert(r, p);
            }
        }
        kx.tiling = tiling;
    }
    for (v, p) in &kx.hoist.prod {
        kx.prod.insert(*v, p.clone());
    }
}
