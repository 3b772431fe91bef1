//! Typed-FFI custom calls (`API_VERSION_TYPED_FFI`): jax's CPU LAPACK kernels
//! (`lapack_?getrf_ffi`, `?geqrf`, `?orgqr`, `?syevd`, `?gesdd`, `?potrf`, `?trsm`, ...).
//!
//! Owns: the two things such a call needs in HLO beyond a plain custom call: its
//! attributes as the MLIR dictionary text XLA's FFI decoder parses from
//! `backend_config` (`{mode = 86 : ui8, uplo = 76 : ui8}`, what XLA itself writes when it
//! exports jax's `mhlo.backend_config` dictionary), and its layout constraints
//! (`operand_layouts` / `result_layouts`: LAPACK reads and writes column-major matrices,
//! so the operands' and results' `minor_to_major` must be pinned, with
//! `constrain_layout`).
//! Invariants: only attribute kinds with an unambiguous MLIR spelling are printed
//! (integers and floats with their type, booleans, strings, integer / float arrays);
//! anything else is [`HloError::Unsupported`] naming it. A layout list must have one entry
//! per operand / result, each a permutation of its rank.

use super::proto::{LayoutProto, ShapeProto};
use super::HloError;
use neuronc_ir::print::{write_float, write_int, write_string};
use neuronc_ir::{Attr, ElemType, NamedAttrs};
use std::fmt::Write;

/// The MLIR dictionary text of a typed-FFI call's attributes.
pub(super) fn backend_config_text(d: &NamedAttrs) -> Result<String, HloError> {
    let mut out = String::from("{");
    for (i, (name, a)) in d.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        let _ = write!(out, "{name} = ");
        write_value(&mut out, name, a)?;
    }
    out.push('}');
    Ok(out)
}

fn write_value(out: &mut String, name: &str, a: &Attr) -> Result<(), HloError> {
    match a {
        Attr::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Attr::Int(v, t) => {
            write_int(out, *v, *t);
            // An i1 prints as `true` / `false`, which carries its type.
            if *t != ElemType::I1 {
                let _ = write!(out, " : {t}");
            }
        }
        Attr::Float(v, t) => {
            write_float(out, *v, *t);
            let _ = write!(out, " : {t}");
        }
        Attr::Str(s) => write_string(out, s),
        Attr::IntArray(t, v) => write_array(out, *t, v, |out, &x| write_int(out, x, *t)),
        Attr::FloatArray(t, v) => write_array(out, *t, v, |out, &x| write_float(out, x, *t)),
        _ => {
            return Err(HloError::Unsupported(format!(
                "typed-FFI attribute `{name}` of this kind"
            )))
        }
    }
    Ok(())
}

/// `array<t: a, b, ...>`.
fn write_array<T>(out: &mut String, t: ElemType, v: &[T], each: impl Fn(&mut String, &T)) {
    let _ = write!(out, "array<{t}");
    for (i, x) in v.iter().enumerate() {
        out.push_str(if i == 0 { ": " } else { ", " });
        each(out, x);
    }
    out.push('>');
}

/// The `minor_to_major` lists of a layout attribute (`operand_layouts` /
/// `result_layouts`), or `None` when absent.
pub(super) fn layouts(attrs: &NamedAttrs, name: &str) -> Result<Option<Vec<Vec<i64>>>, HloError> {
    let Some(a) = attrs.get(name) else {
        return Ok(None);
    };
    let Attr::Array(items) = a else {
        return Err(HloError::Unsupported(format!(
            "`{name}` is not a list of layouts"
        )));
    };
    items
        .iter()
        .map(|l| {
            let v = match l {
                Attr::Opaque(text) => index_dense(text),
                other => other.as_i64_array(),
            };
            v.ok_or_else(|| HloError::Unsupported(format!("`{name}` entry is not a layout")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The values of `dense<[0, 1]> : tensor<2xindex>` (also a splat `dense<0> :
/// tensor<1xindex>` and `dense<> : tensor<0xindex>`), which the IR keeps as opaque text.
fn index_dense(text: &str) -> Option<Vec<i64>> {
    let body = text.trim().strip_prefix("dense<")?;
    let (vals, ty) = body.split_once('>')?;
    let len: usize = ty
        .trim()
        .strip_prefix(':')?
        .trim()
        .strip_prefix("tensor<")?
        .strip_suffix("xindex>")?
        .parse()
        .ok()?;
    let vals = vals.trim().trim_start_matches('[').trim_end_matches(']');
    let v: Vec<i64> = vals
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    match v.len() {
        n if n == len => Some(v),
        1 => Some(vec![v[0]; len]),
        _ => None,
    }
}

/// `s` with the layout `minor_to_major` (checked to be a permutation of its dims).
pub(super) fn with_layout(s: &ShapeProto, minor_to_major: &[i64]) -> Result<ShapeProto, HloError> {
    let rank = s.dimensions.len();
    let mut seen = vec![false; rank];
    let ok = minor_to_major.len() == rank
        && minor_to_major.iter().all(|&d| {
            let fresh = usize::try_from(d).is_ok_and(|d| d < rank && !seen[d]);
            if fresh {
                seen[d as usize] = true;
            }
            fresh
        });
    if !ok {
        return Err(HloError::Unsupported(format!(
            "layout {minor_to_major:?} for a rank-{rank} value"
        )));
    }
    let mut out = s.clone();
    out.layout = Some(LayoutProto {
        minor_to_major: minor_to_major.to_vec(),
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lapack_options_print_as_mlir_dictionary() {
        let mut d = NamedAttrs::new();
        d.set("uplo", Attr::Int(76, ElemType::UInt(8)));
        d.set("mode", Attr::Int(86, ElemType::UInt(8)));
        assert_eq!(
            backend_config_text(&d).unwrap(),
            "{mode = 86 : ui8, uplo = 76 : ui8}"
        );
        assert_eq!(backend_config_text(&NamedAttrs::new()).unwrap(), "{}");
    }

    #[test]
    fn index_layout_text_parses() {
        assert_eq!(
            index_dense("dense<[0, 1]> : tensor<2xindex>"),
            Some(vec![0, 1])
        );
        assert_eq!(index_dense("dense<0> : tensor<1xindex>"), Some(vec![0]));
        assert_eq!(index_dense("dense<> : tensor<0xindex>"), Some(vec![]));
        assert_eq!(index_dense("dense<[0, 1]> : tensor<3xindex>"), None);
    }

    #[test]
    fn layouts_must_be_permutations() {
        let s = ShapeProto {
            dimensions: vec![5, 3],
            ..ShapeProto::default()
        };
        let l = with_layout(&s, &[0, 1]).unwrap();
        assert_eq!(l.layout.unwrap().minor_to_major, vec![0, 1]);
        assert!(with_layout(&s, &[0, 0]).is_err());
        assert!(with_layout(&s, &[0]).is_err());
    }
}
