//! Robustness: random byte-level mutations of real inputs (and random token soup) never
//! make the parser or the printer panic, hang or blow up; whatever parses also prints
//! and re-parses.

mod common;

use neuronc_ir::{parse_module, print_module, verify_module, PrintOptions};
use proptest::prelude::*;

/// Small seeds: the corpus chunks and the smaller fixtures.
fn seeds() -> &'static [String] {
    static SEEDS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    SEEDS.get_or_init(|| {
        common::chunks()
            .into_iter()
            .map(|c| c.text)
            .filter(|t| t.len() < 40_000)
            .collect()
    })
}

const TOKENS: &[&str] = &[
    "[",
    "]",
    "<",
    ">",
    "(",
    ")",
    "{",
    "}",
    ",",
    ":",
    "=",
    "->",
    "%0",
    "%1#1",
    "%arg0",
    "@f",
    "tensor<",
    "tensor<?x",
    "x",
    "dense<",
    "\"0x00\"",
    "\"",
    "#stablehlo<",
    "#loc1",
    "loc(",
    "^bb0(",
    "stablehlo.reduce(",
    "-",
    "0x7FC00000",
    "1.5e+3",
    "99999999999999999999",
    "complex<",
    "tuple<",
    "!stablehlo.token",
    "func.func",
    "module",
    "}) : (",
    "\n",
];

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, usize),
    Replace(usize, u8),
    Duplicate(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Edit::Insert(a, t)),
        (any::<usize>(), any::<u8>()).prop_map(|(a, b)| Edit::Replace(a, b)),
        (any::<usize>(), 1usize..200).prop_map(|(a, n)| Edit::Duplicate(a, n)),
    ]
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut b = src.as_bytes().to_vec();
    for e in edits {
        let len = b.len().max(1);
        match *e {
            Edit::Delete(a, n) => {
                let a = a % len;
                let end = (a + n).min(b.len());
                if a < end {
                    b.drain(a..end);
                }
            }
            Edit::Insert(a, t) => {
                let a = a % (b.len() + 1);
                b.splice(a..a, TOKENS[t].bytes());
            }
            Edit::Replace(a, v) => {
                if !b.is_empty() {
                    let i = a % b.len();
                    b[i] = v;
                }
            }
            Edit::Duplicate(a, n) => {
                let a = a % len;
                let end = (a + n).min(b.len());
                if a < end {
                    let piece = b[a..end].to_vec();
                    b.splice(a..a, piece);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn exercise(text: &str) {
    if let Ok(m) = parse_module(text) {
        // Printing must never panic; like MLIR, reading back is promised for verified IR
        // only (a terminator in mid-block, say, prints as text that swallows the next op).
        let verified = verify_module(&m).is_ok();
        for generic in [false, true] {
            let p = print_module(
                &m,
                &PrintOptions {
                    generic,
                    debug_locs: true,
                },
            );
            if verified {
                let back = parse_module(&p)
                    .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{p}"));
                if let Err(e) = verify_module(&back) {
                    panic!("printed text no longer verifies: {e}\n{p}");
                }
            }
        }
    }
}

fn fuzz_cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400)
}

proptest! {
    // 400 cases by default; `PROPTEST_CASES=N` runs a longer local fuzzing session.
    #![proptest_config(ProptestConfig { cases: fuzz_cases(), ..ProptestConfig::default() })]

    #[test]
    fn mutated_real_inputs_never_panic(seed in any::<prop::sample::Index>(), edits in prop::collection::vec(edit(), 1..8)) {
        let seeds = seeds();
        let src = &seeds[seed.index(seeds.len())];
        exercise(&apply(src, &edits));
    }

    #[test]
    fn token_soup_never_panics(toks in prop::collection::vec(0..TOKENS.len(), 0..200)) {
        let text: String = toks.iter().map(|&t| TOKENS[t]).collect::<Vec<_>>().join(" ");
        exercise(&text);
        exercise(&format!("func.func @f() {{\n{text}\n}}"));
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        exercise(&String::from_utf8_lossy(&bytes));
    }
}
