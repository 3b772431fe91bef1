//! List scheduling and time simulation of a lowered [`Program`].
//!
//! Owns: [`schedule`], which orders every engine's in-order instruction stream and gives
//! each instruction its simulated start and end time, and the semaphore waits that
//! enforce cross-engine dependencies.
//!
//! # Algorithm
//! Classic list scheduling with a global clock per engine. An instruction becomes ready
//! when all its dependencies are scheduled; its earliest start is the latest end among
//! them. Each engine keeps its ready instructions in two heaps: *pending* (ordered by
//! earliest start) and *available* (ready by the engine's current free time, ordered by
//! critical-path priority, the longest path to the end of the program). At each step the
//! engine whose next instruction can start soonest issues it (equal starts: the higher
//! priority first, so a stream of wide DMA transfers on queue 0 cannot starve a critical
//! transfer on a higher queue). On NeuronCore-v2 Vector and
//! GpSimd share the SBUF port and Vector and Scalar the PSUM port (`neuron-facts.md` §1.3):
//! such instructions also occupy a shared port resource.
//! Invariants (tested): no instruction starts before every dependency ends; instructions
//! of one engine (or one shared port) never overlap; the result is deterministic (ties
//! break on priority, then engine index, then instruction id).
//! Semaphores: each engine's stream counts completed instructions; a cross-engine
//! dependency becomes `wait ENGINE >= n`, `n` being the producer's 1-based position in
//! its stream (the largest per producer engine is kept).

use crate::engine::isa::{Engine, InstrId, Opcode, Program, NUM_STREAMS};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The simulated schedule.
#[derive(Clone, Debug, Default)]
pub struct Schedule {
    pub start: Vec<f64>,
    pub end: Vec<f64>,
    /// Instruction ids per stream ([`Engine::index`]) in issue order.
    pub streams: Vec<Vec<InstrId>>,
    /// Position (0-based) of each instruction in its stream.
    pub position: Vec<u32>,
    /// Semaphore waits of each instruction: (producer engine, count to wait for).
    pub waits: Vec<Vec<(Engine, u32)>>,
    /// End of the last instruction, seconds.
    pub makespan: f64,
}

/// Shared port resources beyond the streams.
const PORT_SBUF_VG: usize = NUM_STREAMS;
const PORT_PSUM_VS: usize = NUM_STREAMS + 1;
const RESOURCES: usize = NUM_STREAMS + 2;

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

/// Resources an instruction occupies besides its own stream.
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

/// The other streams a multi-queue DMA transfer occupies.
fn span(p: &Program, i: usize) -> std::ops::Range<usize> {
    let ins = &p.instrs[i];
    let first = ins.engine.index();
    (first + 1)..(first + ins.span.max(1) as usize).min(NUM_STREAMS)
}

/// Schedules `p`; `shared_ports` models the NeuronCore-v2 port conflicts.
pub fn schedule(p: &Program, shared_ports: bool) -> Schedule {
    let n = p.instrs.len();
    let (succ_start, succ) = successors(p);
    let prio = priorities(p, &succ_start, &succ);
    let mut indeg: Vec<u32> = p.instrs.iter().map(|i| i.deps.len() as u32).collect();
    let mut est = vec![0.0f64; n];
    let mut pending: Vec<BinaryHeap<Reverse<(Time, InstrId)>>> =
        vec![BinaryHeap::new(); NUM_STREAMS];
    let mut avail: Vec<BinaryHeap<(Time, Reverse<InstrId>)>> = vec![BinaryHeap::new(); NUM_STREAMS];
    let mut free_at = [0.0f64; RESOURCES];
    let mut s = Schedule {
        start: vec![0.0; n],
        end: vec![0.0; n],
        streams: vec![Vec::new(); NUM_STREAMS],
        position: vec![0; n],
        waits: vec![Vec::new(); n],
        makespan: 0.0,
    };
    for (i, ins) in p.instrs.iter().enumerate() {
        if ins.deps.is_empty() {
            pending[ins.engine.index()].push(Reverse((Time(0.0), i as InstrId)));
        }
    }
    for _ in 0..n {
        // Pick the engine whose next instruction can start first.
        let mut best: Option<(f64, f64, usize)> = None;
        for e in 0..NUM_STREAMS {
            let t = free_at[e];
            while let Some(&Reverse((Time(when), id))) = pending[e].peek() {
                if when > t {
                    break;
                }
                pending[e].pop();
                avail[e].push((Time(prio[id as usize]), Reverse(id)));
            }
            let cand = match (avail[e].peek(), pending[e].peek()) {
                (Some(&(_, Reverse(id))), _) | (None, Some(&Reverse((_, id)))) => id as usize,
                (None, None) => continue,
            };
            let mut start = est[cand].max(t);
            for r in ports(p, cand, shared_ports)
                .into_iter()
                .flatten()
                .chain(span(p, cand))
            {
                start = start.max(free_at[r]);
            }
            // Equal starts go to the more critical instruction, not the lower engine
            // index: otherwise a wide DMA transfer on queue 0 that keeps finding all
            // queues free at once starves narrower transfers on the higher queues.
            let p_c = prio[cand];
            if best.is_none_or(|(b, bp, _)| start < b || (start == b && p_c > bp)) {
                best = Some((start, p_c, e));
            }
        }
        let Some((start, _, e)) = best else { break };
        let id = match avail[e].pop() {
            Some((_, Reverse(id))) => id,
            None => match pending[e].pop() {
                Some(Reverse((_, id))) => id,
                None => break,
            },
        } as usize;
        let end = start + p.instrs[id].duration_s;
        free_at[e] = end;
        for r in ports(p, id, shared_ports)
            .into_iter()
            .flatten()
            .chain(span(p, id))
        {
            free_at[r] = end;
        }
        s.start[id] = start;
        s.end[id] = end;
        s.position[id] = s.streams[e].len() as u32;
        s.streams[e].push(id as InstrId);
        s.makespan = s.makespan.max(end);
        for &succ_id in &succ[succ_start[id]..succ_start[id + 1]] {
            let j = succ_id as usize;
            est[j] = est[j].max(end);
            indeg[j] -= 1;
            if indeg[j] == 0 {
                pending[p.instrs[j].engine.index()].push(Reverse((Time(est[j]), succ_id)));
            }
        }
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
        let mut w: Vec<(Engine, u32)> = Vec::new();
        for &d in &ins.deps {
            let pe = p.instrs[d as usize].engine;
            if pe == ins.engine {
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
