//! Helpers shared by the `verify_*` tests: parse MLIR text, verify it, and compare the
//! diagnostics with expected message fragments.
#![allow(dead_code)]

use neuronc_ir::{parse_module, verify_module};

/// Every diagnostic as `message [note; note]`.
pub fn diagnostics(src: &str) -> Vec<String> {
    let m = parse_module(src).unwrap_or_else(|e| panic!("test input does not parse: {e}\n{src}"));
    match verify_module(&m) {
        Ok(()) => Vec::new(),
        Err(e) => {
            e.0.iter()
                .map(|d| {
                    let notes: Vec<&str> = d.notes.iter().map(|(_, n)| n.as_str()).collect();
                    format!("{} [{}]", d.message, notes.join("; "))
                })
                .collect()
        }
    }
}

/// Asserts that `src` verifies.
#[track_caller]
pub fn ok(src: &str) {
    let d = diagnostics(src);
    assert!(d.is_empty(), "expected no errors, got {d:#?}\n{src}");
}

/// Asserts exactly one diagnostic per fragment, each containing its fragment.
#[track_caller]
pub fn fails(src: &str, fragments: &[&str]) {
    let d = diagnostics(src);
    assert_eq!(
        d.len(),
        fragments.len(),
        "expected {} errors, got {d:#?}\n{src}",
        fragments.len()
    );
    for f in fragments {
        assert!(
            d.iter().any(|m| m.contains(f)),
            "no error contains {f:?}: {d:#?}\n{src}"
        );
    }
}

/// Wraps `body` (ending with a `func.return`) into `func.func @main(args) -> results`.
pub fn func(args: &str, results: &str, body: &str) -> String {
    format!("func.func @main({args}) -> ({results}) {{\n{body}\n}}\n")
}
