//! `neuronc-rs compile A.mlir B.mlir ... -o DIR`, through the real binary: each input
//! lands in `DIR/<stem>/` with the artifacts it gets when compiled alone, summaries come
//! in input order whatever `-j` is, and a bad input fails only itself. Runs without a
//! cache (`--no-cache`) unless a test says otherwise, with `HOME` in a temporary directory.

mod common;

use common::{comparable, files, fixture, neuronc, text};
use std::path::{Path, PathBuf};

/// A summary with the measured compile time and the output directory blanked.
fn normalize(summary: &str, dir: &str) -> String {
    summary
        .replace(dir, "DIR")
        .lines()
        .map(|l| match l.find(", compile ") {
            Some(i) => format!("{}, compile T s", &l[..i]),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const INPUTS: [&str; 4] = [
    "fixtures/models/jax_mlp_train_step.mlir",
    "fixtures/models/cnn_bn_infer.mlir",
    "fixtures/models/jax_sort.mlir",
    "fixtures/models/jax_int8_linear.mlir",
];

fn stem(path: &str) -> &str {
    Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("stem")
}

#[test]
fn parallel_equals_one_at_a_time() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path();
    let inputs: Vec<String> = INPUTS.iter().map(|p| fixture(p)).collect();
    let mut expected_stdout = String::new();
    for (path, input) in INPUTS.iter().zip(&inputs) {
        let dir = t.path().join("alone").join(stem(path));
        let d = dir.display().to_string();
        let o = neuronc(home, &["compile", input, "-o", &d, "--no-cache"]);
        assert!(o.status.success(), "{}", text(&o.stderr));
        expected_stdout.push_str(&normalize(&text(&o.stdout), &d));
        expected_stdout.push('\n');
    }
    for jobs in ["1", "2", "4"] {
        let out = t.path().join(format!("j{jobs}"));
        let mut args = vec!["compile", "-j", jobs, "--no-cache", "-o"];
        let o_str = out.display().to_string();
        args.push(&o_str);
        args.extend(inputs.iter().map(String::as_str));
        let o = neuronc(home, &args);
        assert!(o.status.success(), "-j {jobs}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "-j {jobs}: {}", text(&o.stderr));
        // One summary per file, each starting with a `compiled ` line.
        let mut summaries: Vec<String> = Vec::new();
        for line in text(&o.stdout).split_inclusive('\n') {
            match summaries.last_mut() {
                Some(s) if !line.starts_with("compiled ") => s.push_str(line),
                _ => summaries.push(line.to_string()),
            }
        }
        let got: String = summaries
            .iter()
            .zip(INPUTS)
            .map(|(summary, path)| {
                let d = out.join(stem(path)).display().to_string();
                normalize(summary, &d) + "\n"
            })
            .collect();
        assert_eq!(got, expected_stdout, "-j {jobs}: summaries in input order");
        for path in INPUTS {
            let alone = t.path().join("alone").join(stem(path));
            assert_eq!(
                comparable(&out.join(stem(path))),
                comparable(&alone),
                "-j {jobs}: {path}"
            );
        }
    }
}

#[test]
fn a_bad_input_fails_alone() {
    let t = tempfile::tempdir().expect("tempdir");
    let bad = t.path().join("bad.mlir");
    std::fs::write(
        &bad,
        "func.func @main() -> tensor<f32> {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n  func.return %0 : tensor<f32>\n}\n",
    )
    .expect("write");
    let missing = t.path().join("missing.mlir");
    let out = t.path().join("out");
    let (good1, good2) = (fixture(INPUTS[0]), fixture(INPUTS[2]));
    let args: Vec<String> = vec![
        "compile".into(),
        good1,
        bad.display().to_string(),
        good2,
        missing.display().to_string(),
        "-j".into(),
        "2".into(),
        "--no-cache".into(),
        "-o".into(),
        out.display().to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = neuronc(t.path(), &args);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    let bad_at = err
        .find(&format!("{}:2:", bad.display()))
        .unwrap_or_else(|| panic!("diagnostic with file:line for bad.mlir:\n{err}"));
    let missing_at = err
        .find(&format!("cannot read {}", missing.display()))
        .unwrap_or_else(|| panic!("read error for missing.mlir:\n{err}"));
    assert!(bad_at < missing_at, "diagnostics in input order:\n{err}");
    let stdout = text(&o.stdout);
    let compiled: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("compiled "))
        .collect();
    assert_eq!(compiled.len(), 2, "{stdout}");
    assert!(compiled[0].contains("jax_mlp_train_step.mlir"));
    assert!(compiled[1].contains("jax_sort.mlir"));
    for good in [stem(INPUTS[0]), stem(INPUTS[2])] {
        assert_eq!(files(&out.join(good)).len(), 6, "{good}");
    }
    assert!(!out.join("bad").exists());
    assert!(!out.join("missing").exists());
}

#[test]
fn inputs_that_share_an_output_directory_are_refused() {
    let t = tempfile::tempdir().expect("tempdir");
    let (a, b): (PathBuf, PathBuf) = (t.path().join("a"), t.path().join("b"));
    for d in [&a, &b] {
        std::fs::create_dir(d).expect("dir");
        std::fs::copy(fixture(INPUTS[2]), d.join("model.mlir")).expect("copy");
    }
    let out = t.path().join("out");
    let (pa, pb, po) = (
        a.join("model.mlir").display().to_string(),
        b.join("model.mlir").display().to_string(),
        out.display().to_string(),
    );
    let o = neuronc(t.path(), &["compile", &pa, &pb, "-o", &po, "--no-cache"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains(&pa) && err.contains(&pb), "{err}");
    assert!(!out.exists(), "nothing is compiled");
    let o = neuronc(t.path(), &["compile", &pa, "-", "-o", &po, "--no-cache"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("stdin"));
    let o = neuronc(t.path(), &["compile", &pa, &pb, "-o", &po, "-j", "0"]);
    assert_eq!(o.status.code(), Some(2), "-j 0 is a usage error");
}

#[test]
fn a_bad_unit_of_a_split_input_fails_the_compile() {
    let t = tempfile::tempdir().expect("tempdir");
    let input = t.path().join("split.mlir");
    let good = std::fs::read_to_string(fixture(INPUTS[2])).expect("fixture");
    std::fs::write(&input, format!("func.func @main( {{\n// -----\n{good}")).expect("write");
    let out = t.path().join("out");
    let (pi, po) = (input.display().to_string(), out.display().to_string());
    let o = neuronc(
        t.path(),
        &[
            "--split-input-file",
            "compile",
            &pi,
            "-o",
            &po,
            "--no-cache",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains(&format!("{pi}:1:")));
    // The good unit is still compiled and written.
    assert_eq!(files(&out).len(), 6);
}
