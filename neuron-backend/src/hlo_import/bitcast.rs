//! `bitcast`: XLA's reinterpretation of a buffer under another shape and layout.
//!
//! Owns: [`Importer::bitcast`]. A bitcast keeps the bytes in memory and changes how they
//! are read, so its logical meaning depends on both layouts: read the operand in its
//! physical (major-to-minor) order (a `transpose` when its layout is not row-major),
//! reshape that to the result's physical dimensions, reinterpret the element type if it
//! changes (`bitcast_convert`, same bit width), and permute back to the result's logical
//! order (a `transpose` when its layout is not row-major).
//! Invariant: with row-major layouts on both sides this is a plain `reshape` (or nothing
//! when the types are equal); a shape without a layout is row-major, as in XLA.

use super::types::tensor_type;
use super::{pad, ImportError, Importer, Typed};
use crate::hlo::proto::ShapeProto;
use std::fmt::Write;

/// Major-to-minor dimension order of an array shape's layout.
fn major_to_minor(s: &ShapeProto) -> Vec<i64> {
    let rank = s.dimensions.len();
    match &s.layout {
        Some(l) if l.minor_to_major.len() == rank => {
            l.minor_to_major.iter().rev().copied().collect()
        }
        _ => (0..rank as i64).collect(),
    }
}

/// `shape` with dimensions taken in `order`, as a tensor type of element type `like`.
fn permuted_type(s: &ShapeProto, order: &[i64]) -> Result<String, ImportError> {
    let mut p = s.clone();
    p.dimensions = order
        .iter()
        .map(|&d| s.dimensions.get(d as usize).copied())
        .collect::<Option<_>>()
        .ok_or_else(|| ImportError::malformed("layout names a dimension the shape lacks"))?;
    p.layout = None;
    tensor_type(&p)
}

fn array(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("array<i64: {}>", items.join(", "))
}

impl Importer<'_> {
    /// Emits `from` (of shape `from_shape`) bitcast to `to_shape`; returns the result.
    pub(super) fn bitcast(
        &mut self,
        from: Typed,
        from_shape: &ShapeProto,
        to_shape: &ShapeProto,
        out: &mut String,
        depth: usize,
    ) -> Result<Typed, ImportError> {
        let src = major_to_minor(from_shape);
        let dst = major_to_minor(to_shape);
        let identity = |o: &[i64]| o.iter().enumerate().all(|(k, &d)| d == k as i64);
        let mut cur = from;
        if !identity(&src) {
            let t = permuted_type(from_shape, &src)?;
            cur = self.unary(
                out,
                depth,
                "stablehlo.transpose",
                cur,
                &format!("permutation = {}", array(&src)),
                t,
            );
        }
        let mut physical_to = to_shape.clone();
        physical_to.element_type = from_shape.element_type;
        let reshaped = permuted_type(&physical_to, &dst)?;
        if reshaped != cur.1 {
            cur = self.unary(out, depth, "stablehlo.reshape", cur, "", reshaped);
        }
        let converted = permuted_type(to_shape, &dst)?;
        if converted != cur.1 {
            cur = self.unary(out, depth, "stablehlo.bitcast_convert", cur, "", converted);
        }
        if !identity(&dst) {
            let mut inverse = vec![0i64; dst.len()];
            for (k, &d) in dst.iter().enumerate() {
                inverse[d as usize] = k as i64;
            }
            let t = tensor_type(&ShapeProto {
                layout: None,
                ..to_shape.clone()
            })?;
            cur = self.unary(
                out,
                depth,
                "stablehlo.transpose",
                cur,
                &format!("permutation = {}", array(&inverse)),
                t,
            );
        }
        Ok(cur)
    }

    /// Prints a one-operand, one-result op; returns its result.
    fn unary(
        &mut self,
        out: &mut String,
        depth: usize,
        name: &str,
        x: Typed,
        attrs: &str,
        result: String,
    ) -> Typed {
        let r = self.fresh('v');
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" {{{attrs}}}")
        };
        let _ = writeln!(
            out,
            "{}{r} = \"{name}\"({}){attrs} : ({}) -> {result}",
            pad(depth),
            x.0,
            x.1
        );
        (r, result)
    }
}
