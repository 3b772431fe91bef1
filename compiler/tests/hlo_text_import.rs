//! HLO text import (`neuronc_backend::hlo_import::hlo_text_to_stablehlo`), checked against
//! the frameworks and against the `.pb` import:
//! 1. every fixture with framework outputs (`fixtures/**/X.mlir` + `X.npz`) is compiled as
//!    `compile` does; its `model.hlo.txt` is read back, parsed, verified and run by the
//!    interpreter against the framework's outputs (tolerances as in `hlo_import`), and
//!    must translate to the same StableHLO as its `model.hlo.pb`;
//! 2. every `fixtures/hlo/X.hlo.txt` (jax's unoptimized HLO text) and `X.opt.hlo.txt`
//!    (after XLA:CPU's optimizations), written by `fixtures/gen/hlo_text_fixtures.py`,
//!    is read as the CLI reads it and run with XLA's float semantics against jax's
//!    outputs in `X.npz`;
//! 3. where XLA also wrote the module as a proto (`X.pb`, `X.opt.pb`), the text and the
//!    proto translate to the same StableHLO (private function names aside: they carry
//!    computation ids, which the text does not print);
//! 4. bad input is an error naming line:col and what was expected, and no truncation of a
//!    valid file panics.
//!
//! Trials in [`INTERPRETER_GAPS`] are ignored (listed, not hidden), as in `hlo_import`.

mod outputs;

use libtest_mimic::{Arguments, Failed, Trial};
use neuronc::build::{build, BuildOptions};
use neuronc_backend::hlo_import::{hlo_proto_to_stablehlo, hlo_text_to_stablehlo};
use neuronc_interp::Tensor;
use std::path::Path;

/// Test 1: our `model.hlo.txt`, read back, against the framework; and against the `.pb`.
fn run_case(path: &Path, rtol: f64, atol_factor: f64) -> Result<(), String> {
    let case = outputs::load(path, None)?;
    let half = outputs::computes_in_half(&case.module);
    let artifacts = build(case.module, &BuildOptions::default()).map_err(|e| e.to_string())?;
    let file = |n: &str| {
        artifacts
            .files
            .iter()
            .find(|(f, _)| *f == n)
            .map(|f| f.1.clone())
            .ok_or(format!("no {n}"))
    };
    let txt = String::from_utf8(file("model.hlo.txt")?).map_err(|e| e.to_string())?;
    let imported = hlo_text_to_stablehlo(&txt).map_err(|e| format!("import: {e}"))?;
    let reference = half
        .then(|| outputs::run_text(&case.text, "trace", case.args.clone()))
        .transpose()?;
    let outs = outputs::run_text(&imported, "model.hlo.txt", case.args)?;
    outputs::check(&outs, reference.as_deref(), &case.arrays, rtol, atol_factor)?;
    let from_pb = hlo_proto_to_stablehlo(&file("model.hlo.pb")?).map_err(|e| e.to_string())?;
    same_translation(&from_pb, &imported)
}

/// The text with private function symbols renamed `@f0`, `@f1`, … in order of first
/// appearance (they end in computation ids, which HLO text does not carry).
fn normalize(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find('@') {
        out.push_str(&rest[..=k]);
        rest = &rest[k + 1..];
        let n = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let sym = &rest[..n];
        if sym == "main" || !out.contains("func") {
            out.push_str(sym);
        } else {
            let idx = names.iter().position(|s| s == sym).unwrap_or_else(|| {
                names.push(sym.to_string());
                names.len() - 1
            });
            out.push_str(&format!("f{idx}"));
        }
        rest = &rest[n..];
    }
    out.push_str(rest);
    out
}

/// Test 3's comparison: equal after [`normalize`], else the first differing line.
fn same_translation(from_pb: &str, from_text: &str) -> Result<(), String> {
    let (a, b) = (normalize(from_pb), normalize(from_text));
    if a == b {
        return Ok(());
    }
    let line = a
        .lines()
        .zip(b.lines())
        .position(|(x, y)| x != y)
        .unwrap_or(a.lines().count().min(b.lines().count()));
    Err(format!(
        "the .pb and the text translate differently at line {}:\n  pb:   {}\n  text: {}",
        line + 1,
        a.lines().nth(line).unwrap_or("<end>"),
        b.lines().nth(line).unwrap_or("<end>")
    ))
}

/// Test 3: `X[.opt].hlo.txt` and `X[.opt].pb` translate alike.
fn text_matches_proto(txt: &Path, pb: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(txt).map_err(|e| e.to_string())?;
    let bytes = std::fs::read(pb).map_err(|e| e.to_string())?;
    let a = hlo_proto_to_stablehlo(&bytes).map_err(|e| e.to_string())?;
    let b = hlo_text_to_stablehlo(&text).map_err(|e| e.to_string())?;
    same_translation(&a, &b)
}

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut trials =
        outputs::fixture_trials(&root, "hlo_text", outputs::INTERPRETER_GAPS, run_case);
    let texts = outputs::files_ending(&root.join("hlo"), ".hlo.txt");
    if texts.len() < 10 {
        trials.push(Trial::test("hlo_text/jax_texts_present", || {
            Err(Failed::from("fewer than 10 fixtures/hlo/*.hlo.txt"))
        }));
    }
    for (p, name) in texts {
        let q = p.clone();
        trials.push(Trial::test(format!("hlo_text/jax/{name}"), move || {
            outputs::run_jax_artifact(&q).map_err(Failed::from)
        }));
        let pb = p.with_file_name(name.replace(".hlo.txt", ".pb"));
        if pb.is_file() {
            trials.push(Trial::test(
                format!("hlo_text/same_as_pb/{name}"),
                move || text_matches_proto(&p, &pb).map_err(Failed::from),
            ));
        }
    }
    let hlo = root.join("hlo");
    trials.push(Trial::test("hlo_text/bad_inputs_name_line_col", || {
        bad_inputs().map_err(Failed::from)
    }));
    trials.push(Trial::test("hlo_text/truncations_never_panic", move || {
        truncations(&hlo).map_err(Failed::from)
    }));
    trials.push(Trial::test(
        "hlo_text/old_style_operands_and_forward_refs",
        || old_style().map_err(Failed::from),
    ));
    trials.push(Trial::test("hlo_text/routing_by_extension", || {
        routing().map_err(Failed::from)
    }));
    libtest_mimic::run(&args, trials).exit();
}

/// A valid module: line 5 is the one the bad cases change.
const BASE: &str = "HloModule m

ENTRY main {
  a = f32[2] parameter(0)
  ROOT b = f32[2] add(a, a)
}
";

/// `BASE` with line `line` (1-based) replaced.
fn with_line(line: usize, new: &str) -> String {
    let mut lines: Vec<&str> = BASE.lines().collect();
    lines[line - 1] = new;
    lines.join("\n") + "\n"
}

/// Test 4: each bad input's error (columns counted by hand in the comments).
fn bad_inputs() -> Result<(), String> {
    let self_call = "HloModule m

c {
  p = f32[] parameter(0)
  ROOT r = f32[] call(p), to_apply=c
}

ENTRY main {
  a = f32[] parameter(0)
  ROOT b = f32[] call(a), to_apply=c
}
";
    let cases: Vec<(String, &str)> =
        vec![
        // `ENTRY` at 2:1 (line 1 is now empty) instead of the header.
        (BASE.replacen("HloModule m\n", "", 1), "2:1: expected `HloModule`, found `ENTRY`"),
        // `add` starts at column 18 of `  ROOT b = f32[2 add(a, a)`.
        (with_line(5, "  ROOT b = f32[2 add(a, a)"), "5:18: expected `]`, found `add`"),
        // `f33` starts at column 7 of `  a = f33[2] parameter(0)`.
        (
            with_line(4, "  a = f33[2] parameter(0)"),
            "4:7: expected an element type (`f32`, `s32`, `pred`, …) or `(`, found `f33`",
        ),
        // `c` is at column 26.
        (
            with_line(5, "  ROOT b = f32[2] add(a, c)"),
            "5:26: expected an instruction of computation `main`, found `c`",
        ),
        // `b` (the instruction name) is at column 8.
        (
            with_line(5, "  ROOT b = f32[2] frobnicate(a, a)"),
            "5:8: computation main, instruction b (frobnicate): unsupported: opcode `frobnicate`",
        ),
        // `algorithm` starts at column 30.
        (
            with_line(5, "  ROOT b = f32[2] add(a, a), algorithm=dot_bf16_bf16_f32"),
            "5:30: unsupported: attribute `algorithm` on `add`",
        ),
        // The unterminated string opens at column 48.
        (
            with_line(5, "  ROOT b = f32[2] add(a, a), metadata={op_name=\"x}"),
            "5:48: expected a string closed by `\"`, found end of input",
        ),
        // The `}` at column 28 closes after 2 of 3 elements.
        (
            with_line(4, "  a = f32[3] constant({1, 2})").replace("f32[2]", "f32[3]"),
            "4:28: expected `,`, found `}`",
        ),
        // The layout starts at column 15.
        (
            with_line(4, "  a = f32[2,3]{0,0} parameter(0)"),
            "4:15: expected a layout that orders each of the 2 dimensions once, found `{0,0}`",
        ),
        // `{...}` starts at column 23.
        (
            with_line(4, "  a = f32[2] constant({...})"),
            "4:23: unsupported: a constant elided as `{...}`",
        ),
        // `b` is defined at column 8 and uses itself.
        (
            with_line(5, "  ROOT b = f32[2] add(a, b)"),
            "5:8: expected instructions that do not depend on themselves, found `b`",
        ),
        // Computation `c` is named at 3:1.
        (
            self_call.to_string(),
            "3:1: expected computations that do not call themselves, found `c`",
        ),
        // The text ends inside the computation: after `}` was removed, at 6:1.
        (BASE.replace("}\n", ""), "6:1: expected `}` or an instruction, found end of input"),
    ];
    // Limits that keep recursion bounded: 300 computations each calling the previous
    // (the 257th, `c256`, is the first too deep: its line is 3 + 5 × 256), and rank 65.
    let mut deep = String::from("HloModule deep\n\n");
    deep += "c0 {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n\n";
    for k in 1..300 {
        deep += &format!(
            "c{k} {{\n  p = f32[] parameter(0)\n  ROOT r = f32[] call(p), to_apply=c{}\n}}\n\n",
            k - 1
        );
    }
    deep += "ENTRY main {\n  a = f32[] parameter(0)\n  ROOT b = f32[] call(a), to_apply=c299\n}\n";
    let mut cases = cases;
    cases.push((deep, "1283:1: unsupported: calls nested deeper than 256"));
    let rank65 = format!(
        "HloModule r\n\nENTRY main {{\n  ROOT a = f32[{}] parameter(0)\n}}\n",
        ["1"; 65].join(",")
    );
    // `  ROOT a = f32[` is 15 columns, then 64 × `1,`: the 65th size starts at column 144.
    cases.push((rank65, "4:144: unsupported: arrays of rank above 64"));
    for (text, want) in cases {
        match hlo_text_to_stablehlo(&text) {
            Ok(_) => return Err(format!("accepted:\n{text}")),
            Err(e) if e.to_string().starts_with(want) => {}
            Err(e) => return Err(format!("for\n{text}\nwant `{want}`\ngot  `{e}`")),
        }
    }
    Ok(())
}

/// Test 4: cutting a valid optimized dump at every 97th byte gives `Ok` or `Err`, never
/// a panic.
fn truncations(dir: &Path) -> Result<(), String> {
    let path = dir.join("loops.opt.hlo.txt");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut errors = 0;
    for cut in (0..text.len()).step_by(97) {
        let Some(part) = text.get(..cut) else {
            continue;
        };
        let r = std::panic::catch_unwind(|| hlo_text_to_stablehlo(part).is_err())
            .map_err(|_| format!("panic on the first {cut} bytes"))?;
        errors += usize::from(r);
    }
    if errors == 0 {
        return Err("no truncation was an error".into());
    }
    hlo_text_to_stablehlo(&text).map_err(|e| e.to_string())?;
    Ok(())
}

/// Older XLA spellings: `%` names, signatures, operands printed with their shapes,
/// `/*index=…*/` comments, instructions used before they are defined, ignored hints.
/// m = p0 * p1 = [4, 10, 18] and r = 4 + 10 + 18 = 32, by hand.
fn old_style() -> Result<(), String> {
    let text = r#"HloModule old_style, entry_computation_layout={(f32[3]{0}, f32[3]{0})->(f32[3]{0}, f32[])}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p0: f32[3], p1: f32[3]) -> (f32[3], f32[]) {
  %p0 = f32[3]{0} parameter(0), metadata={op_name="p0" source_file="a.py" source_line=3}
  ROOT %t = (f32[3]{0}, /*index=1*/f32[]) tuple(f32[3]{0} %m, f32[] %r), sharding={{replicated}, {replicated}}
  %m = f32[3]{0} multiply(f32[3]{0} %p0, f32[3]{0} %p1), backend_config={"outer_dimension_partitions":[]}
  %p1 = f32[3]{0} parameter(1)
  %zero = f32[] constant(0)
  %r = f32[] reduce(f32[3]{0} %m, f32[] %zero), dimensions={0}, to_apply=%sum
}
"#;
    let stablehlo = hlo_text_to_stablehlo(text).map_err(|e| e.to_string())?;
    let p0 = Tensor::from_f32(&[3], &[1.0, 2.0, 3.0])?;
    let p1 = Tensor::from_f32(&[3], &[4.0, 5.0, 6.0])?;
    let outs = outputs::run_text(&stablehlo, "old_style", vec![p0, p1])?;
    let got: Vec<Vec<f32>> = outs
        .iter()
        .map(|t| t.as_f32().unwrap_or(&[]).to_vec())
        .collect();
    if got != vec![vec![4.0, 10.0, 18.0], vec![32.0]] {
        return Err(format!("got {got:?}"));
    }
    Ok(())
}

/// `.hlo`, `.hlo.txt` and `.txt` starting with `HloModule` are HLO text; another `.txt`
/// is StableHLO.
fn routing() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for name in ["a.hlo", "a.hlo.txt", "a.txt"] {
        let p = dir.path().join(name);
        std::fs::write(&p, BASE).map_err(|e| e.to_string())?;
        let s = neuronc::Source::read(&p, name).map_err(|e| format!("{name}: {e}"))?;
        if !s.text.starts_with("module @m") {
            return Err(format!("{name} was not imported: {}", s.text));
        }
    }
    let stablehlo =
        "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n";
    let p = dir.path().join("b.txt");
    std::fs::write(&p, stablehlo).map_err(|e| e.to_string())?;
    let s = neuronc::Source::read(&p, "b.txt").map_err(|e| e.to_string())?;
    if s.text != stablehlo {
        return Err("a StableHLO .txt was rewritten".into());
    }
    Ok(())
}
