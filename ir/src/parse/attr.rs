//! Attribute syntax: builtin attributes (integers, floats, strings, arrays, dictionaries,
//! `array<i64: ...>`, `dense<...>`, types, symbols) and the structured `#stablehlo.*`
//! attributes. Anything else starting with `#` (or `affine_map<...>` and friends) is kept
//! verbatim as [`Attr::Opaque`].
//!
//! Invariants: integer literals are range-checked against their type; the struct-like
//! `#stablehlo.*` attributes reject unknown and duplicated fields.

use super::lexer::{unescape, Tok, Token};
use super::{PResult, Parser};
use crate::attr::{
    Attr, ConvDims, DotDims, EnumAttr, EnumKind, GatherDims, NamedAttrs, ScatterDims,
};
use crate::types::ElemType;

/// A field value of a `#stablehlo.*<...>` struct.
pub(crate) enum FieldVal {
    Int(i64),
    List(Vec<i64>),
}

impl<'a> Parser<'a> {
    /// `{name = value, unit_name, "quoted" = value}`.
    pub fn parse_attr_dict(&mut self) -> PResult<NamedAttrs> {
        let mut d = NamedAttrs::new();
        self.parse_attr_dict_into(&mut d)?;
        Ok(d)
    }

    /// Parses `{...}` adding its entries to `d` (an entry already in `d` is an error).
    pub fn parse_attr_dict_into(&mut self, d: &mut NamedAttrs) -> PResult<()> {
        self.enter()?;
        self.expect(Tok::LBrace, "'{' to open an attribute dictionary")?;
        if !self.eat(Tok::RBrace) {
            loop {
                let t = self.peek();
                let name = match t.kind {
                    Tok::Ident => self.text(t).to_string(),
                    Tok::Str => self.string_value(t)?,
                    _ => return self.err_expected(t, "attribute name"),
                };
                self.bump();
                let v = if self.eat(Tok::Equal) {
                    self.parse_attr()?
                } else {
                    Attr::Unit
                };
                if d.contains(&name) {
                    return self.err_at(Self::span_of(t), format!("duplicate attribute '{name}'"));
                }
                d.set(name, v);
                if self.eat(Tok::RBrace) {
                    break;
                }
                self.expect(Tok::Comma, "',' or '}' in attribute dictionary")?;
            }
        }
        self.leave();
        Ok(())
    }

    /// The unescaped contents of a string token.
    pub fn string_value(&self, t: Token) -> PResult<String> {
        let raw = self.text(t);
        match unescape(&raw[1..raw.len() - 1]) {
            Some(s) => Ok(s),
            None => self.err_at(Self::span_of(t), "invalid escape sequence in string"),
        }
    }

    /// Any attribute value.
    pub fn parse_attr(&mut self) -> PResult<Attr> {
        self.enter()?;
        let r = self.parse_attr_inner();
        self.leave();
        r
    }

    fn parse_attr_inner(&mut self) -> PResult<Attr> {
        let t = self.peek();
        match t.kind {
            Tok::Str => {
                self.bump();
                let s = self.string_value(t)?;
                if self.at(Tok::Colon) {
                    // `"..." : type` — keep verbatim.
                    self.bump();
                    self.parse_type()?;
                    return Ok(Attr::Opaque(
                        self.src[t.start as usize..self.pos].to_string(),
                    ));
                }
                Ok(Attr::Str(s))
            }
            Tok::Int | Tok::Float | Tok::Minus => self.parse_number_attr(),
            Tok::LSquare => {
                self.bump();
                let mut v = Vec::new();
                if !self.eat(Tok::RSquare) {
                    loop {
                        v.push(self.parse_attr()?);
                        if self.eat(Tok::RSquare) {
                            break;
                        }
                        self.expect(Tok::Comma, "',' or ']' in array attribute")?;
                    }
                }
                Ok(Attr::Array(v))
            }
            Tok::LBrace => Ok(Attr::Dict(self.parse_attr_dict()?)),
            Tok::At => self.parse_symbol_attr(),
            Tok::Hash => self.parse_hash_attr(),
            Tok::Bang => Ok(Attr::Type(self.parse_type()?)),
            Tok::Ident => self.parse_keyword_attr(t),
            _ => self.err_expected(t, "attribute value"),
        }
    }

    fn parse_symbol_attr(&mut self) -> PResult<Attr> {
        let t = self.bump();
        let mut name = self.symbol_name(t)?;
        while self.at(Tok::Colon) {
            // `@a::@b` lexes as `@a` `:` `:` `@b`.
            let save = (self.pos, self.peeked);
            self.bump();
            if !self.eat(Tok::Colon) || !self.at(Tok::At) {
                self.pos = save.0;
                self.peeked = save.1;
                break;
            }
            let n = self.bump();
            name.push_str("::@");
            name.push_str(&self.symbol_name(n)?);
        }
        Ok(Attr::Symbol(name))
    }

    fn parse_keyword_attr(&mut self, t: Token) -> PResult<Attr> {
        let s = self.text(t);
        match s {
            "true" | "false" => {
                self.bump();
                Ok(Attr::Bool(s == "true"))
            }
            "unit" => {
                self.bump();
                Ok(Attr::Unit)
            }
            "array" => self.parse_dense_array(),
            "dense" => self.parse_dense_attr(),
            "tensor" | "tuple" => Ok(Attr::Type(self.parse_type()?)),
            "dense_resource" => self.err_at(
                Self::span_of(t),
                "dense_resource attributes are unsupported",
            ),
            _ => {
                self.bump();
                if self.lx.bytes.get(t.end as usize) == Some(&b'<') {
                    self.skip_angle_body()?;
                }
                Ok(Attr::Opaque(
                    self.src[t.start as usize..self.pos].to_string(),
                ))
            }
        }
    }

    /// Skips a balanced `<...>` starting at the next token.
    pub fn skip_angle_body(&mut self) -> PResult<()> {
        let open = self.expect(Tok::Less, "'<'")?;
        let mut depth = 1u32;
        loop {
            let t = self.bump();
            match t.kind {
                Tok::Less => depth += 1,
                Tok::Greater => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                Tok::Eof | Tok::Error => {
                    return self.err_at(Self::span_of(open), "unbalanced '<' in attribute")
                }
                _ => {}
            }
        }
    }

    /// A number with an optional `: type` (integers default to i64, floats to f64).
    fn parse_number_attr(&mut self) -> PResult<Attr> {
        let start = self.peek();
        let neg = self.eat(Tok::Minus);
        let t = self.peek();
        let is_float = t.kind == Tok::Float;
        if !matches!(t.kind, Tok::Int | Tok::Float) {
            return self.err_expected(t, "number");
        }
        self.bump();
        let ty = if self.eat(Tok::Colon) {
            let tt = self.peek();
            if tt.kind == Tok::Ident && self.text(tt) == "index" {
                self.bump();
                return Ok(Attr::Opaque(
                    self.src[start.start as usize..self.pos].to_string(),
                ));
            }
            Some((self.parse_elem_type()?, tt))
        } else {
            None
        };
        let elem = ty.map(|x| x.0).unwrap_or(if is_float {
            ElemType::F64
        } else {
            ElemType::Int(64)
        });
        if elem.is_float() {
            let v = self.float_literal(t, neg, elem)?;
            return Ok(Attr::Float(v, elem));
        }
        if is_float {
            return self.err_at(Self::span_of(t), "float literal with an integer type");
        }
        let v = self.int_literal(t, neg, elem)?;
        if elem == ElemType::I1 {
            return Ok(Attr::Bool(v != 0));
        }
        Ok(Attr::Int(v, elem))
    }

    /// The value of an integer token, sign applied, range-checked against `elem`
    /// (unsigned values are returned by bit pattern).
    pub fn int_literal(&self, t: Token, neg: bool, elem: ElemType) -> PResult<i64> {
        let s = self.text(t);
        let mag: Option<u64> = if let Some(h) = s.strip_prefix("0x") {
            u64::from_str_radix(h, 16).ok()
        } else {
            s.parse().ok()
        };
        let bits = match elem {
            ElemType::I1 => 1,
            ElemType::Int(b) | ElemType::UInt(b) => b as u32,
            _ => 64,
        };
        let unsigned = elem.is_unsigned();
        let ok = |m: u64| -> Option<i64> {
            if neg {
                if unsigned && m != 0 {
                    return None;
                }
                let lim = if bits >= 64 {
                    1u64 << 63
                } else {
                    1u64 << (bits - 1)
                };
                let lim = if bits == 1 { 1 } else { lim };
                (m <= lim).then(|| (m as i64).wrapping_neg())
            } else {
                let lim = if bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                (m <= lim).then_some(m as i64)
            }
        };
        match mag.and_then(ok) {
            Some(v) => Ok(v),
            None => self.err_at(
                Self::span_of(t),
                format!(
                    "integer literal '{}{s}' out of range for {elem}",
                    if neg { "-" } else { "" }
                ),
            ),
        }
    }

    /// `array<i64: 1, 2>`, `array<i1: true>`, `array<f32: 1.0>`, `array<i64>`.
    fn parse_dense_array(&mut self) -> PResult<Attr> {
        self.bump();
        self.expect(Tok::Less, "'<' after 'array'")?;
        let et = self.peek();
        let elem = self.parse_elem_type()?;
        let mut ints = Vec::new();
        let mut bools = Vec::new();
        let mut floats = Vec::new();
        if self.eat(Tok::Colon) {
            loop {
                let neg = self.eat(Tok::Minus);
                let t = self.peek();
                if elem == ElemType::I1 {
                    match self.text(t) {
                        "true" | "1" => bools.push(true),
                        "false" | "0" => bools.push(false),
                        _ => return self.err_expected(t, "'true' or 'false'"),
                    }
                    self.bump();
                } else if elem.is_float() {
                    if !matches!(t.kind, Tok::Int | Tok::Float) {
                        return self.err_expected(t, "float");
                    }
                    self.bump();
                    floats.push(self.float_literal(t, neg, elem)?);
                } else if elem.is_integer() {
                    if t.kind != Tok::Int {
                        return self.err_expected(t, "integer");
                    }
                    self.bump();
                    ints.push(self.int_literal(t, neg, elem)?);
                } else {
                    return self.err_at(Self::span_of(et), "unsupported array element type");
                }
                if self.eat(Tok::Greater) {
                    break;
                }
                self.expect(Tok::Comma, "',' or '>' in array")?;
            }
        } else {
            self.expect(Tok::Greater, "':' or '>' in array")?;
        }
        Ok(if elem == ElemType::I1 {
            Attr::BoolArray(bools)
        } else if elem.is_float() {
            Attr::FloatArray(elem, floats)
        } else {
            Attr::IntArray(elem, ints)
        })
    }

    /// `#...` attributes: enums, structured StableHLO attributes, aliases, opaque.
    fn parse_hash_attr(&mut self) -> PResult<Attr> {
        let t = self.bump();
        let name = self.text(t);
        let glued = self.lx.bytes.get(t.end as usize) == Some(&b'<');
        if !glued {
            if let Some(a) = self.attr_aliases.get(name) {
                return Ok(a.clone());
            }
            return Ok(Attr::Opaque(name.to_string()));
        }
        let save = (self.pos, self.peeked);
        let parsed = match name {
            "#stablehlo" => self.parse_stablehlo_enum()?,
            "#stablehlo.dot" => Some(Attr::DotDims(self.parse_dot_dims_struct()?)),
            "#stablehlo.gather" => Some(Attr::GatherDims(self.parse_gather_struct()?)),
            "#stablehlo.scatter" => Some(Attr::ScatterDims(self.parse_scatter_struct()?)),
            "#stablehlo.conv" => {
                self.expect(Tok::Less, "'<'")?;
                let d = if self.eat_kw("raw") {
                    self.parse_conv_raw()?
                } else {
                    let d = self.parse_conv_dims()?;
                    self.expect(Tok::Greater, "'>' to close #stablehlo.conv")?;
                    d
                };
                Some(Attr::ConvDims(d))
            }
            "#stablehlo.channel_handle" => {
                let f = self.parse_struct(&["handle", "type"])?;
                Some(Attr::ChannelHandle {
                    handle: field_int(&f[0]),
                    ty: field_int(&f[1]),
                })
            }
            "#stablehlo.output_operand_alias" => {
                let f = self.parse_struct(&[
                    "output_tuple_indices",
                    "operand_index",
                    "operand_tuple_indices",
                ])?;
                Some(Attr::OutputOperandAlias {
                    output_tuple_indices: field_list(&f[0]),
                    operand_index: field_int(&f[1]),
                    operand_tuple_indices: field_list(&f[2]),
                })
            }
            "#stablehlo.result_accuracy" => Some(self.parse_result_accuracy()?),
            _ => match name
                .strip_prefix("#stablehlo.")
                .and_then(EnumKind::from_mnemonic)
            {
                Some(kind) => {
                    self.expect(Tok::Less, "'<'")?;
                    let v = self.parse_enum_case(kind)?;
                    self.expect(Tok::Greater, "'>'")?;
                    Some(v)
                }
                None => None,
            },
        };
        match parsed {
            Some(a) => Ok(a),
            None => {
                self.pos = save.0;
                self.peeked = save.1;
                self.skip_angle_body()?;
                Ok(Attr::Opaque(
                    self.src[t.start as usize..self.pos].to_string(),
                ))
            }
        }
    }

    /// `<mnemonic CASE>` after `#stablehlo`; `None` for unknown mnemonics.
    fn parse_stablehlo_enum(&mut self) -> PResult<Option<Attr>> {
        self.expect(Tok::Less, "'<'")?;
        let m = self.peek();
        let Some(kind) = (m.kind == Tok::Ident)
            .then(|| EnumKind::from_mnemonic(self.text(m)))
            .flatten()
        else {
            return Ok(None);
        };
        self.bump();
        let v = self.parse_enum_case(kind)?;
        self.expect(Tok::Greater, "'>' to close the enum attribute")?;
        Ok(Some(v))
    }

    /// An enum case keyword of `kind`.
    pub fn parse_enum_case(&mut self, kind: EnumKind) -> PResult<Attr> {
        let t = self.peek();
        let s = self.text(t);
        if t.kind != Tok::Ident || !kind.cases().contains(&s) {
            return self.err_expected(
                t,
                &format!(
                    "{} value (one of {})",
                    kind.mnemonic(),
                    kind.cases().join(", ")
                ),
            );
        }
        self.bump();
        Ok(Attr::Enum(EnumAttr {
            kind,
            value: s.to_string(),
        }))
    }

    /// `[1, 2, 3]` of integers.
    pub fn parse_int_list(&mut self) -> PResult<Vec<i64>> {
        if let Some(v) = self.fast_int_list() {
            return Ok(v);
        }
        self.expect(Tok::LSquare, "'[' to open a dimension list")?;
        let mut v = Vec::new();
        if self.eat(Tok::RSquare) {
            return Ok(v);
        }
        loop {
            v.push(self.parse_signed_int()?);
            if self.eat(Tok::RSquare) {
                return Ok(v);
            }
            self.expect(Tok::Comma, "',' or ']' in dimension list")?;
        }
    }

    /// The common spelling of a dimension list, `[1, -2, 3]` (short decimal entries,
    /// single-line blanks), read from the bytes: the same list and end position as the
    /// token path. `None` (nothing consumed) for anything else, errors included.
    fn fast_int_list(&mut self) -> Option<Vec<i64>> {
        let b = self.lx.bytes;
        let start = match self.peeked {
            None => self.lx.skip_trivia(self.pos),
            Some(t) if t.kind == Tok::LSquare => t.start as usize,
            Some(_) => return None,
        };
        if b.get(start) != Some(&b'[') {
            return None;
        }
        let blanks = |mut i: usize| {
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
            i
        };
        let mut i = blanks(start + 1);
        let mut v = Vec::new();
        if b.get(i) == Some(&b']') {
            self.seek(i + 1);
            return Some(v);
        }
        loop {
            let neg = b.get(i) == Some(&b'-');
            i += neg as usize;
            let d0 = i;
            let mut x: i64 = 0;
            while let Some(&c) = b.get(i).filter(|c| c.is_ascii_digit()) {
                if i - d0 == 18 {
                    return None;
                }
                x = x * 10 + (c - b'0') as i64;
                i += 1;
            }
            if i == d0 {
                return None;
            }
            v.push(if neg { -x } else { x });
            // Only `,` or `]` may follow (after blanks): `0x..`, `1.5`, `2abc` lex otherwise.
            i = blanks(i);
            match b.get(i) {
                Some(b',') => i = blanks(i + 1),
                Some(b']') => {
                    self.seek(i + 1);
                    return Some(v);
                }
                _ => return None,
            }
        }
    }

    /// An optionally negative 64-bit integer.
    pub fn parse_signed_int(&mut self) -> PResult<i64> {
        let neg = self.eat(Tok::Minus);
        let t = self.expect(Tok::Int, "integer")?;
        self.int_literal(t, neg, ElemType::Int(64))
    }

    /// `<key = value, ...>` with keys from `keys` (each optional, at most once).
    pub fn parse_struct(&mut self, keys: &[&str]) -> PResult<Vec<Option<FieldVal>>> {
        self.expect(Tok::Less, "'<'")?;
        let mut out: Vec<Option<FieldVal>> = keys.iter().map(|_| None).collect();
        if self.eat(Tok::Greater) {
            return Ok(out);
        }
        loop {
            let t = self.peek();
            let idx = (t.kind == Tok::Ident)
                .then(|| keys.iter().position(|k| *k == self.text(t)))
                .flatten();
            let Some(i) = idx else {
                return self.err_expected(t, &format!("one of: {}", keys.join(", ")));
            };
            if out[i].is_some() {
                return self.err_at(Self::span_of(t), format!("duplicated '{}' entry", keys[i]));
            }
            self.bump();
            self.expect(Tok::Equal, "'='")?;
            out[i] = Some(if self.at(Tok::LSquare) {
                FieldVal::List(self.parse_int_list()?)
            } else {
                FieldVal::Int(self.parse_signed_int()?)
            });
            if self.eat(Tok::Greater) {
                return Ok(out);
            }
            self.expect(Tok::Comma, "',' or '>'")?;
            // MLIR's struct-attribute parser accepts a trailing comma before '>'.
            if self.eat(Tok::Greater) {
                return Ok(out);
            }
        }
    }

    fn parse_dot_dims_struct(&mut self) -> PResult<DotDims> {
        let f = self.parse_struct(&[
            "lhs_batching_dimensions",
            "rhs_batching_dimensions",
            "lhs_contracting_dimensions",
            "rhs_contracting_dimensions",
        ])?;
        Ok(DotDims {
            lhs_batching: field_list(&f[0]),
            rhs_batching: field_list(&f[1]),
            lhs_contracting: field_list(&f[2]),
            rhs_contracting: field_list(&f[3]),
        })
    }

    fn parse_gather_struct(&mut self) -> PResult<GatherDims> {
        let f = self.parse_struct(&[
            "offset_dims",
            "collapsed_slice_dims",
            "operand_batching_dims",
            "start_indices_batching_dims",
            "start_index_map",
            "index_vector_dim",
        ])?;
        Ok(GatherDims {
            offset_dims: field_list(&f[0]),
            collapsed_slice_dims: field_list(&f[1]),
            operand_batching_dims: field_list(&f[2]),
            start_indices_batching_dims: field_list(&f[3]),
            start_index_map: field_list(&f[4]),
            index_vector_dim: field_int(&f[5]),
        })
    }

    fn parse_scatter_struct(&mut self) -> PResult<ScatterDims> {
        let f = self.parse_struct(&[
            "update_window_dims",
            "inserted_window_dims",
            "input_batching_dims",
            "scatter_indices_batching_dims",
            "scatter_dims_to_operand_dims",
            "index_vector_dim",
        ])?;
        Ok(ScatterDims {
            update_window_dims: field_list(&f[0]),
            inserted_window_dims: field_list(&f[1]),
            input_batching_dims: field_list(&f[2]),
            scatter_indices_batching_dims: field_list(&f[3]),
            scatter_dims_to_operand_dims: field_list(&f[4]),
            index_vector_dim: field_int(&f[5]),
        })
    }

    /// `raw input_batch_dimension = 0, ... >` (the `<raw` was consumed).
    fn parse_conv_raw(&mut self) -> PResult<ConvDims> {
        // Re-use the struct parser by treating the body as `<...>`.
        const KEYS: [&str; 9] = [
            "input_batch_dimension",
            "input_feature_dimension",
            "input_spatial_dimensions",
            "kernel_input_feature_dimension",
            "kernel_output_feature_dimension",
            "kernel_spatial_dimensions",
            "output_batch_dimension",
            "output_feature_dimension",
            "output_spatial_dimensions",
        ];
        let mut out: Vec<Option<FieldVal>> = KEYS.iter().map(|_| None).collect();
        loop {
            let t = self.peek();
            let idx = (t.kind == Tok::Ident)
                .then(|| KEYS.iter().position(|k| *k == self.text(t)))
                .flatten();
            let Some(i) = idx else {
                return self.err_expected(t, "a convolution dimension field");
            };
            self.bump();
            self.expect(Tok::Equal, "'='")?;
            out[i] = Some(if self.at(Tok::LSquare) {
                FieldVal::List(self.parse_int_list()?)
            } else {
                FieldVal::Int(self.parse_signed_int()?)
            });
            if self.eat(Tok::Greater) {
                break;
            }
            self.expect(Tok::Comma, "',' or '>'")?;
        }
        Ok(ConvDims {
            input_batch: field_int(&out[0]),
            input_feature: field_int(&out[1]),
            input_spatial: field_list(&out[2]),
            kernel_input_feature: field_int(&out[3]),
            kernel_output_feature: field_int(&out[4]),
            kernel_spatial: field_list(&out[5]),
            output_batch: field_int(&out[6]),
            output_feature: field_int(&out[7]),
            output_spatial: field_list(&out[8]),
        })
    }

    /// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`.
    pub fn parse_conv_dims(&mut self) -> PResult<ConvDims> {
        let (ib, if_, is) = self.parse_conv_dim_list('b', 'f')?;
        self.expect_kw("x")?;
        let (ki, ko, ks) = self.parse_conv_dim_list('i', 'o')?;
        self.expect(Tok::Arrow, "'->' in convolution dimension numbers")?;
        let (ob, of, os) = self.parse_conv_dim_list('b', 'f')?;
        Ok(ConvDims {
            input_batch: ib,
            input_feature: if_,
            input_spatial: is,
            kernel_input_feature: ki,
            kernel_output_feature: ko,
            kernel_spatial: ks,
            output_batch: ob,
            output_feature: of,
            output_spatial: os,
        })
    }

    /// One `[b, 0, 1, f]` list: positions of the two letters and of each spatial index.
    fn parse_conv_dim_list(&mut self, a: char, b: char) -> PResult<(i64, i64, Vec<i64>)> {
        let open = self.expect(Tok::LSquare, "'[' to open a convolution dimension list")?;
        let (mut pa, mut pb) = (None, None);
        let mut spatial: Vec<Option<i64>> = Vec::new();
        let mut pos = 0i64;
        if !self.eat(Tok::RSquare) {
            loop {
                let t = self.bump();
                let s = self.text(t);
                match t.kind {
                    Tok::Ident if s.len() == 1 && (s.starts_with(a) || s.starts_with(b)) => {
                        let slot = if s.starts_with(a) { &mut pa } else { &mut pb };
                        if slot.replace(pos).is_some() {
                            return self
                                .err_at(Self::span_of(t), format!("duplicate '{s}' dimension"));
                        }
                    }
                    Tok::Int => {
                        let i: usize = match s.parse() {
                            Ok(i) if i < 64 => i,
                            _ => {
                                return self
                                    .err_at(Self::span_of(t), "spatial dimension index too large")
                            }
                        };
                        if spatial.len() <= i {
                            spatial.resize(i + 1, None);
                        }
                        if spatial[i].replace(pos).is_some() {
                            return self.err_at(
                                Self::span_of(t),
                                format!("duplicate spatial dimension {i}"),
                            );
                        }
                    }
                    _ => {
                        return self
                            .err_expected(t, &format!("'{a}', '{b}' or a spatial dimension index"))
                    }
                }
                pos += 1;
                if self.eat(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']' in dimension list")?;
            }
        }
        let (Some(pa), Some(pb)) = (pa, pb) else {
            return self.err_at(
                Self::span_of(open),
                format!("dimension list must contain '{a}' and '{b}'"),
            );
        };
        let spatial: Option<Vec<i64>> = spatial.into_iter().collect();
        match spatial {
            Some(s) => Ok((pa, pb, s)),
            None => self.err_at(
                Self::span_of(open),
                "spatial dimensions must be numbered 0..n-1",
            ),
        }
    }

    /// `<atol = f, rtol = f, ulps = n, mode = #stablehlo<result_accuracy_mode X>>`.
    fn parse_result_accuracy(&mut self) -> PResult<Attr> {
        self.expect(Tok::Less, "'<'")?;
        let (mut atol, mut rtol, mut ulps, mut mode) = (0.0, 0.0, 0i64, None);
        loop {
            let t = self.bump();
            let key = self.text(t);
            self.expect(Tok::Equal, "'='")?;
            match key {
                "atol" | "rtol" => {
                    let neg = self.eat(Tok::Minus);
                    let n = self.bump();
                    if !matches!(n.kind, Tok::Int | Tok::Float) {
                        return self.err_expected(n, "float");
                    }
                    let v = self.float_literal(n, neg, ElemType::F64)?;
                    if key == "atol" {
                        atol = v
                    } else {
                        rtol = v
                    }
                }
                "ulps" => ulps = self.parse_signed_int()?,
                "mode" => match self.parse_attr()? {
                    Attr::Enum(e) if e.kind == EnumKind::ResultAccuracyMode => mode = Some(e.value),
                    _ => return self.err_at(Self::span_of(t), "expected a result_accuracy_mode"),
                },
                _ => return self.err_expected(t, "one of: atol, rtol, ulps, mode"),
            }
            if self.eat(Tok::Greater) {
                break;
            }
            self.expect(Tok::Comma, "',' or '>'")?;
        }
        Ok(Attr::ResultAccuracy {
            atol,
            rtol,
            ulps,
            mode: mode.unwrap_or_else(|| "DEFAULT".to_string()),
        })
    }
}

pub(crate) fn field_int(f: &Option<FieldVal>) -> i64 {
    match f {
        Some(FieldVal::Int(v)) => *v,
        _ => 0,
    }
}

pub(crate) fn field_list(f: &Option<FieldVal>) -> Vec<i64> {
    match f {
        Some(FieldVal::List(v)) => v.clone(),
        _ => Vec::new(),
    }
}
