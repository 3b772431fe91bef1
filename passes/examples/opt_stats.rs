//! Prints, for each `.mlir` file given, the live op count before and after `-O2` (or the
//! pipeline in `NEURONC_PASSES`), the parse, verify and optimize wall times, and the
//! rewrite count. Usage: `cargo run --release -p neuronc-passes --example opt_stats -- FILES`.

use neuronc_ir::{parse_module, verify_module};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::time::Instant;

fn main() {
    let pipeline = match std::env::var("NEURONC_PASSES") {
        Ok(p) => Pipeline::parse(&p),
        Err(_) => Pipeline::preset(2),
    };
    let pipeline = match pipeline {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    println!("file\tops_before\tops_after\tparse_ms\tverify_ms\topt_ms\trewrites");
    for path in std::env::args().skip(1) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("{path}: unreadable");
            continue;
        };
        let t = Instant::now();
        let mut m = match parse_module(&text) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let parse = t.elapsed();
        let t = Instant::now();
        let verified = verify_module(&m).is_ok();
        let verify = t.elapsed();
        let mut ctx = PassContext::new();
        match run_pipeline(&mut m, &pipeline, &mut ctx) {
            Ok(r) if std::env::var_os("NEURONC_TIME_PASSES").is_some() => {
                eprintln!("{path}\n{}", r.timing_table())
            }
            Ok(r) => println!(
                "{path}\t{}\t{}\t{:.1}\t{:.1}{}\t{:.1}\t{}",
                r.ops_before,
                r.ops_after,
                parse.as_secs_f64() * 1e3,
                verify.as_secs_f64() * 1e3,
                if verified { "" } else { "(invalid)" },
                r.total_wall.as_secs_f64() * 1e3,
                r.rewrites
            ),
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
}
