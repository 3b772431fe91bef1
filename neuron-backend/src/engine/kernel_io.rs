//! SBUF planning and input delivery for one kernel: the local buffers and resident
//! outputs a kernel allocates (spilling residents when SBUF is full), where each input
//! comes from (resident pieces, a whole load, or per-record streaming into
//! double-buffered slots), and the loads of one record.
//!
//! Owns: `plan_memory`, `resolve_inputs`, `load_inputs` and their helpers; split out of
//! `emit_ops`, whose per-kernel context (`Kx`) they fill in.
//! Invariants: a slot is rewritten in record `c` only after the readers and writers of
//! record `c - 2` (of `c - 1` too when it is single-buffered; a store counts as a
//! reader, and so does any reader of a view of the value, e.g. a broadcast); the first
//! writes of a local buffer wait for the last accessors of the previous tenants of *its
//! own* address range only, so a kernel's first loads can run while earlier kernels still
//! use other ranges (cross-kernel prefetch, as far as SBUF space allows); an input
//! already resident is never loaded again, unless the kernel's own slots cannot fit
//! otherwise, in which case the resident inputs are spilled and streamed; a matmul whose
//! operand slices still do not fit streams its contraction in chunks (`k_chunked_slots`).
//! A record of a batched matmul waits only for the pieces of its batch-major operands
//! that hold its own batches ([`BatchOrder`]); a record of a streaming kernel waits for
//! the pieces of an input that overlap its part of the walk, exactly (partial last tiles
//! included) when the producer's piece ends are known (`Avail::piece_ends`).

use crate::engine::classify::OpWork;
use crate::engine::emit_ops::{Kx, Src};
use crate::engine::isa::{BufId, InstrId, Mem, Opcode};
use crate::engine::lower::{share, Avail, EngineError, Lowerer};
use crate::engine::tiling::{elems_bytes, partition_extent, reads_rows_of_operand0, root, Tiling};
use neuronc_ir::{OpId, OpKind, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// Per-tile bytes per partition of value `v` under `t` (its own layout, split over the
/// kernel's tiles).
pub(super) fn tile_bytes_pp(lw: &Lowerer, t: &Tiling, v: ValueId) -> u64 {
    lw.resident_pp(v).div_ceil(t.tiles()).max(1)
}

/// Bytes per partition of the slots of stream `v`: `n` per-record tiles, or all of it
/// once for a value a hoisted op computes ([`crate::engine::hoist`]).
fn slot_size(lw: &Lowerer, kx: &Kx, v: ValueId, n: u64) -> u64 {
    if kx.hoist.computed.contains(&v) {
        lw.resident_pp(v)
    } else {
        n * tile_bytes_pp(lw, &kx.tiling, v)
    }
}

/// An input is loaded whole only if it takes at most `1 / WHOLE_LOAD_SHARE` of a
/// partition.
pub(super) const WHOLE_LOAD_SHARE: u64 = 16;

/// One SBUF allocation: offset, the instructions its first writer must wait for, size.
pub(super) type Grant = (u64, Vec<InstrId>, u64);

/// Slots for a matmul kernel whose operands do not fit SBUF even single-buffered (a
/// 30,522-row vocabulary contraction in BERT's masked-LM gradient): each record then
/// streams its contraction in `kc` chunks of 128-row K tiles, accumulating in PSUM, so a
/// slot of a matmul operand holds `1/kc` of the record's slice. The record's loads and
/// instructions stay whole (a record already stands for many hardware tiles); only the
/// footprint shrinks. Tries `kc` = 2, 4, .. up to the number of K tiles; returns the slot
/// sizes (in `streams` order) and their grants for the first that fits.
fn k_chunked_slots(
    lw: &mut Lowerer,
    kx: &Kx,
    streams: &[ValueId],
    ops: &[OpId],
    works: &[OpWork],
    pos: usize,
    keep: &FxHashSet<ValueId>,
) -> Option<(Vec<u64>, Vec<Grant>)> {
    let m = lw.m;
    let (&op, _) = ops.iter().zip(works).find(|(_, w)| **w == OpWork::Matmul)?;
    let k_tiles = crate::engine::tiling::matmul_dims(m, op)?.k.div_ceil(128);
    let operands: FxHashSet<ValueId> = m.op(op).operands.iter().map(|&v| root(m, v)).collect();
    let mut kc = 2;
    while kc <= k_tiles {
        let sizes: Vec<u64> = streams
            .iter()
            .map(|&v| {
                let b = tile_bytes_pp(lw, &kx.tiling, v);
                if operands.contains(&v) {
                    b.div_ceil(kc).max(1)
                } else {
                    b
                }
            })
            .collect();
        if let Some(got) = alloc_all(lw, &sizes, pos, keep) {
            return Some((sizes, got));
        }
        kc *= 2;
    }
    None
}

/// Allocates the kernel's local buffers and resident outputs; resolves input sources.
#[allow(clippy::too_many_arguments)]
pub(super) fn plan_memory(
    lw: &mut Lowerer,
    kx: &mut Kx,
    k: usize,
    pos: usize,
    ops: &[OpId],
    works: &[OpWork],
    needed: &[ValueId],
    whole: bool,
    first_op: &str,
) -> Result<(), EngineError> {
    let m = lw.m;
    let mut roots: Vec<(ValueId, ValueId)> = lw.kernels[k]
        .inputs
        .iter()
        .map(|&v| (v, root(m, v)))
        .collect();
    roots.sort_unstable_by_key(|&(v, r)| (r, v));
    let keep: FxHashSet<ValueId> = roots.iter().map(|&(_, r)| r).collect();
    // Streams: HBM inputs (streamed kernels) and every computed value.
    let mut streams: Vec<ValueId> = Vec::new();
    let mut whole_loads: Vec<ValueId> = Vec::new();
    let mut seen = FxHashSet::default();
    for &(_, r) in &roots {
        if !seen.insert(r) {
            continue;
        }
        let resident = lw.avail.get(&r).is_some_and(|a| a.sbuf.is_some());
        // Inputs too large to hold whole are streamed. The limit (1/16 of a partition,
        // 12 KiB on v2) leaves room for other kernels' resident outputs: with 1/4, whole
        // loads crowded them out and the BERT training steps predicted 1.6% (base) and 2%
        // (large) slower.
        let fits = lw.resident_pp(r) <= lw.sbuf.capacity() / WHOLE_LOAD_SHARE;
        if !resident {
            if whole && fits && !lw.splats.contains(&r) {
                whole_loads.push(r);
            } else {
                streams.push(r);
            }
        }
    }
    for (i, &op) in ops.iter().enumerate() {
        if !matches!(
            works[i],
            OpWork::Relabel | OpWork::HbmConstant | OpWork::Matmul
        ) {
            streams.extend(m.op(op).results.iter().copied());
        }
    }
    if let Some(o) = ops
        .iter()
        .find(|&&o| works[ops.iter().position(|&x| x == o).unwrap_or(0)] == OpWork::Matmul)
    {
        streams.extend(m.op(*o).results.iter().copied());
    }
    for &op in ops {
        let o = m.op(op);
        let gather = reads_rows_of_operand0(o.kind);
        if let (true, Some(&t), Some(&res)) = (gather, o.operands.first(), o.results.first()) {
            let r = root(m, t);
            let moved = elems_bytes(m, r).1.min(elems_bytes(m, res).1);
            kx.gathered.insert(r, moved);
        }
    }
    // Double buffering: two slots per stream (one when the kernel has a single record).
    let nslots = kx.tiling.records().min(2) as u64;
    let mut slot_bytes: Vec<u64> = streams
        .iter()
        .map(|&v| slot_size(lw, kx, v, nslots))
        .collect();
    let mut whole_bytes: Vec<u64> = whole_loads.iter().map(|&v| lw.resident_pp(v)).collect();
    let mut local: u64 = slot_bytes.iter().sum::<u64>() + whole_bytes.iter().sum::<u64>();
    let sizes: Vec<u64> = slot_bytes.iter().chain(&whole_bytes).copied().collect();
    let mut grants = alloc_all(lw, &sizes, pos, &keep);
    if grants.is_none() && !whole_loads.is_empty() {
        // Stream the operands instead of holding them whole.
        for v in whole_loads.drain(..) {
            slot_bytes.push(slot_size(lw, kx, v, nslots));
            streams.push(v);
        }
        whole_bytes.clear();
        local = slot_bytes.iter().sum::<u64>();
        grants = alloc_all(lw, &slot_bytes, pos, &keep);
    }
    let mut single: FxHashSet<ValueId> = FxHashSet::default();
    if grants.is_none() && nslots > 1 {
        // Give up double buffering before giving up.
        slot_bytes = streams.iter().map(|&v| slot_size(lw, kx, v, 1)).collect();
        local = slot_bytes.iter().sum::<u64>();
        grants = alloc_all(lw, &slot_bytes, pos, &keep);
        single = streams.iter().copied().collect();
    }
    let resident_inputs: Vec<ValueId> = seen
        .iter()
        .copied()
        .filter(|r| lw.avail.get(r).is_some_and(|a| a.sbuf.is_some()))
        .collect();
    if grants.is_none() && !resident_inputs.is_empty() {
        // Stream the kernel's resident inputs from HBM too before giving up.
        let mut rs = resident_inputs;
        rs.sort_unstable();
        for r in rs {
            lw.spill(r);
        }
        return plan_memory(lw, kx, k, pos, ops, works, needed, whole, first_op);
    }
    if grants.is_none() {
        // Last resort: stream the contraction of the kernel's matmul in chunks.
        if let Some((sizes, got)) = k_chunked_slots(lw, kx, &streams, ops, works, pos, &keep) {
            slot_bytes = sizes;
            grants = Some(got);
            single = streams.iter().copied().collect();
        }
    }
    let Some(grants) = grants else {
        let capacity = lw.sbuf.capacity();
        let available = capacity - lw.resident_pinned(&keep);
        return Err(EngineError::SbufOverflow {
            kernel: k,
            op: first_op.to_string(),
            needed: local,
            available,
            capacity,
        });
    };
    kx.single = single;
    for (i, (off, war, size)) in grants.iter().enumerate() {
        let owner = streams
            .get(i)
            .or_else(|| whole_loads.get(i - streams.len()))
            .copied();
        if let Some(v) = owner {
            kx.first_war.entry(v).or_default().extend_from_slice(war);
        }
        kx.local.push((*off, *size, owner));
    }
    for (i, &v) in streams.iter().enumerate() {
        let b = lw.prog.buffer(
            format!("k{}.{v}", kx.k),
            Mem::Sbuf,
            grants[i].0,
            slot_bytes[i],
        );
        kx.slots.entry(v).or_insert(b);
    }
    let mut whole_bufs = FxHashMap::default();
    kx.whole = whole_loads.iter().copied().collect();
    for (i, &v) in whole_loads.iter().enumerate() {
        let off = grants[streams.len() + i].0;
        let b = lw
            .prog
            .buffer(format!("k{}.{v}", kx.k), Mem::Sbuf, off, whole_bytes[i]);
        whole_bufs.insert(v, b);
    }
    keep_loaded_inputs(lw, kx, pos, &keep, &mut streams_done(&kx.slots));
    resolve_inputs(lw, kx, &roots, &whole_bufs);
    // Resident outputs: read by a later kernel.
    let mut keep2 = keep.clone();
    for &r in needed {
        if !lw.uses.contains_key(&r) {
            continue;
        }
        let bytes = lw.resident_pp(r);
        keep2.insert(r);
        if let Some((off, war)) = lw.alloc_spilling(bytes, pos, &keep2) {
            let b = lw.prog.buffer(format!("{r}"), Mem::Sbuf, off, bytes);
            kx.resident_out.insert(r, (b, off, bytes, war));
        } else if lw.bf16_from(r, pos + 1) {
            // Stored through to HBM; every later reader only feeds it to matmuls.
            kx.cast_out.insert(r);
        }
    }
    Ok(())
}

/// Allocates every size (each its own range, so fragmentation matters less); on failure
/// frees what it got and returns `None`.
pub(super) fn alloc_all(
    lw: &mut Lowerer,
    sizes: &[u64],
    pos: usize,
    keep: &FxHashSet<ValueId>,
) -> Option<Vec<Grant>> {
    let mut got: Vec<Grant> = Vec::with_capacity(sizes.len());
    for &size in sizes {
        match lw.alloc_spilling(size, pos, keep) {
            Some((off, war)) => got.push((off, war, size)),
            None => {
                for (off, war, size) in got {
                    lw.sbuf.free(off, size, war);
                }
                return None;
            }
        }
    }
    Some(got)
}

pub(super) fn streams_done(slots: &FxHashMap<ValueId, BufId>) -> FxHashSet<ValueId> {
    slots.keys().copied().collect()
}

/// HBM inputs that later kernels read again are loaded once into a resident SBUF copy
/// (when it fits in a quarter of a partition), so the later kernels need no DMA.
pub(super) fn keep_loaded_inputs(
    lw: &mut Lowerer,
    kx: &mut Kx,
    pos: usize,
    keep: &FxHashSet<ValueId>,
    streamed: &mut FxHashSet<ValueId>,
) {
    let m = lw.m;
    let mut cands: Vec<ValueId> = keep
        .iter()
        .copied()
        .filter(|&r| lw.avail.get(&r).is_none_or(|a| a.sbuf.is_none()))
        .filter(|&r| lw.next_use(r, pos) != usize::MAX && !kx.gathered.contains_key(&r))
        .filter(|r| !lw.splats.contains(r))
        .collect();
    cands.sort_unstable();
    for r in cands {
        let bytes_pp = lw.resident_pp(r);
        if bytes_pp > lw.sbuf.capacity() / 4 {
            continue;
        }
        let Some((off, war)) = lw.alloc_spilling(bytes_pp, pos, keep) else {
            continue;
        };
        let buf = lw.prog.buffer(format!("{r}"), Mem::Sbuf, off, bytes_pp);
        if !lw.avail.contains_key(&r) {
            lw.place_in_hbm(r);
        }
        let a = lw.avail[&r].clone();
        let bytes = lw.bytes_of(r);
        let parts = partition_extent(m, &lw.plan.layout, r).min(128) as u32;
        let pieces = Lowerer::pieces(bytes);
        let n: u64 = pieces.iter().map(|&x| x as u64).sum();
        let (mut acc, mut ids) = (0u64, Vec::new());
        for &p in &pieces {
            let sh = bytes * (acc + p as u64) / n - bytes * acc / n;
            acc += p as u64;
            let mut deps = a.hbm_pieces.clone();
            deps.extend_from_slice(&war);
            let id = lw.dma(
                Opcode::Load,
                kx.k,
                sh,
                parts,
                deps,
                a.hbm.into_iter().collect(),
                vec![buf],
            );
            kx.all.push(id);
            ids.push(id);
        }
        streamed.remove(&r);
        lw.resident.insert(r);
        lw.avail.insert(
            r,
            Avail {
                sbuf: Some((buf, off, bytes_pp)),
                hbm: a.hbm,
                pieces: ids,
                hbm_pieces: a.hbm_pieces,
                hbm_piece_ends: a.hbm_piece_ends,
                ..Avail::default()
            },
        );
    }
}

/// Sources of the kernel inputs: resident pieces, whole loads (emitted now) or streams.
pub(super) fn resolve_inputs(
    lw: &mut Lowerer,
    kx: &mut Kx,
    roots: &[(ValueId, ValueId)],
    whole: &FxHashMap<ValueId, BufId>,
) {
    let m = lw.m;
    let mut done: FxHashMap<ValueId, Src> = FxHashMap::default();
    for &(v, r) in roots {
        if let Some(s) = done.get(&r) {
            kx.inputs.push((v, s.clone()));
            continue;
        }
        if lw.splats.contains(&r) {
            let src = Src::Splat {
                slot: kx.slots.get(&r).copied().unwrap_or(0),
            };
            done.insert(r, src.clone());
            kx.inputs.push((v, src));
            continue;
        }
        if !lw.avail.contains_key(&r) {
            lw.place_in_hbm(r);
        }
        let a = lw.avail[&r].clone();
        let src = if a.sbuf.is_some() {
            Src::Pieces(a.pieces.clone(), a.piece_ends.clone())
        } else if let Some(&buf) = whole.get(&r) {
            let hbm = a.hbm.unwrap_or(0);
            let bytes = lw.bytes_of(r);
            let parts = partition_extent(m, &lw.plan.layout, r).min(128) as u32;
            let mut ids = Vec::new();
            let pieces = Lowerer::pieces(bytes);
            let n: u64 = pieces.iter().map(|&x| x as u64).sum();
            let mut acc = 0u64;
            for &p in &pieces {
                let sh = bytes * (acc + p as u64) / n - bytes * acc / n;
                acc += p as u64;
                let mut deps = a.hbm_pieces.clone();
                deps.extend(kx.first_war.get(&r).into_iter().flatten());
                let id = lw.dma(Opcode::Load, kx.k, sh, parts, deps, vec![hbm], vec![buf]);
                kx.all.push(id);
                kx.writers.entry(r).or_default().push(id);
                ids.push(id);
            }
            Src::Pieces(ids, Vec::new())
        } else {
            let slot = kx.slots.get(&r).copied().unwrap_or(0);
            let bytes = kx
                .gathered
                .get(&r)
                .copied()
                .unwrap_or_else(|| lw.bytes_of(r));
            Src::Stream {
                hbm: a.hbm.unwrap_or(0),
                after: a.hbm_pieces.clone(),
                after_ends: a.hbm_piece_ends.clone(),
                slot,
                bytes,
            }
        };
        done.insert(r, src.clone());
        kx.inputs.push((v, src));
    }
}

/// Sets the producers of every kernel input for record `c` (emitting streamed loads).
pub(super) fn load_inputs(lw: &mut Lowerer, kx: &mut Kx, c: usize, count: u32) {
    let inputs = kx.inputs.clone();
    let mut loaded: FxHashMap<ValueId, InstrId> = FxHashMap::default();
    for (v, src) in inputs {
        let r = root(lw.m, v);
        let deps = match src {
            Src::Pieces(p, ends) => match kx.batch.as_ref().filter(|b| b.operands.contains(&v)) {
                Some(b) => b.share(&kx.tiling.counts, p, c),
                None => match kx.rows.as_ref().filter(|o| o.operands.contains(&v)) {
                    Some(o) => o.share(&kx.tiling.counts, p, &ends, c),
                    None => proportional_share(lw, kx, r, p, &ends, c),
                },
            },
            Src::Stream {
                hbm,
                after,
                after_ends,
                slot,
                bytes,
            } => {
                let id = match loaded.get(&r) {
                    Some(&id) => id,
                    None => {
                        let bytes = share(bytes, count, kx.tiling.tiles());
                        let mut deps = match kx.rows.as_ref().filter(|o| o.operands.contains(&v)) {
                            Some(o) => o.share(&kx.tiling.counts, after, &after_ends, c),
                            None => proportional_share(lw, kx, r, after, &after_ends, c),
                        };
                        deps.extend(slot_war(kx, r, c));
                        let id = lw.dma(
                            Opcode::Load,
                            kx.k,
                            bytes,
                            kx.tiling.parts,
                            deps,
                            vec![hbm],
                            vec![slot],
                        );
                        kx.all.push(id);
                        note_writes(kx, r, c, &[id]);
                        loaded.insert(r, id);
                        id
                    }
                };
                vec![id]
            }
            Src::Splat { slot } => {
                let id = match loaded.get(&r) {
                    Some(&id) => id,
                    None => {
                        let deps = slot_war(kx, r, c);
                        let id = crate::engine::emit_mm::memset(lw, kx, r, slot, count, deps);
                        kx.all.push(id);
                        note_writes(kx, r, c, &[id]);
                        loaded.insert(r, id);
                        id
                    }
                };
                vec![id]
            }
        };
        kx.prod.insert(v, deps);
    }
}

/// The producers record `c` of this kernel waits for, out of `pieces` (the records that
/// wrote `r`, in order, ending at `ends` when known): when `r` spans the kernel's whole
/// iteration space, the records of both kernels walk it in the same order, so record `c`
/// needs only the pieces that overlap its own part of the walk (this is what lets a
/// consumer start before its producer ends, whether `r` stayed in SBUF or went through
/// HBM); otherwise all of them. With both walks' record ends known the overlap is exact,
/// partial last tiles included; without, the pieces are taken as equal shares of a walk
/// whose tiles `r` fills exactly.
fn proportional_share(
    lw: &Lowerer,
    kx: &Kx,
    r: ValueId,
    pieces: Vec<InstrId>,
    ends: &[u64],
    c: usize,
) -> Vec<InstrId> {
    let recs = kx.tiling.records();
    if let Some((elems, mine)) = &kx.walk {
        let known = ends.len() == pieces.len() && ends.last() == Some(elems);
        if known && recs > 1 && elems_bytes(lw.m, r).0 == *elems {
            let lo = if c == 0 { 0 } else { mine[c - 1] };
            let hi = mine[c];
            // Piece j covers [ends[j - 1], ends[j]).
            let first = ends.partition_point(|&e| e <= lo);
            let last = ends.partition_point(|&e| e < hi);
            return pieces[first.min(pieces.len() - 1)..=last.min(pieces.len() - 1)].to_vec();
        }
    }
    if pieces.len() <= 1 || recs <= 1 || elems_bytes(lw.m, r).0 != anchor_elems(lw, kx) {
        return pieces;
    }
    let n = pieces.len();
    let lo = c * n / recs;
    let hi = ((c + 1) * n).div_ceil(recs).max(lo + 1).min(n);
    pieces[lo..hi].to_vec()
}

/// The operands of a batched matmul (`B > 1` independent products) whose data is stored
/// batch-major, so that a chunk of batch `b` reads only the `b`-th `1/B` of each.
///
/// Chunks are numbered batch-major (`emit_mm::matmul_record`: batch, stationary tile,
/// column group), `chunks_per_batch` to a batch. An operand qualifies when its batching
/// dimensions lead it (dot_general), it reaches its storage root through reshapes only
/// (which keep row-major order), the root's leading dimensions multiply to exactly `B`,
/// and the root's partition dimension lies after them with at most 128 partitions (one
/// partition tile: its tiles, and so its producer's pieces, run along the free axis, whose
/// row-major order is batch-major).
pub(crate) struct BatchOrder {
    pub batches: u64,
    pub chunks_per_batch: u64,
    pub operands: FxHashSet<ValueId>,
}

impl BatchOrder {
    /// The pieces (in order, covering the operand's root evenly) that record `c` reads:
    /// those overlapping the batches of its chunks, rounded outwards.
    fn share(&self, counts: &[u32], pieces: Vec<InstrId>, c: usize) -> Vec<InstrId> {
        let n = pieces.len() as u64;
        let chunk0: u64 = counts[..c].iter().map(|&x| x as u64).sum();
        let Some(&count) = counts.get(c) else {
            return pieces;
        };
        if n <= 1 || count == 0 {
            return pieces;
        }
        let cpb = self.chunks_per_batch.max(1);
        let b_lo = chunk0 / cpb;
        let b_hi = ((chunk0 + count as u64 - 1) / cpb + 1).min(self.batches);
        let lo = (b_lo * n / self.batches).min(n - 1);
        let hi = (b_hi * n).div_ceil(self.batches).clamp(lo + 1, n);
        pieces[lo as usize..hi as usize].to_vec()
    }
}

/// The batch-major operands of matmul `op` with `b` batches (see [`BatchOrder`]); `None`
/// when there are none.
pub(super) fn batch_order(lw: &Lowerer, op: OpId, b: u64, ms: u64, nm: u64) -> Option<BatchOrder> {
    let m = lw.m;
    let o = m.op(op);
    let Some(neuronc_ir::Attr::DotDims(d)) = o.attrs.get("dot_dimension_numbers") else {
        return None;
    };
    if b <= 1 || o.kind != OpKind::DotGeneral {
        return None;
    }
    let mut operands = FxHashSet::default();
    for (&v, batching) in o.operands.iter().zip([&d.lhs_batching, &d.rhs_batching]) {
        let leading = batching.iter().enumerate().all(|(i, &x)| x == i as i64);
        if leading && batch_major_root(lw, v, b) {
            // The kernel input may be any value of the reshape chain.
            operands.extend(reshape_chain(m, v));
        }
    }
    let chunks_per_batch =
        ms.div_ceil(128).max(1) * nm.div_ceil(crate::engine::emit_ops::CHUNK_COLS).max(1);
    (!operands.is_empty()).then_some(BatchOrder {
        batches: b,
        chunks_per_batch,
        operands,
    })
}

/// `v` and the values it is a reshape of, up to its storage root; empty when a relabel
/// other than a reshape (which keeps row-major order) lies on the way.
pub(crate) fn reshape_chain(m: &neuronc_ir::Module, v: ValueId) -> Vec<ValueId> {
    let r = root(m, v);
    let mut chain = vec![v];
    let mut x = v;
    while x != r {
        let neuronc_ir::ValueDef::Result(op, _) = m.value(x).def else {
            return Vec::new();
        };
        let o = m.op(op);
        match (o.kind, o.operands.first()) {
            (OpKind::Reshape, Some(&y)) => x = y,
            _ => return Vec::new(),
        }
        chain.push(x);
    }
    chain
}

/// Whether `v`'s storage root holds `b` batches one after the other (see [`BatchOrder`]).
fn batch_major_root(lw: &Lowerer, v: ValueId, b: u64) -> bool {
    let m = lw.m;
    let r = root(m, v);
    if reshape_chain(m, v).is_empty() {
        return false;
    }
    let Some(t) = m.tensor_type(r) else {
        return false;
    };
    let (mut prod, mut lead) = (1u64, 0usize);
    while prod < b && lead < t.rank() {
        prod *= t.shape[lead].max(0) as u64;
        lead += 1;
    }
    let part = crate::engine::tiling::partition_dim(m, &lw.plan.layout, r);
    prod == b && part.is_some_and(|p| p >= lead) && partition_extent(m, &lw.plan.layout, r) <= 128
}

/// Where the `n` pieces this kernel leaves of root `r` (one per record) end in its walk
/// ([`Kx::walk`]); empty when `r` does not span the walk or the pieces are not one per
/// record.
pub(super) fn piece_ends(lw: &Lowerer, kx: &Kx, r: ValueId, n: usize) -> Vec<u64> {
    match &kx.walk {
        Some((elems, ends)) if ends.len() == n && elems_bytes(lw.m, r).0 == *elems => ends.clone(),
        _ => Vec::new(),
    }
}

pub(super) fn anchor_elems(_lw: &Lowerer, kx: &Kx) -> u64 {
    kx.tiling.tiles() * kx.tiling.parts as u64 * kx.tiling.free as u64
}

/// Records that `ids` write `v`'s slot in record `c`.
pub(super) fn note_writes(kx: &mut Kx, v: ValueId, c: usize, ids: &[InstrId]) {
    kx.writers.entry(v).or_default().extend_from_slice(ids);
    kx.slot_writers.entry(v).or_default()[c % 2] = ids.to_vec();
}

/// Dependencies for writing value `v` in record `c`: the readers (WAR) and writers (WAW)
/// of record `c - 2` (and of `c - 1` when `v` has a single slot), plus, for the first two
/// records, the last accessors of the previous tenants of `v`'s own local range (not of
/// the whole kernel's: a slot whose range is free can be filled while other ranges are
/// still in use). Through the writers, every later write of the slot is ordered after
/// those previous tenants, whether or not anything read the slot in between.
pub(super) fn slot_war(kx: &mut Kx, v: ValueId, c: usize) -> Vec<InstrId> {
    let single = kx.single.contains(&v);
    let parities: &[usize] = if single {
        // One slot: record `c - 1`'s accessors too.
        &[c % 2, (c + 1) % 2]
    } else {
        &[c % 2]
    };
    let mut deps = Vec::new();
    for &q in parities {
        if let Some(r) = kx.readers.get_mut(&v) {
            deps.append(&mut r[q]);
        }
        if let Some(w) = kx.slot_writers.get(&v) {
            deps.extend_from_slice(&w[q]);
        }
    }
    if c < 2 {
        deps.extend(kx.first_war.get(&v).into_iter().flatten());
    }
    if let Some((_, _, _, war)) = kx.resident_out.get(&v) {
        deps.extend_from_slice(war);
    }
    deps
}

#[cfg(test)]
mod tests {
    use super::{note_writes, slot_war, BatchOrder};
    use crate::engine::emit_ops::Kx;
    use crate::engine::tiling::Tiling;
    use neuronc_ir::ValueId;

    fn kx() -> Kx {
        Kx::new(0, Tiling::new(4 * 128 * 2048, 128, 1, 4, 4), None)
    }

    /// A slot written in records 0 and 1 and never read: the write of record 2 (same
    /// slot as record 0) still waits for record 0's writer, which waited for the range's
    /// previous tenants; with one slot, record 1's writer too.
    #[test]
    fn a_rewrite_waits_for_the_previous_writer_of_its_slot() {
        let v = ValueId(7);
        let mut k = kx();
        k.first_war.insert(v, vec![3]);
        assert_eq!(slot_war(&mut k, v, 0), vec![3]);
        note_writes(&mut k, v, 0, &[10]);
        note_writes(&mut k, v, 1, &[11]);
        assert_eq!(slot_war(&mut k, v, 2), vec![10]);
        k.readers.entry(v).or_default()[1].push(12);
        let mut w = slot_war(&mut k, v, 3);
        w.sort_unstable();
        assert_eq!(w, vec![11, 12]);
        let mut single = kx();
        single.single.insert(v);
        note_writes(&mut single, v, 0, &[20]);
        note_writes(&mut single, v, 1, &[21]);
        let mut w = slot_war(&mut single, v, 2);
        w.sort_unstable();
        assert_eq!(w, vec![20, 21]);
    }

    /// 4 batches of 2 chunks, in 4 records of 2 chunks (one batch each) and 8 pieces of
    /// the operand (two per batch): record `c` reads pieces `2c` and `2c + 1`.
    #[test]
    fn batch_share_reads_own_batches() {
        let bo = BatchOrder {
            batches: 4,
            chunks_per_batch: 2,
            operands: Default::default(),
        };
        let pieces: Vec<u32> = (0..8).collect();
        let counts = [2, 2, 2, 2];
        for c in 0..4 {
            let want = vec![2 * c as u32, 2 * c as u32 + 1];
            assert_eq!(bo.share(&counts, pieces.clone(), c), want);
        }
        // Records straddling batches (3 chunks: batches 0-1, then 1-2 + ...) round outwards.
        let counts = [3, 3, 2];
        assert_eq!(bo.share(&counts, pieces.clone(), 0), vec![0, 1, 2, 3]);
        assert_eq!(bo.share(&counts, pieces.clone(), 1), vec![2, 3, 4, 5]);
        assert_eq!(bo.share(&counts, pieces.clone(), 2), vec![6, 7]);
        // Fewer pieces than batches: the piece holding the batch.
        assert_eq!(bo.share(&[2, 2, 2, 2], vec![10, 11], 1), vec![10]);
        assert_eq!(bo.share(&[2, 2, 2, 2], vec![10, 11], 2), vec![11]);
    }
}
