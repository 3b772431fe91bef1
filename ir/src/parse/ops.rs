//! Op framing: result bindings, SSA scopes, regions, the generic op form, and building
//! the parsed op into the module.
//!
//! Invariants: a name is visible from its definition to the end of its region (and in
//! nested regions); leaving a region restores the enclosing bindings (undo log); operand
//! types are checked against the value's defining type. `arith.constant` of a tensor is
//! read as `stablehlo.constant` (see `op_kind`).

use super::lexer::{Tok, Token};
use super::scope::{self, Binding};
use super::{LocTarget, PResult, Parser};
use crate::attr::NamedAttrs;
use crate::module::{OpId, RegionId, Span, ValueId};
use crate::ops::OpKind;
use crate::types::TypeId;
use smallvec::SmallVec;

/// An op under construction.
#[derive(Debug)]
pub(crate) struct OpBuild {
    pub kind: OpKind,
    pub operands: Vec<ValueId>,
    pub result_types: Tys,
    pub attrs: NamedAttrs,
    pub regions: Vec<RegionId>,
}

impl OpBuild {
    pub fn new(kind: OpKind) -> Self {
        OpBuild {
            kind,
            operands: Vec::new(),
            result_types: Tys::new(),
            attrs: NamedAttrs::new(),
            regions: Vec::new(),
        }
    }
}

/// A parsed operand reference with its source token (for type-mismatch diagnostics).
pub(crate) type OperandRef = (ValueId, Token);
/// Operand references of one op (inline for the common small counts).
pub(crate) type OperandRefs = SmallVec<[OperandRef; 4]>;
/// A short list of types (function-type inputs/outputs).
pub(crate) type Tys = SmallVec<[TypeId; 4]>;

impl<'a> Parser<'a> {
    // ---- SSA scope ----

    /// Binds the name of `%tok` to `count` values starting at `first` in the current
    /// region; redefinition within the same region is an error.
    pub fn define(&mut self, t: Token, first: ValueId, count: u32) -> PResult<()> {
        let name = self.text(t);
        let serial = self.cur_scope;
        let b = Binding {
            first,
            count,
            serial,
        };
        // Numeric names (`%12`, all digits) are the common case and cannot hold a `#`.
        let prev = match scope::numeric(name) {
            Some(n) => self.scope.define_num(n, b),
            None => {
                // A short loop: `<[u8]>::contains` calls out to memchr.
                if name.bytes().any(|c| c == b'#') {
                    return self.err_at(
                        Self::span_of(t),
                        "result number not allowed in a definition",
                    );
                }
                self.scope.define(name, b)
            }
        };
        if prev.is_some_and(|p| p.serial == serial) {
            return self.err_at(
                Self::span_of(t),
                format!("redefinition of SSA value '{name}'"),
            );
        }
        Ok(())
    }

    /// Restores the scope to the undo-log length `mark`.
    pub fn pop_scope(&mut self, mark: usize) {
        self.scope.pop_to(mark);
    }

    /// Resolves a `%name` or `%name#N` token to a value.
    pub fn lookup(&self, t: Token) -> PResult<ValueId> {
        let full = self.text(t);
        // Names are short and `#` only starts the result-number suffix: a byte scan from the
        // end beats `str::find`'s general searcher here.
        let (name, idx) = match full.bytes().rposition(|c| c == b'#') {
            Some(i) => {
                let n: u32 = match full[i + 1..].parse() {
                    Ok(n) => n,
                    Err(_) => return self.err_at(Self::span_of(t), "invalid result number"),
                };
                (&full[..i], n)
            }
            None => (full, 0),
        };
        match self.scope.get(name) {
            Some(b) if idx < b.count => Ok(ValueId(b.first.0 + idx)),
            Some(Binding { count, .. }) => self.err_at(
                Self::span_of(t),
                format!("result number {idx} out of range: '{name}' has {count} result(s)"),
            ),
            None => self.err_at(Self::span_of(t), format!("use of undefined value '{full}'")),
        }
    }

    /// Parses one `%name` operand use.
    pub fn parse_operand(&mut self) -> PResult<OperandRef> {
        if let Some(r) = self.fast_numeric_operand() {
            return Ok(r);
        }
        let t = self.expect(Tok::Percent, "SSA value '%...'")?;
        Ok((self.lookup(t)?, t))
    }

    /// The dominant operand spelling, a numeric name `%123` (no `#N`) bound to a single
    /// value, read straight from the bytes: the same token the lexer would produce (a
    /// `%` then the run of digits) and the same binding [`Self::lookup`] would find.
    /// `None` (nothing consumed) in every other case, including errors.
    fn fast_numeric_operand(&mut self) -> Option<OperandRef> {
        let b = self.lx.bytes;
        let start = match self.peeked {
            None => self.lx.skip_trivia(self.pos),
            Some(t) if t.kind == Tok::Percent => t.start as usize,
            Some(_) => return None,
        };
        let digits = b.get(start + 1..)?;
        if b[start] != b'%' {
            return None;
        }
        let mut n = 0;
        let mut v: u32 = 0;
        while n < digits.len() && digits[n].is_ascii_digit() {
            v = v.wrapping_mul(10).wrapping_add((digits[n] - b'0') as u32);
            n += 1;
        }
        if n == 0 || n > 7 || (n > 1 && digits[0] == b'0') || digits.get(n) == Some(&b'#') {
            return None;
        }
        let binding = self.scope.get_num(v).filter(|b| b.count > 0)?;
        let end = start + 1 + n;
        let t = Token {
            kind: Tok::Percent,
            start: start as u32,
            end: end as u32,
        };
        self.pos = end;
        self.peeked = None;
        Some((binding.first, t))
    }

    /// Parses `%a, %b, ...` (possibly empty if the next token is not a value).
    pub fn parse_operand_list(&mut self) -> PResult<OperandRefs> {
        let mut out = OperandRefs::new();
        let first = match self.fast_numeric_operand() {
            Some(r) => r,
            None if self.at(Tok::Percent) => self.parse_operand()?,
            None => return Ok(out),
        };
        out.push(first);
        loop {
            if !self.at(Tok::Comma) {
                return Ok(out);
            }
            // Stop before `, keyword` (pretty forms like `%a, dims = ...`).
            let comma = self.peek();
            let after = self.lx.skip_trivia(comma.end as usize);
            if self.lx.bytes.get(after) != Some(&b'%') {
                return Ok(out);
            }
            self.bump();
            out.push(self.parse_operand()?);
        }
    }

    /// Checks each operand's type against `types` and stores the values in `b`.
    pub fn set_operands(
        &mut self,
        b: &mut OpBuild,
        ops: &[OperandRef],
        types: &[TypeId],
        at: Token,
    ) -> PResult<()> {
        if ops.len() != types.len() {
            return self.err_at(
                Self::span_of(at),
                format!(
                    "{} operands present, but the type signature lists {}",
                    ops.len(),
                    types.len()
                ),
            );
        }
        for (&(v, t), &ty) in ops.iter().zip(types) {
            let have = self.m.value_type(v);
            if have != ty {
                return self.err_at(
                    Self::span_of(t),
                    format!(
                        "use of value '{}' expects different type than prior uses: '{}' vs '{}'",
                        self.text(t),
                        self.m.types.display(ty),
                        self.m.types.display(have)
                    ),
                );
            }
        }
        b.operands = ops.iter().map(|o| o.0).collect();
        Ok(())
    }

    // ---- regions ----

    /// Parses `{ [^bb(args):] ops }` into `region`. `args` are block arguments declared
    /// by the surrounding syntax (function signature, `while`, `reduce`); when they are
    /// given, an explicit block header may not declare arguments again.
    pub fn parse_region_body(&mut self, region: RegionId, args: &[(Token, TypeId)]) -> PResult<()> {
        self.enter()?;
        let mark = self.scope.mark();
        let saved_scope = self.cur_scope;
        self.next_scope += 1;
        self.cur_scope = self.next_scope;
        for &(t, ty) in args {
            let v = self.m.add_region_arg(region, ty);
            self.define(t, v, 1)?;
        }
        let open = self.expect(Tok::LBrace, "'{' to open a region")?;
        if self.at(Tok::Caret) {
            self.bump();
            if self.eat(Tok::LParen) && !self.eat(Tok::RParen) {
                if !args.is_empty() {
                    let t = self.peek();
                    return self.err_at(
                        Self::span_of(t),
                        "block arguments are already declared by the op syntax",
                    );
                }
                self.parse_block_args(region)?;
            }
            self.expect(Tok::Colon, "':' after block label")?;
        }
        loop {
            let t = self.peek();
            match t.kind {
                Tok::RBrace => break,
                Tok::Caret => {
                    return self.err_at(Self::span_of(t), "multi-block regions are unsupported")
                }
                Tok::Eof => return self.err_at(Self::span_of(open), "unterminated region '{'"),
                _ => self.parse_op(region)?,
            }
        }
        self.bump();
        self.pop_scope(mark);
        self.cur_scope = saved_scope;
        self.leave();
        Ok(())
    }

    fn parse_block_args(&mut self, region: RegionId) -> PResult<()> {
        loop {
            let at = self.expect(Tok::Percent, "block argument '%...'")?;
            self.expect(Tok::Colon, "':' after block argument")?;
            let ty = self.parse_type()?;
            let v = self.m.add_region_arg(region, ty);
            self.define(at, v, 1)?;
            self.parse_opt_loc()?;
            if self.eat(Tok::RParen) {
                return Ok(());
            }
            self.expect(Tok::Comma, "',' or ')' in block argument list")?;
        }
    }

    /// A new detached region with the given (name token, type) arguments, then its body.
    pub fn parse_region_with_args(&mut self, args: &[(Token, TypeId)]) -> PResult<RegionId> {
        let r = self.m.add_region(None);
        self.parse_region_body(r, args)?;
        Ok(r)
    }

    // ---- ops ----

    /// Parses one op (with its result bindings) and appends it to `region`.
    pub fn parse_op(&mut self, region: RegionId) -> PResult<()> {
        let mut names: SmallVec<[(Token, u32); 2]> = SmallVec::new();
        if self.at(Tok::Percent) {
            loop {
                let t = self.bump();
                let count = if self.eat(Tok::Colon) {
                    let n = self.expect(Tok::Int, "result count")?;
                    match self.text(n).parse::<u32>() {
                        Ok(c) if c > 0 => c,
                        _ => return self.err_at(Self::span_of(n), "invalid result count"),
                    }
                } else {
                    1
                };
                names.push((t, count));
                if !self.eat(Tok::Comma) {
                    break;
                }
                if !self.at(Tok::Percent) {
                    let t = self.peek();
                    return self.err_expected(t, "result name '%...'");
                }
            }
            self.expect(Tok::Equal, "'=' after result names")?;
        }
        let name_tok = self.peek();
        let b = match name_tok.kind {
            Tok::Str => self.parse_generic_op()?,
            Tok::Ident => {
                self.bump();
                let name = self.text(name_tok);
                let kind = match name {
                    "return" => OpKind::FuncReturn,
                    "call" => OpKind::Call,
                    _ => match op_kind(name) {
                        Some(k) => k,
                        None => return self.unknown_op(name_tok, name),
                    },
                };
                self.parse_pretty_op(kind, name_tok)?
            }
            _ => return self.err_expected(name_tok, "operation name"),
        };
        let end = self.pos as u32;
        let want: u64 = names.iter().map(|n| n.1 as u64).sum();
        if want != b.result_types.len() as u64 && !(names.is_empty()) {
            return self.err_at(
                Self::span_of(name_tok),
                format!(
                    "operation defines {} results but was provided {} to bind",
                    b.result_types.len(),
                    want
                ),
            );
        }
        let op = self.build_op(b, region, name_tok.start, end);
        let mut next = self.m.op(op).results.first().copied();
        for &(t, count) in &names {
            if let Some(first) = next {
                self.define(t, first, count)?;
                next = Some(ValueId(first.0 + count));
            }
        }
        if let Some((s, e)) = self.parse_opt_loc()? {
            self.pending_locs.push((LocTarget::Op(op), s, e));
        }
        Ok(())
    }

    fn build_op(&mut self, b: OpBuild, region: RegionId, start: u32, end: u32) -> OpId {
        let op = self
            .m
            .create_op(b.kind, b.operands, &b.result_types, b.attrs);
        for &r in &b.regions {
            self.m.region_mut(r).parent = Some(op);
        }
        let o = self.m.op_mut(op);
        o.regions = b.regions;
        o.span = Span { start, end };
        if o.kind == OpKind::SetDimensionSize {
            self.dimension_sizes.push(op);
        }
        self.m.append_op(region, op);
        op
    }

    /// The error for an operation name outside the IR: Shardy ops get an explanation,
    /// anything else is "unknown operation".
    fn unknown_op<T>(&self, name_tok: Token, name: &str) -> PResult<T> {
        if name.starts_with("sdy.") {
            return self.unsupported_sdy_op(name_tok, name);
        }
        self.err_at(
            Self::span_of(name_tok),
            format!("unknown operation '{name}'"),
        )
    }

    /// `"name"(operands) <{props}>? ({regions})? {attrs}? : (types) -> types`
    fn parse_generic_op(&mut self) -> PResult<OpBuild> {
        let name_tok = self.bump();
        let raw = self.text(name_tok);
        let name = &raw[1..raw.len() - 1];
        let kind = match op_kind(name) {
            Some(k) => k,
            None => return self.unknown_op(name_tok, name),
        };
        let mut b = OpBuild::new(kind);
        self.expect(Tok::LParen, "'(' to open the operand list")?;
        let ops = self.parse_operand_list_all()?;
        self.expect(Tok::RParen, "',' or ')' in operand list")?;
        if self.at(Tok::LSquare) {
            let t = self.peek();
            return self.err_at(Self::span_of(t), "successor blocks are unsupported");
        }
        if self.eat(Tok::Less) {
            self.parse_attr_dict_into(&mut b.attrs)?;
            self.expect(Tok::Greater, "'>' after properties")?;
        }
        if self.at(Tok::LParen) {
            self.bump();
            loop {
                let r = self.m.add_region(None);
                self.parse_region_body(r, &[])?;
                b.regions.push(r);
                if self.eat(Tok::RParen) {
                    break;
                }
                self.expect(Tok::Comma, "',' or ')' after region")?;
            }
        }
        if self.at(Tok::LBrace) {
            self.parse_attr_dict_into(&mut b.attrs)?;
        }
        self.expect(Tok::Colon, "':' before the op's function type")?;
        let (ins, outs) = self.parse_function_type()?;
        self.set_operands(&mut b, &ops, &ins, name_tok)?;
        b.result_types = outs;
        Ok(b)
    }

    /// Comma-separated operand list with no keyword lookahead (generic form).
    pub fn parse_operand_list_all(&mut self) -> PResult<OperandRefs> {
        let mut out = OperandRefs::new();
        if !self.at(Tok::Percent) {
            return Ok(out);
        }
        loop {
            out.push(self.parse_operand()?);
            if !self.eat(Tok::Comma) {
                return Ok(out);
            }
        }
    }
}

/// The kind an op name is read as: its own [`OpKind`], or for `arith.constant` (which
/// StableHLO's tests and some producers use for tensor constants) `stablehlo.constant`,
/// whose semantics it shares for tensor values; it prints back as `stablehlo.constant`.
/// Scalar (non-tensor) `arith.constant` values are rejected by the constant syntax.
fn op_kind(name: &str) -> Option<OpKind> {
    match name {
        "arith.constant" => Some(OpKind::Constant),
        _ => OpKind::from_name(name),
    }
}
