//! The engine back end on every model fixture: it compiles, `predicted >= roofline`, the
//! outputs are deterministic, the schedule respects dependencies and never lets two SBUF
//! buffers that share addresses be in use at the same time, under each SBUF placement;
//! `compile_function` keeps the faster of the placements. Prints the numbers the issue
//! asks for (run with `--nocapture`).

use neuronc_backend::engine::isa::Mem;
use neuronc_backend::engine::{
    compile_function, compile_placed, EngineOptions, EngineOutput, Placement,
};
use neuronc_ir::parse_module;
use neuronc_passes::neuron::{fusion::FusionConfig, plan_function};
use std::path::PathBuf;
use std::time::Instant;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/models");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "mlir"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn every_model_fixture_compiles_within_the_roofline_invariant() {
    check_fixtures(200_000);
}

/// The large fixtures (BERT-base training step, ...): run with
/// `cargo test --release -p neuronc-backend --test engine_fixtures -- --ignored --nocapture`.
#[test]
#[ignore]
fn large_model_fixtures() {
    check_fixtures(u64::MAX);
}

fn check_fixtures(max_bytes: u64) {
    // `NEURONC_FIXTURE=name` checks only the fixtures whose file name contains `name`.
    let only = std::env::var("NEURONC_FIXTURE").ok();
    for path in fixtures() {
        if std::fs::metadata(&path).map_or(true, |md| md.len() > max_bytes) {
            continue;
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        let Ok(src) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Ok(m) = parse_module(&src) else {
            eprintln!("skip (parse) {}", path.display());
            continue;
        };
        let Some(f) = m.entry().cloned() else {
            continue;
        };
        let t0 = Instant::now();
        let plan = plan_function(&m, &f, &FusionConfig::default());
        let t1 = Instant::now();
        let out = compile_function(&m, &f, &plan, &EngineOptions::default());
        let t2 = Instant::now();
        let out = match out {
            Ok(o) => o,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        let r = &out.report;
        eprintln!(
            "{:<28} ops {:>5} kernels {:>4} records {:>6} instrs {:>8} pred {:>10.3} us roof {:>10.3} us ({}) ratio {:.2} sbuf {:>8} psum {:>7} hbm {:>10} plan {:.0} ms engine {:.0} ms",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
            plan.graph.order.len(),
            r.kernels,
            r.instruction_records,
            r.instructions,
            r.predicted_time_s * 1e6,
            r.roofline_time_s * 1e6,
            r.roofline_bound,
            r.predicted_time_s / r.roofline_time_s.max(1e-30),
            r.sbuf_peak_bytes,
            r.psum_peak_bytes,
            r.hbm_bytes,
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3,
        );
        assert!(
            r.predicted_time_s >= r.roofline_time_s * (1.0 - 1e-9),
            "{}",
            path.display()
        );
        assert!(r.sbuf_peak_bytes <= 24 * 1024 * 1024 && r.psum_peak_bytes <= 2 * 1024 * 1024);
        assert_sound(&out, &path);
        let mut fastest = f64::INFINITY;
        for placement in [Placement::NextFit, Placement::OldestFirst] {
            let opts = EngineOptions::default();
            let placed = compile_placed(&m, &f, &plan, &opts, placement).expect("placed");
            assert_sound(&placed, &path);
            fastest = fastest.min(placed.schedule.makespan);
        }
        assert_eq!(out.schedule.makespan, fastest, "{}", path.display());
        let again = compile_function(&m, &f, &plan, &EngineOptions::default()).expect("again");
        assert_eq!(out.program_nir(), again.program_nir(), "{}", path.display());
        assert_eq!(out.timeline_json(), again.timeline_json());
    }
}

/// Dependencies respected, SBUF tenants disjoint.
fn assert_sound(out: &EngineOutput, path: &std::path::Path) {
    let s = &out.schedule;
    for ins in &out.lowered.program.instrs {
        for &d in &ins.deps {
            assert!(s.start[ins.id as usize] >= s.end[d as usize]);
        }
    }
    assert_sbuf_tenants_disjoint(out, path);
}

/// Every SBUF buffer is in use from the start of the first instruction that names it
/// (reads or writes) to the end of the last; two buffers whose address ranges (rounded up
/// to the allocator's 64-byte granularity) overlap must not be in use at the same time.
fn assert_sbuf_tenants_disjoint(out: &EngineOutput, path: &std::path::Path) {
    let p = &out.lowered.program;
    let s = &out.schedule;
    let mut life: Vec<Option<(f64, f64)>> = vec![None; p.buffers.len()];
    for ins in &p.instrs {
        let (a, b) = (s.start[ins.id as usize], s.end[ins.id as usize]);
        for &buf in ins.reads.iter().chain(&ins.writes) {
            if p.buffers[buf as usize].mem == Mem::Sbuf {
                let l = life[buf as usize].get_or_insert((a, b));
                *l = (l.0.min(a), l.1.max(b));
            }
        }
    }
    // (start, end, first byte, end byte, buffer), swept by start time.
    let mut used: Vec<(f64, f64, u64, u64, usize)> = life
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            let b = &p.buffers[i];
            l.map(|(a, e)| (a, e, b.offset, b.offset + b.bytes.div_ceil(64) * 64, i))
        })
        .collect();
    used.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.4.cmp(&y.4)));
    let mut active: Vec<(f64, f64, u64, u64, usize)> = Vec::new();
    for u in used {
        active.retain(|x| x.1 > u.0);
        for x in &active {
            assert!(
                !(x.2 < u.3 && u.2 < x.3),
                "{}: SBUF buffers {} and {} share addresses while both in use ({:?} / {:?})\n{}\n{}",
                path.display(),
                p.buffers[x.4].name,
                p.buffers[u.4].name,
                (x.0, x.1),
                (u.0, u.1),
                users(out, x.4),
                users(out, u.4),
            );
        }
        active.push(u);
    }
}

/// The instructions that name SBUF buffer `buf`, one a line (for failure messages).
fn users(out: &EngineOutput, buf: usize) -> String {
    let p = &out.lowered.program;
    let s = &out.schedule;
    let b = &p.buffers[buf];
    let mut lines = vec![format!("{} @{}+{}:", b.name, b.offset, b.bytes)];
    for ins in &p.instrs {
        let names = ins
            .reads
            .iter()
            .chain(&ins.writes)
            .any(|&x| x as usize == buf);
        if names {
            let i = ins.id as usize;
            lines.push(format!(
                "  i{} k{} {} [{:.9}, {:.9}] deps {:?}",
                i,
                ins.kernel,
                ins.op.mnemonic(),
                s.start[i],
                s.end[i],
                ins.deps
            ));
        }
    }
    lines.join("\n")
}
