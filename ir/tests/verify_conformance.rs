//! Runs the verifier over StableHLO's own verifier test files (e.g.
//! `stablehlo/tests/ops_stablehlo.mlir`, split at `// -----`, with `expected-error`
//! annotations) and prints acceptance/rejection rates. Skipped unless the environment
//! variable `STABLEHLO_VERIFY_TESTS` lists such files (colon-separated); the files are not
//! part of this repository. `tools/stablehlo_conformance.sh` is the front end.
//!
//! Cases (positive: no `expected-error`; negative: with one) count only when static-shaped
//! (no `?`, no `!quant`, no bounded-dynamism or sparse encodings, no unranked tensors);
//! the others are counted and reported as skipped, as the IR holds static dense shapes
//! only. A negative case rejected by the parser counts as rejected, and is reported
//! separately. A parser or verifier panic is a crash: counted, reported, and the test
//! fails. Directories in the list stand for their `*.mlir` files (e.g. the JAX-generated
//! `stablehlo/testdata`, all positive).
//!
//! Files without `// -----` (the round-trip and printer tests) hold one test per top-level
//! `func.func`; they are split into one case per function, each with the file's preamble
//! (attribute aliases) and the functions it refers to by symbol.

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
    skipped_pos: usize,
    skipped_neg: usize,
    crashes: usize,
}

/// Whether the code (not the comments) of a chunk is free of dynamic and quantized types
/// and of sparse tensor encodings (an MLIR extension outside the StableHLO spec).
fn is_static(chunk: &str) -> bool {
    let code = || chunk.lines().map(|l| l.split("//").next().unwrap_or(""));
    let sparse: Vec<String> = code()
        .filter_map(|l| {
            let (name, rhs) = l.split_once('=')?;
            let name = name.trim().strip_prefix('#')?;
            rhs.trim_start()
                .starts_with("#sparse_tensor.encoding")
                .then(|| format!(", #{name}>"))
        })
        .collect();
    code().all(|code| {
        !(code.contains('?')
            || code.contains("!quant")
            || code.contains("bounds")
            || code.contains("tensor<*")
            || sparse.iter().any(|s| code.contains(s.as_str())))
    })
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

/// The first function line, or the module line when there is no function.
fn case_name(chunk: &str) -> &str {
    let f = first_func(chunk);
    if f.is_empty() {
        chunk
            .lines()
            .find(|l| l.contains("module"))
            .unwrap_or("")
            .trim()
    } else {
        f
    }
}

fn first_func(chunk: &str) -> &str {
    chunk
        .lines()
        .find(|l| l.contains("func.func"))
        .unwrap_or("")
        .trim()
}

/// What happened to one chunk.
enum Outcome {
    Unparsed(String),
    Accepted,
    Rejected(Vec<neuronc_ir::Diagnostic>),
}

/// Parses and verifies one chunk; `None` if either panicked.
fn check(chunk: &str) -> Option<Outcome> {
    std::panic::catch_unwind(|| match parse_module(chunk) {
        Err(e) => Outcome::Unparsed(e.to_string()),
        Ok(m) => match verify_module(&m) {
            Ok(()) => Outcome::Accepted,
            Err(e) => Outcome::Rejected(e.0),
        },
    })
    .ok()
}

fn tally_positive(t: &mut Tally, chunk: &str, outcome: Outcome, verbose: bool) {
    t.pos += 1;
    match outcome {
        Outcome::Accepted => t.pos_ok += 1,
        Outcome::Unparsed(e) => {
            t.pos_unparsed += 1;
            if verbose {
                println!("POS-UNPARSED {}: {e}", case_name(chunk));
            }
        }
        Outcome::Rejected(d) => {
            if verbose {
                println!("POS-REJECTED {}: {}", case_name(chunk), d[0].message);
            }
        }
    }
}

fn tally_negative(t: &mut Tally, chunk: &str, outcome: Outcome, verbose: bool) {
    t.neg += 1;
    match outcome {
        Outcome::Unparsed(e) => {
            t.neg_unparsed += 1;
            if verbose {
                println!("NEG-UNPARSED {}: {e}", first_func(chunk));
            }
        }
        Outcome::Rejected(d) => {
            t.neg_rejected += 1;
            let want = expected_lines(chunk);
            if d.iter()
                .any(|d| want.contains(&line_of(chunk, d.span.start as usize)))
            {
                t.neg_at_line += 1;
            } else if verbose {
                println!("NEG-OTHER-LINE {}: {}", first_func(chunk), d[0].message);
            }
        }
        Outcome::Accepted => {
            if verbose {
                let want = chunk
                    .lines()
                    .find(|l| l.contains("expected-error"))
                    .unwrap_or("");
                println!("NEG-ACCEPTED {}: {}", first_func(chunk), want.trim());
            }
        }
    }
}

/// Splits a whole-file test into one case per top-level `func.func` (see the module doc).
fn per_function_cases(src: &str) -> Vec<String> {
    let mut starts: Vec<usize> = Vec::new();
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        if line.starts_with("func.func") {
            starts.push(pos);
        }
        pos += line.len();
    }
    if starts.len() < 2 || src.lines().any(|l| l.starts_with("module")) {
        return vec![src.to_string()];
    }
    let preamble = &src[..starts[0]];
    let mut ends = starts[1..].to_vec();
    ends.push(src.len());
    let funcs: Vec<(&str, &str)> = starts
        .iter()
        .zip(&ends)
        .map(|(&a, &b)| {
            let text = &src[a..b];
            let name = text
                .split('@')
                .nth(1)
                .map_or("", |r| r.split(['(', ' ']).next().unwrap_or(""));
            (name, text)
        })
        .collect();
    funcs
        .iter()
        .map(|(name, text)| {
            let mut case = preamble.to_string();
            for (other, other_text) in &funcs {
                if other != name && !other.is_empty() && refers_to(text, other) {
                    case.push_str(other_text);
                }
            }
            case.push_str(text);
            case
        })
        .collect()
}

/// Whether the code (not the comments) of `text` mentions the symbol `@name` (not as a
/// prefix of a longer name).
fn refers_to(text: &str, name: &str) -> bool {
    let pat = format!("@{name}");
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .any(|code| {
            code.match_indices(&pat).any(|(i, _)| {
                !code[i + pat.len()..]
                    .starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            })
        })
}

fn run_file(path: &str, t: &mut Tally, verbose: bool) {
    let Ok(src) = std::fs::read_to_string(path) else {
        eprintln!("cannot read {path}");
        return;
    };
    let chunks: Vec<String> = match split_input(&src).as_slice() {
        [(_, whole)] => per_function_cases(whole),
        parts => parts.iter().map(|(_, c)| c.to_string()).collect(),
    };
    for chunk in &chunks {
        let chunk = chunk.as_str();
        let negative = chunk.contains("expected-error");
        if !is_static(chunk) {
            if negative {
                t.skipped_neg += 1;
            } else {
                t.skipped_pos += 1;
            }
            continue;
        }
        let Some(outcome) = check(chunk) else {
            t.crashes += 1;
            println!("CRASH {path}: {}", first_func(chunk));
            continue;
        };
        if negative {
            tally_negative(t, chunk, outcome, verbose);
        } else {
            tally_positive(t, chunk, outcome, verbose);
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

fn report(t: &Tally) {
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
    println!("expected-error static cases: {} ({} rejected by the parser); verifier rejected {} = {:.1}% of parsed, {:.1}% incl. parser rejections", t.neg, t.neg_unparsed, t.neg_rejected, pct(t.neg_rejected, parsed_neg), pct(t.neg_rejected + t.neg_unparsed, t.neg));
    println!("expected-error cases rejected with a diagnostic on the annotated line: {} = {:.1}% of the verifier's rejections", t.neg_at_line, pct(t.neg_at_line, t.neg_rejected));
    println!(
        "skipped dynamic/quantized/sparse cases: {} positive, {} expected-error",
        t.skipped_pos, t.skipped_neg
    );
    println!("crashes: {}", t.crashes);
}

#[test]
fn stablehlo_verifier_conformance() {
    let Ok(files) = std::env::var("STABLEHLO_VERIFY_TESTS") else {
        eprintln!("STABLEHLO_VERIFY_TESTS not set; skipping");
        return;
    };
    let verbose = std::env::var("STABLEHLO_VERIFY_VERBOSE").is_ok_and(|v| !v.is_empty());
    let per_file = std::env::var("STABLEHLO_VERIFY_PER_FILE").is_ok_and(|v| !v.is_empty());
    // Panics are caught and counted; keep their messages off the report.
    std::panic::set_hook(Box::new(|_| {}));
    let mut total = Tally::default();
    for f in expand_dirs(&files) {
        let f = f.as_str();
        let mut t = Tally::default();
        run_file(f, &mut t, verbose);
        if per_file {
            println!(
                "file {}: positives {}/{}, expected-error rejected {}/{}, skipped {}",
                f.rsplit('/').next().unwrap_or(f),
                t.pos_ok,
                t.pos,
                t.neg_rejected + t.neg_unparsed,
                t.neg,
                t.skipped_pos + t.skipped_neg
            );
        }
        total.add(&t);
    }
    let _ = std::panic::take_hook();
    report(&total);
    assert_eq!(total.crashes, 0, "the parser or verifier panicked");
}

/// The colon-separated list with each directory replaced by its `*.mlir` files, sorted.
fn expand_dirs(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    for f in list.split(':').filter(|f| !f.is_empty()) {
        match std::fs::read_dir(f) {
            Ok(rd) => {
                let mut inner: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .map(|e| e.path().to_string_lossy().into_owned())
                    .filter(|p| p.ends_with(".mlir"))
                    .collect();
                inner.sort();
                out.extend(inner);
            }
            Err(_) => out.push(f.to_string()),
        }
    }
    out
}

impl Tally {
    fn add(&mut self, o: &Tally) {
        self.pos += o.pos;
        self.pos_ok += o.pos_ok;
        self.pos_unparsed += o.pos_unparsed;
        self.neg += o.neg;
        self.neg_rejected += o.neg_rejected;
        self.neg_unparsed += o.neg_unparsed;
        self.neg_at_line += o.neg_at_line;
        self.skipped_pos += o.skipped_pos;
        self.skipped_neg += o.skipped_neg;
        self.crashes += o.crashes;
    }
}
