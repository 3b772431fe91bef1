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
    };
    assert!(build(module, &opts).is_err());
}
