//! Constant literals of HLO text (`constant(1.5)`, `constant({ {1, 2}, {3, 4} })`,
//! `constant(true)`, `constant(-inf)`, `constant(nan(0x7f))`, `constant((1, 2))` for
//! complex values) as `LiteralProto`s.
//!
//! Owns: [`literal`].
//! Invariants: the printed nesting must match the instruction's shape exactly, element
//! by element; every value must be representable in the element type (integers are
//! range-checked, floats rounded once from their decimal text where the type is f32 or
//! f64); the literal's data is in logical (row-major) order whatever the instruction's
//! layout, because XLA prints literals in logical order, so its `shape` carries no
//! layout. Elided constants (`{...}`) and element types without an exact text reading
//! here (8-bit and sub-byte types) are [`ImportError::Unsupported`].

use super::super::ImportError;
use super::lex::{Cursor, PResult};
use crate::hlo::proto::{LiteralProto, PrimitiveType, ShapeProto};

/// One element as written, with its position.
type Tok<'a> = (&'a str, usize);

/// The literal of a `constant` of shape `shape`.
pub(super) fn literal(c: &mut Cursor<'_>, shape: &ShapeProto) -> PResult<LiteralProto> {
    let at = {
        c.ws();
        c.pos
    };
    if shape.element_type == PrimitiveType::Tuple as i32 {
        return Err(c.unsupported(at, "tuple-shaped constants".into()));
    }
    if c.rest().starts_with("{...}") {
        return Err(c.unsupported(
            at,
            "a constant elided as `{...}` (print the module with large constants)".into(),
        ));
    }
    let complex = matches!(
        PrimitiveType::try_from(shape.element_type),
        Ok(PrimitiveType::C64 | PrimitiveType::C128)
    );
    let mut toks = Vec::new();
    nested(c, &shape.dimensions, complex, &mut toks)?;
    let mut lit = LiteralProto {
        shape: Some(ShapeProto {
            layout: None,
            ..shape.clone()
        }),
        ..Default::default()
    };
    fill(c, &mut lit, shape.element_type, &toks)?;
    Ok(lit)
}

/// Elements nested as `dims` says (a bare element for rank 0).
fn nested<'a>(
    c: &mut Cursor<'a>,
    dims: &[i64],
    complex: bool,
    toks: &mut Vec<Tok<'a>>,
) -> PResult<()> {
    let Some((&n, rest)) = dims.split_first() else {
        return element(c, complex, toks);
    };
    c.expect("{")?;
    for k in 0..n {
        if k > 0 {
            c.expect(",")?;
        }
        nested(c, rest, complex, toks)?;
    }
    if !c.at("}") && n > 0 {
        return Err(c.expected(&format!("`}}` after {n} elements")));
    }
    c.expect("}")
}

/// One scalar, or a `(re, im)` pair for complex types (two tokens).
fn element<'a>(c: &mut Cursor<'a>, complex: bool, toks: &mut Vec<Tok<'a>>) -> PResult<()> {
    if complex {
        c.expect("(")?;
        toks.push(c.scalar()?);
        c.expect(",")?;
        toks.push(c.scalar()?);
        return c.expect(")");
    }
    toks.push(c.scalar()?);
    Ok(())
}

/// "expected `what`, found `tok`" at the token.
fn bad(c: &Cursor<'_>, tok: Tok<'_>, what: &str) -> ImportError {
    c.error_at(
        tok.1,
        ImportError::Expected {
            expected: what.to_string(),
            found: format!("`{}`", tok.0),
        },
    )
}

/// An integer token in `lo..=hi`.
fn int(c: &Cursor<'_>, tok: Tok<'_>, lo: i128, hi: i128, ty: &str) -> PResult<i128> {
    tok.0
        .trim_start_matches('+')
        .parse::<i128>()
        .ok()
        .filter(|v| (lo..=hi).contains(v))
        .ok_or_else(|| bad(c, tok, &format!("an integer of type {ty}")))
}

/// Whether a token is NaN, with its sign and payload (`-nan(0x40)` → (true, Some(0x40))).
fn nan_parts(t: &str) -> Option<(bool, Option<&str>)> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.trim_start_matches('+')),
    };
    if body == "nan" {
        return Some((neg, None));
    }
    let hex = body.strip_prefix("nan(0x")?.strip_suffix(')')?;
    Some((neg, Some(hex)))
}

/// The bits of a float token in a format with `mant` mantissa bits and `exp_mask` (the
/// all-ones exponent, shifted into place): NaN payloads are kept; other values go
/// through `from_f64`.
fn float_bits(
    c: &Cursor<'_>,
    tok: Tok<'_>,
    mant: u32,
    width: u32,
    from_f64: impl Fn(f64) -> u64,
) -> PResult<u64> {
    let exp_mask = ((1u64 << (width - 1 - mant)) - 1) << mant;
    let sign = 1u64 << (width - 1);
    if let Some((neg, payload)) = nan_parts(tok.0) {
        let m = match payload {
            None => 1u64 << (mant - 1),
            Some(h) => u64::from_str_radix(h, 16)
                .ok()
                .filter(|&p| p != 0 && p < (1u64 << mant))
                .ok_or_else(|| bad(c, tok, "a NaN payload that fits the mantissa"))?,
        };
        return Ok(exp_mask | m | if neg { sign } else { 0 });
    }
    let v = match tok.0.trim_start_matches('+') {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        t if t.contains("inf") || t.contains("nan") => return Err(bad(c, tok, "a number")),
        t => t
            .parse::<f64>()
            .map_err(|_| bad(c, tok, "a floating-point number"))?,
    };
    Ok(from_f64(v))
}

/// An f32 token, rounded once from its decimal text.
fn f32_of(c: &Cursor<'_>, tok: Tok<'_>) -> PResult<f32> {
    let t = tok.0.trim_start_matches('+');
    if nan_parts(t).is_none() && !t.contains("inf") {
        return t
            .parse::<f32>()
            .map_err(|_| bad(c, tok, "a floating-point number"));
    }
    let bits = float_bits(c, tok, 23, 32, |v| u64::from((v as f32).to_bits()))?;
    Ok(f32::from_bits(bits as u32))
}

/// An f64 token.
fn f64_of(c: &Cursor<'_>, tok: Tok<'_>) -> PResult<f64> {
    float_bits(c, tok, 52, 64, f64::to_bits).map(f64::from_bits)
}

/// Stores the tokens as the literal's data for element type `p`.
fn fill(c: &Cursor<'_>, lit: &mut LiteralProto, p: i32, toks: &[Tok<'_>]) -> PResult<()> {
    use PrimitiveType as P;
    let p = P::try_from(p).map_err(|_| ImportError::malformed(format!("element type {p}")))?;
    let ints = |lo: i128, hi: i128, ty: &str| -> PResult<Vec<i128>> {
        toks.iter().map(|&t| int(c, t, lo, hi, ty)).collect()
    };
    let at = toks.first().map_or(c.pos, |t| t.1);
    match p {
        P::Pred => {
            for &t in toks {
                lit.preds.push(match t.0 {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad(c, t, "`true` or `false`")),
                });
            }
        }
        // Sub-byte integers: one byte per element, as the proto importer reads them.
        P::S2 => lit.s2s = ints(-2, 1, "s2")?.iter().map(|&v| v as u8).collect(),
        P::S4 => lit.s4s = ints(-8, 7, "s4")?.iter().map(|&v| v as u8).collect(),
        P::U2 => lit.u2s = ints(0, 3, "u2")?.iter().map(|&v| v as u8).collect(),
        P::U4 => lit.u4s = ints(0, 15, "u4")?.iter().map(|&v| v as u8).collect(),
        P::S8 => lit.s8s = ints(-128, 127, "s8")?.iter().map(|&v| v as u8).collect(),
        P::U8 => lit.u8s = ints(0, 255, "u8")?.iter().map(|&v| v as u8).collect(),
        P::S16 => {
            let v = ints(i16::MIN.into(), i16::MAX.into(), "s16")?;
            lit.s16s = v.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect();
        }
        P::U16 => {
            let v = ints(0, u16::MAX.into(), "u16")?;
            lit.u16s = v.iter().flat_map(|&x| (x as u16).to_le_bytes()).collect();
        }
        P::S32 => {
            let v = ints(i32::MIN.into(), i32::MAX.into(), "s32")?;
            lit.s32s = v.iter().map(|&x| x as i32).collect();
        }
        P::U32 => {
            lit.u32s = ints(0, u32::MAX.into(), "u32")?
                .iter()
                .map(|&x| x as u32)
                .collect()
        }
        P::S64 => {
            let v = ints(i64::MIN.into(), i64::MAX.into(), "s64")?;
            lit.s64s = v.iter().map(|&x| x as i64).collect();
        }
        P::U64 => {
            lit.u64s = ints(0, u64::MAX.into(), "u64")?
                .iter()
                .map(|&x| x as u64)
                .collect()
        }
        P::F32 => lit.f32s = toks.iter().map(|&t| f32_of(c, t)).collect::<PResult<_>>()?,
        P::F64 => lit.f64s = toks.iter().map(|&t| f64_of(c, t)).collect::<PResult<_>>()?,
        P::C64 => lit.c64s = toks.iter().map(|&t| f32_of(c, t)).collect::<PResult<_>>()?,
        P::C128 => lit.c128s = toks.iter().map(|&t| f64_of(c, t)).collect::<PResult<_>>()?,
        P::F16 => {
            for &t in toks {
                let b = float_bits(c, t, 10, 16, |v| half::f16::from_f64(v).to_bits().into())?;
                lit.f16s.extend_from_slice(&(b as u16).to_le_bytes());
            }
        }
        P::Bf16 => {
            for &t in toks {
                let b = float_bits(c, t, 7, 16, |v| half::bf16::from_f64(v).to_bits().into())?;
                lit.bf16s.extend_from_slice(&(b as u16).to_le_bytes());
            }
        }
        other => {
            return Err(c.unsupported(at, format!("constants of type {other:?} in HLO text")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(p: PrimitiveType, dims: &[i64]) -> ShapeProto {
        ShapeProto {
            element_type: p as i32,
            dimensions: dims.to_vec(),
            ..Default::default()
        }
    }

    fn read(text: &str, s: &ShapeProto) -> Result<LiteralProto, String> {
        literal(&mut Cursor::new(text), s).map_err(|e| e.to_string())
    }

    #[test]
    fn nested_values_follow_the_shape() {
        let l = read(
            "{ {1, 2, 3}, {4, 5, -6} }",
            &shape(PrimitiveType::S32, &[2, 3]),
        );
        assert_eq!(l.map(|l| l.s32s), Ok(vec![1, 2, 3, 4, 5, -6]));
        let e = read("{ {1, 2}, {4, 5} }", &shape(PrimitiveType::S32, &[2, 3]));
        assert_eq!(e.err().as_deref(), Some("1:8: expected `,`, found `}`"));
        let e = read("{1, 2, 3}", &shape(PrimitiveType::S32, &[2]));
        assert_eq!(
            e.err().as_deref(),
            Some("1:6: expected `}` after 2 elements, found `,`")
        );
    }

    #[test]
    fn floats_keep_specials_and_payloads() {
        let l = read(
            "{-inf, nan, -nan(0x7f), 0.1}",
            &shape(PrimitiveType::F32, &[4]),
        );
        let v = l.map(|l| l.f32s.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
        assert_eq!(
            v,
            Ok(vec![
                0xff80_0000,
                0x7fc0_0000,
                0xff80_007f,
                0.1f32.to_bits()
            ])
        );
        let l = read("1.5", &shape(PrimitiveType::Bf16, &[]));
        assert_eq!(l.map(|l| l.bf16s), Ok(vec![0xc0, 0x3f]));
    }

    #[test]
    fn sub_byte_integers_take_one_byte_each() {
        let l = read("{-8, 7, -1}", &shape(PrimitiveType::S4, &[3]));
        assert_eq!(l.map(|l| l.s4s), Ok(vec![0xf8, 0x07, 0xff]));
        let l = read("{15, 0}", &shape(PrimitiveType::U4, &[2]));
        assert_eq!(l.map(|l| l.u4s), Ok(vec![15, 0]));
        let l = read("{-2, 1}", &shape(PrimitiveType::S2, &[2]));
        assert_eq!(l.map(|l| l.s2s), Ok(vec![0xfe, 0x01]));
        let l = read("3", &shape(PrimitiveType::U2, &[]));
        assert_eq!(l.map(|l| l.u2s), Ok(vec![3]));
    }

    #[test]
    fn out_of_range_and_elided_values_are_errors() {
        let e = read("300", &shape(PrimitiveType::U8, &[]));
        assert_eq!(
            e.err().as_deref(),
            Some("1:1: expected an integer of type u8, found `300`")
        );
        let e = read("{7, -9}", &shape(PrimitiveType::S4, &[2]));
        assert_eq!(
            e.err().as_deref(),
            Some("1:5: expected an integer of type s4, found `-9`")
        );
        let e = read("{...}", &shape(PrimitiveType::F32, &[100]));
        assert!(e.err().is_some_and(|m| m.contains("unsupported")));
    }
}
