//! Runs the verifier over StableHLO's own verifier test files (e.g.
//! `stablehlo/tests/ops_stablehlo.mlir`, split at `// -----`, with `expected-error`
//! annotations) and prints acceptance/rejection rates. Skipped unless the environment
//! variable `STABLEHLO_VERIFY_TESTS` lists such files (colon-separated); the files are not
//! part of this repository. `tools/stablehlo_conformance.sh` is the front end.
//!
//! Positive cases (no `expected-error`) count only when static-shaped (no `?`, no
//! `!quant`, no bounded-dynamism encodings); negative cases count when they parse (a
//! parse failure is reported separately, as the parser may reject some on its own).

use neuronc_ir::parse::split_input;
use neuronc_ir::{parse_module, verify_module};

#[derive(Default)]
struct Tally {
    pos: usize,
    pos_ok: usize,
    pos_unparsed: usize,
    neg: usize,
    neg_rejected: usize,
    neg_unparsed: usize,
    neg_at_line: usize,
    skipped: usize,
}

fn is_static(chunk: &str) -> bool {
    !(chunk.contains('?')
        || chunk.contains("!quant")
        || chunk.contains("bounds")
        || chunk.contains("tensor<*"))
}

/// 0-based lines that `expected-error@+N` / `@-N` / bare annotations point at.
fn expected_lines(chunk: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (i, l) in chunk.lines().enumerate() {
        let Some(p) = l.find("expected-error") else {
            continue;
        };
        let rest = l[p + "expected-error".len()..]
            .trim_start_matches("-re")
            .trim_start();
        let off: i64 = match rest.strip_prefix('@') {
            Some(r) => {
                let r = r.trim_start();
                let digits: String = r
                    .chars()
                    .skip(1)
                    .take_while(|c| c.is_ascii_digit())
                    .collect();
                let n: i64 = digits.parse().unwrap_or(0);
                if r.starts_with('-') {
                    -n
                } else {
                    n
                }
            }
            None => 0,
        };
        if let Ok(t) = usize::try_from(i as i64 + off) {
            out.push(t);
        }
    }
    out
}

fn line_of(chunk: &str, byte: usize) -> usize {
    chunk.as_bytes()[..byte.min(chunk.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

fn first_func(chunk: &str) -> &str {
    chunk
        .lines()
        .find(|l| l.contains("func.func"))
        .unwrap_or("")
        .trim()
}

fn run_file(path: &str, t: &mut Tally, verbose: bool) {
    let Ok(src) = std::fs::read_to_string(path) else {
        eprintln!("cannot read {path}");
        return;
    };
    for (_, chunk) in split_input(&src) {
        let negative = chunk.contains("expected-error");
        if !negative && !is_static(chunk) {
            t.skipped += 1;
            continue;
        }
        let parsed = parse_module(chunk);
        match (negative, parsed) {
            (false, Err(e)) => {
                t.pos += 1;
                t.pos_unparsed += 1;
                if verbose {
                    println!("POS-UNPARSED {}: {e}", first_func(chunk));
                }
            }
            (false, Ok(m)) => {
                t.pos += 1;
                match verify_module(&m) {
                    Ok(()) => t.pos_ok += 1,
                    Err(e) => {
                        if verbose {
                            println!("POS-REJECTED {}: {}", first_func(chunk), e.0[0].message);
                        }
                    }
                }
            }
            (true, Err(e)) => {
                t.neg += 1;
                t.neg_unparsed += 1;
                if verbose {
                    println!("NEG-UNPARSED {}: {e}", first_func(chunk));
                }
            }
            (true, Ok(m)) => {
                t.neg += 1;
                if let Err(e) = verify_module(&m) {
                    t.neg_rejected += 1;
                    let want = expected_lines(chunk);
                    if e.0
                        .iter()
                        .any(|d| want.contains(&line_of(chunk, d.span.start as usize)))
                    {
                        t.neg_at_line += 1;
                    } else if verbose {
                        println!("NEG-OTHER-LINE {}: {}", first_func(chunk), e.0[0].message);
                    }
                } else if verbose {
                    let want = chunk
                        .lines()
                        .find(|l| l.contains("expected-error"))
                        .unwrap_or("");
                    println!("NEG-ACCEPTED {}: {}", first_func(chunk), want.trim());
                }
            }
        }
    }
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

#[test]
fn stablehlo_verifier_conformance() {
    let Ok(files) = std::env::var("STABLEHLO_VERIFY_TESTS") else {
        eprintln!("STABLEHLO_VERIFY_TESTS not set; skipping");
        return;
    };
    let verbose = std::env::var("STABLEHLO_VERIFY_VERBOSE").is_ok();
    let mut t = Tally::default();
    for f in files.split(':').filter(|f| !f.is_empty()) {
        run_file(f, &mut t, verbose);
    }
    let parsed_pos = t.pos - t.pos_unparsed;
    let parsed_neg = t.neg - t.neg_unparsed;
    println!(
        "positive static cases: {} ({} unparsed); accepted {} = {:.1}% of all, {:.1}% of parsed",
        t.pos,
        t.pos_unparsed,
        t.pos_ok,
        pct(t.pos_ok, t.pos),
        pct(t.pos_ok, parsed_pos)
    );
    println!("expected-error cases: {} ({} rejected by the parser); verifier rejected {} = {:.1}% of parsed, {:.1}% incl. parser rejections", t.neg, t.neg_unparsed, t.neg_rejected, pct(t.neg_rejected, parsed_neg), pct(t.neg_rejected + t.neg_unparsed, t.neg));
    println!("expected-error cases rejected with a diagnostic on the annotated line: {} = {:.1}% of the verifier's rejections", t.neg_at_line, pct(t.neg_at_line, t.neg_rejected));
    println!("skipped dynamic/quantized positive cases: {}", t.skipped);
}
