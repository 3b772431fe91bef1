//! Outputs of the engine back end: the `program.nir` text, the Chrome-trace timeline and
//! the [`Report`].
//!
//! # `program.nir` format (version 1)
//! Line-oriented text; `;` starts a comment. A header gives the target and counts, then
//! `buffers:` lists every buffer as `bN <mem> off=<hex> bytes=<n> <name>` where `<mem>` is
//! `hbm` (byte offset in HBM, total bytes), `sbuf` (offset and bytes *per partition*) or
//! `psumK` (bank K, bytes per partition). Then one `engine <NAME>:` section per stream in
//! the order PE, DVE, ACT, POOL, DMA0..DMA15 (empty streams omitted), listing that
//! stream's instructions in issue order:
//! `iN kK <mnemonic> [P x F] xC <dtype bytes>B t=<start µs> d=<duration µs> wait=[ENG>=n,..] r=[bN,..] w=[bN,..]`
//! — instruction id, kernel (`k-` for spills), tile of P partitions × F free elements (for
//! DMA: bytes per partition), C hardware instructions, simulated start and duration. A DMA
//! transfer spread over several queues adds `q=<n>` after the dtype: it occupies queues
//! `DMAk..DMAk+n-1` of its section `DMAk`.
//! Mnemonics name the instruction: `TensorOp.<op>` (one elementwise op), `Activation.<func>`
//! (ScalarE; `.evict` when it reads PSUM), `TensorReduce.<op>`, `PartitionReduce.<op>`,
//! `Pool.<op>`, `LoadStationary`, `MultiplyMoving`, `Transpose`, `DmaLoad`/`DmaStore`/
//! `DmaSpill`/`DmaTranspose`, and for ops combined into one instruction
//! ([`crate::engine::combine`]): `TensorScalar.<op0>.<op1>` (`(x op0 s0) op1 s1`),
//! `ScalarTensorTensor.<op0>.<op1>` (`(x op0 s) op1 y`) and `Activation.<func>(x*s+b)`
//! (also `(x*s)`, `(x+b)`, `(x-b)`: the scale and bias applied before `func`).
//! Semaphores: every engine increments its own semaphore when an instruction completes;
//! `wait=[ACT>=5]` blocks until the ACT stream has completed 5 instructions (records).
//! Output is deterministic: ids, buffers and streams are printed in a fixed order with
//! fixed-precision numbers.

use crate::engine::cost::CoreModel;
use crate::engine::isa::{Engine, Mem, NUM_STREAMS};
use crate::engine::lower::Lowered;
use crate::engine::schedule::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The numbers `report.json` carries for the engine program.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    pub target: String,
    /// Kernels that emitted instructions.
    pub kernels: usize,
    /// Hardware instructions (sum of record counts).
    pub instructions: u64,
    /// Instruction records (lines of `program.nir`).
    pub instruction_records: usize,
    pub instructions_per_engine: BTreeMap<String, u64>,
    /// Bytes moved by DMA (loads, stores, spills, DMA relayouts).
    pub hbm_bytes: u64,
    /// Function inputs read once plus outputs written once.
    pub compulsory_hbm_bytes: u64,
    pub sbuf_peak_bytes: u64,
    pub psum_peak_bytes: u64,
    /// Busy seconds per compute engine; `DMA` is the mean over the 16 queues.
    pub engine_busy_s: BTreeMap<String, f64>,
    pub predicted_time_s: f64,
    /// max(unavoidable per-engine work, compulsory HBM traffic at HBM bandwidth).
    pub roofline_time_s: f64,
    /// Which term sets the roofline (`PE`, `DVE`, `ACT`, `POOL`, `DVE+POOL` (v2's shared
    /// SBUF port), `DVE+ACT+POOL`, `HBM`).
    pub roofline_bound: String,
    /// The kernels that keep one engine busiest, longest first (at most [`TOP_KERNELS`]).
    pub top_kernels: Vec<KernelTime>,
}

/// How many kernels [`Report::top_kernels`] lists.
pub const TOP_KERNELS: usize = 5;

/// One kernel's heaviest engine in the schedule.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KernelTime {
    /// Kernel number as in `program.nir` (`k<N>`).
    pub kernel: u32,
    /// The engine (or `DMA`, all queues) the kernel keeps busiest.
    pub engine: String,
    /// Seconds that engine spends on the kernel's instructions (DMA: queue-seconds / 16).
    pub busy_s: f64,
}

/// Per kernel, the engine with the most busy time; the [`TOP_KERNELS`] largest.
fn top_kernels(p: &crate::engine::isa::Program) -> Vec<KernelTime> {
    let mut busy: BTreeMap<u32, [f64; 5]> = BTreeMap::new();
    for ins in p.instrs.iter().filter(|i| i.kernel != u32::MAX) {
        let slot = busy.entry(ins.kernel).or_default();
        match ins.engine {
            Engine::Dma(_) => {
                let lanes = ins.span.max(1) as f64;
                slot[4] += ins.duration_s * lanes / (NUM_STREAMS - 4) as f64;
            }
            e => slot[e.index()] += ins.duration_s,
        }
    }
    let names = ["PE", "DVE", "ACT", "POOL", "DMA"];
    let mut all: Vec<KernelTime> = busy
        .into_iter()
        .map(|(kernel, t)| {
            let (i, &busy_s) = t
                .iter()
                .enumerate()
                .fold((0, &0.0), |a, b| if b.1 > a.1 { b } else { a });
            KernelTime {
                kernel,
                engine: names[i].to_string(),
                busy_s,
            }
        })
        .collect();
    all.sort_by(|a, b| b.busy_s.total_cmp(&a.busy_s).then(a.kernel.cmp(&b.kernel)));
    all.truncate(TOP_KERNELS);
    all
}

/// Builds the report.
pub fn report(l: &Lowered, s: &Schedule, model: &CoreModel) -> Report {
    let p = &l.program;
    let mut per_engine: BTreeMap<String, u64> = BTreeMap::new();
    let mut busy = [0.0f64; NUM_STREAMS];
    for ins in &p.instrs {
        let first = ins.engine.index();
        for b in &mut busy[first..(first + ins.span.max(1) as usize).min(NUM_STREAMS)] {
            *b += ins.duration_s;
        }
        let key = match ins.engine {
            Engine::Dma(_) => "DMA".to_string(),
            e => e.name(),
        };
        *per_engine.entry(key).or_default() += ins.count as u64;
    }
    let mut engine_busy_s = BTreeMap::new();
    for e in Engine::COMPUTE {
        engine_busy_s.insert(e.name(), busy[e.index()]);
    }
    engine_busy_s.insert(
        "DMA".into(),
        busy[4..].iter().sum::<f64>() / (NUM_STREAMS - 4) as f64,
    );
    let w = &l.work;
    // On v2, Vector and GpSimd cannot stream SBUF at the same time (facts §1.3, the
    // scheduler serialises them too), so the elementwise work spreads over two parallel
    // resources (that port and ScalarE), not three, and everything only Vector or
    // GpSimd can do (their fixed work and the two-input ops) passes through the port.
    let (lanes, dve_pool) = if model.shared_ports {
        (2.0, w.fixed[1] + w.fixed[3] + w.vector_or_pool)
    } else {
        (3.0, w.fixed[1].max(w.fixed[3]))
    };
    let pooled = (w.fixed[1] + w.fixed[2] + w.fixed[3] + w.flexible) / lanes;
    let terms = [
        ("PE", w.fixed[0]),
        ("DVE", w.fixed[1]),
        ("ACT", w.fixed[2]),
        ("POOL", w.fixed[3]),
        ("DVE+POOL", dve_pool),
        ("DVE+ACT+POOL", pooled),
        ("HBM", w.compulsory_hbm_bytes as f64 / model.hbm_core_bw),
    ];
    let (bound, roofline) = terms.iter().fold(
        ("none", 0.0),
        |acc, &(n, t)| if t > acc.1 { (n, t) } else { acc },
    );
    Report {
        target: model.name.to_string(),
        kernels: l.kernels,
        instructions: p.hardware_instructions(),
        instruction_records: p.instrs.len(),
        instructions_per_engine: per_engine,
        hbm_bytes: w.hbm_bytes,
        compulsory_hbm_bytes: w.compulsory_hbm_bytes,
        sbuf_peak_bytes: l.sbuf_peak_pp * model.partitions as u64,
        psum_peak_bytes: psum_peak_banks(l, s) * model.psum_bank_bytes * model.partitions as u64,
        engine_busy_s,
        predicted_time_s: s.makespan,
        roofline_time_s: roofline,
        roofline_bound: bound.to_string(),
        top_kernels: top_kernels(p),
    }
}

/// Most PSUM banks held at once (an accumulation group holds its banks from its first
/// MultiplyMoving's start to its eviction's end).
fn psum_peak_banks(l: &Lowered, s: &Schedule) -> u64 {
    let mut ev: Vec<(f64, i64)> = Vec::new();
    for &(first, last, banks) in &l.psum_groups {
        ev.push((s.start[first as usize], banks as i64));
        ev.push((s.end[last as usize], -(banks as i64)));
    }
    ev.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let (mut cur, mut peak) = (0i64, 0i64);
    for (_, d) in ev {
        cur += d;
        peak = peak.max(cur);
    }
    peak.max(0) as u64
}

fn us(t: f64) -> f64 {
    t * 1e6
}

/// The `program.nir` text (format in the module doc).
pub fn program_nir(l: &Lowered, s: &Schedule, target: &str) -> String {
    let p = &l.program;
    let mut out = String::with_capacity(p.instrs.len() * 120);
    let _ = writeln!(out, "; neuronc program.nir v1");
    let _ = writeln!(
        out,
        "; target {target}; {} kernels; {} instruction records; {} hardware instructions; predicted {:.3} us",
        l.kernels,
        p.instrs.len(),
        p.hardware_instructions(),
        us(s.makespan)
    );
    out.push_str("buffers:\n");
    for (i, b) in p.buffers.iter().enumerate() {
        let mem = match b.mem {
            Mem::Hbm => "hbm".to_string(),
            Mem::Sbuf => "sbuf".to_string(),
            Mem::Psum(k) => format!("psum{k}"),
        };
        let _ = writeln!(
            out,
            "  b{i} {mem} off=0x{:x} bytes={} {}",
            b.offset, b.bytes, b.name
        );
    }
    for (e, stream) in s.streams.iter().enumerate() {
        if stream.is_empty() {
            continue;
        }
        let _ = writeln!(out, "engine {}:", Engine::from_index(e).name());
        for &id in stream {
            let ins = &p.instrs[id as usize];
            let kernel = if ins.kernel == u32::MAX {
                "k-".to_string()
            } else {
                format!("k{}", ins.kernel)
            };
            let waits: Vec<String> = s.waits[id as usize]
                .iter()
                .map(|(e, n)| format!("{}>={n}", e.name()))
                .collect();
            let list = |v: &[u32]| {
                v.iter()
                    .map(|b| format!("b{b}"))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            let queues = if ins.span > 1 {
                format!(" q={}", ins.span)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "  i{id} {kernel} {} [{}x{}] x{} {}B{queues} t={:.3} d={:.3} wait=[{}] r=[{}] w=[{}]",
                ins.op.mnemonic(),
                ins.partitions,
                ins.free,
                ins.count,
                ins.elem_bytes,
                us(s.start[id as usize]),
                us(ins.duration_s),
                waits.join(","),
                list(&ins.reads),
                list(&ins.writes),
            );
        }
    }
    out
}

/// The simulated schedule as a Chrome trace (`chrome://tracing`, Perfetto): one thread
/// per engine and DMA queue, timestamps in microseconds.
pub fn timeline_json(l: &Lowered, s: &Schedule) -> String {
    let p = &l.program;
    let q = |x: &str| serde_json::to_string(x).unwrap_or_else(|_| "\"?\"".into());
    let mut out = String::with_capacity(p.instrs.len() * 150 + 4096);
    out.push_str("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    out.push_str("{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"NeuronCore\"}}");
    for (e, stream) in s.streams.iter().enumerate() {
        if stream.is_empty() {
            continue;
        }
        let name = q(&Engine::from_index(e).name());
        let _ = write!(
            out,
            ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":0,\"tid\":{e},\"args\":{{\"name\":{name}}}}}\
             ,\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":0,\"tid\":{e},\"args\":{{\"sort_index\":{e}}}}}"
        );
    }
    for (e, stream) in s.streams.iter().enumerate() {
        for &id in stream {
            let ins = &p.instrs[id as usize];
            let _ = write!(
                out,
                ",\n{{\"name\":{},\"cat\":\"k{}\",\"ph\":\"X\",\"ts\":{:.4},\"dur\":{:.4},\"pid\":0,\"tid\":{e},\
                 \"args\":{{\"id\":{id},\"tile\":\"{}x{}\",\"count\":{}}}}}",
                q(&ins.op.mnemonic()),
                ins.kernel as i64,
                us(s.start[id as usize]),
                us(ins.duration_s),
                ins.partitions,
                ins.free,
                ins.count,
            );
        }
    }
    out.push_str("\n]}\n");
    out
}
