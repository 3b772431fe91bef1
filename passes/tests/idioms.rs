//! `recognize-idioms` on real traces: the number of recognised GELUs and softmaxes equals
//! what reading the trace shows (one `mhlo.erf` GELU and one softmax per encoder layer), and
//! outputs are bit-identical (the decomposition is a copy of the matched ops).

use neuronc_interp::{arg_types, npz, run_function, RunOptions};
use neuronc_ir::{parse_module, print_module, Attr, Module, OpKind, PrintOptions};
use neuronc_passes::{run_pipeline, PassContext, Pipeline};
use std::path::Path;

fn count_composites(m: &Module, name: &str) -> usize {
    let mut n = 0;
    let main = m.func("main").unwrap().body;
    m.walk_region(main, &mut |op| {
        let o = m.op(op);
        if o.kind == OpKind::Composite
            && matches!(o.attrs.get("name"), Some(Attr::Str(s)) if s == name)
        {
            n += 1;
        }
    });
    n
}

fn check(file: &str, gelus: usize, softmaxes: usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/models")
        .join(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        eprintln!("{file} not present; skipped");
        return;
    };
    let m = parse_module(&text).unwrap();
    let mut opt = m.clone();
    let mut ctx = PassContext::new();
    ctx.verify_each = true;
    let p = Pipeline::parse("inline,recognize-idioms").unwrap();
    run_pipeline(&mut opt, &p, &mut ctx).unwrap();
    assert_eq!(
        count_composites(&opt, "neuronc.gelu"),
        gelus,
        "{file}: gelu"
    );
    assert_eq!(
        count_composites(&opt, "neuronc.softmax"),
        softmaxes,
        "{file}: softmax"
    );
    let reparsed = parse_module(&print_module(&opt, &PrintOptions::default())).unwrap();
    let arrays = npz::read_npz(&path.with_extension("npz")).unwrap();
    let inputs = npz::load_args(&arrays, &arg_types(&m, "main").unwrap()).unwrap();
    let before = run_function(&m, "main", inputs.clone(), &RunOptions::default()).unwrap();
    let after = run_function(&reparsed, "main", inputs, &RunOptions::default()).unwrap();
    assert_eq!(before, after, "{file}: outputs differ");
}

#[test]
fn bert_small_has_two_gelus_and_two_softmaxes() {
    // Two encoder layers: `custom_call @mhlo.erf` and `stablehlo.exponential` appear twice.
    check("bert_small_infer.mlir", 2, 2);
}
