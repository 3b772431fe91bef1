//! Translation validation of `decompose-batch-norm` on f16 batch norms against XLA:CPU.
//!
//! Each `tests/batch_norm_f16/NAME.mlir` is one f16 `batch_norm_training`, `_inference`
//! or `_grad` (feature 1; the 4-D ones reduce over three dimensions, whose f16 sums XLA:CPU
//! vectorizes); its `.npz` holds the inputs (`arg_*`: element `i` of argument `k` is
//! `a + b*(((i*7919 + k*131) % 257) / 128 - 1)` rounded to f16, with means far from 0
//! relative to the spread, so the cancelling `E[x²] - E[x]²` shows) and the outputs XLA:CPU printed for the op
//! (`out_*`, jaxlib 0.10.2 through `tools/xla_run.py`). The original module, its
//! `decompose-batch-norm` expansion and its `-O2` output must all give those outputs bit
//! for bit under the interpreter's `xla` semantics; when python with jaxlib is available,
//! XLA:CPU itself must also compute them from the expanded module.
//!
//! Before this expansion (f16 computed in f32 and rounded once) the decomposed modules
//! differed from XLA on every file (e.g. all 24 `y` of `training_4_6`, and 2 of its 6
//! means); before the interpreter's f16 inference/grad expansions and its vectorized-lane
//! reduce order, the original modules differed on all but `training_4_6` and
//! `training_1_6_8`.

use neuronc_interp::{arg_types, compare, npz, run_function, FloatSemantics, RunOptions, Tensor};
use neuronc_ir::{parse_module, print_module, verify_module, Module, PrintOptions};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::path::{Path, PathBuf};
use std::process::Command;

fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/batch_norm_f16");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("case directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "mlir"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 6, "cases missing: {files:?}");
    files
}

/// The module, its inputs and XLA:CPU's outputs of one case.
fn load(path: &Path) -> (Module, Vec<Tensor>, Vec<Tensor>) {
    let src = std::fs::read_to_string(path).expect("case text");
    let m = parse_module(&src).expect("case parses");
    let arrays = npz::read_npz(&path.with_extension("npz")).expect("case npz");
    let args = npz::load_args(&arrays, &arg_types(&m, "main").expect("main")).expect("args");
    let f = m.func("main").expect("main");
    let outs = (0..f.result_types.len())
        .map(|i| {
            let key = npz::out_key(i);
            let ty = m.types.tensor_of(f.result_types[i]).expect("tensor result");
            let (_, a) = arrays.iter().find(|(k, _)| *k == key).expect("output");
            a.to_tensor(&key, Some(ty)).expect("typed output")
        })
        .collect();
    (m, args, outs)
}

/// `m` after `passes`, printed and parsed again (so the text is what is checked).
fn optimized(m: &Module, passes: &Pipeline) -> Module {
    let mut m = m.clone();
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    run_pipeline(&mut m, passes, &mut ctx).expect("pipeline runs");
    let text = print_module(&m, &PrintOptions::default());
    let m = parse_module(&text).expect("output parses");
    verify_module(&m).expect("output verifies");
    m
}

/// Every output of `m` on `args` under `xla` semantics equals `want` bit for bit.
fn assert_matches(what: &str, m: &Module, args: &[Tensor], want: &[Tensor]) {
    let opts = RunOptions {
        float_semantics: FloatSemantics::Xla,
        ..RunOptions::default()
    };
    let got = run_function(m, "main", args.to_vec(), &opts).expect("runs");
    for (i, (w, g)) in want.iter().zip(&got).enumerate() {
        compare(w, g, 0.0, 0.0).unwrap_or_else(|e| panic!("{what}, output {i}: {e}"));
    }
}

#[test]
fn f16_expansion_computes_what_xla_cpu_computes_for_the_op() {
    let decompose = Pipeline::parse("decompose-batch-norm").expect("pipeline");
    let o2 = Pipeline::preset(2).expect("-O2");
    for path in cases() {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let (m, args, want) = load(&path);
        assert_matches(&format!("{name} as is"), &m, &args, &want);
        let expanded = optimized(&m, &decompose);
        let text = print_module(&expanded, &PrintOptions::default());
        assert!(!text.contains("batch_norm"), "{name}: not expanded");
        assert_matches(&format!("{name} expanded"), &expanded, &args, &want);
        assert_matches(&format!("{name} -O2"), &optimized(&m, &o2), &args, &want);
    }
}

fn python() -> Option<PathBuf> {
    let p = PathBuf::from(
        std::env::var("NEURONC_PYTHON").unwrap_or_else(|_| "/work/venv/bin/python".into()),
    );
    p.exists().then_some(p)
}

/// The expanded module's text, compiled and run by XLA:CPU, gives what XLA:CPU gives for
/// the batch norm op itself.
#[test]
fn xla_cpu_agrees_on_the_expanded_text() {
    let Some(py) = python() else {
        println!("no python with jaxlib (NEURONC_PYTHON, /work/venv): oracle test skipped");
        return;
    };
    let decompose = Pipeline::parse("decompose-batch-norm").expect("pipeline");
    let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tools/xla_run.py");
    let dir = std::env::temp_dir().join(format!("neuronc_bn_f16_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for path in cases() {
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let (m, _, want) = load(&path);
        let expanded = optimized(&m, &decompose);
        let prog = dir.join(format!("{name}.mlir"));
        std::fs::write(&prog, print_module(&expanded, &PrintOptions::default())).expect("write");
        let out = dir.join(format!("{name}.out.npz"));
        let st = Command::new(&py)
            .arg(&tool)
            .arg(&prog)
            .arg("--inputs")
            .arg(path.with_extension("npz"))
            .arg("--output")
            .arg(&out)
            .status()
            .expect("python runs");
        assert!(st.success(), "xla_run.py failed on {name}");
        let arrays = npz::read_npz(&out).expect("outputs");
        for (i, w) in want.iter().enumerate() {
            let key = npz::out_key(i);
            let (_, a) = arrays.iter().find(|(k, _)| *k == key).expect("output");
            let got = a.to_tensor(&key, Some(w.ty())).expect("typed");
            compare(w, &got, 0.0, 0.0).unwrap_or_else(|e| panic!("{name}, output {i}: {e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
