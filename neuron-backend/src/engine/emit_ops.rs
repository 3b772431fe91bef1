//! Instruction emission for one kernel: tiles, inputs, the per-op engine instructions,
//! matmul accumulation groups, relayouts and outputs.
//!
//! Owns: [`lower_compute`] and the per-kernel context [`Kx`].
//! Invariants: within a record, an op's instruction depends on the instructions that
//! produce its operands in the same record; a streamed value's slot (two per stream,
//! double buffering) is rewritten in record `c` only after record `c - 2`'s readers and
//! writers (write-after-read and write-after-write dependencies); the instruction that
//! really writes a resident output waits for the previous tenants of its SBUF range: the
//! PSUM eviction for an epilogue fused into it (it writes the epilogue's result), a copy
//! for a view (slice, broadcast, folded convert) kept resident.

use crate::engine::classify::{OpWork, COPY};
use crate::engine::combine::Role;
use crate::engine::isa::{BufId, InstrId, Opcode};
use crate::engine::kernel_io::{load_inputs, note_writes, plan_memory, slot_war};
use crate::engine::lower::{share, Avail, EngineError, Lowerer};
use crate::engine::tiling::{
    elems_bytes, matmul_dims, n_tiles, partition_extent, root, rows_splittable, split, MatmulDims,
    Tiling,
};
use neuronc_ir::{OpId, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// Columns of one matmul chunk: 4 PSUM banks of 512 FP32, so two chunks can be in flight
/// in the 8 banks (facts §1.4: 8 accumulation groups in flight).
const CHUNK_BANKS: u64 = 4;
/// Output columns of one matmul chunk.
pub(crate) const CHUNK_COLS: u64 = 512 * CHUNK_BANKS;

/// How a kernel input reaches SBUF.
#[derive(Clone, Debug)]
pub(super) enum Src {
    /// Resident (or loaded whole): these instructions produce it, in pieces, and where
    /// each piece ends (`Avail::piece_ends`; empty when unknown).
    Pieces(Vec<InstrId>, Vec<u64>),
    /// Loaded per record from HBM into a slot, after the stores `after` (ending at
    /// `after_ends`, empty when unknown).
    Stream {
        hbm: BufId,
        after: Vec<InstrId>,
        after_ends: Vec<u64>,
        slot: BufId,
        bytes: u64,
    },
    /// A splat constant, written into a slot per record by a memset (never stored).
    Splat { slot: BufId },
}

/// The matmul of a kernel: dimensions and the stationary choice.
#[derive(Clone, Debug)]
pub(crate) struct Mm {
    pub(super) op: OpId,
    pub(super) d: MatmulDims,
    /// `true`: the lhs is stationary.
    pub(super) lhs_stationary: bool,
    fp32: bool,
    /// Stationary free extent (output partitions) and moving free extent.
    pub(super) ms: u64,
    pub(super) nm: u64,
    /// Op index fused into the PSUM eviction, and its function name.
    pub(super) fused: Option<(usize, &'static str)>,
    /// Results of the fused op: the eviction writes them (not the matmul's result).
    pub(super) fused_out: Vec<ValueId>,
    /// The fused op itself: the eviction also reads its other operands (a `[P, 1]` scale
    /// or bias).
    pub(super) fused_op: Option<OpId>,
    /// Extra contraction rows of a shift the matmul applies (`engine::shift`).
    pub(super) shift_rows: u64,
}

/// Per-kernel lowering context.
pub(super) struct Kx {
    pub(super) k: u32,
    pub(super) tiling: Tiling,
    /// Input roots and their sources.
    pub(super) inputs: Vec<(ValueId, Src)>,
    /// Stream slot buffer of each kernel-local value.
    pub(super) slots: FxHashMap<ValueId, BufId>,
    /// Readers of each streamed value per slot parity.
    pub(super) readers: FxHashMap<ValueId, [Vec<InstrId>; 2]>,
    /// WAR dependencies of the first writes of each local buffer (keyed like `slots`,
    /// or by the root of a whole load): the last accessors of its range's previous tenants.
    pub(super) first_war: FxHashMap<ValueId, Vec<InstrId>>,
    /// Instructions that write each stream slot or whole-load buffer.
    pub(super) writers: FxHashMap<ValueId, Vec<InstrId>>,
    /// The last writers of each stream slot per slot parity (record `c` writes parity
    /// `c % 2`): the next write of that slot waits for them (write-after-write), so the
    /// WAR chain back to the range's previous tenants holds even for a record in which
    /// nothing reads the slot.
    pub(super) slot_writers: FxHashMap<ValueId, [Vec<InstrId>; 2]>,
    /// Inputs loaded whole into a local buffer (their readers are tracked in `readers` and
    /// never taken: such a buffer is written once).
    pub(super) whole: FxHashSet<ValueId>,
    /// Values whose data another value's buffer holds (results of relabels such as
    /// broadcasts and slices, and of epilogues the PSUM eviction applies) → those values,
    /// so that reading them counts as reading that buffer.
    pub(super) alias: FxHashMap<ValueId, Vec<ValueId>>,
    /// Resident outputs: root → (buffer, offset, bytes, war).
    pub(super) resident_out: FxHashMap<ValueId, (BufId, u64, u64, Vec<InstrId>)>,
    /// Producers of each value in the current record.
    pub(super) prod: FxHashMap<ValueId, Vec<InstrId>>,
    /// Instructions of the kernel.
    pub(super) all: Vec<InstrId>,
    /// Readers of resident inputs.
    pub(super) resident_readers: FxHashMap<ValueId, Vec<InstrId>>,
    /// The kernel's local allocation: offset, bytes per partition, and the value it holds
    /// (streamed, or loaded whole).
    pub(super) local: Vec<(u64, u64, Option<ValueId>)>,
    /// Tables read by gathers: only the gathered bytes move (indirect DMA, facts §1.3).
    pub(super) gathered: FxHashMap<ValueId, u64>,
    /// Streamed values with a single slot (no double buffering).
    pub(super) single: FxHashSet<ValueId>,
    /// Outputs stored through to HBM as BF16 (`Lowerer::bf16_from`); marked
    /// `Lowerer::hbm_bf16` when the kernel is finished.
    pub(super) cast_out: FxHashSet<ValueId>,
    /// A batched matmul's batch-major operands: record `c` waits only for the batches
    /// its chunks cover ([`crate::engine::kernel_io::BatchOrder`]).
    pub(super) batch: Option<crate::engine::kernel_io::BatchOrder>,
    /// A streaming kernel's element space and where each record ends in it
    /// ([`Tiling::record_ends`]); `None` for matmul kernels and two-dimensional grids.
    pub(super) walk: Option<(u64, Vec<u64>)>,
    /// A one-batch matmul's stationary operand whose records read row ranges of it
    /// ([`crate::engine::row_order::RowOrder`]).
    pub(super) rows: Option<crate::engine::row_order::RowOrder>,
    /// What each op of the kernel emits after combining ([`crate::engine::combine`]).
    pub(super) roles: Vec<Role>,
    /// Record-invariant work done once ([`crate::engine::hoist`]).
    pub(super) hoist: crate::engine::hoist::Hoist,
}

impl Kx {
    /// An empty context for kernel `k` tiled by `tiling` (`walk`: see [`Kx::walk`]).
    pub(super) fn new(k: u32, tiling: Tiling, walk: Option<(u64, Vec<u64>)>) -> Kx {
        Kx {
            k,
            tiling,
            inputs: Vec::new(),
            slots: FxHashMap::default(),
            readers: FxHashMap::default(),
            first_war: FxHashMap::default(),
            writers: FxHashMap::default(),
            slot_writers: FxHashMap::default(),
            whole: FxHashSet::default(),
            alias: FxHashMap::default(),
            resident_out: FxHashMap::default(),
            prod: FxHashMap::default(),
            all: Vec::new(),
            resident_readers: FxHashMap::default(),
            local: Vec::new(),
            gathered: FxHashMap::default(),
            single: FxHashSet::default(),
            cast_out: FxHashSet::default(),
            batch: None,
            walk,
            rows: None,
            roles: Vec::new(),
            hoist: Default::default(),
        }
    }
}

/// Lowers the compute of kernel `k` (at order position `pos`).
pub(crate) fn lower_compute(
    lw: &mut Lowerer,
    k: usize,
    pos: usize,
    ops: &[OpId],
    works: &[OpWork],
    needed: &[ValueId],
) -> Result<(), EngineError> {
    let m = lw.m;
    let mut works = works.to_vec();
    // A kernel of relabels whose result is needed materializes it with a copy.
    if works
        .iter()
        .all(|w| matches!(w, OpWork::Relabel | OpWork::HbmConstant))
    {
        for (i, &o) in ops.iter().enumerate() {
            if m.op(o).results.iter().any(|r| needed.contains(r)) && works[i] == OpWork::Relabel {
                works[i] = COPY;
            }
        }
    }
    let (roles, works, shifted) = lw.combine(ops, &works);
    let mut mm = matmul_of(lw, ops, &works);
    if let (Some(mm), true) = (mm.as_mut(), shifted) {
        mm.shift_rows = crate::engine::shift::shift_rows(mm.fp32);
    }
    let whole = mm.is_some()
        || works
            .iter()
            .any(|w| matches!(w, OpWork::Pool { .. } | OpWork::Opaque { .. }));
    let mut kx = new_kx(lw, k, ops, &works, mm.as_ref(), false);
    kx.roles = roles;
    kx.hoist =
        crate::engine::hoist::before_memory(lw, k, &kx, mm.as_ref(), ops, &works, needed, whole);
    let first_op = m.op(ops[0]).kind.short_name();
    match plan_memory(lw, &mut kx, k, pos, ops, &works, needed, whole, first_op) {
        Ok(()) => {}
        Err(e @ EngineError::SbufOverflow { .. }) => {
            // Rows too long to hold whole (a softmax over a 128K vocabulary): reduce them
            // in pieces, when nothing in the kernel needs a whole row reduced first.
            let split = new_kx(lw, k, ops, &works, mm.as_ref(), true);
            if split.tiling == kx.tiling || !rows_splittable(lw.m, ops, &works) {
                return Err(e);
            }
            let roles = std::mem::take(&mut kx.roles);
            kx = split;
            kx.roles = roles;
            kx.hoist = crate::engine::hoist::before_memory(
                lw,
                k,
                &kx,
                mm.as_ref(),
                ops,
                &works,
                needed,
                whole,
            );
            plan_memory(lw, &mut kx, k, pos, ops, &works, needed, whole, first_op)?;
        }
        Err(e) => return Err(e),
    }
    kx.hoist = crate::engine::hoist::refine(lw, &kx, mm.as_ref(), ops, &works, needed);
    let relayouts = relayouts_of(lw, ops);
    let records = kx.tiling.counts.clone();
    let mut stores: FxHashMap<ValueId, (BufId, Vec<InstrId>)> = FxHashMap::default();
    let mut writers: FxHashMap<ValueId, Vec<InstrId>> = FxHashMap::default();
    let mut chunk0 = 0u64;
    let all_tiles = kx.tiling.tiles().max(1) as f64;
    for (c, &count) in records.iter().enumerate() {
        lw.left = (all_tiles - chunk0 as f64) / all_tiles;
        kx.prod.clear();
        load_inputs(lw, &mut kx, c, count);
        let rel = &relayouts;
        crate::engine::hoist::emit_first(lw, &mut kx, c, ops, &works, mm.as_ref(), rel);
        for (i, &op) in ops.iter().enumerate() {
            if kx.hoist.ops.contains(&i) {
                continue;
            }
            emit_op(
                lw,
                &mut kx,
                c,
                count,
                chunk0,
                i,
                op,
                &works[i],
                mm.as_ref(),
                &relayouts,
            );
        }
        for &r in needed {
            let p = kx.prod.get(&r).cloned().unwrap_or_default();
            let last = p.iter().copied().max();
            writers.entry(r).or_default().extend(last);
            let spilled = !kx.resident_out.contains_key(&r);
            if lw.returned.contains(&r) || spilled {
                let cast = kx.cast_out.contains(&r);
                let bytes = lw.bytes_of(r) / if cast { 2 } else { 1 };
                let tiles = kx.tiling.tiles();
                let hbm = match stores.get(&r) {
                    Some((b, _)) => *b,
                    None => lw.hbm_buffer_sized(r, bytes),
                };
                let src = kx
                    .resident_out
                    .get(&r)
                    .map(|x| x.0)
                    .or_else(|| kx.slots.get(&r).copied());
                let mut deps = p;
                if !kx.resident_out.contains_key(&r) {
                    // The store names `r`'s slot, which an epilogue fused into a PSUM
                    // eviction may never write: it waits for the slot's previous tenants
                    // itself.
                    deps.extend(kx.first_war.get(&r).into_iter().flatten());
                }
                // A BF16 copy is cast on the way (`Lowerer::dma_cast`).
                let dma = if cast {
                    Lowerer::dma_cast
                } else {
                    Lowerer::dma
                };
                let (sh, parts) = (share(bytes, count, tiles), kx.tiling.parts);
                let src = src.into_iter().collect();
                let id = dma(lw, Opcode::Store, kx.k, sh, parts, deps, src, vec![hbm]);
                kx.all.push(id);
                if !kx.resident_out.contains_key(&r) {
                    // The store reads the slot: the next write of it waits (WAR).
                    for b in bases(lw, &kx, r) {
                        if kx.slots.contains_key(&b) {
                            kx.readers.entry(b).or_default()[c % 2].push(id);
                        }
                    }
                }
                stores.entry(r).or_insert((hbm, Vec::new())).1.push(id);
            }
        }
        chunk0 += count as u64;
    }
    finish_kernel(lw, kx, needed, stores, writers);
    Ok(())
}

/// Frees local buffers and publishes the kernel's outputs and readers.
fn finish_kernel(
    lw: &mut Lowerer,
    mut kx: Kx,
    needed: &[ValueId],
    stores: FxHashMap<ValueId, (BufId, Vec<InstrId>)>,
    writers: FxHashMap<ValueId, Vec<InstrId>>,
) {
    lw.hbm_bf16.extend(kx.cast_out.iter().copied());
    for (r, ids) in std::mem::take(&mut kx.resident_readers) {
        if let Some(a) = lw.avail.get_mut(&r) {
            a.readers.extend(ids);
        }
    }
    for &r in needed {
        let (hbm, hbm_pieces) = match stores.get(&r) {
            Some((b, ids)) => (Some(*b), ids.clone()),
            None => (None, Vec::new()),
        };
        let sbuf = kx
            .resident_out
            .get(&r)
            .map(|(b, off, bytes, _)| (*b, *off, *bytes));
        let pieces = writers.get(&r).cloned().unwrap_or_default();
        let ends = |ids: &[InstrId]| crate::engine::kernel_io::piece_ends(lw, &kx, r, ids.len());
        let (piece_ends, hbm_piece_ends) = (ends(&pieces), ends(&hbm_pieces));
        if sbuf.is_some() {
            lw.resident.insert(r);
        }
        lw.avail.insert(
            r,
            Avail {
                sbuf,
                hbm,
                pieces,
                hbm_pieces,
                piece_ends,
                hbm_piece_ends,
                readers: Vec::new(),
            },
        );
    }
    let ranges = kx
        .local
        .iter()
        .map(|&(off, bytes, owner)| (off, bytes, range_accessors(&kx, owner)))
        .collect();
    lw.local_frees.push_back(ranges);
}

/// The instructions the next tenant of a local range must wait for: every writer of it,
/// the readers of its last records (each earlier reader of a stream slot is followed by a
/// rewrite that waited for it; a whole load keeps all its readers) and, for a range never
/// written, its previous tenants' accessors; every instruction of the kernel for a range
/// of unknown use.
fn range_accessors(kx: &Kx, owner: Option<ValueId>) -> Vec<InstrId> {
    let Some(v) = owner.filter(|v| kx.slots.contains_key(v) || kx.whole.contains(v)) else {
        return kx.all.clone();
    };
    let mut acc = kx.writers.get(&v).cloned().unwrap_or_default();
    for r in kx.readers.get(&v).into_iter().flatten() {
        acc.extend_from_slice(r);
    }
    if !kx.writers.contains_key(&v) {
        // Never written here, so no instruction of this kernel waited for the previous
        // tenants: pass their accessors on (the range's tombstone is replaced by this
        // one). A written range need not: its writers waited for them.
        acc.extend(kx.first_war.get(&v).into_iter().flatten());
    }
    acc.sort_unstable();
    acc.dedup();
    acc
}

/// The kernel's matmul, with the stationary operand chosen by cost.
pub(crate) fn matmul_of(lw: &Lowerer, ops: &[OpId], works: &[OpWork]) -> Option<Mm> {
    let i = works.iter().position(|w| *w == OpWork::Matmul)?;
    let op = ops[i];
    let m = lw.m;
    let d = matmul_dims(m, op)?;
    let model = &lw.opts.model;
    let wide = m
        .op(op)
        .operands
        .iter()
        .any(|&v| m.tensor_type(v).is_some_and(|t| t.elem.bits() >= 32));
    let fp32 = lw.opts.auto_cast == crate::engine::lower::AutoCast::None && wide;
    let kt = d.k.div_ceil(128) as f64;
    let cost = |ms: u64, nm: u64| {
        let mt = ms.div_ceil(128) as f64;
        let mm: f64 = n_tiles(nm).iter().map(|&w| model.mm_s(w, fp32)).sum();
        d.b as f64
            * kt
            * mt
            * (mm + model.ls_s(128.min(ms) as u32, fp32) * nm.div_ceil(512 * CHUNK_BANKS) as f64)
    };
    // facts §1.4: the operand with the larger free axis goes stationary; comparing the
    // two costs is the same rule, exact at tile boundaries.
    let lhs_stationary = cost(d.m, d.n) <= cost(d.n, d.m);
    let (ms, nm) = if lhs_stationary {
        (d.m, d.n)
    } else {
        (d.n, d.m)
    };
    let fused = crate::engine::emit_mm::fusable_epilogue(lw, ops, works, i);
    let fused_out = fused.map_or_else(Vec::new, |(j, _)| m.op(ops[j]).results.clone());
    let fused_op = fused.map(|(j, _)| ops[j]);
    Some(Mm {
        op,
        d,
        lhs_stationary,
        fp32,
        ms,
        nm,
        fused,
        fused_out,
        fused_op,
        shift_rows: 0,
    })
}

/// A fresh per-kernel context for kernel `k`, tiled by [`kernel_tiling`].
fn new_kx(
    lw: &Lowerer,
    k: usize,
    ops: &[OpId],
    works: &[OpWork],
    mm: Option<&Mm>,
    split_rows: bool,
) -> Kx {
    let (tiling, elems) = kernel_tiling(lw, ops, works, mm, split_rows);
    let walk = elems.and_then(|e| Some((e, tiling.record_ends(e)?)));
    let mut kx = Kx::new(k as u32, tiling, walk);
    kx.batch =
        mm.and_then(|mm| crate::engine::kernel_io::batch_order(lw, mm.op, mm.d.b, mm.ms, mm.nm));
    kx.rows = mm.and_then(|mm| {
        crate::engine::row_order::row_order(lw, mm.op, mm.d.b, mm.lhs_stationary, mm.ms, mm.nm)
    });
    kx
}

/// Tiles of the kernel's iteration space, and (for a kernel without matmul) the element
/// count of the value that anchors it. A free-axis reduction keeps its rows whole in a
/// tile unless `split_rows`.
pub(crate) fn kernel_tiling(
    lw: &Lowerer,
    ops: &[OpId],
    works: &[OpWork],
    mm: Option<&Mm>,
    split_rows: bool,
) -> (Tiling, Option<u64>) {
    let m = lw.m;
    let max = lw.opts.max_records;
    if let Some(mm) = mm {
        let group = 512 * CHUNK_BANKS;
        // A zero-size matmul still has one (empty) tile, so `counts` sums to `tiles()`.
        let p_tiles = (mm.d.b * mm.ms.div_ceil(128)).max(1);
        let f_tiles = mm.nm.div_ceil(group).max(1);
        let t = Tiling {
            parts: mm.ms.clamp(1, 128) as u32,
            free: mm.nm.clamp(1, group) as u32,
            p_tiles,
            f_tiles,
            counts: split(p_tiles * f_tiles, max),
        };
        return (t, None);
    }
    let mut anchor: Option<(u64, ValueId)> = None;
    let mut reduce_anchor: Option<(u64, ValueId)> = None;
    let mut row = 1u64;
    let mut eb = 1u64;
    for (i, &op) in ops.iter().enumerate() {
        if matches!(works[i], OpWork::Relabel | OpWork::HbmConstant) {
            continue;
        }
        let o = m.op(op);
        for &v in o.operands.iter().chain(&o.results) {
            let (e, b) = elems_bytes(m, v);
            if let Some(x) = b.checked_div(e) {
                eb = eb.max(x);
            }
            if anchor.is_none_or(|(ae, av)| e > ae || (e == ae && v < av)) {
                anchor = Some((e, v));
            }
        }
        if let OpWork::ReduceFree { .. } = works[i] {
            // The reduced operand sets the tiling: its rows must stay whole in a tile.
            if let Some(&x) = o.operands.first() {
                let (e, _) = elems_bytes(m, x);
                if reduce_anchor.is_none_or(|(ae, _)| e > ae) {
                    reduce_anchor = Some((e, x));
                }
            }
            let shape = o
                .operands
                .first()
                .and_then(|&v| m.tensor_type(v))
                .map(|t| t.shape.to_vec())
                .unwrap_or_default();
            let dims = o.attrs.i64_array("dimensions").unwrap_or_default();
            let r: u64 = dims
                .iter()
                .filter_map(|&d| shape.get(d as usize))
                .map(|&x| x.max(1) as u64)
                .product();
            row = row.max(r);
        }
    }
    if split_rows {
        row = 1;
    }
    let (elems, v) = reduce_anchor.or(anchor).unwrap_or((1, ValueId(0)));
    let p = if elems > 1 {
        partition_extent(m, &lw.plan.layout, v)
    } else {
        1
    };
    (
        Tiling::new(elems.max(1), p, row, eb, max),
        Some(elems.max(1)),
    )
}

/// Relayouts the layout plan puts on operands of these ops: (op, operand) → bytes.
fn relayouts_of(lw: &Lowerer, ops: &[OpId]) -> FxHashMap<(OpId, usize), u64> {
    let set: FxHashSet<OpId> = ops.iter().copied().collect();
    lw.plan
        .layout
        .relayouts
        .iter()
        .filter(|r| set.contains(&r.consumer))
        .map(|r| ((r.consumer, r.operand), r.bytes))
        .collect()
}

/// Operand producers of `op` in this record, recording the op's instruction as reader.
fn operand_deps(lw: &Lowerer, kx: &Kx, op: OpId) -> Vec<InstrId> {
    values_read(lw.m, op)
        .iter()
        .flat_map(|v| kx.prod.get(v).cloned().unwrap_or_default())
        .collect()
}

/// The values `op` reads: its operands, and for ops with regions (`case`, `while`, ...)
/// the values their bodies capture from outside, which the op waits for just the same.
/// Borrowed for the common region-free op: this runs for every op of every record.
fn values_read(m: &neuronc_ir::Module, op: OpId) -> std::borrow::Cow<'_, [ValueId]> {
    let o = m.op(op);
    if o.regions.is_empty() {
        return std::borrow::Cow::Borrowed(&o.operands);
    }
    let mut vs = o.operands.clone();
    vs.extend(neuronc_passes::neuron::graph::captured_values(m, op));
    std::borrow::Cow::Owned(vs)
}

fn note_reader(lw: &Lowerer, kx: &mut Kx, op: OpId, c: usize, id: InstrId) {
    for &v in values_read(lw.m, op).iter() {
        // A view (reshape, broadcast, slice, ...) of a value reads the value's buffer.
        for b in bases(lw, kx, v) {
            if kx.slots.contains_key(&b) || kx.whole.contains(&b) {
                kx.readers.entry(b).or_default()[c % 2].push(id);
            }
            if lw.avail.get(&b).is_some_and(|a| a.sbuf.is_some()) {
                kx.resident_readers.entry(b).or_default().push(id);
            }
        }
    }
}

/// The values whose buffers may hold `v`'s data: `v`, its storage root, and what a
/// relabel or a fused epilogue passed through ([`Kx::alias`]).
fn bases(lw: &Lowerer, kx: &Kx, v: ValueId) -> Vec<ValueId> {
    let mut b = vec![v, root(lw.m, v)];
    b.extend(kx.alias.get(&v).into_iter().flatten());
    b.sort_unstable();
    b.dedup();
    b
}

/// Records that the results of `op` are views of its operands' buffers.
fn alias_results(lw: &Lowerer, kx: &mut Kx, op: OpId) {
    let o = lw.m.op(op);
    let mut b: Vec<ValueId> = o.operands.iter().flat_map(|&x| bases(lw, kx, x)).collect();
    b.sort_unstable();
    b.dedup();
    if b.is_empty() {
        return;
    }
    for &r in &o.results {
        kx.alias.insert(r, b.clone());
    }
}

/// Emits op `i` of the kernel for record `c`.
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_op(
    lw: &mut Lowerer,
    kx: &mut Kx,
    c: usize,
    count: u32,
    chunk0: u64,
    i: usize,
    op: OpId,
    work: &OpWork,
    mm: Option<&Mm>,
    relayouts: &FxHashMap<(OpId, usize), u64>,
) {
    let m = lw.m;
    let o = m.op(op);
    // Operand relayouts (partition-dimension changes) first.
    for (j, &v) in o.operands.iter().enumerate() {
        if let Some(&bytes) = relayouts.get(&(op, j)) {
            // An invariant operand is relaid once, whole ([`crate::engine::hoist`]).
            if let Some(&id) = kx.hoist.relaid.get(&(op, j)) {
                kx.prod.insert(v, vec![id]);
                continue;
            }
            let once = kx.hoist.vals.contains(&v) && kx.hoist.whole_readers.contains(&op);
            let bytes = if once {
                bytes
            } else {
                share(bytes, count, kx.tiling.tiles())
            };
            let deps = kx.prod.get(&v).cloned().unwrap_or_default();
            let for_matmul = lw.opts.auto_cast != crate::engine::lower::AutoCast::None
                && crate::engine::narrow::feeds_only_matmuls(
                    m,
                    &lw.plan.graph,
                    op,
                    j,
                    &lw.returned,
                );
            let id = crate::engine::emit_mm::relayout(lw, kx.k, v, bytes, deps, for_matmul);
            if once {
                kx.hoist.relaid.insert((op, j), id);
            }
            kx.all.extend([id]);
            kx.prod.insert(v, vec![id]);
        }
    }
    if mm.is_some_and(|mm| mm.fused.is_some_and(|(f, _)| f == i)) {
        // Applied by the PSUM eviction: pass the producers through.
        let deps = operand_deps(lw, kx, op);
        for &r in &o.results {
            kx.prod.insert(r, deps.clone());
        }
        alias_results(lw, kx, op);
        return;
    }
    let res = o.results.first().copied();
    // A matmul's eviction writes the result of the epilogue fused into it.
    let outs: Vec<ValueId> = match (work, mm) {
        (OpWork::Matmul, Some(mm)) => o.results.iter().chain(&mm.fused_out).copied().collect(),
        _ => o.results.clone(),
    };
    let out_war: Vec<InstrId> = outs.iter().flat_map(|&r| slot_war(kx, r, c)).collect();
    // A view (a slice, a broadcast, a convert folded into its reader) that stays resident
    // for later kernels needs its own copy of the data: a copy writes it into the resident
    // range, after that range's previous tenants.
    let view_dst = match work {
        OpWork::Relabel | OpWork::HbmConstant => resident_dst(lw, kx, op),
        _ => None,
    };
    let work = if view_dst.is_some() { &COPY } else { work };
    let ids: Vec<InstrId> = match work {
        OpWork::Relabel | OpWork::HbmConstant => {
            let deps = operand_deps(lw, kx, op);
            for &r in &o.results {
                kx.prod.insert(r, deps.clone());
            }
            alias_results(lw, kx, op);
            return;
        }
        OpWork::Matmul => match mm {
            Some(mm) => {
                let deps_of = |v: ValueId| kx.prod.get(&v).cloned().unwrap_or_default();
                let (st, mv) = if mm.lhs_stationary {
                    (o.operands[0], o.operands[1])
                } else {
                    (o.operands[1], o.operands[0])
                };
                let (sd, md) = (deps_of(st), deps_of(mv));
                let func = mm.fused.map_or("copy", |(_, f)| f);
                // The eviction applies the fused op, so it waits for that op's other
                // operands (its `[P, 1]` scale or bias) as well as for the PSUM result.
                let mut out_war = out_war;
                if let Some(f) = mm.fused_op {
                    out_war.extend(crate::engine::emit_mm::epilogue_deps(lw, kx, op, f));
                }
                // The fused result's buffer, else the matmul result's.
                let slot = mm.fused_out.iter().chain(&res).find_map(|r| {
                    kx.resident_out
                        .get(r)
                        .map(|x| x.0)
                        .or(kx.slots.get(r).copied())
                });
                crate::engine::emit_mm::matmul_record(
                    lw,
                    kx.k,
                    mm_args(mm),
                    chunk0,
                    count,
                    sd,
                    md,
                    out_war,
                    func,
                    slot,
                )
            }
            None => vec![],
        },
        _ => {
            let mut deps = operand_deps(lw, kx, op);
            deps.extend(out_war);
            vec![crate::engine::emit_mm::compute_record(
                lw,
                kx.k,
                &kx.tiling,
                op,
                work,
                count,
                deps,
                view_dst.or_else(|| res.and_then(|r| kx.slots.get(&r).copied())),
            )]
        }
    };
    // A combined instruction, or the PSUM eviction applying one, takes its name.
    let named = match (work, mm.and_then(|mm| mm.fused)) {
        (OpWork::Matmul, Some((f, _))) => Some((f, true)),
        (OpWork::Matmul, None) => None,
        _ => Some((i, false)),
    };
    if let (Some((j, evict)), Some(&id)) = (named, ids.last()) {
        if let Some(Role::Combined(cmb)) = kx.roles.get(j) {
            lw.name_combined(id, cmb, evict);
        }
    }
    for &id in &ids {
        note_reader(lw, kx, op, c, id);
    }
    if !ids.is_empty() {
        for &r in &outs {
            if kx.slots.contains_key(&r) {
                note_writes(kx, r, c, &ids);
            }
        }
    }
    kx.all.extend_from_slice(&ids);
    if let Some(&last) = ids.last() {
        for &r in &o.results {
            kx.prod.insert(r, vec![last]);
        }
    }
    // Result relayout (e.g. a batch dimension left on partitions by a matmul).
    if let (Some(&bytes), Some(r)) = (relayouts.get(&(op, usize::MAX)), res) {
        let deps = kx.prod.get(&r).cloned().unwrap_or_default();
        let id = crate::engine::emit_mm::relayout(
            lw,
            kx.k,
            r,
            share(bytes, count, kx.tiling.tiles()),
            deps,
            false,
        );
        kx.all.push(id);
        kx.prod.insert(r, vec![id]);
    }
}

/// The resident output buffer a result of `op` goes to, if any.
fn resident_dst(lw: &Lowerer, kx: &Kx, op: OpId) -> Option<BufId> {
    let o = lw.m.op(op);
    o.results
        .iter()
        .find_map(|r| kx.resident_out.get(r).map(|x| x.0))
}

/// The numbers `emit_mm::matmul_record` needs.
fn mm_args(mm: &Mm) -> crate::engine::emit_mm::MmArgs {
    crate::engine::emit_mm::MmArgs {
        op: mm.op,
        d: mm.d,
        fp32: mm.fp32,
        ms: mm.ms,
        nm: mm.nm,
        group: CHUNK_COLS,
        shift_rows: mm.shift_rows,
    }
}
