//! Micro-benchmark of the `-O2` pipeline (no CLI): parses a file once per run, runs the
//! preset and prints the median wall time of every pass plus parse and print.
//!
//! Usage: `cargo bench -p neuronc-passes --bench opt_o2 -- [FILE] [RUNS]`
//! (default `fixtures/models/bert_base_train_step.mlir`, 11 runs). Nothing is asserted;
//! the whole-process comparison with `verify` is `bench/opt_speed.sh`.

use neuronc_ir::{parse_module, print_module, PrintOptions};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let file = args
        .first()
        .cloned()
        .unwrap_or_else(|| format!("{root}/fixtures/models/bert_base_train_step.mlir"));
    let runs: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(11);
    let src = std::fs::read_to_string(&file).expect("readable input file");
    let pipeline = Pipeline::preset(2).expect("the -O2 preset parses");
    let (mut parse, mut print, mut total) = (Vec::new(), Vec::new(), Vec::new());
    let mut per_pass: Vec<(&'static str, Vec<Duration>)> = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let mut m = parse_module(&src).expect("input parses");
        parse.push(t.elapsed());
        let report = run_pipeline(&mut m, &pipeline, &mut PassContext::new()).expect("runs");
        total.push(report.total_wall);
        for (name, wall, _) in report.per_pass() {
            match per_pass.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push(wall),
                None => per_pass.push((name, vec![wall])),
            }
        }
        let t = Instant::now();
        let text = print_module(&m, &PrintOptions::default());
        print.push(t.elapsed());
        std::hint::black_box(text);
    }
    println!("{file} ({runs} runs, median ms)");
    println!("{:>24} {:8.3}", "parse", median(parse));
    for (name, v) in per_pass {
        println!("{name:>24} {:8.3}", median(v));
    }
    println!("{:>24} {:8.3}", "passes total", median(total));
    println!("{:>24} {:8.3}", "print", median(print));
}
