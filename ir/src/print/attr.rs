//! Attribute printing: builtin attributes, `dense<...>` payloads (literals that round-trip
//! exactly, hex for large payloads, splats as splats) and the `#stablehlo.*` attributes
//! in the exact spelling MLIR's StableHLO dialect prints and parses.
//!
//! Invariant: floats print in the shortest decimal that reads back to the same value in
//! their own type, always with a `.`; NaN/Inf print as hex bit patterns.

use super::Printer;
use crate::attr::{Attr, ConvDims, DenseData, DenseElements, NamedAttrs};
use crate::parse::dense_bytes_to_f64;
use crate::types::ElemType;
use std::fmt::Write;

/// Payloads with more elements than this print as hex.
const HEX_THRESHOLD: u64 = 16;

/// `{a = 1 : i64, b}` (unit attributes print bare).
pub(crate) fn write_attr_dict(p: &mut Printer<'_>, d: &NamedAttrs) {
    write_attr_entries(p, d.iter());
}

/// `{a = 1 : i64, b}` of the given entries.
pub(crate) fn write_attr_entries<'a>(
    p: &mut Printer<'_>,
    entries: impl Iterator<Item = (&'a str, &'a Attr)>,
) {
    p.out.push('{');
    for (i, (n, a)) in entries.enumerate() {
        if i > 0 {
            p.out.push_str(", ");
        }
        write_name(&mut p.out, n);
        if !matches!(a, Attr::Unit) {
            p.out.push_str(" = ");
            write_attr(p, a);
        }
    }
    p.out.push('}');
}

/// `BARE_ID[b]`: byte `b` may continue a bare identifier (`[A-Za-z0-9_$.]`).
const BARE_ID: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.';
        b += 1;
    }
    t
};

/// `[A-Za-z_][A-Za-z0-9_$.]*` (attribute names and symbols print unquoted then).
fn is_bare_id(s: &str) -> bool {
    let mut cs = s.bytes();
    matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && cs.all(|c| BARE_ID[usize::from(c)])
}

fn write_name(out: &mut String, n: &str) {
    if is_bare_id(n) {
        out.push_str(n);
    } else {
        write_string(out, n);
    }
}

/// `@name`, quoted when not a bare identifier; nested `a::@b` references keep their parts.
pub(crate) fn write_symbol(out: &mut String, s: &str) {
    if is_bare_id(s) {
        // A bare identifier has no `::@` nesting.
        out.push('@');
        out.push_str(s);
        return;
    }
    for (i, part) in s.split("::@").enumerate() {
        if i > 0 {
            out.push_str("::");
        }
        out.push('@');
        if is_bare_id(part) || part.bytes().all(|c| c.is_ascii_digit()) && !part.is_empty() {
            out.push_str(part);
        } else {
            write_string(out, part);
        }
    }
}

/// A quoted, escaped string.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let plain = |b: u8| (0x20..=0x7E).contains(&b) && b != b'"' && b != b'\\';
    if s.bytes().all(plain) {
        out.push_str(s);
        out.push('"');
        return;
    }
    for &b in s.as_bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7E => out.push(b as char),
            _ => {
                let _ = write!(out, "\\{b:02X}");
            }
        }
    }
    out.push('"');
}

/// Any attribute value.
pub(crate) fn write_attr(p: &mut Printer<'_>, a: &Attr) {
    match a {
        Attr::Unit => p.out.push_str("unit"),
        Attr::Bool(b) => p.out.push_str(if *b { "true" } else { "false" }),
        Attr::Int(v, t) => {
            write_int(&mut p.out, *v, *t);
            p.out.push_str(" : ");
            write_elem_type(&mut p.out, *t);
        }
        Attr::Float(v, t) => {
            write_float(&mut p.out, *v, *t);
            p.out.push_str(" : ");
            write_elem_type(&mut p.out, *t);
        }
        Attr::Str(s) => write_string(&mut p.out, s),
        Attr::Type(t) => p.ty(*t),
        Attr::Symbol(s) => write_symbol(&mut p.out, s),
        Attr::Array(items) => {
            p.out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    p.out.push_str(", ");
                }
                // Like MLIR, array elements elide the default types i64 and f64.
                match x {
                    Attr::Int(v, t @ ElemType::Int(64)) => write_int(&mut p.out, *v, *t),
                    Attr::Float(v, t @ ElemType::F64) if v.is_finite() => {
                        write_float(&mut p.out, *v, *t)
                    }
                    _ => write_attr(p, x),
                }
            }
            p.out.push(']');
        }
        Attr::IntArray(t, v) => {
            p.out.push_str("array<");
            write_elem_type(&mut p.out, *t);
            for (i, x) in v.iter().enumerate() {
                p.out.push_str(if i == 0 { ": " } else { ", " });
                write_int(&mut p.out, *x, *t);
            }
            p.out.push('>');
        }
        Attr::BoolArray(v) => {
            p.out.push_str("array<i1");
            for (i, x) in v.iter().enumerate() {
                p.out.push_str(if i == 0 { ": " } else { ", " });
                p.out.push_str(if *x { "true" } else { "false" });
            }
            p.out.push('>');
        }
        Attr::FloatArray(t, v) => {
            let _ = write!(p.out, "array<{t}");
            for (i, x) in v.iter().enumerate() {
                p.out.push_str(if i == 0 { ": " } else { ", " });
                write_float(&mut p.out, *x, *t);
            }
            p.out.push('>');
        }
        Attr::Dict(d) => write_attr_dict(p, d),
        Attr::Elements(e) => write_dense(p, e),
        Attr::Enum(e) => {
            p.out.push_str("#stablehlo<");
            p.out.push_str(e.kind.mnemonic());
            p.out.push(' ');
            p.out.push_str(&e.value);
            p.out.push('>');
        }
        Attr::DotDims(d) => write_struct(
            &mut p.out,
            "#stablehlo.dot",
            &[
                ("lhs_batching_dimensions", F::L(&d.lhs_batching)),
                ("rhs_batching_dimensions", F::L(&d.rhs_batching)),
                ("lhs_contracting_dimensions", F::L(&d.lhs_contracting)),
                ("rhs_contracting_dimensions", F::L(&d.rhs_contracting)),
            ],
        ),
        Attr::GatherDims(g) => write_struct(
            &mut p.out,
            "#stablehlo.gather",
            &[
                ("offset_dims", F::L(&g.offset_dims)),
                ("collapsed_slice_dims", F::L(&g.collapsed_slice_dims)),
                ("operand_batching_dims", F::L(&g.operand_batching_dims)),
                (
                    "start_indices_batching_dims",
                    F::L(&g.start_indices_batching_dims),
                ),
                ("start_index_map", F::L(&g.start_index_map)),
                ("index_vector_dim", F::I(g.index_vector_dim)),
            ],
        ),
        Attr::ScatterDims(s) => write_struct(
            &mut p.out,
            "#stablehlo.scatter",
            &[
                ("update_window_dims", F::L(&s.update_window_dims)),
                ("inserted_window_dims", F::L(&s.inserted_window_dims)),
                ("input_batching_dims", F::L(&s.input_batching_dims)),
                (
                    "scatter_indices_batching_dims",
                    F::L(&s.scatter_indices_batching_dims),
                ),
                (
                    "scatter_dims_to_operand_dims",
                    F::L(&s.scatter_dims_to_operand_dims),
                ),
                ("index_vector_dim", F::I(s.index_vector_dim)),
            ],
        ),
        Attr::ConvDims(c) => {
            p.out.push_str("#stablehlo.conv<");
            if !write_conv_dims(&mut p.out, c) {
                write_conv_raw(&mut p.out, c);
            }
            p.out.push('>');
        }
        Attr::ChannelHandle { handle, ty } => {
            let _ = write!(
                p.out,
                "#stablehlo.channel_handle<handle = {handle}, type = {ty}>"
            );
        }
        Attr::OutputOperandAlias {
            output_tuple_indices,
            operand_index,
            operand_tuple_indices,
        } => {
            p.out
                .push_str("#stablehlo.output_operand_alias<output_tuple_indices = ");
            write_list(&mut p.out, output_tuple_indices);
            let _ = write!(
                p.out,
                ", operand_index = {operand_index}, operand_tuple_indices = "
            );
            write_list(&mut p.out, operand_tuple_indices);
            p.out.push('>');
        }
        Attr::ResultAccuracy {
            atol,
            rtol,
            ulps,
            mode,
        } => {
            p.out.push_str("#stablehlo.result_accuracy<");
            if *atol != 0.0 {
                p.out.push_str("atol = ");
                write_float(&mut p.out, *atol, ElemType::F64);
                p.out.push_str(", ");
            }
            if *rtol != 0.0 {
                p.out.push_str("rtol = ");
                write_float(&mut p.out, *rtol, ElemType::F64);
                p.out.push_str(", ");
            }
            if *ulps != 0 {
                let _ = write!(p.out, "ulps = {ulps}, ");
            }
            let _ = write!(p.out, "mode = #stablehlo.result_accuracy_mode<{mode}>>");
        }
        Attr::Opaque(s) => p.out.push_str(s),
    }
}

/// A struct field: list (omitted when empty) or integer (omitted when zero).
enum F<'a> {
    L(&'a [i64]),
    I(i64),
}

fn write_struct(out: &mut String, name: &str, fields: &[(&str, F<'_>)]) {
    out.push_str(name);
    out.push('<');
    let mut first = true;
    for (n, f) in fields {
        match f {
            F::L([]) => continue,
            F::I(0) => continue,
            _ => {}
        }
        if !first {
            out.push_str(", ");
        }
        first = false;
        out.push_str(n);
        out.push_str(" = ");
        match f {
            F::L(l) => write_list(out, l),
            F::I(v) => push_num(out, *v),
        }
    }
    out.push('>');
}

/// `[1, 2, 3]`.
pub(crate) fn write_list(out: &mut String, l: &[i64]) {
    out.push('[');
    for (i, v) in l.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        push_num(out, *v);
    }
    out.push(']');
}

/// Appends a decimal integer (itoa: the printer's hot path avoids `fmt` machinery).
pub(crate) fn push_num(out: &mut String, v: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Appends an element type's name (as its `Display` prints it).
pub(crate) fn write_elem_type(out: &mut String, t: ElemType) {
    match t {
        ElemType::Int(b) => {
            out.push('i');
            push_num(out, b);
        }
        ElemType::UInt(b) => {
            out.push_str("ui");
            push_num(out, b);
        }
        // Fixed names, without the `fmt` machinery (`1.0 : f32` is common).
        ElemType::I1 => out.push_str("i1"),
        ElemType::F16 => out.push_str("f16"),
        ElemType::BF16 => out.push_str("bf16"),
        ElemType::F32 => out.push_str("f32"),
        ElemType::F64 => out.push_str("f64"),
        _ => {
            let _ = write!(out, "{t}");
        }
    }
}

/// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`; false if the numbers are inconsistent.
pub(crate) fn write_conv_dims(out: &mut String, c: &ConvDims) -> bool {
    fn one(out: &mut String, a: (i64, char), b: (i64, char), sp: &[i64]) -> bool {
        let n = sp.len() + 2;
        let mut slots: Vec<Option<String>> = vec![None; n];
        let mut put = |pos: i64, s: String| -> bool {
            match slots.get_mut(pos as usize).filter(|_| pos >= 0) {
                Some(slot @ None) => {
                    *slot = Some(s);
                    true
                }
                _ => false,
            }
        };
        if !put(a.0, a.1.to_string()) || !put(b.0, b.1.to_string()) {
            return false;
        }
        for (i, &d) in sp.iter().enumerate() {
            if !put(d, i.to_string()) {
                return false;
            }
        }
        out.push('[');
        for (i, s) in slots.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str(s.as_deref().unwrap_or("?"));
        }
        out.push(']');
        true
    }
    let mark = out.len();
    let ok = one(
        out,
        (c.input_batch, 'b'),
        (c.input_feature, 'f'),
        &c.input_spatial,
    ) && {
        out.push('x');
        one(
            out,
            (c.kernel_input_feature, 'i'),
            (c.kernel_output_feature, 'o'),
            &c.kernel_spatial,
        )
    } && {
        out.push_str("->");
        one(
            out,
            (c.output_batch, 'b'),
            (c.output_feature, 'f'),
            &c.output_spatial,
        )
    };
    if !ok {
        out.truncate(mark);
    }
    ok
}

fn write_conv_raw(out: &mut String, c: &ConvDims) {
    out.push_str("raw ");
    let _ = write!(
        out,
        "input_batch_dimension = {}, input_feature_dimension = {}, input_spatial_dimensions = ",
        c.input_batch, c.input_feature
    );
    write_list(out, &c.input_spatial);
    let _ = write!(
        out,
        ", kernel_input_feature_dimension = {}, kernel_output_feature_dimension = {}, kernel_spatial_dimensions = ",
        c.kernel_input_feature, c.kernel_output_feature
    );
    write_list(out, &c.kernel_spatial);
    let _ = write!(
        out,
        ", output_batch_dimension = {}, output_feature_dimension = {}, output_spatial_dimensions = ",
        c.output_batch, c.output_feature
    );
    write_list(out, &c.output_spatial);
}

/// An integer of type `t` (unsigned by bit pattern, signed sign-extended from its width).
pub fn write_int(out: &mut String, v: i64, t: ElemType) {
    match t {
        ElemType::UInt(b) if b < 64 => push_num(out, (v as u64) & ((1u64 << b) - 1)),
        ElemType::UInt(_) => push_num(out, v as u64),
        ElemType::Int(b) if b < 64 => {
            let sh = 64 - b as u32;
            push_num(out, (v << sh) >> sh)
        }
        ElemType::I1 => out.push_str(if v & 1 != 0 { "true" } else { "false" }),
        _ => push_num(out, v),
    }
}

/// A float of type `t`: shortest round-trip decimal, or hex bits for NaN/Inf and the
/// 4/6/8-bit formats.
pub fn write_float(out: &mut String, v: f64, t: ElemType) {
    let bits_hex = |out: &mut String| {
        let _ = match t {
            ElemType::F32 => write!(out, "0x{:08X}", (v as f32).to_bits()),
            ElemType::F16 => write!(out, "0x{:04X}", half::f16::from_f64(v).to_bits()),
            ElemType::BF16 => write!(out, "0x{:04X}", half::bf16::from_f64(v).to_bits()),
            ElemType::F8(k) => write!(out, "0x{:02X}", crate::parse::minifloat_encode(k, v)),
            _ => write!(out, "0x{:016X}", v.to_bits()),
        };
    };
    if !v.is_finite() || matches!(t, ElemType::F8(_)) {
        bits_hex(out);
        return;
    }
    let start = out.len();
    let _ = match t {
        ElemType::F64 => write!(out, "{v:?}"),
        _ => write!(out, "{:?}", v as f32),
    };
    ensure_dot(out, start);
}

/// Ensures a `.` in the mantissa of the number written at `out[start..]` (`1e-7` ->
/// `1.0e-7`, `3` -> `3.0`).
fn ensure_dot(out: &mut String, start: usize) {
    let s = &out[start..];
    let exp = s.find(['e', 'E']).map_or(out.len(), |i| start + i);
    if !out[start..exp].contains('.') {
        out.insert_str(exp, ".0");
    }
}

/// `dense<...> : tensor<...>`.
fn write_dense(p: &mut Printer<'_>, e: &DenseElements) {
    p.out.push_str("dense<");
    write_dense_body(&mut p.out, p.m, e);
    p.out.push_str("> : ");
    p.ty(e.ty);
}

fn write_dense_body(out: &mut String, m: &crate::Module, e: &DenseElements) {
    let w = e.elem.byte_width();
    match &e.data {
        DenseData::Splat(b) => write_elem(out, e.elem, b),
        DenseData::Full(b) if e.len == 0 || b.is_empty() => {}
        DenseData::Full(b) if e.len > HEX_THRESHOLD && e.elem != ElemType::I1 => {
            out.push_str("\"0x");
            push_hex(out, b.iter().copied());
            out.push('"');
        }
        DenseData::Full(b) => {
            let shape: Vec<i64> = m
                .types
                .tensor_of(e.ty)
                .map(|t| t.shape.to_vec())
                .unwrap_or_else(|| vec![e.len as i64]);
            let mut idx = 0usize;
            write_nested(out, e.elem, b, w, &shape, &mut idx);
        }
    }
}

/// Appends each byte as two uppercase hex digits (`{:02X}`), without `fmt` per byte.
fn push_hex(out: &mut String, bytes: impl ExactSizeIterator<Item = u8>) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut buf = Vec::with_capacity(bytes.len() * 2);
    for byte in bytes {
        buf.push(DIGITS[usize::from(byte >> 4)]);
        buf.push(DIGITS[usize::from(byte & 15)]);
    }
    // Hex digits are ASCII.
    out.push_str(std::str::from_utf8(&buf).unwrap_or_default());
}

fn write_nested(out: &mut String, t: ElemType, b: &[u8], w: usize, shape: &[i64], idx: &mut usize) {
    let Some((&n, rest)) = shape.split_first() else {
        let s = *idx * w;
        write_elem(out, t, b.get(s..s + w).unwrap_or(&[]));
        *idx += 1;
        return;
    };
    out.push('[');
    for i in 0..n {
        if i > 0 {
            out.push_str(", ");
        }
        write_nested(out, t, b, w, rest, idx);
    }
    out.push(']');
}

/// One element from its little-endian bytes.
fn write_elem(out: &mut String, t: ElemType, b: &[u8]) {
    if let Some(part) = t.complex_part() {
        let h = b.len() / 2;
        out.push('(');
        write_elem(out, part, &b[..h]);
        out.push_str(", ");
        write_elem(out, part, &b[h..]);
        out.push(')');
        return;
    }
    if t.is_float() {
        if let ElemType::F8(_) = t {
            let _ = write!(out, "0x{:02X}", b.first().copied().unwrap_or(0));
            return;
        }
        let v = dense_bytes_to_f64(t, b);
        if v.is_nan() {
            // Keep the exact NaN payload.
            out.push_str("0x");
            push_hex(out, b.iter().rev().copied());
            return;
        }
        write_float(out, v, t);
        return;
    }
    let mut a = [0u8; 8];
    a[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    write_int(out, i64::from_le_bytes(a), t);
}
