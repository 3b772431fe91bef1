//! Property tests of the list scheduler on random small DAGs: no instruction starts before
//! its producers end, one engine or DMA queue (and, on NeuronCore-v2, one shared port)
//! never runs two instructions at once, a DMA transfer's duration follows the queues it
//! was given, the schedule is deterministic, and semaphore waits name the producers'
//! positions. Plus hand-computed cases of the DMA queue choice.

use neuronc_backend::engine::isa::{Engine, Instr, Opcode, Program, NUM_STREAMS};
use neuronc_backend::engine::schedule::{schedule as run, Config, Schedule};
use proptest::prelude::*;

/// Fixed DMA cost used by the property test (most random transfers are longer).
const FIXED: f64 = 300e-9;

fn schedule(p: &Program, shared_ports: bool) -> Schedule {
    run(
        p,
        Config {
            shared_ports,
            dma_fixed_s: FIXED,
            dma_queue_weight: Config::DMA_QUEUE_WEIGHT,
        },
    )
}

/// Duration of `ins` on `queues` queues: the fixed part, plus its streaming time at
/// `span` queues spread over `queues`.
fn dma_duration(ins: &Instr, fixed: f64, queues: u8) -> f64 {
    let fixed = fixed.min(ins.duration_s);
    fixed + (ins.duration_s - fixed) * ins.span as f64 / queues as f64
}

fn engine(i: u8) -> Engine {
    match i % 7 {
        0 => Engine::Tensor,
        1 => Engine::Vector,
        2 => Engine::Scalar,
        3 => Engine::GpSimd,
        n => Engine::Dma(n - 4),
    }
}

fn program(spec: &[(u8, u16, Vec<u16>)]) -> Program {
    let mut p = Program::default();
    for (i, (e, dur, deps)) in spec.iter().enumerate() {
        let mut deps: Vec<u32> = if i == 0 {
            vec![]
        } else {
            deps.iter().map(|&d| d as u32 % i as u32).collect()
        };
        deps.sort_unstable();
        deps.dedup();
        p.instrs.push(Instr {
            id: i as u32,
            engine: engine(*e),
            op: Opcode::Elementwise {
                op: "x".into(),
                inputs: 1,
            },
            kernel: 0,
            partitions: 128,
            free: 1,
            count: 1,
            elem_bytes: 4,
            span: match engine(*e) {
                Engine::Dma(q) => 1 << (dur % 3).min(if q % 2 == 0 { 2 } else { 0 }),
                _ => 1,
            },
            reads: vec![],
            writes: vec![],
            deps,
            duration_s: (*dur as f64 + 1.0) * 1e-9,
            ideal_s: 0.0,
        });
    }
    p
}

fn dag() -> impl Strategy<Value = Vec<(u8, u16, Vec<u16>)>> {
    prop::collection::vec(
        (0u8..7, 0u16..1000, prop::collection::vec(0u16..1000, 0..4)),
        1..60,
    )
}

proptest! {
    #[test]
    fn schedule_is_legal(spec in dag(), shared in any::<bool>()) {
        let p = program(&spec);
        let s = schedule(&p, shared);
        let n = p.instrs.len();
        // Everything scheduled exactly once.
        let total: usize = s.streams.iter().map(|v| v.len()).sum();
        prop_assert_eq!(total, n);
        for ins in &p.instrs {
            let i = ins.id as usize;
            let expect = match ins.engine {
                Engine::Dma(_) => {
                    // A power of two up to the lowered span, on an aligned queue group.
                    prop_assert!(s.span[i].is_power_of_two() && s.span[i] <= ins.span);
                    let Engine::Dma(q) = s.engine[i] else { panic!("{i} left DMA") };
                    prop_assert_eq!(q % s.span[i], 0);
                    dma_duration(ins, FIXED, s.span[i])
                }
                _ => {
                    prop_assert_eq!(s.engine[i], ins.engine);
                    ins.duration_s
                }
            };
            prop_assert!((s.end[i] - s.start[i] - expect).abs() < 1e-15);
            for &d in &ins.deps {
                prop_assert!(s.start[i] >= s.end[d as usize], "{} starts before dep {} ends", i, d);
            }
        }
        // Exclusivity of every stream, including the extra queues of wide DMA transfers.
        let occupies = |i: usize, st: usize| {
            let f = s.engine[i].index();
            (f..f + s.span[i] as usize).contains(&st)
        };
        for st in 0..NUM_STREAMS {
            let on: Vec<usize> = (0..n).filter(|&i| occupies(i, st)).collect();
            for &a in &on {
                for &b in &on {
                    if a < b {
                        prop_assert!(s.end[a] <= s.start[b] || s.end[b] <= s.start[a], "{} and {} overlap on {}", a, b, st);
                    }
                }
            }
        }
        // Engine exclusivity, in stream order.
        for stream in &s.streams {
            for w in stream.windows(2) {
                prop_assert!(s.start[w[1] as usize] >= s.end[w[0] as usize]);
            }
        }
        // v2: Vector and GpSimd share the SBUF port, so they never overlap.
        if shared {
            let vg: Vec<usize> = (0..n).filter(|&i| matches!(p.instrs[i].engine, Engine::Vector | Engine::GpSimd)).collect();
            for &a in &vg {
                for &b in &vg {
                    if a < b {
                        prop_assert!(s.end[a] <= s.start[b] || s.end[b] <= s.start[a]);
                    }
                }
            }
        }
        // Semaphore waits: a cross-engine producer at stream position q needs count q+1.
        for ins in &p.instrs {
            for &d in &ins.deps {
                let pe = s.engine[d as usize];
                if pe != s.engine[ins.id as usize] {
                    let need = s.position[d as usize] + 1;
                    let w = s.waits[ins.id as usize].iter().find(|(e, _)| *e == pe).map(|x| x.1);
                    prop_assert!(w.is_some_and(|w| w >= need));
                }
            }
        }
        let max_end = s.end.iter().cloned().fold(0.0, f64::max);
        prop_assert_eq!(s.makespan, max_end);
        prop_assert_eq!(s.streams.len(), NUM_STREAMS);
        // Deterministic.
        let s2 = schedule(&p, shared);
        prop_assert_eq!(&s.start, &s2.start);
        prop_assert_eq!(&s.streams, &s2.streams);
    }
}

#[test]
fn independent_engines_overlap_and_a_chain_serializes() {
    // Two independent 1 ns instructions on different engines run in parallel; a
    // dependent third one starts when both ended.
    let p = program(&[(0, 999, vec![]), (1, 999, vec![]), (2, 0, vec![0, 1])]);
    let p = {
        let mut p = p;
        p.instrs[1].deps.clear();
        p.instrs[2].deps = vec![0, 1];
        p
    };
    let s = schedule(&p, true);
    assert_eq!(s.start[0], 0.0);
    assert_eq!(s.start[1], 0.0);
    assert!((s.start[2] - 1e-6).abs() < 1e-15);
    assert!((s.makespan - (1e-6 + 1e-9)).abs() < 1e-15);
}

#[test]
fn equal_starts_go_to_the_more_critical_transfer() {
    // Four 16-queue transfers with nothing after them, and one 4-queue transfer that
    // feeds 10 µs of VectorE work, all 1 µs long (no fixed cost). At t = 0 all can start;
    // the critical one must go first, so the program ends at 1 + 10 µs.
    let mut p = program(&[
        (4, 999, vec![]),
        (4, 999, vec![]),
        (4, 999, vec![]),
        (4, 999, vec![]),
        (4, 999, vec![]),
        (1, 9999, vec![]),
    ]);
    for i in 0..4 {
        p.instrs[i].deps.clear();
        p.instrs[i].span = 16;
    }
    p.instrs[4].engine = Engine::Dma(12);
    p.instrs[4].span = 4;
    p.instrs[4].deps.clear();
    p.instrs[5].deps = vec![4];
    let cfg = Config {
        shared_ports: true,
        dma_fixed_s: 0.0,
        dma_queue_weight: 0.0,
    };
    let s = run(&p, cfg);
    assert_eq!(s.start[4], 0.0);
    assert_eq!(s.span[4], 4);
    assert!((s.makespan - 11e-6).abs() < 1e-15, "{}", s.makespan);
}

/// One transfer of 16 µs of streaming on a single queue (1 µs on 16) plus `fixed`.
fn transfer(fixed: f64) -> Instr {
    let mut p = program(&[(4, 0, vec![])]);
    let mut ins = p.instrs.remove(0);
    ins.span = 16;
    ins.duration_s = fixed + 1e-6;
    ins
}

#[test]
fn transfers_go_wide_on_idle_queues_and_narrow_on_busy_ones() {
    let fixed = 0.5e-6;
    let cfg = |w: f64| Config {
        shared_ports: true,
        dma_fixed_s: fixed,
        dma_queue_weight: w,
    };
    // Alone, weighing only its end: all 16 queues, 0.5 + 16/16 = 1.5 µs.
    let mut p = Program::default();
    p.instrs.push(transfer(fixed));
    let s = run(&p, cfg(0.0));
    assert_eq!((s.engine[0], s.span[0]), (Engine::Dma(0), 16));
    assert!((s.end[0] - 1.5e-6).abs() < 1e-15, "{}", s.end[0]);
    // Weighing half the added fixed cost: end + 0.25 µs × queues is least on 8 queues
    // (0.5 + 2 + 2 = 4.5 µs against 5.5 on 4 or 16), so it takes 2.5 µs.
    let s = run(&p, cfg(0.5));
    assert_eq!(s.span[0], 8);
    assert!((s.end[0] - 2.5e-6).abs() < 1e-15, "{}", s.end[0]);
    // Queues 0–7 busy for 20 µs with a long 8-queue transfer: a second transfer takes
    // the free queues 8–15 at once (0.5 + 2 = 2.5 µs) instead of waiting for all 16.
    let mut long = transfer(fixed);
    long.span = 8;
    long.duration_s = 20e-6;
    let mut second = transfer(fixed);
    second.id = 1;
    let p = Program {
        instrs: vec![long, second],
        buffers: vec![],
    };
    let s = run(&p, cfg(0.0));
    assert_eq!((s.engine[0], s.span[0]), (Engine::Dma(0), 8));
    assert_eq!((s.engine[1], s.span[1]), (Engine::Dma(8), 8));
    assert_eq!(s.start[1], 0.0);
    assert!((s.end[1] - 2.5e-6).abs() < 1e-15, "{}", s.end[1]);
}
