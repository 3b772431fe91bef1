//! Float printing round-trips exactly: every f16 and bf16 bit pattern and a sweep of f32
//! and f64 patterns print as decimal (NaN/Inf as hex) and read back to the same bits.
//! Also checks the literal spellings MLIR requires (a '.' in every decimal literal).

use neuronc_ir::{parse_module, print_module, Attr, PrintOptions};

/// Round-trips `array<ty: lits...>` through print and parse; returns the printed module.
fn round_trip(ty: &str, lits: &[String]) -> (Vec<f64>, Vec<f64>, String) {
    let src = format!(
        "func.func @f() attributes {{a = array<{ty}: {}>}} {{\n  return\n}}\n",
        lits.join(", ")
    );
    let m1 = parse_module(&src).unwrap();
    let p = print_module(&m1, &PrintOptions::default());
    let m2 = parse_module(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
    let get = |m: &neuronc_ir::Module| match m.funcs[0].attrs.get("a") {
        Some(Attr::FloatArray(_, v)) => v.clone(),
        other => panic!("{other:?}"),
    };
    (get(&m1), get(&m2), p)
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x.is_nan() && y.is_nan()) || x.to_bits() == y.to_bits())
}

#[test]
fn every_f16_and_bf16_pattern_round_trips() {
    for ty in ["f16", "bf16"] {
        for chunk in (0u32..65536).collect::<Vec<_>>().chunks(4096) {
            let lits: Vec<String> = chunk.iter().map(|b| format!("0x{b:04X}")).collect();
            let (a, b, _) = round_trip(ty, &lits);
            assert!(same_bits(&a, &b), "{ty} round trip changed a value");
        }
    }
}

#[test]
fn f32_and_f64_sweeps_round_trip() {
    let mut x = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let f32s: Vec<String> = (0..20000)
        .map(|_| format!("0x{:08X}", next() as u32))
        .collect();
    let (a, b, _) = round_trip("f32", &f32s);
    assert!(same_bits(&a, &b));
    let f64s: Vec<String> = (0..20000).map(|_| format!("0x{:016X}", next())).collect();
    let (a, b, _) = round_trip("f64", &f64s);
    assert!(same_bits(&a, &b));
}

#[test]
fn literal_spellings() {
    let lits: Vec<String> = [
        "1.0",
        "0.1",
        "1.0e-7",
        "3.0e+10",
        "-2.5",
        "0x7FC00000",
        "0xFF800000",
        "7",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (_, _, p) = round_trip("f32", &lits);
    assert!(
        p.contains(
            "array<f32: 1.0, 0.1, 1.0e-7, 30000000000.0, -2.5, 0x7FC00000, 0xFF800000, 7.0>"
        ),
        "{p}"
    );
}

#[test]
fn dense_constants_print_as_splat_literal_or_hex() {
    let src = "func.func @f() -> (tensor<3xf32>, tensor<2xf32>, tensor<20xi8>) {\n  %0 = stablehlo.constant dense<[2.0, 2.0, 2.0]> : tensor<3xf32>\n  %1 = stablehlo.constant dense<[0.5, 0x7FC00000]> : tensor<2xf32>\n  %2 = stablehlo.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]> : tensor<20xi8>\n  return %0, %1, %2 : tensor<3xf32>, tensor<2xf32>, tensor<20xi8>\n}\n";
    let p = print_module(&parse_module(src).unwrap(), &PrintOptions::default());
    assert!(
        p.contains("stablehlo.constant dense<2.0> : tensor<3xf32>"),
        "{p}"
    );
    assert!(
        p.contains("stablehlo.constant dense<[0.5, 0x7FC00000]> : tensor<2xf32>"),
        "{p}"
    );
    assert!(
        p.contains("stablehlo.constant dense<\"0x000102030405060708090A0B0C0D0E0F10111213\"> : tensor<20xi8>"),
        "{p}"
    );
}
