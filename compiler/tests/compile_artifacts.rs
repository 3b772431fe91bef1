//! `compile` produces every artifact the issue lists, deterministically, with the report
//! keys tools rely on, and predicted time never below the roofline.

use neuronc::build::{build, BuildOptions};
use neuronc_backend::engine::AutoCast;

fn artifacts(path: &str, target: &str) -> neuronc::build::Artifacts {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join(path)).expect("fixture exists");
    let module = neuronc::compile(path, &text).expect("fixture verifies");
    let opts = BuildOptions {
        target: target.into(),
        auto_cast: AutoCast::Matmult,
        ..BuildOptions::default()
    };
    build(module, &opts).expect("compiles")
}

#[test]
fn artifacts_are_complete_and_deterministic() {
    for target in ["trn1", "trn2", "inf2"] {
        let a = artifacts("fixtures/models/bert_small_infer.mlir", target);
        let b = artifacts("fixtures/models/bert_small_infer.mlir", target);
        let names: Vec<&str> = a.files.iter().map(|(n, _)| *n).collect();
        assert_eq!(
            names,
            [
                "model.hlo.pb",
                "model.hlo.txt",
                "program.nir",
                "timeline.json",
                "manifest.json",
                "report.json"
            ]
        );
        for ((n, x), (_, y)) in a.files.iter().zip(&b.files) {
            if *n != "report.json" {
                assert!(x == y, "{n} differs between two compiles for {target}");
            }
        }
        let report: serde_json::Value =
            serde_json::from_slice(&a.files.iter().find(|(n, _)| *n == "report.json").unwrap().1)
                .unwrap();
        for key in [
            "kernels",
            "instructions",
            "hbm_bytes",
            "sbuf_peak_bytes",
            "psum_peak_bytes",
            "engine_busy_s",
            "predicted_time_s",
            "roofline_time_s",
            "compile_time_s",
        ] {
            assert!(report.get(key).is_some(), "report.json lacks {key}");
        }
        assert!(a.report.predicted_time_s >= a.report.roofline_time_s);
        let timeline: serde_json::Value = serde_json::from_slice(
            &a.files
                .iter()
                .find(|(n, _)| *n == "timeline.json")
                .unwrap()
                .1,
        )
        .unwrap();
        assert!(timeline["traceEvents"]
            .as_array()
            .is_some_and(|e| !e.is_empty()));
    }
}

#[test]
fn unknown_target_is_an_error_not_a_panic() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("fixtures/models/cnn_bn_infer.mlir")).unwrap();
    let module = neuronc::compile("cnn", &text).unwrap();
    let opts = BuildOptions {
        target: "trn9".into(),
        auto_cast: AutoCast::None,
        ..BuildOptions::default()
    };
    assert!(build(module, &opts).is_err());
}

/// `top_kernels` agrees with `program.nir`: re-adding each listed kernel's instruction
/// durations per engine from the text gives its busy time, no kernel outside the list
/// keeps an engine busier, and the list is sorted, longest first.
#[test]
fn top_kernels_match_the_program_text() {
    let a = artifacts("fixtures/models/bert_small_infer.mlir", "trn1");
    let nir = String::from_utf8(
        a.files
            .iter()
            .find(|(n, _)| *n == "program.nir")
            .unwrap()
            .1
            .clone(),
    )
    .unwrap();
    // (kernel, compute engine) -> microseconds, from lines `  iN kK Op [..] .. d=D ..`.
    // The text rounds each duration to 1 ns, so sums carry up to 0.5 ns per instruction.
    let mut busy: std::collections::BTreeMap<(u32, String), (f64, f64)> = Default::default();
    let mut engine = String::new();
    for line in nir.lines() {
        if let Some(e) = line.strip_prefix("engine ") {
            engine = e.trim_end_matches(':').to_string();
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(_), Some(k)) = (words.next(), words.next()) else {
            continue;
        };
        let Some(k) = k.strip_prefix('k').and_then(|k| k.parse::<u32>().ok()) else {
            continue;
        };
        if engine.starts_with("DMA") {
            continue;
        }
        let d: f64 = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("d="))
            .unwrap()
            .parse()
            .unwrap();
        let e = busy.entry((k, engine.clone())).or_default();
        e.0 += d;
        e.1 += 1.0;
    }
    let top = &a.report.top_kernels;
    assert!(!top.is_empty() && top.len() <= 5);
    assert!(top.windows(2).all(|w| w[0].busy_s >= w[1].busy_s));
    for t in top.iter().filter(|t| t.engine != "DMA") {
        let (us, n) = busy[&(t.kernel, t.engine.clone())];
        assert!(
            (us * 1e-6 - t.busy_s).abs() <= n * 0.5e-9 + 1e-12,
            "k{} on {}: report {} s, program.nir {} us",
            t.kernel,
            t.engine,
            t.busy_s,
            us
        );
    }
    let last = top.last().unwrap().busy_s;
    let listed: Vec<u32> = top.iter().map(|t| t.kernel).collect();
    for ((k, e), (us, n)) in &busy {
        assert!(
            listed.contains(k) || us * 1e-6 <= last + n * 0.5e-9 + 1e-12,
            "k{k} keeps {e} busy {us} us, more than the last listed kernel"
        );
    }
}
