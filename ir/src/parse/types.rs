//! Type syntax: `tensor<2x3xf32>`, `tuple<...>`, `!stablehlo.token`,
//! `!stablehlo.future<...>`, element types,
//! `complex<f32>`, function types `(a, b) -> c`.
//!
//! Invariants: only ranked tensors of static or bounded shape are accepted (a bounded type,
//! `tensor<?x3xi32, #stablehlo.bounds<48, ?>>`, reads as its bound `tensor<48x3xi32>` and is
//! logged in `Parser::bounded_types` for `bounded` to check; unbounded `?` dims, unranked
//! tensors, other encodings and quantized element types are clear errors); the element count of a
//! tensor type is checked against [`MAX_ELEMENTS`] with overflow-safe arithmetic.
//! Tensor types in the common compact spelling (`tensor<4x8xf32>`) are read from the
//! bytes and cached by their text, so a repeated type costs one scan and one hash lookup.

use super::lexer::Tok;
use super::ops::Tys;
use super::{PResult, Parser};
use crate::module::Span;
use crate::types::{ElemType, Type, TypeId, MAX_ELEMENTS};

impl<'a> Parser<'a> {
    /// Parses a value type (tensor, tuple, token, or a `!alias`).
    pub fn parse_type(&mut self) -> PResult<TypeId> {
        if let Some(ty) = self.fast_tensor_type() {
            return Ok(ty);
        }
        let t = self.peek();
        match t.kind {
            Tok::Ident if self.text(t) == "tensor" => self.parse_tensor_type(),
            Tok::Ident if self.text(t) == "tuple" => {
                self.bump();
                self.enter()?;
                self.expect(Tok::Less, "'<' after 'tuple'")?;
                let mut elems = Vec::new();
                if !self.eat(Tok::Greater) {
                    loop {
                        elems.push(self.parse_type()?);
                        if self.eat(Tok::Greater) {
                            break;
                        }
                        self.expect(Tok::Comma, "',' or '>' in tuple type")?;
                    }
                }
                self.leave();
                Ok(self.m.types.intern(Type::Tuple(elems.into())))
            }
            Tok::Bang => {
                self.bump();
                let name = self.text(t);
                if name == "!stablehlo.token" {
                    return Ok(self.m.types.intern(Type::Token));
                }
                if name == "!stablehlo.future" {
                    return self.parse_future_elems();
                }
                if let Some(&ty) = self.type_aliases.get(name) {
                    return Ok(ty);
                }
                self.err_at(Self::span_of(t), format!("unsupported type '{name}'"))
            }
            Tok::Ident => {
                let s = self.text(t);
                if ElemType::from_keyword(s).is_some() || s == "complex" {
                    self.err_at(
                        Self::span_of(t),
                        format!("expected a tensor type, found scalar type '{s}'"),
                    )
                } else {
                    self.err_expected(t, "type")
                }
            }
            _ => self.err_expected(t, "type"),
        }
    }

    /// `<tensor, ...>` after `!stablehlo.future`: one or more tensor types.
    fn parse_future_elems(&mut self) -> PResult<TypeId> {
        self.enter()?;
        self.expect(Tok::Less, "'<' after '!stablehlo.future'")?;
        let mut elems = Vec::new();
        loop {
            let t = self.peek();
            if !(t.kind == Tok::Ident && self.text(t) == "tensor") {
                return self.err_at(
                    Self::span_of(t),
                    "future element type must be a ranked tensor",
                );
            }
            elems.push(self.parse_tensor_type()?);
            if self.eat(Tok::Greater) {
                break;
            }
            self.expect(Tok::Comma, "',' or '>' in future type")?;
        }
        self.leave();
        Ok(self.m.types.intern(Type::Future(elems.into())))
    }

    /// The common spelling `tensor<4x8xf32>` (no blanks, a plain element keyword) read
    /// straight from the bytes, without tokens and without allocating. `None` (nothing
    /// consumed) for anything else, which [`Self::parse_tensor_type`] then reads and
    /// diagnoses; both give the same type for the same text.
    fn fast_tensor_type(&mut self) -> Option<TypeId> {
        let b = self.lx.bytes;
        let start = match self.peeked {
            Some(t) if t.kind == Tok::Ident && t.end - t.start == 6 => t.start as usize,
            Some(_) => return None,
            None => self.lx.skip_trivia(self.pos),
        };
        let rest = b.get(start..)?.strip_prefix(b"tensor<")?;
        let body = &rest[..find_gt(rest)?];
        let end = start + 7 + body.len() + 1;
        if let Some(&ty) = self.tensor_cache.get(body) {
            self.seek(end);
            return Some(ty);
        }
        let (elem, dims, rank) = compact_tensor(body)?;
        let ty = self.m.types.tensor(elem, &dims[..rank]);
        self.tensor_cache.insert(body, ty);
        self.seek(end);
        Some(ty)
    }

    /// `tensor<...>`; the cursor is on the `tensor` keyword.
    fn parse_tensor_type(&mut self) -> PResult<TypeId> {
        let kw = self.bump();
        let b = self.lx.bytes;
        let start = kw.start as usize;
        let mut i = kw.end as usize;
        if b.get(i) != Some(&b'<') {
            let t = self.peek();
            return self.err_expected(t, "'<' after 'tensor'");
        }
        i += 1;
        let mut shape = Vec::new();
        let mut count: u64 = 1;
        let mut dynamic: Vec<usize> = Vec::new();
        let mut first_dynamic = None;
        loop {
            let d0 = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i == d0 {
                match b.get(i) {
                    Some(b'?') if b.get(i + 1) == Some(&b'x') && shape.len() < 64 => {
                        // Bounded only with a `#stablehlo.bounds` encoding (checked below).
                        dynamic.push(shape.len());
                        first_dynamic.get_or_insert(i as u32);
                        shape.push(0);
                        i += 2;
                        continue;
                    }
                    Some(b'*') => {
                        return self.err_at(
                            Span {
                                start: i as u32,
                                end: i as u32 + 1,
                            },
                            "unranked tensors are unsupported",
                        )
                    }
                    _ => break,
                }
            }
            if b.get(i) != Some(&b'x') {
                // A bare number is not a shape dimension: fall through to the element type.
                i = d0;
                break;
            }
            let d: i64 = match self.src[d0..i].parse() {
                Ok(d) => d,
                Err(_) => {
                    return self.err_at(
                        Span {
                            start: d0 as u32,
                            end: i as u32,
                        },
                        "dimension too large",
                    )
                }
            };
            count = count.saturating_mul(d as u64);
            if count > MAX_ELEMENTS || shape.len() >= 64 {
                return self.err_at(
                    Span {
                        start: start as u32,
                        end: i as u32,
                    },
                    format!("tensor type has more than {MAX_ELEMENTS} elements or 64 dimensions"),
                );
            }
            shape.push(d);
            i += 1;
        }
        self.seek(i);
        let elem = self.parse_elem_type()?;
        if self.at(Tok::Comma) {
            let t = self.bump();
            let enc = self.peek();
            if enc.kind != Tok::Hash || self.text(enc) != "#stablehlo.bounds" {
                return self.err_at(
                    Self::span_of(t),
                    "tensor encodings other than #stablehlo.bounds (e.g. sparsity) are unsupported",
                );
            }
            self.parse_bounds(&mut shape, &dynamic)?;
        } else if let Some(q) = first_dynamic {
            return self.err_at(
                Span {
                    start: q,
                    end: q + 1,
                },
                "dynamic dimensions are unsupported (static shapes only; a '?' needs a \
                 #stablehlo.bounds encoding)",
            );
        }
        self.expect(Tok::Greater, "'>' to close the tensor type")?;
        // Static dims were counted as they were read; bounds are known only now.
        let elems = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64));
        if !dynamic.is_empty() && elems.is_none_or(|n| n > MAX_ELEMENTS) {
            return self.err_at(
                Span {
                    start: start as u32,
                    end: self.pos as u32,
                },
                format!("tensor type has more than {MAX_ELEMENTS} elements"),
            );
        }
        let ty = self.m.types.tensor(elem, &shape);
        if !dynamic.is_empty() {
            let mask = dynamic.iter().fold(0u64, |m, &d| m | 1 << d);
            let span = Span {
                start: start as u32,
                end: self.pos as u32,
            };
            self.bounded_types.push((span, mask));
        }
        Ok(ty)
    }

    /// `#stablehlo.bounds<b0, ?, ...>` after a tensor type's element type (cursor on the
    /// `#stablehlo.bounds` token): a bound for each `?` dimension and `?` for each static one.
    /// Replaces the dynamic dims of `shape` by their bounds.
    fn parse_bounds(&mut self, shape: &mut [i64], dynamic: &[usize]) -> PResult<()> {
        let enc = self.bump();
        self.expect(Tok::Less, "'<' after '#stablehlo.bounds'")?;
        for (d, extent) in shape.iter_mut().enumerate() {
            if d > 0 {
                self.expect(Tok::Comma, "',' between bounds")?;
            }
            let t = self.peek();
            match (dynamic.contains(&d), t.kind) {
                (false, Tok::Question) => {
                    self.bump();
                }
                (true, Tok::Int) => {
                    let b: i64 = match self.text(t).parse() {
                        Ok(b) => b,
                        Err(_) => return self.err_at(Self::span_of(t), "bound too large"),
                    };
                    self.bump();
                    *extent = b;
                }
                (true, _) => return self.err_expected(t, "an integer bound for a '?' dimension"),
                (false, _) => return self.err_expected(t, "'?' (the dimension is static)"),
            }
        }
        if dynamic.is_empty() {
            return self.err_at(
                Self::span_of(enc),
                "#stablehlo.bounds on a static tensor type",
            );
        }
        self.expect(Tok::Greater, "'>' to close '#stablehlo.bounds'")?;
        Ok(())
    }

    /// An element type keyword, `complex<f32|f64>`.
    pub fn parse_elem_type(&mut self) -> PResult<ElemType> {
        let t = self.peek();
        if t.kind == Tok::Bang {
            let s = self.text(t);
            if s.starts_with("!quant") {
                return self.err_at(Self::span_of(t), "quantized element types are unsupported");
            }
            return self.err_expected(t, "element type");
        }
        if t.kind != Tok::Ident {
            return self.err_expected(t, "element type");
        }
        let s = self.text(t);
        if s == "complex" {
            self.bump();
            self.expect(Tok::Less, "'<' after 'complex'")?;
            // Not recursive: the part must be a plain f32/f64 keyword.
            let pt = self.bump();
            let part = match (pt.kind, self.text(pt)) {
                (Tok::Ident, "f32") => ElemType::Complex64,
                (Tok::Ident, "f64") => ElemType::Complex128,
                _ => {
                    return self
                        .err_at(Self::span_of(pt), "complex element type must be f32 or f64")
                }
            };
            self.expect(Tok::Greater, "'>' to close the complex type")?;
            return Ok(part);
        }
        match ElemType::from_keyword(s) {
            Some(e) if s != "index" => {
                self.bump();
                Ok(e)
            }
            _ => self.err_expected(t, "element type"),
        }
    }

    /// `(a, b) -> c` or `(a) -> (b, c)`; returns (inputs, results).
    pub fn parse_function_type(&mut self) -> PResult<(Tys, Tys)> {
        self.expect(Tok::LParen, "'(' to open a function type")?;
        let ins = self.parse_type_list_until_rparen()?;
        self.expect(Tok::Arrow, "'->' in function type")?;
        let outs = self.parse_result_types()?;
        Ok((ins, outs))
    }

    /// Types up to and including `)` (the `(` was consumed).
    pub fn parse_type_list_until_rparen(&mut self) -> PResult<Tys> {
        let mut v = Tys::new();
        if self.eat(Tok::RParen) {
            return Ok(v);
        }
        loop {
            v.push(self.parse_type()?);
            if self.eat(Tok::RParen) {
                return Ok(v);
            }
            self.expect(Tok::Comma, "',' or ')' in type list")?;
        }
    }

    /// A single type or a parenthesized list (the result part of a function type).
    pub fn parse_result_types(&mut self) -> PResult<Tys> {
        if self.eat(Tok::LParen) {
            self.parse_type_list_until_rparen()
        } else {
            let mut v = Tys::new();
            v.push(self.parse_type()?);
            Ok(v)
        }
    }

    /// A comma-separated list of types with no delimiters (`a, b, c`).
    pub fn parse_type_list(&mut self) -> PResult<Tys> {
        let mut v = Tys::new();
        v.push(self.parse_type()?);
        while self.at(Tok::Comma) {
            let comma = self.peek();
            let rest = &self.lx.bytes[self.lx.skip_trivia(comma.end as usize)..];
            let is_type = rest.starts_with(b"tensor<")
                || rest.starts_with(b"tuple<")
                || rest.starts_with(b"!")
                || rest.starts_with(b"(");
            if !is_type {
                break;
            }
            self.bump();
            v.push(self.parse_type()?);
        }
        Ok(v)
    }

    /// Either a function type `(...) -> ...` or a plain type list; returns
    /// `Err(list)`-style: (Some((ins, outs)), None) or (None, Some(list)).
    pub fn parse_fn_or_types(&mut self) -> PResult<FnOrTypes> {
        // `(` always lexes as itself: test the byte rather than lexing a `tensor` keyword
        // that the type fast path reads again.
        let at_paren = match self.peeked {
            Some(t) => t.kind == Tok::LParen,
            None => self.lx.bytes.get(self.lx.skip_trivia(self.pos)) == Some(&b'('),
        };
        if at_paren {
            let (i, o) = self.parse_function_type()?;
            Ok(FnOrTypes::Fn(i, o))
        } else {
            Ok(FnOrTypes::List(self.parse_type_list()?))
        }
    }
}

/// Longest tensor type body (between `tensor<` and `>`) the fast path looks at.
const FAST_TENSOR_MAX: usize = 64;

/// Offset of the first `>` in the first [`FAST_TENSOR_MAX`] bytes of `s`, eight bytes
/// at a time (a tensor type body is short, and this runs for every type in the input).
fn find_gt(s: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    let s = &s[..s.len().min(FAST_TENSOR_MAX)];
    let mut chunks = s.chunks_exact(8);
    let mut base = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_le_bytes(w) ^ u64::from_le_bytes([b'>'; 8]);
        // The lowest set bit marks the first zero byte of `x`, i.e. the first `>`.
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(base + zero.trailing_zeros() as usize / 8);
        }
        base += 8;
    }
    let tail = chunks.remainder();
    tail.iter().position(|&c| c == b'>').map(|p| base + p)
}

/// Reads the body of a compact tensor type (`4x8xf32`: decimal dims, each followed by
/// `x`, then an element keyword) into (element type, dims, rank); `None` for anything
/// else (blanks, `?`, encodings, `complex<...>`, more than 8 dims, too many elements).
fn compact_tensor(body: &[u8]) -> Option<(ElemType, [i64; 8], usize)> {
    let mut dims = [0i64; 8];
    let mut rank = 0;
    let mut count: u64 = 1;
    let mut j = 0;
    loop {
        let d0 = j;
        let mut d: u64 = 0;
        while j < body.len() && body[j].is_ascii_digit() {
            d = d.wrapping_mul(10).wrapping_add((body[j] - b'0') as u64);
            j += 1;
        }
        if j == d0 {
            break;
        }
        if j - d0 > 12 || rank == dims.len() || body.get(j) != Some(&b'x') {
            return None;
        }
        count = count.saturating_mul(d);
        if count > MAX_ELEMENTS {
            return None;
        }
        dims[rank] = d as i64;
        rank += 1;
        j += 1;
    }
    let elem = match &body[j..] {
        b"f32" => ElemType::F32,
        b"i64" => ElemType::Int(64),
        b"i1" => ElemType::I1,
        b"i32" => ElemType::Int(32),
        b"bf16" => ElemType::BF16,
        b"f16" => ElemType::F16,
        b"f64" => ElemType::F64,
        b"index" => return None,
        kw if kw.iter().all(u8::is_ascii_alphanumeric) => {
            ElemType::from_keyword(std::str::from_utf8(kw).ok()?)?
        }
        _ => return None,
    };
    Some((elem, dims, rank))
}

/// The type part of pretty op syntaxes that accept a function type or plain types.
pub(crate) enum FnOrTypes {
    Fn(Tys, Tys),
    List(Tys),
}
