//! Printer round trips over every fixture and the op corpus:
//! * pretty: `print(parse(print(parse(x)))) == print(parse(x))` (byte fixpoint), and the
//!   re-parsed module prints identically in generic form too (structural equality);
//! * generic: parsing the generic print gives the same module as the pretty print.

mod common;

use neuronc_ir::{parse_module, print_module, PrintOptions};

const PRETTY: PrintOptions = PrintOptions {
    generic: false,
    debug_locs: false,
};
const GENERIC: PrintOptions = PrintOptions {
    generic: true,
    debug_locs: false,
};

fn check(chunk: &common::Chunk) -> Result<(), String> {
    let m1 = parse_module(&chunk.text).map_err(|e| format!("parse: {e}"))?;
    let p1 = print_module(&m1, &PRETTY);
    let m2 = parse_module(&p1).map_err(|e| {
        let s = e.0.span.start as usize;
        let line = p1[..s.min(p1.len())].lines().count();
        let text = p1.lines().nth(line.saturating_sub(1)).unwrap_or("");
        format!("reparse of pretty print: {e}\n  line {line}: {text}")
    })?;
    let p2 = print_module(&m2, &PRETTY);
    if p1 != p2 {
        let (a, b) = p1
            .lines()
            .zip(p2.lines())
            .find(|(a, b)| a != b)
            .unwrap_or(("", ""));
        return Err(format!("pretty print is not a fixpoint:\n  {a}\n  {b}"));
    }
    let g1 = print_module(&m1, &GENERIC);
    let m3 = parse_module(&g1).map_err(|e| format!("reparse of generic print: {e}"))?;
    let g3 = print_module(&m3, &GENERIC);
    let g2 = print_module(&m2, &GENERIC);
    if g1 != g3 || g1 != g2 {
        return Err("generic print differs between round trips".into());
    }
    if print_module(&m3, &PRETTY) != p1 {
        return Err("generic and pretty forms parse to different modules".into());
    }
    Ok(())
}

#[test]
fn pretty_and_generic_round_trip() {
    let mut failures = Vec::new();
    let chunks = common::chunks();
    let mut n = 0;
    for c in chunks.iter().filter(|c| c.is_valid_input()) {
        n += 1;
        if let Err(e) = check(c) {
            failures.push(format!("{}: {e}", c.name()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
