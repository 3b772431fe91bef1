//! Instruction emission for one kernel: tiles, inputs, the per-op engine instructions,
//! matmul accumulation groups, relayouts and outputs.
//!
//! Owns: [`lower_compute`] and the per-kernel context [`Kx`].
//! Invariants: within a record, an op's instruction depends on the instructions that
//! produce its operands in the same record; a streamed value's slot (two per stream,
//! double buffering) is rewritten in record `c` only after record `c - 2`'s readers
//! (write-after-read dependency); resident outputs depend on the previous tenant of their
//! SBUF range.

use crate::engine::classify::{OpWork, ANY_EW};
use crate::engine::isa::{BufId, Engine, Instr, InstrId, Mem, Opcode};
use crate::engine::lower::{share, Avail, EngineError, Lowerer};
use crate::engine::tiling::{
    elems_bytes, matmul_dims, partition_extent, resident_bytes_pp, root, split, MatmulDims, Tiling,
};
use neuronc_ir::{OpId, OpKind, ValueId};
use rustc_hash::{FxHashMap, FxHashSet};

/// Columns of one matmul chunk: 4 PSUM banks of 512 FP32, so two chunks can be in flight
/// in the 8 banks (facts §1.4: 8 accumulation groups in flight).
const CHUNK_BANKS: u64 = 4;

/// How a kernel input reaches SBUF.
#[derive(Clone, Debug)]
enum Src {
    /// Resident (or loaded whole): these instructions produce it, in pieces.
    Pieces(Vec<InstrId>),
    /// Loaded per record from HBM into a slot.
    Stream {
        hbm: BufId,
        after: Vec<InstrId>,
        slot: BufId,
        bytes: u64,
    },
}

/// The matmul of a kernel: dimensions and the stationary choice.
#[derive(Clone, Debug)]
struct Mm {
    op: OpId,
    d: MatmulDims,
    /// `true`: the lhs is stationary.
    lhs_stationary: bool,
    fp32: bool,
    /// Stationary free extent (output partitions) and moving free extent.
    ms: u64,
    nm: u64,
    /// Op index fused into the PSUM eviction, and its function name.
    fused: Option<(usize, &'static str)>,
}

/// Per-kernel lowering context.
struct Kx {
    k: u32,
    tiling: Tiling,
    /// Input roots and their sources.
    inputs: Vec<(ValueId, Src)>,
    /// Stream slot buffer of each kernel-local value.
    slots: FxHashMap<ValueId, BufId>,
    /// Readers of each streamed value per slot parity.
    readers: FxHashMap<ValueId, [Vec<InstrId>; 2]>,
    /// WAR dependencies every first write of the kernel's local buffers must honour.
    local_war: Vec<InstrId>,
    /// Resident outputs: root → (buffer, offset, bytes, war).
    resident_out: FxHashMap<ValueId, (BufId, u64, u64, Vec<InstrId>)>,
    /// Producers of each value in the current record.
    prod: FxHashMap<ValueId, Vec<InstrId>>,
    /// Instructions of the kernel.
    all: Vec<InstrId>,
    /// Readers of resident inputs.
    resident_readers: FxHashMap<ValueId, Vec<InstrId>>,
    /// The kernel's local allocation (offset, bytes per partition).
    local: Vec<(u64, u64)>,
    /// Tables read by gathers: only the gathered bytes move (indirect DMA, facts §1.3).
    gathered: FxHashMap<ValueId, u64>,
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
                works[i] = OpWork::Elementwise {
                    name: "copy",
                    inputs: 1,
                    engines: ANY_EW,
                };
            }
        }
    }
    let mm = matmul_of(lw, ops, &works);
    let tiling = kernel_tiling(lw, ops, &works, mm.as_ref());
    let whole = mm.is_some() || works.iter().any(|w| matches!(w, OpWork::Pool { .. }));
    let mut kx = Kx {
        k: k as u32,
        tiling,
        inputs: Vec::new(),
        slots: FxHashMap::default(),
        readers: FxHashMap::default(),
        local_war: Vec::new(),
        resident_out: FxHashMap::default(),
        prod: FxHashMap::default(),
        all: Vec::new(),
        resident_readers: FxHashMap::default(),
        local: Vec::new(),
        gathered: FxHashMap::default(),
    };
    let first_op = m.op(ops[0]).kind.short_name();
    plan_memory(lw, &mut kx, k, pos, ops, &works, needed, whole, first_op)?;
    let relayouts = relayouts_of(lw, ops);
    let records = kx.tiling.counts.clone();
    let mut stores: FxHashMap<ValueId, (BufId, Vec<InstrId>)> = FxHashMap::default();
    let mut writers: FxHashMap<ValueId, Vec<InstrId>> = FxHashMap::default();
    let mut chunk0 = 0u64;
    for (c, &count) in records.iter().enumerate() {
        kx.prod.clear();
        load_inputs(lw, &mut kx, c, count);
        for (i, &op) in ops.iter().enumerate() {
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
                let (bytes, tiles) = (elems_bytes(m, r).1, kx.tiling.tiles());
                let hbm = match stores.get(&r) {
                    Some((b, _)) => *b,
                    None => lw.hbm_buffer(r),
                };
                let src = kx
                    .resident_out
                    .get(&r)
                    .map(|x| x.0)
                    .or_else(|| kx.slots.get(&r).copied());
                let id = lw.dma(
                    Opcode::Store,
                    kx.k,
                    share(bytes, count, tiles),
                    kx.tiling.parts,
                    p,
                    src.into_iter().collect(),
                    vec![hbm],
                );
                kx.all.push(id);
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
    kx: Kx,
    needed: &[ValueId],
    stores: FxHashMap<ValueId, (BufId, Vec<InstrId>)>,
    writers: FxHashMap<ValueId, Vec<InstrId>>,
) {
    for (r, ids) in kx.resident_readers {
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
                readers: Vec::new(),
            },
        );
    }
    lw.local_frees.push_back((kx.local, kx.all));
}

/// The kernel's matmul, with the stationary operand chosen by cost.
fn matmul_of(lw: &Lowerer, ops: &[OpId], works: &[OpWork]) -> Option<Mm> {
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
    let fused = fusable_epilogue(lw, ops, works, i);
    Some(Mm {
        op,
        d,
        lhs_stationary,
        fp32,
        ms,
        nm,
        fused,
    })
}

/// Widths of the ≤512-column moving tiles covering `n` columns.
fn n_tiles(n: u64) -> Vec<u32> {
    let n = n.max(1);
    (0..n.div_ceil(512))
        .map(|t| (n - t * 512).min(512) as u32)
        .collect()
}

/// The first single-input elementwise op fed by the matmul that ScalarE can apply while
/// evicting PSUM (`func(x*scale+bias)`, facts §1.5).
fn fusable_epilogue(
    lw: &Lowerer,
    ops: &[OpId],
    works: &[OpWork],
    mi: usize,
) -> Option<(usize, &'static str)> {
    let m = lw.m;
    let mut chain: FxHashSet<ValueId> = m.op(ops[mi]).results.iter().copied().collect();
    for (j, &op) in ops.iter().enumerate().skip(mi + 1) {
        let o = m.op(op);
        let fed = o.operands.iter().any(|v| chain.contains(v));
        if !fed {
            continue;
        }
        match &works[j] {
            OpWork::Relabel => chain.extend(o.results.iter().copied()),
            OpWork::Elementwise {
                name,
                inputs: 1,
                engines,
            } if engines.contains(&Engine::Scalar) => {
                return Some((j, name));
            }
            _ => return None,
        }
    }
    None
}

/// Tiles of the kernel's iteration space.
fn kernel_tiling(lw: &Lowerer, ops: &[OpId], works: &[OpWork], mm: Option<&Mm>) -> Tiling {
    let m = lw.m;
    let max = lw.opts.max_records;
    if let Some(mm) = mm {
        let group = 512 * CHUNK_BANKS;
        let chunks = mm.d.b * mm.ms.div_ceil(128) * mm.nm.div_ceil(group);
        return Tiling {
            parts: mm.ms.clamp(1, 128) as u32,
            free: mm.nm.clamp(1, group) as u32,
            p_tiles: mm.d.b * mm.ms.div_ceil(128),
            f_tiles: mm.nm.div_ceil(group),
            counts: split(chunks, max),
        };
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
    let (elems, v) = reduce_anchor.or(anchor).unwrap_or((1, ValueId(0)));
    let p = if elems > 1 {
        partition_extent(m, &lw.plan.layout, v)
    } else {
        1
    };
    Tiling::new(elems.max(1), p, row, eb, max)
}

/// Per-tile bytes per partition of value `v` under `t` (its own layout, split over the
/// kernel's tiles).
fn tile_bytes_pp(lw: &Lowerer, t: &Tiling, v: ValueId) -> u64 {
    resident_bytes_pp(lw.m, &lw.plan.layout, v)
        .div_ceil(t.tiles())
        .max(1)
}

/// Allocates the kernel's local buffers and resident outputs; resolves input sources.
#[allow(clippy::too_many_arguments)]
fn plan_memory(
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
        // Inputs too large to hold whole (a quarter of a partition) are streamed.
        let fits = resident_bytes_pp(m, &lw.plan.layout, r) <= lw.sbuf.capacity() / 4;
        if !resident {
            if whole && fits {
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
        let gather = matches!(
            o.kind,
            OpKind::Gather
                | OpKind::TorchIndexSelect
                | OpKind::DynamicGather
                | OpKind::DynamicSlice
        );
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
        .map(|&v| nslots * tile_bytes_pp(lw, &kx.tiling, v))
        .collect();
    let mut whole_bytes: Vec<u64> = whole_loads
        .iter()
        .map(|&v| resident_bytes_pp(m, &lw.plan.layout, v))
        .collect();
    let mut local: u64 = slot_bytes.iter().sum::<u64>() + whole_bytes.iter().sum::<u64>();
    let sizes: Vec<u64> = slot_bytes.iter().chain(&whole_bytes).copied().collect();
    let mut grants = alloc_all(lw, &sizes, pos, &keep);
    if grants.is_none() && !whole_loads.is_empty() {
        // Stream the operands instead of holding them whole.
        for v in whole_loads.drain(..) {
            slot_bytes.push(nslots * tile_bytes_pp(lw, &kx.tiling, v));
            streams.push(v);
        }
        whole_bytes.clear();
        local = slot_bytes.iter().sum::<u64>();
        grants = alloc_all(lw, &slot_bytes, pos, &keep);
    }
    if grants.is_none() && nslots > 1 {
        // Give up double buffering before giving up.
        slot_bytes = streams
            .iter()
            .map(|&v| tile_bytes_pp(lw, &kx.tiling, v))
            .collect();
        local = slot_bytes.iter().sum::<u64>();
        grants = alloc_all(lw, &slot_bytes, pos, &keep);
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
    for (off, war, size) in &grants {
        kx.local_war.extend_from_slice(war);
        kx.local.push((*off, *size));
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
        let bytes = resident_bytes_pp(m, &lw.plan.layout, r);
        keep2.insert(r);
        if let Some((off, war)) = lw.alloc_spilling(bytes, pos, &keep2) {
            let b = lw.prog.buffer(format!("{r}"), Mem::Sbuf, off, bytes);
            kx.resident_out.insert(r, (b, off, bytes, war));
        }
    }
    Ok(())
}

/// Allocates every size (each its own range, so fragmentation matters less); on failure
/// frees what it got and returns `None`.
fn alloc_all(
    lw: &mut Lowerer,
    sizes: &[u64],
    pos: usize,
    keep: &FxHashSet<ValueId>,
) -> Option<Vec<(u64, Vec<InstrId>, u64)>> {
    let mut got: Vec<(u64, Vec<InstrId>, u64)> = Vec::with_capacity(sizes.len());
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

fn streams_done(slots: &FxHashMap<ValueId, BufId>) -> FxHashSet<ValueId> {
    slots.keys().copied().collect()
}

/// HBM inputs that later kernels read again are loaded once into a resident SBUF copy
/// (when it fits in a quarter of a partition), so the later kernels need no DMA.
fn keep_loaded_inputs(
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
        .collect();
    cands.sort_unstable();
    for r in cands {
        let bytes_pp = resident_bytes_pp(m, &lw.plan.layout, r);
        if bytes_pp > lw.sbuf.capacity() / 4 {
            continue;
        }
        let Some((off, war)) = lw.alloc_spilling(bytes_pp, pos, keep) else {
            continue;
        };
        let buf = lw.prog.buffer(format!("{r}"), Mem::Sbuf, off, bytes_pp);
        if !lw.avail.contains_key(&r) {
            let hbm = lw.hbm_buffer(r);
            lw.avail.insert(
                r,
                Avail {
                    sbuf: None,
                    hbm: Some(hbm),
                    pieces: vec![],
                    hbm_pieces: vec![],
                    readers: vec![],
                },
            );
        }
        let a = lw.avail[&r].clone();
        let bytes = elems_bytes(m, r).1;
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
                readers: vec![],
            },
        );
    }
}

/// Sources of the kernel inputs: resident pieces, whole loads (emitted now) or streams.
fn resolve_inputs(
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
        if !lw.avail.contains_key(&r) {
            let hbm = lw.hbm_buffer(r);
            lw.avail.insert(
                r,
                Avail {
                    sbuf: None,
                    hbm: Some(hbm),
                    pieces: vec![],
                    hbm_pieces: vec![],
                    readers: vec![],
                },
            );
        }
        let a = lw.avail[&r].clone();
        let src = if a.sbuf.is_some() {
            Src::Pieces(a.pieces.clone())
        } else if let Some(&buf) = whole.get(&r) {
            let hbm = a.hbm.unwrap_or(0);
            let bytes = elems_bytes(m, r).1;
            let parts = partition_extent(m, &lw.plan.layout, r).min(128) as u32;
            let mut ids = Vec::new();
            let pieces = Lowerer::pieces(bytes);
            let n: u64 = pieces.iter().map(|&x| x as u64).sum();
            let mut acc = 0u64;
            for &p in &pieces {
                let sh = bytes * (acc + p as u64) / n - bytes * acc / n;
                acc += p as u64;
                let mut deps = a.hbm_pieces.clone();
                deps.extend_from_slice(&kx.local_war);
                let id = lw.dma(Opcode::Load, kx.k, sh, parts, deps, vec![hbm], vec![buf]);
                kx.all.push(id);
                ids.push(id);
            }
            Src::Pieces(ids)
        } else {
            let slot = kx.slots.get(&r).copied().unwrap_or(0);
            let bytes = kx
                .gathered
                .get(&r)
                .copied()
                .unwrap_or_else(|| elems_bytes(m, r).1);
            Src::Stream {
                hbm: a.hbm.unwrap_or(0),
                after: a.hbm_pieces.clone(),
                slot,
                bytes,
            }
        };
        done.insert(r, src.clone());
        kx.inputs.push((v, src));
    }
}

/// Sets the producers of every kernel input for record `c` (emitting streamed loads).
fn load_inputs(lw: &mut Lowerer, kx: &mut Kx, c: usize, count: u32) {
    let recs = kx.tiling.records();
    let inputs = kx.inputs.clone();
    let mut loaded: FxHashMap<ValueId, InstrId> = FxHashMap::default();
    for (v, src) in inputs {
        let r = root(lw.m, v);
        let deps = match src {
            Src::Pieces(p) if p.len() <= 1 || recs <= 1 => p,
            Src::Pieces(p) => {
                let (e, _) = elems_bytes(lw.m, r);
                let proportional = e == anchor_elems(lw, kx);
                if proportional {
                    let n = p.len();
                    let lo = c * n / recs;
                    let hi = ((c + 1) * n).div_ceil(recs).max(lo + 1).min(n);
                    p[lo..hi].to_vec()
                } else {
                    p
                }
            }
            Src::Stream {
                hbm,
                after,
                slot,
                bytes,
            } => {
                let id = match loaded.get(&r) {
                    Some(&id) => id,
                    None => {
                        let bytes = share(bytes, count, kx.tiling.tiles());
                        let mut deps = after;
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

fn anchor_elems(_lw: &Lowerer, kx: &Kx) -> u64 {
    kx.tiling.tiles() * kx.tiling.parts as u64 * kx.tiling.free as u64
}

/// WAR dependencies for writing value `v` in record `c`: the readers of record `c - 2`,
/// plus the kernel's local-buffer WAR for the first two records.
fn slot_war(kx: &mut Kx, v: ValueId, c: usize) -> Vec<InstrId> {
    let mut deps = kx
        .readers
        .get_mut(&v)
        .map(|r| std::mem::take(&mut r[c % 2]))
        .unwrap_or_default();
    if c < 2 {
        deps.extend_from_slice(&kx.local_war);
    }
    if let Some((_, _, _, war)) = kx.resident_out.get(&v) {
        deps.extend_from_slice(war);
    }
    deps
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
    let o = lw.m.op(op);
    o.operands
        .iter()
        .flat_map(|v| kx.prod.get(v).cloned().unwrap_or_default())
        .collect()
}

fn note_reader(lw: &Lowerer, kx: &mut Kx, op: OpId, c: usize, id: InstrId) {
    for &v in &lw.m.op(op).operands {
        if kx.slots.contains_key(&v) {
            kx.readers.entry(v).or_default()[c % 2].push(id);
        }
        let r = root(lw.m, v);
        if lw.avail.get(&r).is_some_and(|a| a.sbuf.is_some()) {
            kx.resident_readers.entry(r).or_default().push(id);
        }
    }
}

/// Emits op `i` of the kernel for record `c`.
#[allow(clippy::too_many_arguments)]
fn emit_op(
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
            let deps = kx.prod.get(&v).cloned().unwrap_or_default();
            let id = crate::engine::emit_mm::relayout(
                lw,
                kx.k,
                v,
                share(bytes, count, kx.tiling.tiles()),
                deps,
            );
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
        return;
    }
    let res = o.results.first().copied();
    let out_war: Vec<InstrId> = res.map(|r| slot_war(kx, r, c)).unwrap_or_default();
    let ids: Vec<InstrId> = match work {
        OpWork::Relabel | OpWork::HbmConstant => {
            let deps = operand_deps(lw, kx, op);
            for &r in &o.results {
                kx.prod.insert(r, deps.clone());
            }
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
                let slot = res.and_then(|r| {
                    kx.resident_out
                        .get(&r)
                        .map(|x| x.0)
                        .or(kx.slots.get(&r).copied())
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
                res.and_then(|r| kx.slots.get(&r).copied()),
            )]
        }
    };
    for &id in &ids {
        note_reader(lw, kx, op, c, id);
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
        );
        kx.all.push(id);
        kx.prod.insert(r, vec![id]);
    }
}

/// The numbers `emit_mm::matmul_record` needs.
fn mm_args(mm: &Mm) -> crate::engine::emit_mm::MmArgs {
    crate::engine::emit_mm::MmArgs {
        op: mm.op,
        d: mm.d,
        fp32: mm.fp32,
        ms: mm.ms,
        nm: mm.nm,
        group: 512 * CHUNK_BANKS,
    }
}

/// Free-standing helpers shared with `emit_mm`.
pub(crate) fn instr(
    engine: Engine,
    op: Opcode,
    kernel: u32,
    parts: u32,
    free: u32,
    count: u32,
    eb: u8,
) -> Instr {
    Instr {
        id: 0,
        engine,
        op,
        kernel,
        partitions: parts.clamp(1, 128),
        free: free.max(1),
        count: count.max(1),
        elem_bytes: eb,
        span: 1,
        reads: Vec::new(),
        writes: Vec::new(),
        deps: Vec::new(),
        duration_s: 0.0,
        ideal_s: 0.0,
    }
}
