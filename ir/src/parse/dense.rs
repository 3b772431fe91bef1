//! `dense<...> : tensor<...>` payloads and float literals.
//!
//! Owns: decoding a dense attribute body — hex buffers (`"0x..."`, MLIR's raw
//! little-endian storage; one element's worth means splat), scalar splats and nested
//! literal lists — into [`DenseElements`] bytes, and the float literal rules (decimal,
//! `0x` bit patterns, complex `(re, im)`).
//! Invariants: the body is read only after its type is known (the body is skipped, the
//! type parsed, then the body decoded); output grows with the literals actually present,
//! so a huge type with a small body is an error, never a huge allocation; payloads whose
//! elements are all equal are stored as splats (as MLIR does).

use super::lexer::{Tok, Token};
use super::minifloat;
use super::{PResult, Parser};
use crate::attr::{Attr, DenseData, DenseElements};
use crate::module::Span;
use crate::types::ElemType;
use half::{bf16, f16};
use smallvec::SmallVec;
use std::sync::Arc;

impl<'a> Parser<'a> {
    /// `dense<body> : type` (the cursor is on `dense`).
    pub fn parse_dense_attr(&mut self) -> PResult<Attr> {
        let kw = self.bump();
        self.expect(Tok::Less, "'<' after 'dense'")?;
        let body_start = self.pos;
        let mut depth = 0u32;
        loop {
            let t = self.bump();
            match t.kind {
                Tok::Greater if depth == 0 => break,
                Tok::LSquare | Tok::LParen | Tok::Less => depth += 1,
                Tok::RSquare | Tok::RParen | Tok::Greater => depth = depth.saturating_sub(1),
                Tok::Eof | Tok::Error | Tok::LBrace | Tok::RBrace => {
                    return self.err_expected(t, "'>' to close the dense attribute")
                }
                _ => {}
            }
        }
        self.expect(Tok::Colon, "':' and the type of the dense attribute")?;
        let tt = self.peek();
        if self.is_index_tensor(tt) {
            self.parse_opaque_type_text()?;
            return Ok(Attr::Opaque(
                self.src[kw.start as usize..self.pos].to_string(),
            ));
        }
        let ty = self.parse_type()?;
        let Some(tensor) = self.m.types.tensor_of(ty) else {
            return self.err_at(Self::span_of(tt), "dense attribute type must be a tensor");
        };
        let (elem, len) = (tensor.elem, tensor.num_elements());
        let shape: SmallVec<[i64; 8]> = tensor.shape.iter().copied().collect();
        let after = self.pos;
        self.seek(body_start);
        let data = self.parse_dense_body(elem, &shape, len)?;
        self.seek(after);
        Ok(Attr::Elements(Arc::new(DenseElements {
            ty,
            elem,
            len,
            data,
        })))
    }

    /// Does the type at `t` have the `index` element type (kept opaque)?
    fn is_index_tensor(&self, t: Token) -> bool {
        if t.kind != Tok::Ident || self.text(t) != "tensor" {
            return false;
        }
        let rest = &self.lx.bytes[t.end as usize..];
        let end = rest.iter().position(|&b| b == b'>').unwrap_or(rest.len());
        rest[..end].ends_with(b"index")
    }

    fn parse_opaque_type_text(&mut self) -> PResult<()> {
        self.bump();
        self.skip_angle_body()
    }

    /// Decodes the body between `dense<` and `>` for a tensor of `len` `elem`s.
    fn parse_dense_body(&mut self, elem: ElemType, shape: &[i64], len: u64) -> PResult<DenseData> {
        let w = elem.byte_width();
        let t = self.peek();
        match t.kind {
            Tok::Greater => {
                if len != 0 {
                    return self.err_at(
                        Self::span_of(t),
                        "empty dense attribute for a non-empty tensor",
                    );
                }
                Ok(DenseData::Full(Arc::from(Vec::new())))
            }
            Tok::Str => {
                self.bump();
                self.decode_hex(t, elem, len)
            }
            Tok::LSquare => {
                let mut out = Vec::new();
                if shape.is_empty() {
                    return self.err_at(Self::span_of(t), "nested list for a rank-0 tensor");
                }
                self.parse_dense_list(elem, shape, &mut out)?;
                Ok(canonical(out, w, len))
            }
            _ => {
                let mut out = Vec::with_capacity(w);
                self.write_elem(elem, &mut out)?;
                Ok(DenseData::Splat(out.into()))
            }
        }
    }

    /// `[...]` nested to the tensor's rank, exactly `shape[0]` entries per level.
    fn parse_dense_list(
        &mut self,
        elem: ElemType,
        shape: &[i64],
        out: &mut Vec<u8>,
    ) -> PResult<()> {
        let open = self.expect(Tok::LSquare, "'[' in dense literal")?;
        let mut n = 0i64;
        if !self.eat(Tok::RSquare) {
            loop {
                if shape.len() > 1 {
                    self.parse_dense_list(elem, &shape[1..], out)?;
                } else {
                    self.write_elem(elem, out)?;
                }
                n += 1;
                if self.eat(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']' in dense literal")?;
            }
        }
        if n != shape[0] {
            let end = self.pos as u32;
            return self.err_at(
                Span {
                    start: open.start,
                    end,
                },
                format!(
                    "dense literal has {n} elements in a dimension of size {}",
                    shape[0]
                ),
            );
        }
        Ok(())
    }

    /// Hex buffer: one element (splat) or all elements; `i1` may also be bit-packed.
    fn decode_hex(&self, t: Token, elem: ElemType, len: u64) -> PResult<DenseData> {
        let raw = &self.lx.bytes[t.start as usize + 1..t.end as usize - 1];
        let Some(hex) = raw.strip_prefix(b"0x") else {
            return self.err_at(
                Self::span_of(t),
                "expected a hex string \"0x...\" in dense attribute",
            );
        };
        if hex.len() % 2 != 0 {
            return self.err_at(Self::span_of(t), "odd number of hex digits");
        }
        let n = (hex.len() / 2) as u64;
        let w = elem.byte_width() as u64;
        let packed_bool = elem == ElemType::I1 && n == len.div_ceil(8) && n != len;
        if n != w && n != len.saturating_mul(w) && !packed_bool {
            return self.err_at(
                Self::span_of(t),
                format!("hex buffer of {n} bytes does not fit {len} elements of {elem}"),
            );
        }
        let mut bytes = Vec::with_capacity(n as usize);
        for pair in hex.chunks_exact(2) {
            match (hexval(pair[0]), hexval(pair[1])) {
                (Some(h), Some(l)) => bytes.push(h << 4 | l),
                _ => return self.err_at(Self::span_of(t), "invalid hex digit in dense attribute"),
            }
        }
        if packed_bool {
            let unpacked = (0..len as usize)
                .map(|i| (bytes[i / 8] >> (i % 8)) & 1)
                .collect();
            return Ok(canonical(unpacked, 1, len));
        }
        if elem == ElemType::I1 && bytes.iter().any(|&b| b > 1) {
            return self.err_at(
                Self::span_of(t),
                "i1 hex buffer holds values other than 0/1",
            );
        }
        if n == w {
            return Ok(DenseData::Splat(bytes.into()));
        }
        Ok(canonical(bytes, w as usize, len))
    }

    /// One scalar literal of `elem` (complex: `(re, im)`), appended as bytes.
    fn write_elem(&mut self, elem: ElemType, out: &mut Vec<u8>) -> PResult<()> {
        if let Some(part) = elem.complex_part() {
            self.expect(Tok::LParen, "'(' to open a complex literal")?;
            self.write_elem(part, out)?;
            self.expect(Tok::Comma, "',' in complex literal")?;
            self.write_elem(part, out)?;
            self.expect(Tok::RParen, "')' to close a complex literal")?;
            return Ok(());
        }
        let neg = self.eat(Tok::Minus);
        let t = self.peek();
        if elem == ElemType::I1 {
            let v = match (t.kind, self.text(t)) {
                (Tok::Ident, "true") | (Tok::Int, "1") => 1,
                (Tok::Ident, "false") | (Tok::Int, "0") => 0,
                _ => return self.err_expected(t, "'true' or 'false'"),
            };
            self.bump();
            out.push(v);
            return Ok(());
        }
        if !matches!(t.kind, Tok::Int | Tok::Float) {
            return self.err_expected(t, &format!("{elem} literal"));
        }
        self.bump();
        if elem.is_float() {
            return self.write_float(t, neg, elem, out);
        }
        if t.kind == Tok::Float {
            return self.err_at(
                Self::span_of(t),
                format!("float literal for integer type {elem}"),
            );
        }
        let v = self.int_literal(t, neg, elem)?;
        out.extend_from_slice(&v.to_le_bytes()[..elem.byte_width()]);
        Ok(())
    }

    /// A float element: `0x` bit patterns are stored as is, decimals are rounded.
    fn write_float(&self, t: Token, neg: bool, elem: ElemType, out: &mut Vec<u8>) -> PResult<()> {
        let s = self.text(t);
        let w = elem.byte_width();
        if let Some(h) = s.strip_prefix("0x") {
            let bits = u64::from_str_radix(h, 16)
                .ok()
                .filter(|&b| w >= 8 || b >> (8 * w) == 0);
            return match (bits, neg) {
                (Some(b), false) => {
                    out.extend_from_slice(&b.to_le_bytes()[..w]);
                    Ok(())
                }
                _ => self.err_at(
                    Self::span_of(t),
                    format!("hex float literal does not fit {elem}"),
                ),
            };
        }
        let txt = if neg { format!("-{s}") } else { s.to_string() };
        let bad = || format!("invalid float literal '{txt}'");
        match elem {
            ElemType::F32 => match txt.parse::<f32>() {
                Ok(v) => out.extend_from_slice(&v.to_le_bytes()),
                Err(_) => return self.err_at(Self::span_of(t), bad()),
            },
            _ => {
                let Ok(v) = txt.parse::<f64>() else {
                    return self.err_at(Self::span_of(t), bad());
                };
                match elem {
                    ElemType::F64 => out.extend_from_slice(&v.to_le_bytes()),
                    ElemType::F16 => out.extend_from_slice(&f16::from_f64(v).to_le_bytes()),
                    ElemType::BF16 => out.extend_from_slice(&bf16::from_f64(v).to_le_bytes()),
                    ElemType::F8(k) => out.push(minifloat::encode(k, v)),
                    _ => return self.err_at(Self::span_of(t), bad()),
                }
            }
        }
        Ok(())
    }

    /// The value of a float literal token as f64 (hex: bit pattern of `elem`).
    pub fn float_literal(&self, t: Token, neg: bool, elem: ElemType) -> PResult<f64> {
        let mut buf = Vec::with_capacity(8);
        self.write_float(t, neg, elem, &mut buf)?;
        Ok(bytes_to_f64(elem, &buf))
    }
}

/// Decodes one float element's bytes to f64.
pub(crate) fn bytes_to_f64(elem: ElemType, b: &[u8]) -> f64 {
    let mut a = [0u8; 8];
    a[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    match elem {
        ElemType::F64 => f64::from_le_bytes(a),
        ElemType::F32 => f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
        ElemType::F16 => f16::from_le_bytes([a[0], a[1]]).to_f64(),
        ElemType::BF16 => bf16::from_le_bytes([a[0], a[1]]).to_f64(),
        ElemType::F8(k) => minifloat::decode(k, a[0]),
        _ => f64::NAN,
    }
}

fn hexval(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Full data, or a splat when every element is equal (MLIR's canonical storage).
pub(crate) fn canonical(bytes: Vec<u8>, w: usize, len: u64) -> DenseData {
    if len >= 1 && w > 0 && bytes.len() == len as usize * w {
        let first = &bytes[..w];
        if bytes.chunks_exact(w).all(|c| c == first) {
            return DenseData::Splat(first.into());
        }
    }
    DenseData::Full(Arc::from(bytes))
}
