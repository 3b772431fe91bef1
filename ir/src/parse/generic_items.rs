//! Generic-form module items: `"builtin.module"() ({...}) : () -> ()` and
//! `"func.func"() <{function_type = ..., sym_name = ...}> ({^bb0(...): ...}) : () -> ()`,
//! as MLIR prints with `--mlir-print-op-generic`.
//!
//! Invariant: the function's block arguments must match `function_type`'s inputs (a
//! declaration's empty region `({})` takes them from `function_type`); the
//! inherent attributes (`sym_name`, `sym_visibility`, `function_type`, `arg_attrs`,
//! `res_attrs`) become [`Func`] fields, everything else stays in `Func::attrs`.

use super::lexer::Tok;
use super::ops::Tys;
use super::{LocTarget, PResult, Parser};
use crate::attr::{Attr, NamedAttrs};
use crate::module::{FuncId, Span};
use crate::Func;

impl<'a> Parser<'a> {
    /// `"builtin.module"() <{sym_name = ...}>? ({ items }) {attrs}? : () -> ()`.
    pub fn parse_generic_module(&mut self) -> PResult<()> {
        self.bump();
        self.expect(Tok::LParen, "'('")?;
        self.expect(Tok::RParen, "')' (a module has no operands)")?;
        let mut attrs = NamedAttrs::new();
        if self.eat(Tok::Less) {
            self.parse_attr_dict_into(&mut attrs)?;
            self.expect(Tok::Greater, "'>'")?;
        }
        self.expect(Tok::LParen, "'(' to open the module region")?;
        self.expect(Tok::LBrace, "'{'")?;
        loop {
            let t = self.peek();
            match t.kind {
                Tok::RBrace => break,
                Tok::Str if self.text(t) == "\"func.func\"" => self.parse_generic_func()?,
                Tok::Ident if self.text(t) == "func.func" => self.parse_func()?,
                Tok::Str if self.text(t) == "\"sdy.mesh\"" => self.parse_generic_sdy_mesh()?,
                Tok::Ident if self.text(t) == "sdy.mesh" => self.parse_sdy_mesh()?,
                _ => return self.err_expected(t, "a function, a mesh or '}'"),
            }
        }
        self.bump();
        self.expect(Tok::RParen, "')'")?;
        if self.at(Tok::LBrace) {
            self.parse_attr_dict_into(&mut attrs)?;
        }
        self.expect(Tok::Colon, "':'")?;
        self.parse_function_type()?;
        self.parse_opt_loc()?;
        if let Some(Attr::Str(n)) = attrs.remove("sym_name") {
            self.m.name = Some(n);
        }
        self.m.attrs = attrs;
        Ok(())
    }

    /// `"func.func"() <{...}> ({ region }) {attrs}? : () -> ()`.
    pub fn parse_generic_func(&mut self) -> PResult<()> {
        let kw = self.bump();
        self.expect(Tok::LParen, "'('")?;
        self.expect(Tok::RParen, "')' (a function has no operands)")?;
        let mut attrs = NamedAttrs::new();
        let mut fty = None;
        if self.eat(Tok::Less) {
            self.parse_func_props(&mut attrs, &mut fty)?;
            self.expect(Tok::Greater, "'>'")?;
        }
        self.expect(Tok::LParen, "'(' to open the function body")?;
        let body = self.m.add_region(None);
        let fid = FuncId(self.m.funcs.len() as u32);
        self.m.funcs.push(Func {
            name: String::new(),
            visibility: None,
            body,
            result_types: Vec::new(),
            arg_attrs: Vec::new(),
            result_attrs: Vec::new(),
            attrs: NamedAttrs::new(),
            loc: None,
            span: Span::default(),
        });
        self.parse_region_body(body, &[])?;
        self.pop_scope(0);
        self.expect(Tok::RParen, "')'")?;
        if self.at(Tok::LBrace) {
            self.parse_func_props(&mut attrs, &mut fty)?;
        }
        self.expect(Tok::Colon, "':'")?;
        self.parse_function_type()?;
        let end = self.pos as u32;
        if let Some((s, e)) = self.parse_opt_loc()? {
            self.pending_locs.push((LocTarget::Func(fid), s, e));
        }
        let span = Span {
            start: kw.start,
            end,
        };
        let Some((ins, outs)) = fty else {
            return self.err_at(span, "generic func.func without 'function_type'");
        };
        let reg = self.m.region(body);
        if reg.ops.is_empty() && reg.args.is_empty() {
            // A declaration (`({})`): the body region only keeps the argument types.
            for &t in ins.iter() {
                self.m.add_region_arg(body, t);
            }
        }
        let arg_tys: Vec<_> = self
            .m
            .region(body)
            .args
            .iter()
            .map(|&a| self.m.value_type(a))
            .collect();
        if arg_tys.as_slice() != ins.as_slice() {
            return self.err_at(span, "function body arguments do not match 'function_type'");
        }
        let name = match attrs.remove("sym_name") {
            Some(Attr::Str(s)) => s,
            _ => return self.err_at(span, "generic func.func without 'sym_name'"),
        };
        let visibility = match attrs.remove("sym_visibility") {
            Some(Attr::Str(v)) if v != "public" => Some(v),
            _ => None,
        };
        let dicts = |a: Option<Attr>, n: usize| -> Vec<NamedAttrs> {
            let mut v: Vec<NamedAttrs> = match a {
                Some(Attr::Array(items)) => items
                    .into_iter()
                    .map(|d| match d {
                        Attr::Dict(d) => d,
                        _ => NamedAttrs::new(),
                    })
                    .collect(),
                _ => Vec::new(),
            };
            v.resize(n, NamedAttrs::new());
            v
        };
        let f = &mut self.m.funcs[fid.index()];
        f.name = name;
        f.visibility = visibility;
        f.arg_attrs = dicts(attrs.remove("arg_attrs"), ins.len());
        f.result_attrs = dicts(attrs.remove("res_attrs"), outs.len());
        f.result_types = outs.to_vec();
        f.attrs = attrs;
        f.span = span;
        Ok(())
    }

    /// An attribute dictionary in which `function_type` holds a function type.
    fn parse_func_props(
        &mut self,
        attrs: &mut NamedAttrs,
        fty: &mut Option<(Tys, Tys)>,
    ) -> PResult<()> {
        self.expect(Tok::LBrace, "'{'")?;
        if self.eat(Tok::RBrace) {
            return Ok(());
        }
        loop {
            let t = self.peek();
            let name = match t.kind {
                Tok::Ident => self.text(t).to_string(),
                Tok::Str => self.string_value(t)?,
                _ => return self.err_expected(t, "attribute name"),
            };
            self.bump();
            if name == "function_type" {
                self.expect(Tok::Equal, "'='")?;
                *fty = Some(self.parse_function_type()?);
            } else {
                let v = if self.eat(Tok::Equal) {
                    self.parse_attr()?
                } else {
                    Attr::Unit
                };
                attrs.set(name, v);
            }
            if self.eat(Tok::RBrace) {
                return Ok(());
            }
            self.expect(Tok::Comma, "',' or '}'")?;
        }
    }
}
