//! Structured attribute values of HLO text: windows (`{size=3x3 stride=2x2 pad=1_1x1_1}`),
//! padding (`0_1x2_0_1`), slices (`{[0:4:2]}`), convolution labels (`b01f_01io->b01f`),
//! precisions, replica groups, source-target pairs, custom-call backend configs and
//! output-operand aliasing.
//!
//! Owns: one reader per value syntax, each returning the proto structure it describes.
//! Invariants: defaults the text leaves out are XLA's (stride, dilations 1; padding 0;
//! slice stride 1); a list whose length disagrees with the window's `size` is an error
//! at the window; nothing is guessed (the iota form of replica groups is refused).

use super::attrs::{expected, one_of, set};
use super::lex::{Cursor, PResult};
use crate::hlo::proto::*;

/// Integers joined by `sep` directly (`3x3`, `1_0_2`).
fn joined(c: &mut Cursor<'_>, sep: char) -> PResult<Vec<i64>> {
    let mut v = vec![c.int()?];
    while c.peek() == Some(sep) && c.peek2().is_some_and(|d| d.is_ascii_digit() || d == '-') {
        c.bump();
        v.push(c.int()?);
    }
    Ok(v)
}

/// `lo_hi[_interior]` groups joined by `x`.
pub(super) fn padding(c: &mut Cursor<'_>) -> PResult<PaddingConfig> {
    let mut p = PaddingConfig::default();
    loop {
        let at = c.pos;
        let v = joined(c, '_')?;
        let [lo, hi, interior] = match v[..] {
            [lo, hi] => [lo, hi, 0],
            [lo, hi, int] => [lo, hi, int],
            _ => {
                return Err(c.error_at(
                    at,
                    expected("`low_high` or `low_high_interior`", "a different count"),
                ))
            }
        };
        p.dimensions.push(PaddingConfigDimension {
            edge_padding_low: lo,
            edge_padding_high: hi,
            interior_padding: interior,
        });
        if c.peek() != Some('x') {
            return Ok(p);
        }
        c.bump();
    }
}

/// `{[start:limit(:stride)], …}`.
pub(super) fn slices(c: &mut Cursor<'_>) -> PResult<Vec<SliceDimensions>> {
    c.braced(|c| {
        c.expect("[")?;
        let start = c.int()?;
        c.expect(":")?;
        let limit = c.int()?;
        let stride = if c.eat(":") { c.int()? } else { 1 };
        c.expect("]")?;
        Ok(SliceDimensions {
            start,
            limit,
            stride,
        })
    })
}

/// `{size=2x2 stride=2x2 pad=0_1x0_1 lhs_dilate=… rhs_dilate=… rhs_reversal=…}`.
pub(super) fn window(c: &mut Cursor<'_>) -> PResult<Window> {
    c.ws();
    let start = c.pos;
    c.expect("{")?;
    let mut fields: Vec<(&str, Vec<i64>)> = Vec::new();
    let mut pads: Option<PaddingConfig> = None;
    while !c.eat("}") {
        let (k, at) = c.expect_name("a window field (`size`, `stride`, `pad`, …)")?;
        c.expect("=")?;
        match k {
            "pad" => pads = Some(padding(c)?),
            "size" | "stride" | "lhs_dilate" | "rhs_dilate" | "rhs_reversal" => {
                fields.push((k, joined(c, 'x')?))
            }
            _ => return Err(c.unsupported(at, format!("window field `{k}`"))),
        }
    }
    let get = |k: &str| fields.iter().find(|f| f.0 == k).map(|f| f.1.clone());
    let size = get("size").unwrap_or_default();
    let n = size.len();
    let field = |k: &str, default: i64| -> PResult<Vec<i64>> {
        let v = get(k).unwrap_or_else(|| vec![default; n]);
        if v.len() != n {
            let what = format!("`{k}` with {n} entries like `size`");
            return Err(c.error_at(start, expected(&what, &format!("{} entries", v.len()))));
        }
        Ok(v)
    };
    let (stride, lhs, rhs, rev) = (
        field("stride", 1)?,
        field("lhs_dilate", 1)?,
        field("rhs_dilate", 1)?,
        field("rhs_reversal", 0)?,
    );
    let pads = pads
        .map(|p| p.dimensions)
        .unwrap_or_else(|| vec![PaddingConfigDimension::default(); n]);
    if pads.len() != n {
        let what = format!("`pad` with {n} entries like `size`");
        return Err(c.error_at(start, expected(&what, &format!("{} entries", pads.len()))));
    }
    let dimensions = (0..n)
        .map(|k| WindowDimension {
            size: size[k],
            stride: stride[k],
            padding_low: pads[k].edge_padding_low,
            padding_high: pads[k].edge_padding_high,
            window_dilation: rhs[k],
            base_dilation: lhs[k],
            window_reversal: rev[k] != 0,
        })
        .collect();
    Ok(Window { dimensions })
}

/// `b01f_01io->b01f`: batch/feature (`b`, `f`), kernel in/out (`i`, `o`) and spatial
/// (digits) dimension positions of a convolution.
pub(super) fn dim_labels(c: &mut Cursor<'_>) -> PResult<ConvolutionDimensionNumbers> {
    c.ws();
    let at = c.pos;
    let r = c.rest();
    let n = r
        .find(|ch: char| !(ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '>')))
        .unwrap_or(r.len());
    let text = r.get(..n).unwrap_or("");
    c.pos += n;
    let bad = || {
        c.error_at(
            at,
            expected("dimension labels like `b01f_01io->b01f`", text),
        )
    };
    let (lhs, out) = text.split_once("->").ok_or_else(bad)?;
    let (inp, ker) = lhs.split_once('_').ok_or_else(bad)?;
    let rank = inp.len();
    if ker.len() != rank || out.len() != rank || rank < 2 {
        return Err(bad());
    }
    let labels = |s: &str, a: char, b: char| -> Option<(i64, i64, Vec<i64>)> {
        let pos = |ch: char| s.find(ch).map(|p| p as i64);
        let mut spatial = vec![-1i64; rank - 2];
        for (p, ch) in s.chars().enumerate() {
            if ch == a || ch == b {
                continue;
            }
            let k = ch.to_digit(10)? as usize;
            let slot = spatial.get_mut(k)?;
            if *slot >= 0 {
                return None;
            }
            *slot = p as i64;
        }
        if spatial.contains(&-1) || s.matches(a).count() != 1 || s.matches(b).count() != 1 {
            return None;
        }
        Some((pos(a)?, pos(b)?, spatial))
    };
    let (ib, if_, is) = labels(inp, 'b', 'f').ok_or_else(bad)?;
    let (ki, ko, ks) = labels(ker, 'i', 'o').ok_or_else(bad)?;
    let (ob, of, os) = labels(out, 'b', 'f').ok_or_else(bad)?;
    Ok(ConvolutionDimensionNumbers {
        input_batch_dimension: ib,
        input_feature_dimension: if_,
        input_spatial_dimensions: is,
        kernel_input_feature_dimension: ki,
        kernel_output_feature_dimension: ko,
        kernel_spatial_dimensions: ks,
        output_batch_dimension: ob,
        output_feature_dimension: of,
        output_spatial_dimensions: os,
    })
}

/// `{default,high}`.
pub(super) fn precision(c: &mut Cursor<'_>) -> PResult<PrecisionConfig> {
    let operand_precision = c.braced(|c| Ok(one_of(c, &["default", "high", "highest"])? as i32))?;
    Ok(PrecisionConfig { operand_precision })
}

/// `{{0,1},{2,3}}` (the iota form `[2,2]<=[4]` is not read).
pub(super) fn replica_groups(c: &mut Cursor<'_>) -> PResult<Vec<ReplicaGroup>> {
    if c.at("[") {
        return Err(c.unsupported(c.pos, "replica groups in iota form (`[n,m]<=[k]`)".into()));
    }
    c.braced(|c| {
        Ok(ReplicaGroup {
            replica_ids: set(c)?,
        })
    })
}

/// `{{0,1},{1,0}}`.
pub(super) fn pairs(c: &mut Cursor<'_>) -> PResult<Vec<SourceTarget>> {
    let at = c.pos;
    let groups = replica_groups(c)?;
    groups
        .into_iter()
        .map(|g| match g.replica_ids[..] {
            [source, target] => Ok(SourceTarget { source, target }),
            _ => Err(c.error_at(
                at,
                expected("pairs `{source,target}`", "a group of another size"),
            )),
        })
        .collect()
}

/// A quoted string, or a `{…}` dictionary kept as written (typed-FFI attributes).
pub(super) fn backend_config(c: &mut Cursor<'_>) -> PResult<Vec<u8>> {
    if c.at("\"") {
        return Ok(c.string()?.into_bytes());
    }
    if !c.at("{") {
        return Err(c.expected("a quoted string or `{`"));
    }
    Ok(c.skip_value()?.as_bytes().to_vec())
}

/// `{{0}: (1, {}), …}`: output index → (operand, operand index).
pub(super) fn aliasing(c: &mut Cursor<'_>) -> PResult<Vec<OutputOperandAliasing>> {
    c.braced(|c| {
        let output_shape_index = set(c)?;
        c.expect(":")?;
        c.expect("(")?;
        let operand_index = c.int()?;
        c.expect(",")?;
        let operand_shape_index = set(c)?;
        c.expect(")")?;
        Ok(OutputOperandAliasing {
            output_shape_index,
            operand_index,
            operand_shape_index,
        })
    })
}
