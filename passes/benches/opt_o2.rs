//! Micro-benchmark of the `-O2` pipeline (no CLI): parses a file once per run, runs the
//! preset and prints the minimum and median wall time of every pass plus parse and print.
//!
//! Usage: `cargo bench -p neuronc-passes --bench opt_o2 -- [FILE] [RUNS]`
//! (default `fixtures/models/bert_base_train_step.mlir`, 11 runs). Nothing is asserted;
//! the whole-process comparison with `verify` is `bench/opt_speed.sh`.
//!
//! `... --bench opt_o2 -- dump DIR FILE...` instead writes, for every FILE that parses,
//! `DIR/<stem>.o2.mlir` (the `-O2` output) and `DIR/<stem>.explain.txt` (the `explain`
//! report of the entry function after the clean-up pipeline), to compare the output of
//! two builds byte for byte.

use neuronc_ir::{parse_module, print_module, PrintOptions};
use neuronc_passes::neuron::explain::Explanation;
use neuronc_passes::neuron::fusion::FusionConfig;
use neuronc_passes::neuron::plan_function;
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::path::Path;
use std::time::{Duration, Instant};

/// Writes the `-O2` output and the explain report of every file that parses.
fn dump(dir: &Path, files: &[String]) {
    let o2 = Pipeline::preset(2).expect("the -O2 preset parses");
    let cleanup = Pipeline::parse("inline,decompose-batch-norm,fixpoint<8>(canonicalize,cse,dce)")
        .expect("the clean-up pipeline parses");
    for file in files {
        let Ok(src) = std::fs::read_to_string(file) else {
            continue;
        };
        let stem = Path::new(file)
            .file_stem()
            .map_or_else(|| "out".to_string(), |s| s.to_string_lossy().into_owned());
        let Ok(mut m) = parse_module(&src) else {
            continue;
        };
        let mut e = m.clone();
        if run_pipeline(&mut m, &o2, &mut PassContext::new()).is_ok() {
            let text = print_module(&m, &PrintOptions::default());
            let _ = std::fs::write(dir.join(format!("{stem}.o2.mlir")), text);
        }
        if run_pipeline(&mut e, &cleanup, &mut PassContext::new()).is_ok() {
            if let Some(f) = e.entry().cloned() {
                let plan = plan_function(&e, &f, &FusionConfig::default());
                let text = Explanation::new(&e, &f.name, &plan).to_text();
                let _ = std::fs::write(dir.join(format!("{stem}.explain.txt")), text);
            }
        }
    }
}

/// "min / median" in milliseconds (the minimum is the least disturbed by other load).
fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!("{:8.3} {:8.3}", ms(v[0]), ms(v[v.len() / 2]))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    if args.first().is_some_and(|a| a == "dump") && args.len() > 1 {
        dump(Path::new(&args[1]), &args[2..]);
        return;
    }
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
    println!("{file} ({runs} runs; ms: min, median)");
    println!("{:>24} {}", "parse", stats(parse));
    for (name, v) in per_pass {
        println!("{name:>24} {}", stats(v));
    }
    println!("{:>24} {}", "passes total", stats(total));
    println!("{:>24} {}", "print", stats(print));
}
