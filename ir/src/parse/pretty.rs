//! Custom (pretty) op syntaxes: the table-driven "operands, keywords, types" shape and
//! the special forms (constant, compare, slice, dot_general, convolution, custom_call,
//! while, reduce, ...). Each form produces exactly the attributes of the generic form.
//!
//! Invariant: the region-building forms (`reduce ... applies`, `while`) create the same
//! regions, block arguments and terminators the generic form spells out.

use super::dense::canonical;
use super::lexer::{Tok, Token};
use super::ops::{OpBuild, OperandRef, Tys};
use super::syntax::{syntax, Kw, Syntax, Ty, V};
use super::types::FnOrTypes;
use super::{PResult, Parser};
use crate::attr::{Attr, DenseElements, EnumKind};
use crate::ops::OpKind;
use crate::types::{ElemType, Type, TypeId};
use smallvec::smallvec;
use std::sync::Arc;

impl<'a> Parser<'a> {
    /// Parses the rest of an op written in custom syntax (the name was consumed).
    pub fn parse_pretty_op(&mut self, kind: OpKind, name: Token) -> PResult<OpBuild> {
        let mut b = OpBuild::new(kind);
        match syntax(kind) {
            Syntax::Generic => {
                return self.err_at(
                    Self::span_of(name),
                    format!(
                        "'{}' has no custom syntax; write it in the generic form \"{}\"(...)",
                        kind.name(),
                        kind.name()
                    ),
                )
            }
            Syntax::Simple(kws, ty) => self.parse_simple(&mut b, kws, ty, name)?,
            Syntax::Constant | Syntax::ChloConstant => self.parse_constant(&mut b, name)?,
            Syntax::Iota => {
                self.expect_kw("dim")?;
                self.expect(Tok::Equal, "'='")?;
                let d = self.parse_signed_int()?;
                b.attrs
                    .set("iota_dimension", Attr::Int(d, ElemType::Int(64)));
                self.opt_attr_dict(&mut b)?;
                self.expect(Tok::Colon, "':'")?;
                b.result_types = smallvec![self.parse_type()?];
            }
            Syntax::NoOperands => {
                self.opt_attr_dict(&mut b)?;
                self.expect(Tok::Colon, "':'")?;
                b.result_types = self.parse_result_types()?;
            }
            Syntax::Compare => self.parse_compare(&mut b, name)?,
            Syntax::Slice => self.parse_slice(&mut b, name)?,
            Syntax::GetTupleElement => {
                let o = self.parse_operand()?;
                self.expect(Tok::LSquare, "'['")?;
                let i = self.parse_signed_int()?;
                self.expect(Tok::RSquare, "']'")?;
                b.attrs.set("index", Attr::Int(i, ElemType::Int(32)));
                self.finish_functional(&mut b, &[o], name)?;
            }
            Syntax::Tuple => {
                let ops = self.parse_operand_list()?;
                self.opt_attr_dict(&mut b)?;
                self.expect(Tok::Colon, "':'")?;
                let t = self.peek();
                let ty = self.parse_type()?;
                let Type::Tuple(elems) = self.m.ty(ty).clone() else {
                    return self.err_at(Self::span_of(t), "expected tuple type");
                };
                self.set_operands(&mut b, &ops, &elems, name)?;
                b.result_types = smallvec![ty];
            }
            Syntax::OptimizationBarrier => {
                self.opt_attr_dict(&mut b)?;
                if self.eat(Tok::LParen) {
                    self.expect(Tok::RParen, "')'")?;
                } else {
                    let ops = self.parse_operand_list()?;
                    self.expect(Tok::Colon, "':'")?;
                    let tys = self.parse_type_list()?;
                    self.set_operands(&mut b, &ops, &tys, name)?;
                    b.result_types = tys;
                }
            }
            Syntax::Select => self.parse_select(&mut b, name)?,
            Syntax::Complex => self.parse_complex(&mut b, name)?,
            Syntax::DotGeneral => self.parse_dot_general(&mut b, name)?,
            Syntax::Convolution => self.parse_convolution(&mut b, name)?,
            Syntax::CustomCall | Syntax::Call => {
                let t = self.expect(Tok::At, "'@' symbol")?;
                let sym = self.symbol_name(t)?;
                if kind == OpKind::Call {
                    b.attrs.set("callee", Attr::Symbol(sym));
                } else {
                    b.attrs.set("call_target_name", Attr::Str(sym));
                }
                self.expect(Tok::LParen, "'('")?;
                let ops = self.parse_operand_list_all()?;
                self.expect(Tok::RParen, "',' or ')'")?;
                self.finish_functional(&mut b, &ops, name)?;
            }
            Syntax::Composite => {
                let t = self.expect(Tok::Str, "composite name string")?;
                let s = self.string_value(t)?;
                b.attrs.set("name", Attr::Str(s));
                let ops = self.parse_operand_list_all()?;
                self.finish_functional(&mut b, &ops, name)?;
            }
            Syntax::While => self.parse_while(&mut b, name)?,
            Syntax::Reduce => self.parse_reduce(&mut b, name)?,
            Syntax::Return => {
                let ops = self.parse_operand_list_all()?;
                self.opt_attr_dict(&mut b)?;
                let tys = if !ops.is_empty() || self.at(Tok::Colon) {
                    self.expect(Tok::Colon, "':' and the returned types")?;
                    self.parse_type_list()?
                } else {
                    Tys::new()
                };
                self.set_operands(&mut b, &ops, &tys, name)?;
            }
            Syntax::TopK => {
                self.expect(Tok::LParen, "'('")?;
                let o = self.parse_operand()?;
                self.expect(Tok::Comma, "','")?;
                self.expect_kw("k")?;
                self.expect(Tok::Equal, "'='")?;
                let k = self.parse_signed_int()?;
                b.attrs.set("k", Attr::Int(k, ElemType::Int(64)));
                if self.eat(Tok::Comma) {
                    self.expect_kw("is_stable")?;
                    self.expect(Tok::Equal, "'='")?;
                    let v = self.parse_kw_value(V::Bool)?;
                    b.attrs.set("is_stable", v);
                }
                self.expect(Tok::RParen, "')'")?;
                self.opt_attr_dict(&mut b)?;
                self.expect(Tok::Colon, "':'")?;
                let t = self.parse_type()?;
                self.expect(Tok::Arrow, "'->'")?;
                b.result_types = self.parse_result_types()?;
                self.set_operands(&mut b, &[o], &[t], name)?;
            }
            Syntax::CheckConst => {
                let o = self.parse_operand()?;
                self.expect(Tok::Comma, "','")?;
                let vt = self.peek();
                let v = self.parse_attr()?;
                let Attr::Elements(e) = &v else {
                    return self.err_at(Self::span_of(vt), "expected a dense constant");
                };
                let ty = e.ty;
                b.attrs.set("value", v);
                if kind == OpKind::CheckExpectAlmostEqConst && self.eat(Tok::Comma) {
                    self.expect_kw("tolerance")?;
                    self.expect(Tok::Equal, "'='")?;
                    let f = self.parse_kw_value(V::F64)?;
                    b.attrs.set("tolerance", f);
                }
                self.opt_attr_dict(&mut b)?;
                self.set_operands(&mut b, &[o], &[ty], name)?;
            }
            Syntax::ShardingAnnotation => self.parse_sharding_annotation(&mut b, name)?,
            Syntax::CheckClose => {
                let ops = self.parse_operand_list()?;
                self.expect(Tok::Comma, "','")?;
                self.expect_kw("max_ulp_difference")?;
                self.expect(Tok::Equal, "'='")?;
                let v = self.parse_kw_value(V::U64)?;
                b.attrs.set("max_ulp_difference", v);
                if self.eat(Tok::Comma) {
                    self.expect_kw("min_ulp_difference")?;
                    self.expect(Tok::Equal, "'='")?;
                    let v = self.parse_kw_value(V::U64)?;
                    b.attrs.set("min_ulp_difference", v);
                }
                self.expect(Tok::Colon, "':'")?;
                self.opt_attr_dict(&mut b)?;
                let tys = self.parse_type_list()?;
                self.set_operands(&mut b, &ops, &tys, name)?;
            }
        }
        Ok(b)
    }

    /// Merges an optional `{...}` attribute dictionary into `b`.
    pub fn opt_attr_dict(&mut self, b: &mut OpBuild) -> PResult<()> {
        if self.at(Tok::LBrace) {
            self.parse_attr_dict_into(&mut b.attrs)?;
        }
        Ok(())
    }

    /// If the next tokens are `, kw`, consumes the comma and returns true.
    fn at_comma_kw(&mut self, kw: &str) -> bool {
        if !self.at(Tok::Comma) {
            return false;
        }
        let save = (self.pos, self.peeked);
        self.bump();
        if self.at_kw(kw) {
            return true;
        }
        self.pos = save.0;
        self.peeked = save.1;
        false
    }

    fn parse_simple(&mut self, b: &mut OpBuild, kws: &[Kw], ty: Ty, name: Token) -> PResult<()> {
        let ops = self.parse_operand_list()?;
        for k in kws {
            if k.optional {
                if !self.at_comma_kw(k.kw) {
                    continue;
                }
            } else if !ops.is_empty() && !self.eat(Tok::Comma) {
                // The expectation is spelled out only when it fails.
                let t = self.peek();
                return self.err_expected(t, &format!("', {} ='", k.kw));
            }
            self.expect_kw(k.kw)?;
            self.expect(Tok::Equal, "'='")?;
            if k.v == V::ExpMan {
                self.parse_exp_man(b)?;
            } else {
                let v = self.parse_kw_value(k.v)?;
                b.attrs.set(k.attr, v);
            }
        }
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':' and the op's types")?;
        let n = ops.len();
        let (ins, outs) = match ty {
            Ty::Same => match self.parse_fn_or_types()? {
                FnOrTypes::Fn(i, o) => (i, o),
                FnOrTypes::List(l) if l.len() == 1 => (smallvec![l[0]; n], smallvec![l[0]]),
                FnOrTypes::List(_) => {
                    let t = self.peek();
                    return self.err_expected(t, "a single type or a function type");
                }
            },
            Ty::Functional | Ty::ParenArrow => self.parse_function_type()?,
            Ty::Arrow => {
                let t = self.parse_type()?;
                self.expect(Tok::Arrow, "'->'")?;
                (smallvec![t], self.parse_result_types()?)
            }
            Ty::PairArrow => {
                let a = self.parse_type()?;
                self.expect(Tok::Comma, "','")?;
                let c = self.parse_type()?;
                self.expect(Tok::Arrow, "'->'")?;
                (smallvec![a, c], self.parse_result_types()?)
            }
            Ty::OperandType => {
                let t = self.parse_type()?;
                (smallvec![t; n], Tys::new())
            }
        };
        self.set_operands(b, &ops, &ins, name)?;
        b.result_types = outs;
        Ok(())
    }

    /// A keyword item's value in the form `v` describes.
    pub fn parse_kw_value(&mut self, v: V) -> PResult<Attr> {
        Ok(match v {
            V::Dims => Attr::IntArray(ElemType::Int(64), self.parse_int_list()?),
            V::I64 => Attr::Int(self.parse_signed_int()?, ElemType::Int(64)),
            V::U64 | V::U32 => {
                let e = if v == V::U64 {
                    ElemType::UInt(64)
                } else {
                    ElemType::UInt(32)
                };
                let t = self.expect(Tok::Int, "integer")?;
                Attr::Int(self.int_literal(t, false, e)?, e)
            }
            V::Bool => {
                let t = self.peek();
                match self.text(t) {
                    "true" | "false" => {
                        self.bump();
                        Attr::Bool(self.text(t) == "true")
                    }
                    _ => return self.err_expected(t, "'true' or 'false'"),
                }
            }
            V::Enum(k) => self.parse_enum_case(k)?,
            V::Str => {
                let t = self.expect(Tok::Str, "string")?;
                Attr::Str(self.string_value(t)?)
            }
            V::F64 => {
                let neg = self.eat(Tok::Minus);
                let t = self.bump();
                if !matches!(t.kind, Tok::Int | Tok::Float) {
                    return self.err_expected(t, "float");
                }
                Attr::Float(self.float_literal(t, neg, ElemType::F64)?, ElemType::F64)
            }
            V::Precision => {
                self.expect(Tok::LSquare, "'['")?;
                let mut v = Vec::new();
                if !self.eat(Tok::RSquare) {
                    loop {
                        v.push(self.parse_enum_case(EnumKind::Precision)?);
                        if self.eat(Tok::RSquare) {
                            break;
                        }
                        self.expect(Tok::Comma, "',' or ']'")?;
                    }
                }
                Attr::Array(v)
            }
            V::ExpMan => unreachable_expman(),
        })
    }

    /// `e5m10` -> `exponent_bits`, `mantissa_bits`.
    fn parse_exp_man(&mut self, b: &mut OpBuild) -> PResult<()> {
        let t = self.expect(Tok::Ident, "exponent/mantissa 'e#m#'")?;
        let s = self.text(t);
        let parsed = s.strip_prefix('e').and_then(|r| {
            let (e, m) = r.split_once('m')?;
            Some((e.parse::<u8>().ok()?, m.parse::<u8>().ok()?))
        });
        let Some((e, m)) = parsed else {
            return self.err_at(
                Self::span_of(t),
                format!("expected exponent mantissa in format e#m#, saw {s}"),
            );
        };
        b.attrs
            .set("exponent_bits", Attr::Int(e as i64, ElemType::Int(32)));
        b.attrs
            .set("mantissa_bits", Attr::Int(m as i64, ElemType::Int(32)));
        Ok(())
    }

    /// `attr-dict : functional-type` after the operands.
    fn finish_functional(
        &mut self,
        b: &mut OpBuild,
        ops: &[OperandRef],
        name: Token,
    ) -> PResult<()> {
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':' and the op's function type")?;
        let (ins, outs) = self.parse_function_type()?;
        self.set_operands(b, ops, &ins, name)?;
        b.result_types = outs;
        Ok(())
    }

    fn parse_constant(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        if self.eat(Tok::LParen) {
            // Generic-looking form `stablehlo.constant() <{value = ...}> : () -> t`.
            self.expect(Tok::RParen, "')'")?;
            if self.eat(Tok::Less) {
                self.parse_attr_dict_into(&mut b.attrs)?;
                self.expect(Tok::Greater, "'>'")?;
            }
            return self.finish_functional(b, &[], name);
        }
        self.opt_attr_dict(b)?;
        let t = self.peek();
        let v = self.parse_attr()?;
        let Attr::Elements(e) = &v else {
            return self.err_at(Self::span_of(t), "expected a dense elements constant");
        };
        b.result_types = smallvec![e.ty];
        b.attrs.set("value", v);
        Ok(())
    }

    fn parse_compare(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let d = self.parse_enum_case(EnumKind::ComparisonDirection)?;
        b.attrs.set("comparison_direction", d);
        self.expect(Tok::Comma, "','")?;
        let ops = self.parse_operand_list()?;
        if self.eat(Tok::Comma) {
            let ct = self.parse_enum_case(EnumKind::ComparisonType)?;
            b.attrs.set("compare_type", ct);
        }
        self.finish_functional(b, &ops, name)
    }

    fn parse_slice(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let o = self.parse_operand()?;
        self.expect(Tok::LSquare, "'[' to open the slice ranges")?;
        let (mut st, mut li, mut sr) = (Vec::new(), Vec::new(), Vec::new());
        if !self.eat(Tok::RSquare) {
            loop {
                st.push(self.parse_signed_int()?);
                self.expect(Tok::Colon, "':' in slice range")?;
                li.push(self.parse_signed_int()?);
                sr.push(if self.eat(Tok::Colon) {
                    self.parse_signed_int()?
                } else {
                    1
                });
                if self.eat(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']' in slice ranges")?;
            }
        }
        let i64t = ElemType::Int(64);
        b.attrs.set("start_indices", Attr::IntArray(i64t, st));
        b.attrs.set("limit_indices", Attr::IntArray(i64t, li));
        b.attrs.set("strides", Attr::IntArray(i64t, sr));
        self.finish_functional(b, &[o], name)
    }

    fn parse_select(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let ops = self.parse_operand_list()?;
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':'")?;
        let t = self.peek();
        let (ins, outs) = match self.parse_fn_or_types()? {
            FnOrTypes::Fn(i, o) => (i, o),
            FnOrTypes::List(l) if l.len() == 2 => (smallvec![l[0], l[1], l[1]], smallvec![l[1]]),
            FnOrTypes::List(_) => {
                return self.err_at(
                    Self::span_of(t),
                    "expected functional type or list of two types",
                )
            }
        };
        self.set_operands(b, &ops, &ins, name)?;
        b.result_types = outs;
        Ok(())
    }

    fn parse_complex(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let ops = self.parse_operand_list()?;
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':'")?;
        let t = self.peek();
        let (ins, outs) = match self.parse_fn_or_types()? {
            FnOrTypes::Fn(i, o) => (i, o),
            FnOrTypes::List(l) if l.len() == 1 => {
                let ct = self.m.types.tensor_of(l[0]).cloned();
                let Some(part) = ct.as_ref().and_then(|c| c.elem.complex_part()) else {
                    return self.err_at(
                        Self::span_of(t),
                        "expected tensor with complex element type",
                    );
                };
                let shape = ct.map(|c| c.shape).unwrap_or_default();
                let rt = self.m.types.tensor(part, &shape);
                (smallvec![rt, rt], smallvec![l[0]])
            }
            FnOrTypes::List(_) => return self.err_expected(t, "a single type or a function type"),
        };
        self.set_operands(b, &ops, &ins, name)?;
        b.result_types = outs;
        Ok(())
    }

    fn parse_dot_general(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let ops = self.parse_operand_list()?;
        self.expect(Tok::Comma, "','")?;
        let mut dd = crate::attr::DotDims::default();
        if self.eat_kw("batching_dims") {
            self.expect(Tok::Equal, "'='")?;
            dd.lhs_batching = self.parse_int_list()?;
            self.expect_kw("x")?;
            dd.rhs_batching = self.parse_int_list()?;
            self.expect(Tok::Comma, "','")?;
        }
        self.expect_kw("contracting_dims")?;
        self.expect(Tok::Equal, "'='")?;
        dd.lhs_contracting = self.parse_int_list()?;
        self.expect_kw("x")?;
        dd.rhs_contracting = self.parse_int_list()?;
        b.attrs.set("dot_dimension_numbers", Attr::DotDims(dd));
        if self.at_comma_kw("precision") {
            self.bump();
            self.expect(Tok::Equal, "'='")?;
            let p = self.parse_kw_value(V::Precision)?;
            b.attrs.set("precision_config", p);
        }
        if self.at_comma_kw("algorithm") {
            self.bump();
            self.expect(Tok::Equal, "'='")?;
            let start = self.peek().start as usize;
            self.skip_angle_body()?;
            let body = &self.src[start..self.pos];
            b.attrs.set(
                "algorithm",
                Attr::Opaque(format!("#stablehlo.dot_algorithm{body}")),
            );
        }
        self.finish_functional(b, &ops, name)
    }

    fn parse_convolution(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        self.expect(Tok::LParen, "'('")?;
        let ops = self.parse_operand_list_all()?;
        self.expect(Tok::RParen, "')'")?;
        self.expect_kw("dim_numbers")?;
        self.expect(Tok::Equal, "'='")?;
        let d = self.parse_conv_dims()?;
        b.attrs.set("dimension_numbers", Attr::ConvDims(d));
        self.expect(Tok::Comma, "','")?;
        self.expect_kw("window")?;
        self.expect(Tok::Equal, "'='")?;
        self.expect(Tok::LBrace, "'{'")?;
        if !self.eat(Tok::RBrace) {
            loop {
                let t = self.expect(Tok::Ident, "window attribute name")?;
                self.expect(Tok::Equal, "'='")?;
                let i64t = ElemType::Int(64);
                let (attr, v) = match self.text(t) {
                    "stride" => (
                        "window_strides",
                        Attr::IntArray(i64t, self.parse_int_list()?),
                    ),
                    "lhs_dilate" => ("lhs_dilation", Attr::IntArray(i64t, self.parse_int_list()?)),
                    "rhs_dilate" => ("rhs_dilation", Attr::IntArray(i64t, self.parse_int_list()?)),
                    "pad" => ("padding", self.parse_window_pad()?),
                    "reverse" => ("window_reversal", self.parse_bool_list()?),
                    _ => {
                        return self.err_expected(
                            t,
                            "one of: stride, pad, lhs_dilate, rhs_dilate, reverse",
                        )
                    }
                };
                if b.attrs.set(attr, v).is_some() {
                    return self.err_at(Self::span_of(t), "duplicate window attribute");
                }
                if self.eat(Tok::RBrace) {
                    break;
                }
                self.expect(Tok::Comma, "',' or '}' in window attributes")?;
            }
        }
        self.finish_functional(b, &ops, name)
    }

    /// `[[lo, hi], ...]` -> `dense<...> : tensor<Nx2xi64>`.
    fn parse_window_pad(&mut self) -> PResult<Attr> {
        self.expect(Tok::LSquare, "'['")?;
        let mut bytes = Vec::new();
        let mut n = 0i64;
        if !self.eat(Tok::RSquare) {
            loop {
                let pair = self.parse_int_list()?;
                if pair.len() != 2 {
                    let t = self.peek();
                    return self.err_at(Self::span_of(t), "expected padding pairs [low, high]");
                }
                for v in pair {
                    bytes.extend_from_slice(&v.to_le_bytes());
                }
                n += 1;
                if self.eat(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']'")?;
            }
        }
        let ty = self.m.types.tensor(ElemType::Int(64), &[n, 2]);
        let len = 2 * n as u64;
        Ok(Attr::Elements(Arc::new(DenseElements {
            ty,
            elem: ElemType::Int(64),
            len,
            data: canonical(bytes, 8, len),
        })))
    }

    fn parse_bool_list(&mut self) -> PResult<Attr> {
        self.expect(Tok::LSquare, "'['")?;
        let mut v = Vec::new();
        if !self.eat(Tok::RSquare) {
            loop {
                let t = self.bump();
                v.push(match self.text(t) {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return self.err_expected(t, "'true' or 'false'"),
                });
                if self.eat(Tok::RSquare) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ']'")?;
            }
        }
        Ok(Attr::BoolArray(v))
    }

    fn parse_while(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        self.expect(Tok::LParen, "'('")?;
        let mut iter_names = Vec::new();
        let mut ops = Vec::new();
        if !self.eat(Tok::RParen) {
            loop {
                iter_names.push(self.expect(Tok::Percent, "iteration argument name")?);
                self.expect(Tok::Equal, "'='")?;
                ops.push(self.parse_operand()?);
                if self.eat(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ')'")?;
            }
        }
        let tys = if ops.is_empty() {
            Tys::new()
        } else {
            self.expect(Tok::Colon, "':' and the loop-carried types")?;
            self.parse_type_list()?
        };
        self.set_operands(b, &ops, &tys, name)?;
        if self.eat_kw("attributes") {
            self.parse_attr_dict_into(&mut b.attrs)?;
        }
        let args: Vec<(Token, TypeId)> = iter_names.into_iter().zip(tys.iter().copied()).collect();
        self.expect_kw("cond")?;
        let c = self.parse_region_with_args(&args)?;
        self.expect_kw("do")?;
        let d = self.parse_region_with_args(&args)?;
        b.regions = vec![c, d];
        b.result_types = tys;
        Ok(())
    }

    fn parse_reduce(&mut self, b: &mut OpBuild, name: Token) -> PResult<()> {
        let mut inputs = Vec::new();
        let mut inits = Vec::new();
        loop {
            self.expect(Tok::LParen, "'(' to open an (operand init: value) pair")?;
            inputs.push(self.parse_operand()?);
            self.expect_kw("init")?;
            self.expect(Tok::Colon, "':' after 'init'")?;
            inits.push(self.parse_operand()?);
            self.expect(Tok::RParen, "')'")?;
            if !self.eat(Tok::Comma) {
                break;
            }
        }
        let applies = if self.eat_kw("applies") {
            let t = self.peek();
            let inner = match t.kind {
                Tok::Ident | Tok::Str => {
                    self.bump();
                    let s = self.text(t);
                    OpKind::from_name(s.trim_matches('"'))
                }
                _ => None,
            };
            let Some(k) = inner.filter(|k| k.is_commutative() && k.dialect() == "stablehlo") else {
                return self.err_at(
                    Self::span_of(t),
                    "expected the inner-op to be a commutative binary-op from the stablehlo dialect",
                );
            };
            Some(k)
        } else {
            None
        };
        self.expect_kw("across")?;
        self.expect_kw("dimensions")?;
        self.expect(Tok::Equal, "'='")?;
        let dims = self.parse_int_list()?;
        b.attrs
            .set("dimensions", Attr::IntArray(ElemType::Int(64), dims));
        self.opt_attr_dict(b)?;
        self.expect(Tok::Colon, "':'")?;
        let (ins, outs) = self.parse_function_type()?;
        let mut all = inputs.clone();
        all.extend(inits);
        self.set_operands(b, &all, &ins, name)?;
        b.result_types = outs;
        match applies {
            Some(k) => {
                let Some(elem) = ins
                    .first()
                    .and_then(|&t| self.m.types.tensor_of(t))
                    .map(|t| t.elem)
                else {
                    return self.err_at(Self::span_of(name), "reduce input must be a tensor");
                };
                let st = self.m.types.tensor(elem, &[]);
                b.regions = vec![self.build_applies_region(k, st)];
            }
            None => b.regions = vec![self.parse_reducer(inputs.len())?],
        }
        Ok(())
    }

    /// The region `^bb0(%a, %b): %r = k %a, %b; stablehlo.return %r`.
    fn build_applies_region(&mut self, k: OpKind, st: TypeId) -> crate::module::RegionId {
        let r = self.m.add_region(None);
        let a = self.m.add_region_arg(r, st);
        let c = self.m.add_region_arg(r, st);
        let inner = self.m.create_op(k, vec![a, c], &[st], Default::default());
        self.m.append_op(r, inner);
        let res = self.m.op(inner).results[0];
        let ret = self
            .m
            .create_op(OpKind::Return, vec![res], &[], Default::default());
        self.m.append_op(r, ret);
        r
    }

    /// `reducer(%a: t, %b: t) (%c: t, %d: t) { ... }`: first elements of every pair,
    /// then second elements, become the block arguments.
    fn parse_reducer(&mut self, pairs: usize) -> PResult<crate::module::RegionId> {
        self.expect_kw("reducer")?;
        let mut firsts = Vec::new();
        let mut seconds = Vec::new();
        for _ in 0..pairs {
            self.expect(Tok::LParen, "'(' to open a reducer argument pair")?;
            firsts.push(self.parse_reducer_arg()?);
            self.expect(Tok::Comma, "','")?;
            seconds.push(self.parse_reducer_arg()?);
            self.expect(Tok::RParen, "')'")?;
        }
        firsts.extend(seconds);
        self.parse_region_with_args(&firsts)
    }
}

impl<'a> Parser<'a> {
    fn parse_reducer_arg(&mut self) -> PResult<(Token, TypeId)> {
        let t = self.expect(Tok::Percent, "reducer argument")?;
        self.expect(Tok::Colon, "':'")?;
        let ty = self.parse_type()?;
        self.parse_opt_loc()?;
        Ok((t, ty))
    }
}

fn unreachable_expman() -> Attr {
    // `V::ExpMan` sets two attributes and is handled by the caller.
    Attr::Unit
}
