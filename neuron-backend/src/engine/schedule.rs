//! List scheduling and time simulation of a lowered [`Program`].
//!
//! Owns: [`schedule`], which orders every engine's in-order instruction stream, gives
//! each instruction its simulated start and end time and each DMA transfer its queues,
//! and the semaphore waits that enforce cross-engine dependencies.
//!
//! # Algorithm
//! Classic list scheduling with a global clock per engine. An instruction becomes ready
//! when all its dependencies are scheduled; its earliest start is the latest end among
//! them. Each compute engine keeps its ready instructions in two heaps: *pending* (ordered
//! by earliest start) and *available* (ready by the engine's current free time, ordered by
//! critical-path priority, the longest path to the end of the program). DMA transfers
//! share one such pair of heaps (free time: the earliest any queue frees): the queues are
//! chosen here, when the transfer is placed, not by the lowering. A transfer may occupy up
//! to `span` consecutive queues (a scatter-gather list split over several DMA engines,
//! facts §1.3); each queue it occupies pays the fixed cost [`Config::dma_fixed_s`] and an
//! equal share of the streaming time, and the scheduler takes the aligned group of 1, 2,
//! 4, … `span` queues that minimises the transfer's end plus [`Config::dma_queue_weight`]
//! times the fixed cost the group adds (ties: fewer queues, then the lower queue). So a
//! transfer goes wide when the queues are idle (latency) and narrow when they are busy
//! (less fixed cost per byte, throughput).
//! At each step the engine whose next instruction can start soonest issues it (equal
//! starts: the higher priority first, so a stream of wide DMA transfers cannot starve a
//! critical one). On NeuronCore-v2 Vector and GpSimd share the SBUF port and Vector and
//! Scalar the PSUM port (`neuron-facts.md` §1.3): such instructions also occupy a shared
//! port resource.
//! Invariants (tested): no instruction starts before every dependency ends; instructions
//! of one engine or DMA queue (or one shared port) never overlap; a transfer's duration
//! on `n` queues is `fixed + (d - fixed) * span / n` for its lowered duration `d`; the
//! result is deterministic (ties break on priority, then engine index, then instruction
//! id).
//! Semaphores: each engine's stream counts completed instructions; a cross-engine
//! dependency becomes `wait ENGINE >= n`, `n` being the producer's 1-based position in
//! its stream (the largest per producer engine is kept). A DMA transfer counts on the
//! first queue it occupies.

use crate::engine::isa::{Engine, InstrId, Opcode, Program, DMA_QUEUES, NUM_STREAMS};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The simulated schedule.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    /// Engine (for DMA transfers: first queue) and queues occupied of each instruction.
    pub engine: Vec<Engine>,
    pub span: Vec<u8>,
    /// Instruction ids per stream ([`Engine::index`]) in issue order.
    pub streams: Vec<Vec<InstrId>>,
    /// Position (0-based) of each instruction in its stream.
    pub position: Vec<u32>,
    /// Semaphore waits of each instruction: (producer engine, count to wait for).
    pub waits: Vec<Vec<(Engine, u32)>>,
    /// End of the last instruction, seconds.
    pub makespan: f64,
}

impl Schedule {
    /// Writes the queues, spans and durations chosen for the DMA transfers into `p`, so
    /// the program text, timeline and report show the transfers as scheduled.
    pub fn assign_queues(&self, p: &mut Program) {
        for ins in &mut p.instrs {
            let i = ins.id as usize;
            if matches!(ins.engine, Engine::Dma(_)) {
                ins.engine = self.engine[i];
                ins.span = self.span[i];
                ins.duration_s = self.end[i] - self.start[i];
            }
        }
    }
}

/// Scheduler settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Config {
    /// NeuronCore-v2: Vector and GpSimd share the SBUF port, Vector and Scalar the PSUM
    /// port (`neuron-facts.md` §1.3).
    pub shared_ports: bool,
    /// Fixed cost of a DMA transfer on each queue it occupies, seconds: the part of its
    /// duration that does not shrink when it is spread over more queues.
    pub dma_fixed_s: f64,
    /// How much a transfer's choice of queues weighs the fixed cost each extra queue adds
    /// (queue time the other transfers lose) against its own end time: 0 takes the
    /// placement that ends first; [`Config::DMA_QUEUE_WEIGHT`] is the default.
    pub dma_queue_weight: f64,
}

impl Config {
    /// Default [`Config::dma_queue_weight`]: half the added queue time. Measured on the
    /// BERT-base training step (predicted ms): 0.25 → 23.86, 0.5 → 23.60, 1 → 23.78 (and,
    /// before kernels' local ranges got their own WAR dependencies: 0 → 24.04, 0.5 →
    /// 23.78, 2 → 25.03, 4 → 26.21). With 0 nearly every transfer took all 16 queues and
    /// the queues stayed 82% busy; with 0.5 most take 8 (79% busy, less fixed cost per
    /// byte); heavier weights make transfers too slow for the loads that feed compute.
    pub const DMA_QUEUE_WEIGHT: f64 = 0.5;
}

/// Shared port resources beyond the streams.
const PORT_SBUF_VG: usize = NUM_STREAMS;
const PORT_PSUM_VS: usize = NUM_STREAMS + 1;
const RESOURCES: usize = NUM_STREAMS + 2;
/// Ready lists: the four compute engines, then one for every DMA transfer.
const LISTS: usize = 5;
const DMA_LIST: usize = 4;
const PE_LIST: usize = 0;
const FIRST_QUEUE: usize = 4;

#[derive(Clone, Copy, PartialEq)]
struct Time(f64);
impl Eq for Time {}
impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Time {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Resources a compute instruction occupies besides its own stream.
fn ports(p: &Program, i: usize, shared: bool) -> [Option<usize>; 2] {
    if !shared {
        return [None, None];
    }
    let ins = &p.instrs[i];
    let psum = matches!(ins.op, Opcode::Activation { evict: true, .. })
        || (ins.engine == Engine::Vector
            && matches!(ins.op, Opcode::Elementwise { ref op, .. } if op == "evict"));
    let sbuf = matches!(ins.engine, Engine::Vector | Engine::GpSimd);
    [sbuf.then_some(PORT_SBUF_VG), psum.then_some(PORT_PSUM_VS)]
}

/// Where and when an instruction runs.
#[derive(Clone, Copy)]
struct Slot {
    start: f64,
    end: f64,
    /// First stream and number of streams (DMA queues) occupied.
    first: usize,
    width: usize,
}

/// The placement of DMA transfer `i` (ready at `est`): the aligned group of 1, 2, 4, …
/// `span` queues that minimises its end plus [`Config::dma_queue_weight`] times the fixed
/// cost it adds on the queues it occupies (ties: fewer queues, then the lower queue).
fn place_dma(p: &Program, i: usize, est: f64, free_at: &[f64], cfg: Config) -> Slot {
    let ins = &p.instrs[i];
    let queues = DMA_QUEUES as usize;
    let max = (ins.span.max(1) as usize).min(queues);
    let max = 1usize << max.ilog2();
    let fixed = cfg.dma_fixed_s.clamp(0.0, ins.duration_s);
    let score = |sl: &Slot| sl.end + cfg.dma_queue_weight * sl.width as f64 * fixed;
    let streaming = (ins.duration_s - fixed) * max as f64;
    let mut best: Option<Slot> = None;
    let mut width = 1;
    while width <= max {
        let dur = fixed + streaming / width as f64;
        for q in (0..queues).step_by(width) {
            let first = FIRST_QUEUE + q;
            let start = free_at[first..first + width]
                .iter()
                .copied()
                .fold(est, f64::max);
            let slot = Slot {
                start,
                end: start + dur,
                first,
                width,
            };
            if best.as_ref().is_none_or(|b| score(&slot) < score(b)) {
                best = Some(slot);
            }
        }
        width *= 2;
    }
    best.unwrap_or(Slot {
        start: est,
        end: est + ins.duration_s,
        first: FIRST_QUEUE,
        width: 1,
    })
}

/// The ready list an instruction waits in.
fn list_of(e: Engine) -> usize {
    match e {
        Engine::Dma(_) => DMA_LIST,
        e => e.index(),
    }
}

/// Ready instructions of each list: *pending* by earliest start, *available* by priority.
type Pending = Vec<BinaryHeap<Reverse<(Time, InstrId)>>>;
type Avail = Vec<BinaryHeap<(Time, Reverse<InstrId>)>>;

/// The next instruction to issue and where: the candidate of the list that can start
/// first (equal starts: the more critical one), with its list. Moves the instructions
/// that became ready by each list's free time from *pending* to *available*.
#[allow(clippy::too_many_arguments)]
fn pick_next(
    p: &Program,
    cfg: Config,
    prio: &[f64],
    est: &[f64],
    free_at: &[f64],
    pending: &mut Pending,
    avail: &mut Avail,
    pe_next: Option<InstrId>,
) -> Option<(Slot, usize, usize)> {
    let mut best: Option<(Slot, f64, usize, usize)> = None;
    for l in 0..LISTS {
        if l == PE_LIST {
            if let Some(j) = pe_next {
                // TensorE is locked to the MultiplyMoving of the stationary it holds.
                let j = j as usize;
                let start = est[j].max(free_at[l]);
                let slot = Slot {
                    start,
                    end: start + p.instrs[j].duration_s,
                    first: l,
                    width: 1,
                };
                if best.is_none_or(|(b, bp, _, _)| {
                    slot.start < b.start || (slot.start == b.start && prio[j] > bp)
                }) {
                    best = Some((slot, prio[j], l, j));
                }
                continue;
            }
        }
        let t = if l == DMA_LIST {
            free_at[FIRST_QUEUE..NUM_STREAMS]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
        } else {
            free_at[l]
        };
        while let Some(&Reverse((Time(when), id))) = pending[l].peek() {
            if when > t {
                break;
            }
            pending[l].pop();
            avail[l].push((Time(prio[id as usize]), Reverse(id)));
        }
        let cand = match (avail[l].peek(), pending[l].peek()) {
            (Some(&(_, Reverse(id))), _) | (None, Some(&Reverse((_, id)))) => id as usize,
            (None, None) => continue,
        };
        let slot = if l == DMA_LIST {
            place_dma(p, cand, est[cand], free_at, cfg)
        } else {
            let mut start = est[cand].max(t);
            for r in ports(p, cand, cfg.shared_ports).into_iter().flatten() {
                start = start.max(free_at[r]);
            }
            Slot {
                start,
                end: start + p.instrs[cand].duration_s,
                first: l,
                width: 1,
            }
        };
        // Equal starts go to the more critical instruction, not the lower engine
        // index: otherwise a stream of wide DMA transfers that keeps finding all
        // queues free at once starves the compute engines' critical work.
        let p_c = prio[cand];
        if best
            .is_none_or(|(b, bp, _, _)| slot.start < b.start || (slot.start == b.start && p_c > bp))
        {
            best = Some((slot, p_c, l, cand));
        }
    }
    best.map(|(slot, _, l, id)| (slot, l, id))
}

/// Schedules `p` under `cfg`.
pub fn schedule(p: &Program, cfg: Config) -> Schedule {
    let n = p.instrs.len();
    let (succ_start, succ) = successors(p);
    let prio = priorities(p, &succ_start, &succ);
    let mut indeg: Vec<u32> = p.instrs.iter().map(|i| i.deps.len() as u32).collect();
    let mut est = vec![0.0f64; n];
    let mut pending: Pending = vec![BinaryHeap::new(); LISTS];
    let mut avail: Avail = vec![BinaryHeap::new(); LISTS];
    let mut free_at = [0.0f64; RESOURCES];
    let mut s = Schedule {
        start: vec![0.0; n],
        end: vec![0.0; n],
        engine: p.instrs.iter().map(|i| i.engine).collect(),
        span: p.instrs.iter().map(|i| i.span).collect(),
        streams: vec![Vec::new(); NUM_STREAMS],
        position: vec![0; n],
        waits: vec![Vec::new(); n],
        makespan: 0.0,
    };
    for (i, ins) in p.instrs.iter().enumerate() {
        if ins.deps.is_empty() {
            pending[list_of(ins.engine)].push(Reverse((Time(0.0), i as InstrId)));
        }
    }
    // TensorE caches one stationary operand: once a LoadStationary issues, PE's next
    // instruction is its MultiplyMoving, ready at that moment because the LoadStationary
    // carries the MultiplyMoving's other dependencies (`emit_mm`).
    let mut pe_next: Option<InstrId> = None;
    for _ in 0..n {
        let Some((slot, l, id)) = pick_next(
            p,
            cfg,
            &prio,
            &est,
            &free_at,
            &mut pending,
            &mut avail,
            pe_next,
        ) else {
            break;
        };
        if pe_next == Some(id as InstrId) {
            pe_next = None;
        } else if avail[l]
            .peek()
            .is_some_and(|&(_, Reverse(x))| x as usize == id)
        {
            // The candidate is the top of `avail`, else of `pending`.
            avail[l].pop();
        } else {
            pending[l].pop();
        }
        for f in &mut free_at[slot.first..slot.first + slot.width] {
            *f = slot.end;
        }
        if l != DMA_LIST {
            for r in ports(p, id, cfg.shared_ports).into_iter().flatten() {
                free_at[r] = slot.end;
            }
        }
        let engine = Engine::from_index(slot.first);
        s.engine[id] = engine;
        s.span[id] = slot.width as u8;
        s.start[id] = slot.start;
        s.end[id] = slot.end;
        s.position[id] = s.streams[slot.first].len() as u32;
        s.streams[slot.first].push(id as InstrId);
        s.makespan = s.makespan.max(slot.end);
        let stationary = matches!(p.instrs[id].op, Opcode::LoadStationary);
        for &succ_id in &succ[succ_start[id]..succ_start[id + 1]] {
            let j = succ_id as usize;
            est[j] = est[j].max(slot.end);
            indeg[j] -= 1;
            if indeg[j] == 0 {
                if stationary && matches!(p.instrs[j].op, Opcode::MultiplyMoving) {
                    pe_next = Some(succ_id);
                    continue;
                }
                pending[list_of(p.instrs[j].engine)].push(Reverse((Time(est[j]), succ_id)));
            }
        }
        debug_assert!(
            !stationary || pe_next.is_some(),
            "a LoadStationary's MultiplyMoving must be ready when it issues"
        );
    }
    semaphores(p, &mut s);
    s
}

/// Successor lists in CSR form.
fn successors(p: &Program) -> (Vec<usize>, Vec<InstrId>) {
    let n = p.instrs.len();
    let mut count = vec![0usize; n + 1];
    for ins in &p.instrs {
        for &d in &ins.deps {
            count[d as usize + 1] += 1;
        }
    }
    for i in 0..n {
        count[i + 1] += count[i];
    }
    let mut fill = count.clone();
    let mut succ = vec![0 as InstrId; count[n]];
    for ins in &p.instrs {
        for &d in &ins.deps {
            succ[fill[d as usize]] = ins.id;
            fill[d as usize] += 1;
        }
    }
    (count, succ)
}

/// Longest path (in seconds) from each instruction to the end of the program.
fn priorities(p: &Program, start: &[usize], succ: &[InstrId]) -> Vec<f64> {
    let n = p.instrs.len();
    let mut prio = vec![0.0f64; n];
    for i in (0..n).rev() {
        let tail = succ[start[i]..start[i + 1]]
            .iter()
            .map(|&j| prio[j as usize])
            .fold(0.0, f64::max);
        prio[i] = p.instrs[i].duration_s + tail;
    }
    prio
}

/// Fills `waits` from the stream positions.
fn semaphores(p: &Program, s: &mut Schedule) {
    for ins in &p.instrs {
        let me = s.engine[ins.id as usize];
        let mut w: Vec<(Engine, u32)> = Vec::new();
        for &d in &ins.deps {
            let pe = s.engine[d as usize];
            if pe == me {
                continue;
            }
            let need = s.position[d as usize] + 1;
            match w.iter_mut().find(|(e, _)| *e == pe) {
                Some(x) => x.1 = x.1.max(need),
                None => w.push((pe, need)),
            }
        }
        w.sort_by_key(|(e, _)| e.index());
        s.waits[ins.id as usize] = w;
    }
}
