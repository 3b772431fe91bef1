//! Oracle test against jaxlib's MLIR (the StableHLO dialect jax ships): for every fixture
//! chunk and the op corpus, our pretty and generic prints must parse and verify in
//! jaxlib, and jaxlib must print them back exactly as it prints the original input
//! (generic form, no locations) — i.e. our round trip loses or changes nothing MLIR sees.
//! Skips (with a notice) when no python with jaxlib is available: set `NEURONC_PYTHON`
//! or provide `/work/venv/bin/python`. Chunks using the `check` dialect (not registered in
//! jaxlib) and the corpus of ops newer than jaxlib's StableHLO (`ops_newer.mlir`) are
//! skipped. Chunks holding XLA bounded dynamism (`set_dimension_size`), which the parser
//! lowers to static ops by design, are only checked for acceptance: their values are
//! compared with the framework's by the fixture value tests.

mod common;

use neuronc_ir::{parse_module, print_module, PrintOptions};
use std::path::{Path, PathBuf};
use std::process::Command;

const ORACLE: &str = r#"
import sys
from jax._src.interpreters import mlir as jax_mlir
from jaxlib.mlir import ir
ctx = jax_mlir.make_ir_context()
ctx.allow_unregistered_dialects = False
def canon(path):
    with ctx:
        m = ir.Module.parse(open(path).read())
        if not m.operation.verify():
            raise RuntimeError("verification failed")
        s = m.operation.get_asm(print_generic_op_form=True, enable_debug_info=False)
        # A missing visibility means public (MLIR SymbolTable semantics).
        return s.replace(', sym_visibility = "public"', '')
bad = 0
for line in open(sys.argv[1]):
    name, orig, *ours = line.split()
    try:
        want = canon(orig)
    except Exception as e:
        if name.startswith("ops_"):
            # The hand-written corpus must be valid MLIR.
            print(f"{name}: corpus chunk REJECTED by jaxlib: {str(e)[:1500]}")
            bad += 1
        else:
            print(f"{name}: original rejected by jaxlib (skipped): {str(e)[:200]}")
        continue
    for o in ours:
        try:
            got = canon(o)
        except Exception as e:
            print(f"{name}: {o}: REJECTED: {str(e)[:1500]}")
            bad += 1
            continue
        if got != want and not name.startswith("lowered:"):
            a = want.splitlines(); b = got.splitlines()
            x, y = next(((x, y) for x, y in zip(a, b) if x != y), ("<len>", "<len>"))
            k = next((i for i, (c, d) in enumerate(zip(x, y)) if c != d), 0)
            print(f"{name}: {o}: DIFFERS from the original:\n  want: ...{x[max(0,k-150):k+250]}\n  got:  ...{y[max(0,k-150):k+250]}")
            bad += 1
print(f"done bad={bad}")
sys.exit(1 if bad else 0)
"#;

fn python() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("NEURONC_PYTHON") {
        return Some(PathBuf::from(p));
    }
    let p = Path::new("/work/venv/bin/python");
    p.exists().then(|| p.to_path_buf())
}

#[test]
fn jaxlib_accepts_and_agrees() {
    let Some(py) = python() else {
        eprintln!("jaxlib_roundtrip: skipped (no NEURONC_PYTHON and no /work/venv/bin/python)");
        return;
    };
    let dir = std::env::temp_dir().join(format!("neuronc_jaxlib_rt_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut list = String::new();
    let mut n = 0;
    for (i, c) in common::chunks().iter().enumerate() {
        if !c.is_valid_input() || c.text.contains("check.") || c.file == "ops_newer.mlir" {
            continue;
        }
        let m = parse_module(&c.text).unwrap_or_else(|e| panic!("{}: {e}", c.name()));
        let files = [
            ("orig", c.text.clone()),
            ("pretty", print_module(&m, &PrintOptions::default())),
            (
                "generic",
                print_module(
                    &m,
                    &PrintOptions {
                        generic: true,
                        debug_locs: false,
                    },
                ),
            ),
        ];
        let mut line = c.name().replace(' ', "_");
        if c.text.contains("stablehlo.set_dimension_size") {
            line.insert_str(0, "lowered:");
        }
        for (tag, text) in files {
            let p = dir.join(format!("{i}_{tag}.mlir"));
            std::fs::write(&p, text).unwrap();
            line.push(' ');
            line.push_str(&p.to_string_lossy());
        }
        list.push_str(&line);
        list.push('\n');
        n += 1;
    }
    let list_path = dir.join("list.txt");
    std::fs::write(&list_path, list).unwrap();
    let out = Command::new(&py)
        .arg("-c")
        .arg(ORACLE)
        .arg(&list_path)
        .output()
        .expect("run python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("ModuleNotFoundError") {
        eprintln!("jaxlib_roundtrip: skipped (python has no jax): {stderr}");
        return;
    }
    eprintln!("jaxlib_roundtrip: {n} chunks checked\n{stdout}");
    assert!(
        out.status.success(),
        "jaxlib disagrees on {n} chunks:\n{stdout}\n{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
