//! Instruction records for the three shapes of engine work: TensorE accumulation groups
//! (LoadStationary / MultiplyMoving into PSUM, then eviction with the fused epilogue),
//! single-engine tile operations, and relayouts (TensorE transpose or DMA).
//!
//! Owns: [`matmul_record`], [`compute_record`], [`relayout`], and the choice of the
//! epilogue a PSUM eviction applies ([`fusable_epilogue`]) with the producers it waits for
//! ([`epilogue_deps`]).
//! Invariants: a matmul chunk is one output block of ≤128 partitions × ≤2048 columns
//! (4 PSUM banks of 512 FP32); each MultiplyMoving streams ≤512 columns over a K tile of
//! ≤128 partitions; all `count`s equal the number of hardware instructions the record
//! stands for.

use crate::engine::classify::OpWork;
use crate::engine::emit_ops::Kx;
use crate::engine::isa::instr;
use crate::engine::isa::{BufId, Engine, InstrId, Mem, Opcode};
use crate::engine::lower::{AutoCast, Lowerer};
use crate::engine::tiling::{elems_bytes, MatmulDims, Tiling};
use neuronc_ir::{OpId, OpKind, ValueId};
use rustc_hash::FxHashSet;

/// What a matmul record needs to know.
#[derive(Clone, Copy, Debug)]
pub(crate) struct MmArgs {
    pub op: OpId,
    pub d: MatmulDims,
    pub fp32: bool,
    /// Stationary free extent (output partitions) and moving free extent.
    pub ms: u64,
    pub nm: u64,
    /// Columns per chunk.
    pub group: u64,
    /// Contraction rows added for a shift the matmul applies (`engine::shift`).
    pub shift_rows: u64,
}

/// Emits LoadStationary, MultiplyMoving and the PSUM eviction for `count` chunks starting
/// at chunk `chunk0`. Returns `[ls, mm, evict]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn matmul_record(
    lw: &mut Lowerer,
    k: u32,
    a: MmArgs,
    chunk0: u64,
    count: u32,
    stationary_deps: Vec<InstrId>,
    moving_deps: Vec<InstrId>,
    out_war: Vec<InstrId>,
    func: &'static str,
    out: Option<BufId>,
) -> Vec<InstrId> {
    let model = lw.opts.model.clone();
    let ng = a.nm.div_ceil(a.group).max(1);
    let mt_count = a.ms.div_ceil(128).max(1);
    let rows = a.d.k + a.shift_rows;
    let kt = rows.div_ceil(128).max(1);
    let kp = rows.clamp(1, 128) as u32;
    let (mut ls_n, mut ls_t, mut mm_n, mut mm_t, mut ev_n, mut max_tiles) =
        (0u64, 0.0, 0u64, 0.0, 0u64, 0u64);
    let mut widths: Vec<(u32, u32)> = Vec::new(); // (partitions, columns) of evicted tiles
    let (mut mw0, mut w0) = (0u32, 0u32);
    for idx in chunk0..chunk0 + count as u64 {
        let g = idx % ng;
        let mt = (idx / ng) % mt_count;
        let mw = (a.ms - mt * 128).min(128) as u32;
        let cols = (a.nm - g * a.group).min(a.group);
        // A zero-size matmul still issues one (empty) tile.
        let tiles: Vec<u32> = (0..cols.div_ceil(512).max(1))
            .map(|t| cols.saturating_sub(t * 512).min(512) as u32)
            .collect();
        if idx == chunk0 {
            (mw0, w0) = (mw, tiles[0]);
        }
        ls_n += kt;
        ls_t += kt as f64 * model.ls_s(mw, a.fp32);
        mm_n += kt * tiles.len() as u64;
        mm_t += kt as f64 * tiles.iter().map(|&w| model.mm_s(w, a.fp32)).sum::<f64>();
        ev_n += tiles.len() as u64;
        max_tiles = max_tiles.max(tiles.len() as u64);
        widths.extend(tiles.iter().map(|&w| (mw, w)));
    }
    let total_chunks = (a.d.b * mt_count * ng).max(1) as f64;
    let macs = (a.d.b * a.d.m * a.d.n * a.d.k) as f64 * count as f64 / total_chunks;
    let ideal = model.matmul_ideal_s(macs, a.fp32);
    let eb = if a.fp32 { 4 } else { 2 };
    let mut ls = instr(
        Engine::Tensor,
        Opcode::LoadStationary,
        k,
        kp,
        mw0,
        ls_n as u32,
        eb,
    );
    let (banks, war) = lw.psum.take(max_tiles.min(8) as u8);
    // The array holds one stationary: the scheduler issues the MultiplyMoving right after
    // its LoadStationary, so the LoadStationary also waits for everything else the
    // MultiplyMoving needs (its moving operand, its PSUM banks).
    ls.deps = stationary_deps;
    ls.deps.extend_from_slice(&moving_deps);
    ls.deps.extend_from_slice(&war);
    ls.duration_s = ls_t;
    let ls_id = lw.push(ls);
    let psum = lw.prog.buffer(
        format!("psum.b{}", banks[0]),
        Mem::Psum(banks[0]),
        0,
        banks.len() as u64 * model.psum_bank_bytes,
    );
    let mut mm = instr(
        Engine::Tensor,
        Opcode::MultiplyMoving,
        k,
        kp,
        w0,
        mm_n as u32,
        eb,
    );
    mm.deps = moving_deps;
    mm.deps.push(ls_id);
    mm.deps.extend(war);
    mm.duration_s = mm_t;
    mm.ideal_s = ideal;
    mm.writes = vec![psum];
    let mm_id = lw.push(mm);
    lw.work.fixed[0] += ideal;
    // Evict PSUM → SBUF on ScalarE with the fused epilogue (or a plain copy on VectorE).
    let engines: &[Engine] = if func == "copy" {
        &[Engine::Scalar, Engine::Vector]
    } else {
        &[Engine::Scalar]
    };
    let cost = |e: Engine| {
        widths
            .iter()
            .map(|&(_, w)| model.ew_s(e, w, 1))
            .sum::<f64>()
    };
    let e = lw.pick(engines, cost);
    let ideal_of = |e: Engine| {
        widths
            .iter()
            .map(|&(_, w)| model.ew_ideal_s(e, w, 1))
            .sum::<f64>()
    };
    lw.account(engines, ideal_of);
    let op = engine_opcode(e, func, "evict", 1, true);
    let mut ev = instr(e, op, k, mw0, w0, ev_n as u32, 4);
    ev.deps = vec![mm_id];
    ev.deps.extend(out_war);
    ev.duration_s = cost(e);
    ev.ideal_s = ideal_of(e);
    ev.reads = vec![psum];
    ev.writes = out.into_iter().collect();
    let ev_id = lw.push(ev);
    for &b in &banks {
        lw.psum.set_readers(b, vec![ev_id]);
    }
    lw.psum_groups.push((mm_id, ev_id, banks.len() as u8));
    let _ = a.op;
    vec![ls_id, mm_id, ev_id]
}

/// Free elements per partition of value `v` in one tile of `t`.
fn tile_free(lw: &Lowerer, t: &Tiling, v: Option<ValueId>) -> u32 {
    let e = v.map_or(1, |v| elems_bytes(lw.m, v).0);
    e.div_ceil(t.tiles() * t.parts as u64)
        .clamp(1, u32::MAX as u64) as u32
}

/// Elements per tile that an indexed op really touches, where that is less than the
/// tensors it names: a gather reads only the rows it returns, a scatter or a dynamic
/// update slice writes only its updates (the rest of the table is carried by the
/// buffer, whose traffic the kernel's I/O already counts). `None` for other ops.
fn pool_elems(lw: &Lowerer, t: &Tiling, op: OpId) -> Option<u32> {
    let o = lw.m.op(op);
    let touched = match o.kind {
        OpKind::Gather | OpKind::TorchIndexSelect | OpKind::DynamicGather => o.results.first(),
        // operands: N inputs, the indices, N updates.
        OpKind::Scatter => o.operands.get(o.operands.len() / 2 + 1),
        OpKind::DynamicUpdateSlice => o.operands.get(1),
        _ => None,
    };
    touched.map(|&v| tile_free(lw, t, Some(v)))
}

/// Emits one record of a single-engine tile operation for op `op`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn compute_record(
    lw: &mut Lowerer,
    k: u32,
    t: &Tiling,
    op: OpId,
    work: &OpWork,
    count: u32,
    deps: Vec<InstrId>,
    out: Option<BufId>,
) -> InstrId {
    let model = lw.opts.model.clone();
    let o = lw.m.op(op);
    let res = o.results.first().copied();
    let f_out = tile_free(lw, t, res);
    let f_in = tile_free(lw, t, o.operands.first().copied()).max(f_out);
    let eb = res.map_or(4, |r| {
        let (e, b) = elems_bytes(lw.m, r);
        (b / e.max(1)).clamp(1, 8) as u8
    });
    let n = count as f64;
    let (engine, opcode, free, dur, ideal) = match *work {
        OpWork::Elementwise {
            name,
            inputs,
            engines,
        } => {
            let ins = |e| crate::engine::classify::inputs_on(name, inputs, e);
            let cost = |e| n * model.ew_s(e, f_out, ins(e));
            let e = lw.pick(engines, cost);
            lw.account(engines, |e| n * model.ew_ideal_s(e, f_out, ins(e)));
            let opcode = engine_opcode(e, name, name, ins(e), false);
            (
                e,
                opcode,
                f_out,
                cost(e),
                n * model.ew_ideal_s(e, f_out, ins(e)),
            )
        }
        OpWork::ReduceFree {
            name,
            accumulate: true,
            ..
        } => {
            // Read back ScalarE's accumulator registers (facts §2.3: about 64 cycles).
            let e = Engine::Scalar;
            let read = crate::engine::accumulate::READ_BACK_CYCLES;
            let cost = n * (read + model.access_overhead_cycles) / model.hz(e);
            let ideal = n * read / model.hz(e);
            lw.account(&[e], |_| ideal);
            let op = Opcode::Activation {
                func: format!("accumulate.{name}"),
                evict: false,
            };
            (e, op, f_in, cost, ideal)
        }
        OpWork::ReduceFree { name, inputs, .. } => {
            let e = Engine::Vector;
            lw.account(&[e], |e| n * model.ew_ideal_s(e, f_in, inputs));
            let op = Opcode::ReduceFree {
                op: name.to_string(),
            };
            (
                e,
                op,
                f_in,
                n * model.ew_s(e, f_in, inputs),
                n * model.ew_ideal_s(e, f_in, inputs),
            )
        }
        OpWork::ReducePartition { name } => {
            let e = Engine::GpSimd;
            lw.account(&[e], |e| n * model.ew_ideal_s(e, f_in, 1));
            let op = Opcode::ReducePartition {
                op: name.to_string(),
            };
            (
                e,
                op,
                f_in,
                n * model.ew_s(e, f_in, 1),
                n * model.ew_ideal_s(e, f_in, 1),
            )
        }
        OpWork::Pool {
            name,
            cycles_per_elem,
        } => {
            let e = Engine::GpSimd;
            let work = pool_elems(lw, t, op).unwrap_or(f_out.max(f_in)) as f64 * cycles_per_elem;
            let per =
                (work.max(model.min_ii_cycles) + model.access_overhead_cycles) / model.gpsimd_hz;
            let ideal = n * work / model.gpsimd_hz;
            lw.account(&[e], |_| ideal);
            (
                e,
                Opcode::Pool {
                    op: name.to_string(),
                },
                f_out,
                n * per,
                ideal,
            )
        }
        OpWork::Opaque { name, cycles } => {
            // This record's share of the whole call's cycles.
            let e = Engine::GpSimd;
            let share = cycles * n / t.tiles().max(1) as f64;
            let ideal = share / model.gpsimd_hz;
            lw.account(&[e], |_| ideal);
            (
                e,
                Opcode::Pool {
                    op: name.to_string(),
                },
                f_out,
                (share.max(model.min_ii_cycles) + model.access_overhead_cycles) / model.gpsimd_hz,
                ideal,
            )
        }
        OpWork::Relabel | OpWork::HbmConstant | OpWork::Matmul => (
            Engine::Vector,
            Opcode::Elementwise {
                op: "copy".into(),
                inputs: 1,
            },
            f_out,
            0.0,
            0.0,
        ),
    };
    let mut ins = instr(engine, opcode, k, t.parts, free, count, eb);
    ins.deps = deps;
    ins.duration_s = dur;
    ins.ideal_s = ideal;
    ins.writes = out.into_iter().collect();
    lw.push(ins)
}

/// Changes the partition dimension of `bytes` of value `v`: TensorE transpose
/// (`matmul(x, identity)`, facts §1.4) plus PSUM eviction for floats, DMA otherwise.
/// Returns the instruction after which the relaid data is available.
/// `for_matmul`: the relaid copy is only read as an operand of a TensorE matmul that
/// rounds it to BF16 (auto-cast), so an FP32 value is cast to BF16 first (a one-input
/// elementwise op; rounding before the transpose gives the values the matmul would read)
/// and transposed at the BF16 rate.
pub(crate) fn relayout(
    lw: &mut Lowerer,
    k: u32,
    v: ValueId,
    bytes: u64,
    mut deps: Vec<InstrId>,
    for_matmul: bool,
) -> InstrId {
    let model = lw.opts.model.clone();
    let ty = lw.m.tensor_type(v).map(|t| t.elem);
    let mut eb = ty.map_or(4, |e| e.byte_width().max(1) as u64);
    let mut bytes = bytes;
    if eb == 4 && lw.stored_bf16(v) {
        // Stored as BF16 (`engine::narrow`): the transpose moves half the bytes, at the
        // BF16 rate, exactly (one nonzero product per output, FP32 accumulation).
        eb = 2;
        bytes = bytes.div_ceil(2);
    } else if eb == 4 && for_matmul && ty == Some(neuronc_ir::ElemType::F32) {
        let free = bytes.div_ceil(4 * 128).clamp(1, u32::MAX as u64) as u32;
        deps = vec![cast_record(lw, k, free, deps)];
        eb = 2;
        bytes = bytes.div_ceil(2);
    }
    if !ty.is_some_and(|e| e.is_float() && eb <= 4) {
        return lw.dma(Opcode::DmaTranspose, k, bytes, 128, deps, vec![], vec![]);
    }
    let fp32 = eb == 4 && lw.opts.auto_cast != AutoCast::All;
    let blocks = bytes.div_ceil(128 * 128 * eb).max(1);
    let mut tr = instr(
        Engine::Tensor,
        Opcode::Transpose,
        k,
        128,
        128,
        blocks as u32,
        eb as u8,
    );
    let (banks, war) = lw.psum.take(1);
    let psum = lw.prog.buffer(
        format!("psum.b{}", banks[0]),
        Mem::Psum(banks[0]),
        0,
        model.psum_bank_bytes,
    );
    tr.deps = deps;
    tr.deps.extend(war);
    tr.duration_s = blocks as f64 * (model.ls_s(128, fp32) + model.mm_s(128, fp32));
    tr.writes = vec![psum];
    let tr_id = lw.push(tr);
    let engines = [Engine::Scalar, Engine::Vector];
    // One eviction reads a whole PSUM bank: 2 KiB per partition holds 4 transposed
    // blocks of 128 FP32 columns (facts §1.3, §1.4: PSUM is FP32).
    let per_bank = (model.psum_bank_bytes / (128 * 4)).max(1);
    let (full, rem) = (blocks / per_bank, blocks % per_bank);
    let cost = |e: Engine| {
        let tail = if rem > 0 {
            model.ew_s(e, (128 * rem) as u32, 1)
        } else {
            0.0
        };
        full as f64 * model.ew_s(e, (128 * per_bank) as u32, 1) + tail
    };
    let e = lw.pick(&engines, cost);
    let op = engine_opcode(e, "copy", "evict", 1, true);
    let cols = 128 * per_bank.min(blocks);
    let mut ev = instr(
        e,
        op,
        k,
        128,
        cols as u32,
        blocks.div_ceil(per_bank) as u32,
        eb as u8,
    );
    ev.deps = vec![tr_id];
    ev.duration_s = cost(e);
    ev.reads = vec![psum];
    let ev_id = lw.push(ev);
    lw.psum.set_readers(banks[0], vec![ev_id]);
    lw.psum_groups.push((tr_id, ev_id, 1));
    ev_id
}

/// Writes one record of splat constant `v` into `slot` (a constant-fill instruction on
/// the engine that is least loaded; its cost is that of a one-input elementwise op).
pub(crate) fn memset(
    lw: &mut Lowerer,
    kx: &crate::engine::emit_ops::Kx,
    v: ValueId,
    slot: BufId,
    count: u32,
    deps: Vec<InstrId>,
) -> InstrId {
    let t = &kx.tiling;
    let free = tile_free(lw, t, Some(v));
    let eb = lw
        .bytes_of(v)
        .div_ceil(elems_bytes(lw.m, v).0.max(1))
        .clamp(1, 8) as u8;
    let mut ins = least_loaded_record(lw, kx.k, ("memset", 0), (t.parts, free, count, eb), deps);
    ins.writes = vec![slot];
    lw.push(ins)
}

/// One FP32 → BF16 copy of `free` elements per partition on the least-loaded engine.
fn cast_record(lw: &mut Lowerer, k: u32, free: u32, deps: Vec<InstrId>) -> InstrId {
    let ins = least_loaded_record(lw, k, ("copy", 1), (128, free, 1, 2), deps);
    lw.push(ins)
}

/// A record of `count` instructions `name` (reading `inputs` tensors) on `parts` × `free`
/// elements of `eb` bytes, placed on whichever elementwise engine is least loaded and
/// costed as a one-input elementwise op; not pushed yet (the caller adds its buffers).
fn least_loaded_record(
    lw: &mut Lowerer,
    k: u32,
    (name, inputs): (&str, u8),
    (parts, free, count, eb): (u32, u32, u32, u8),
    deps: Vec<InstrId>,
) -> crate::engine::isa::Instr {
    let model = lw.opts.model.clone();
    let n = count as f64;
    let engines = crate::engine::classify::ANY_EW;
    let e = lw.pick(engines, |e| n * model.ew_s(e, free, 1));
    lw.account(engines, |e| n * model.ew_ideal_s(e, free, 1));
    let opcode = engine_opcode(e, name, name, inputs, false);
    let mut ins = instr(e, opcode, k, parts, free, count, eb);
    ins.deps = deps;
    ins.duration_s = n * model.ew_s(e, free, 1);
    ins.ideal_s = n * model.ew_ideal_s(e, free, 1);
    ins
}

/// The opcode of elementwise work on engine `e`: an activation `func` on ScalarE
/// (`evict`: reading PSUM), else the elementwise op `op` reading `inputs` tensors.
fn engine_opcode(e: Engine, func: &str, op: &str, inputs: u8, evict: bool) -> Opcode {
    match e {
        Engine::Scalar => Opcode::Activation {
            func: func.to_string(),
            evict,
        },
        _ => Opcode::Elementwise {
            op: op.to_string(),
            inputs,
        },
    }
}

/// The first single-input elementwise op fed by the matmul that ScalarE can apply while
/// evicting PSUM (`func(x*scale+bias)`, facts §1.5).
pub(super) fn fusable_epilogue(
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

/// Producers of the operands of `epilogue` (an op fused into a PSUM eviction) that are
/// already lowered; an operand produced by a relabel not yet reached (a broadcast after
/// the matmul in program order) is followed to that relabel's operands.
/// The operand carrying the matmul's own result (directly or through single-operand
/// relabels) is skipped: the eviction produces it.
pub(super) fn epilogue_deps(lw: &Lowerer, kx: &Kx, matmul: OpId, epilogue: OpId) -> Vec<InstrId> {
    let m = lw.m;
    let from_matmul = |mut v: ValueId| {
        for _ in 0..8 {
            match m.value(v).def {
                neuronc_ir::ValueDef::Result(p, _) if p == matmul => return true,
                neuronc_ir::ValueDef::Result(p, _) if m.op(p).operands.len() == 1 => {
                    v = m.op(p).operands[0];
                }
                _ => return false,
            }
        }
        false
    };
    let mut todo: Vec<(ValueId, u8)> = m
        .op(epilogue)
        .operands
        .iter()
        .filter(|&&v| !from_matmul(v))
        .map(|&v| (v, 0))
        .collect();
    let mut deps = Vec::new();
    while let Some((v, depth)) = todo.pop() {
        if let Some(d) = kx.prod.get(&v) {
            deps.extend_from_slice(d);
        } else if let (neuronc_ir::ValueDef::Result(p, _), true) = (m.value(v).def, depth < 8) {
            todo.extend(m.op(p).operands.iter().map(|&u| (u, depth + 1)));
        }
    }
    deps.sort_unstable();
    deps.dedup();
    deps
}
