//! Rules of the contractions and linear algebra ops: `dot_general`, `dot`, `convolution`
//! and `dynamic_conv` (its padding is an operand: checked against a defining constant,
//! else only its shape and the non-spatial result dimensions are), `cholesky`,
//! `triangular_solve`, `fft`.
//!
//! Invariants: result shapes come from [`super::shape::dot_general`] and
//! [`super::shape::convolution`]; result *element* types of `dot_general`/`convolution`
//! are not forced to equal the operands' (jax and XLA emit mixed-precision contractions
//! with a wider accumulator type, which StableHLO's own verifier accepts).
//! `dot_general` and `dot` also accept lhs and rhs of different element types (the
//! specification's C13 is not enforced by StableHLO's verifier, and jax emits e.g.
//! `f8E4M3FN x f8E5M2 -> f32` for fp8 training); `convolution` still requires equal ones
//! (C27), as StableHLO's verifier does. The result type governs the accumulation.

use super::cx::{opaque_field, tensor_str, OpV};
use super::shape::{self, ConvWindow};
use crate::attr::Attr;
use crate::ops::OpKind;
use crate::types::ElemType;

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        DotGeneral => dot_general(v),
        Dot => dot(v),
        Convolution | DynamicConv => convolution(v),
        Cholesky => cholesky(v),
        TriangularSolve => triangular_solve(v),
        Fft => fft(v),
        _ => None,
    };
}

/// `precision_config`, when present, holds 0 or 2 precision enums (C11 / C24).
fn precision_config(v: &mut OpV, c: &str) {
    match v.attr("precision_config") {
        None => {}
        Some(Attr::Array(items)) => {
            let ok = items
                .iter()
                .all(|a| matches!(a, Attr::Enum(e) if e.kind == crate::EnumKind::Precision));
            if !ok || items.len() > 2 {
                v.err(
                    c,
                    format!(
                        "expects precision_config to hold at most 2 precision values, but got {}",
                        items.len()
                    ),
                );
            }
        }
        Some(Attr::Opaque(_)) => {}
        Some(_) => v.err(
            c,
            "expects precision_config to be an array of precision values",
        ),
    }
}

fn same_elem(v: &mut OpV, a: ElemType, b: ElemType, c: &str) {
    if a != b {
        v.err(
            c,
            format!("requires lhs and rhs to have the same element type, but got {a} and {b}"),
        );
    }
}

fn dot_general(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    let dd = match v.attr("dot_dimension_numbers") {
        Some(Attr::DotDims(d)) => d,
        _ => {
            v.err(
                "",
                "requires attribute 'dot_dimension_numbers' (#stablehlo.dot<...>)",
            );
            return None;
        }
    };
    precision_config(v, "C11");
    dot_algorithm(v);
    match shape::dot_general(&a.shape, &b.shape, dd) {
        Ok(s) => v.expect_result(
            0,
            r.elem,
            &s,
            "C12",
            "batch dimensions, then lhs and rhs free dimensions",
        ),
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

/// C21-C24: a dot algorithm needs DEFAULT precision and positive counts.
fn dot_algorithm(v: &mut OpV) {
    let Some(Attr::Opaque(text)) = v.attr("algorithm") else {
        return;
    };
    let non_default = match v.attr("precision_config") {
        Some(Attr::Array(items)) => items
            .iter()
            .any(|a| !matches!(a, Attr::Enum(e) if e.value == "DEFAULT")),
        _ => false,
    };
    if non_default {
        v.err(
            "C21",
            "must specify DEFAULT precision config when algorithm is set",
        );
    }
    let mut counts = [0i64; 3];
    for (i, (key, c)) in [
        ("lhs_component_count", "C22"),
        ("rhs_component_count", "C23"),
        ("num_primitive_operations", "C24"),
    ]
    .into_iter()
    .enumerate()
    {
        let n = opaque_field(text, key).and_then(|x| x.parse::<i64>().ok());
        if n.is_some_and(|n| n <= 0) {
            v.err(
                c,
                format!(
                    "expects a positive {key} in the dot algorithm, but got {}",
                    n.unwrap_or(0)
                ),
            );
            return;
        }
        counts[i] = n.unwrap_or(1);
    }
    let field = |k| opaque_field(text, k).unwrap_or("");
    let (lhs, rhs, acc) = (
        field("lhs_precision_type"),
        field("rhs_precision_type"),
        field("accumulation_type"),
    );
    let imprecise = field("allow_imprecise_accumulation") == "true";
    if !known_dot_algorithm(lhs, rhs, acc, counts, imprecise) {
        v.err(
            "",
            format!("dot algorithm not known to be supported on any hardware: {{lhs: {lhs}, rhs: {rhs}, accum: {acc}, components: {}/{}, primitive_ops: {}, imprecise: {imprecise}}}", counts[0], counts[1], counts[2]),
        );
    }
}

/// The dot algorithms StableHLO knows some hardware to support (I8-I10 leave the set to
/// the implementation; this is StableHLO's own list): single-component operands, and
/// either any 8-bit float pair accumulating in f32 in one operation (the only case that
/// may allow imprecise accumulation), or one of a fixed set of
/// (lhs, rhs, accumulation, primitive operations) combinations.
fn known_dot_algorithm(
    lhs: &str,
    rhs: &str,
    acc: &str,
    [lhs_components, rhs_components, ops]: [i64; 3],
    imprecise: bool,
) -> bool {
    if lhs_components != 1 || rhs_components != 1 {
        return false;
    }
    let f8 = |t: &str| {
        matches!(
            t,
            "f8E3M4"
                | "f8E4M3"
                | "f8E4M3FN"
                | "f8E5M2"
                | "f8E4M3FNUZ"
                | "f8E4M3B11FNUZ"
                | "f8E5M2FNUZ"
        )
    };
    if f8(lhs) && f8(rhs) && acc == "f32" && ops == 1 {
        return true;
    }
    if imprecise {
        return false;
    }
    const KNOWN: &[(&str, &str, &str, i64)] = &[
        ("f16", "f16", "f16", 1),
        ("f16", "f16", "f32", 1),
        ("bf16", "bf16", "bf16", 1),
        ("bf16", "bf16", "f32", 1),
        ("bf16", "bf16", "f32", 3),
        ("bf16", "bf16", "f32", 6),
        ("bf16", "bf16", "f32", 9),
        ("tf32", "tf32", "f32", 1),
        ("tf32", "tf32", "f32", 3),
        ("f32", "f32", "f32", 1),
        ("f64", "f64", "f64", 1),
    ];
    KNOWN.contains(&(lhs, rhs, acc, ops))
}

fn dot(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    precision_config(v, "");
    let ok_rank = |n: usize| n == 1 || n == 2;
    if !ok_rank(a.rank()) || !ok_rank(b.rank()) {
        v.err(
            "",
            format!(
                "expects operands of rank 1 or 2, but got {} and {}",
                tensor_str(a),
                tensor_str(b)
            ),
        );
        return None;
    }
    let (k1, k2) = (a.shape[a.rank() - 1], b.shape[0]);
    if k1 != k2 {
        v.err("", format!("expects the last dimension of lhs ({k1}) to equal the first dimension of rhs ({k2})"));
        return None;
    }
    let mut s = a.shape[..a.rank() - 1].to_vec();
    s.extend_from_slice(&b.shape[1..]);
    v.expect_result(
        0,
        r.elem,
        &s,
        "",
        "lhs without its last dimension, then rhs without its first",
    )
}

/// Reads the window attributes of a convolution, filling spec defaults for absent ones.
fn conv_window(v: &mut OpV, s: usize) -> Option<ConvWindow> {
    let ones = vec![1i64; s];
    let strides = v
        .opt_i64s("window_strides")?
        .unwrap_or_else(|| ones.clone());
    let lhs_dilation = v.opt_i64s("lhs_dilation")?.unwrap_or_else(|| ones.clone());
    let rhs_dilation = v.opt_i64s("rhs_dilation")?.unwrap_or(ones);
    let padding = match v.opt_matrix("padding")? {
        None => vec![(0, 0); s],
        Some((0, 0, _)) if s == 0 => Vec::new(),
        Some((rows, 2, vals)) => (0..rows).map(|i| (vals[2 * i], vals[2 * i + 1])).collect(),
        Some((rows, cols, _)) => {
            v.err(
                "C4",
                format!("expects padding of shape [{s}, 2], but got [{rows}, {cols}]"),
            );
            return None;
        }
    };
    Some(ConvWindow {
        strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count: v.int_or("feature_group_count", 1)?,
        batch_group_count: v.int_or("batch_group_count", 1)?,
    })
}

fn convolution(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    let cd = match v.attr("dimension_numbers") {
        Some(Attr::ConvDims(d)) => d,
        _ => {
            v.err(
                "",
                "requires attribute 'dimension_numbers' (#stablehlo.conv<...>)",
            );
            return None;
        }
    };
    let s = a.rank().saturating_sub(2);
    let mut w = conv_window(v, s)?;
    let mut padding_known = true;
    if v.op.kind == OpKind::DynamicConv {
        match dynamic_padding(v, s)? {
            Some(p) => w.padding = p,
            None => padding_known = false,
        }
    }
    if let Some(rev) = v.attr("window_reversal") {
        let n = match rev {
            Attr::BoolArray(b) => Some(b.len()),
            Attr::Elements(e) => Some(e.len as usize),
            _ => None,
        };
        if n.is_some_and(|n| n != s) {
            v.err(
                "C9",
                format!(
                    "expects window_reversal to have size {s}, but it has size {}",
                    n.unwrap_or(0)
                ),
            );
        }
    }
    precision_config(v, "C24");
    same_elem(v, a.elem, b.elem, "C27");
    if r.rank() != a.rank() {
        v.err(
            "C26",
            format!(
                "expects a result of rank {}, but got {}",
                a.rank(),
                tensor_str(r)
            ),
        );
        return None;
    }
    match shape::convolution(&a.shape, &b.shape, cd, &w) {
        Ok(mut sh) => {
            if !padding_known {
                // Spatial sizes depend on the run-time padding: take the result's.
                for &d in &cd.output_spatial {
                    if let (Some(x), Some(&y)) = (sh.get_mut(d as usize), r.shape.get(d as usize)) {
                        *x = y;
                    }
                }
            }
            v.expect_result(
                0,
                r.elem,
                &sh,
                "C25",
                "batch / batch_group_count, kernel output features and the number of windows",
            )
        }
        Err(e) => {
            v.shape_err(e);
            None
        }
    }
}

/// `dynamic_conv`'s padding operand (C4): a `[s, 2]` integer tensor; its `(low, high)`
/// pairs when a `stablehlo.constant` defines it.
fn dynamic_padding(v: &mut OpV, s: usize) -> Option<Option<Vec<(i64, i64)>>> {
    let p = v.operand(2)?;
    if p.rank() != 2 || !p.elem.is_integer() || p.shape[1] != 2 || p.shape[0] != s as i64 {
        v.err(
            "C4",
            format!(
                "expects padding to be an integer tensor of shape [{s}, 2], but got {}",
                tensor_str(p)
            ),
        );
        return None;
    }
    let vals = super::dynamic_const(v, 2);
    Some(vals.map(|x| x.chunks_exact(2).map(|c| (c[0], c[1])).collect()))
}

fn cholesky(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand(0)?, v.result(0)?);
    if !(a.elem.is_float() || a.elem.is_complex()) {
        v.err(
            "",
            format!(
                "expects a floating-point or complex operand, but got {}",
                tensor_str(a)
            ),
        );
    }
    if a != r {
        v.err(
            "C1",
            format!(
                "requires operand and result to have the same type, but got {} and {}",
                tensor_str(a),
                tensor_str(r)
            ),
        );
    }
    let n = a.rank();
    if n < 2 {
        v.err(
            "C2",
            format!(
                "expects an operand of rank at least 2, but got {}",
                tensor_str(a)
            ),
        );
    } else if a.shape[n - 1] != a.shape[n - 2] {
        v.err(
            "C3",
            format!(
                "expects square matrices in the last two dimensions, but got {}",
                tensor_str(a)
            ),
        );
    }
    Some(())
}

fn triangular_solve(v: &mut OpV) -> Option<()> {
    let (a, b, r) = (v.operand(0)?, v.operand(1)?, v.result(0)?);
    if a.elem != b.elem {
        v.err(
            "C1",
            format!(
                "requires a and b to have the same element type, but got {} and {}",
                a.elem, b.elem
            ),
        );
    }
    if b != r {
        v.err(
            "C4",
            format!(
                "requires b and result to have the same type, but got {} and {}",
                tensor_str(b),
                tensor_str(r)
            ),
        );
    }
    let n = a.rank();
    if n < 2 || b.rank() != n {
        v.err(
            "C2",
            format!(
                "expects a and b of the same rank, at least 2, but got {} and {}",
                tensor_str(a),
                tensor_str(b)
            ),
        );
        return None;
    }
    let left = v.flag("left_side");
    let bd = if left { b.shape[n - 2] } else { b.shape[n - 1] };
    if a.shape[..n - 2] != b.shape[..n - 2]
        || a.shape[n - 2] != a.shape[n - 1]
        || a.shape[n - 1] != bd
    {
        v.err("C3", format!("expects square a matching b's {} dimension with equal batch dimensions, but got {} and {}", if left { "second-to-last" } else { "last" }, tensor_str(a), tensor_str(b)));
    }
    if v.op.attrs.enum_value("transpose_a") == Some("TRANSPOSE_INVALID") {
        v.err(
            "",
            "expects transpose_a to be NO_TRANSPOSE, TRANSPOSE or ADJOINT",
        );
    }
    Some(())
}

fn fft(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let Some(ty) = v.op.attrs.enum_value("fft_type").map(str::to_string) else {
        v.err("", "requires attribute 'fft_type'");
        return None;
    };
    let len = v.req_i64s("fft_length")?;
    let (n, k) = (a.rank(), len.len());
    if !(1..=3).contains(&k) {
        v.err(
            "C3",
            format!("expects 1 to 3 fft_length values, but got {k}"),
        );
        return None;
    }
    if k > n {
        v.err(
            "C1",
            format!("expects at most {n} fft_length values (the operand rank), but got {k}"),
        );
        return None;
    }
    let (ok_elem, want) = match ty.as_str() {
        "RFFT" => (a.elem.is_float(), complex_of(a.elem)),
        "IRFFT" => (a.elem.is_complex(), a.elem.complex_part()),
        _ => (a.elem.is_complex(), Some(a.elem)),
    };
    let Some(want) = want.filter(|_| ok_elem) else {
        v.err(
            "C2",
            format!(
                "operand element type {} is not valid for fft_type {ty}",
                a.elem
            ),
        );
        return None;
    };
    let mut shape = a.shape.to_vec();
    let real = match ty.as_str() {
        "RFFT" => Some(&a.shape[n - k..]),
        "IRFFT" => None,
        _ => None,
    };
    if let Some(real) = real {
        if real != &len[..] {
            v.err("C4", format!("expects the last dimensions of the real operand to equal fft_length {len:?}, but got {real:?}"));
            return None;
        }
        shape[n - 1] = if len[k - 1] == 0 {
            0
        } else {
            len[k - 1] / 2 + 1
        };
    }
    if ty == "IRFFT" {
        let last = len[k - 1];
        let want_last = if last == 0 { 0 } else { last / 2 + 1 };
        if a.shape[n - 1] != want_last || a.shape[n - k..n - 1] != len[..k - 1] {
            v.err("C5", format!("expects the operand's last dimensions to be fft_length with the last one halved plus one ({want_last}), but got {}", tensor_str(a)));
            return None;
        }
        shape[n - k..].copy_from_slice(&len);
    }
    v.expect_result(
        0,
        want,
        &shape,
        "C5",
        "fft_type and fft_length applied to the operand",
    )
}

fn complex_of(e: ElemType) -> Option<ElemType> {
    match e {
        ElemType::F32 => Some(ElemType::Complex64),
        ElemType::F64 => Some(ElemType::Complex128),
        _ => None,
    }
}
