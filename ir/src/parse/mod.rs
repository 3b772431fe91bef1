//! StableHLO text front end: pretty and generic MLIR syntax into a [`Module`].
//!
//! Owns: [`parse_module`] and [`split_input`], and the recursive-descent `Parser` whose
//! pieces live in the submodules: `lexer` (tokens), `types` (types), `attr` and `dense`
//! (attributes and `dense<...>` payloads, `minifloat` for the 4/6/8-bit floats), `ops`
//! (op framing: results, generic form, regions), `scope` (SSA name scopes), `syntax` (the
//! table of op pretty syntaxes, shared with the printer), `pretty` (the custom syntaxes of
//! StableHLO/CHLO/func/check ops), `generic_items` (generic-form `builtin.module` and
//! `func.func`), `sdy` (Shardy meshes and sharding annotations), `loc` (`loc(...)` and
//! `#loc` aliases) and `bounded` (XLA's bounded dynamism as torch_xla's `masked_scatter`
//! prints it, lowered to static ops).
//!
//! Invariants:
//! * parsing is linear in the input and never panics; nesting of regions, attributes and
//!   types is bounded by [`MAX_DEPTH`]; tensor types over [`crate::types::MAX_ELEMENTS`] and
//!   dense payloads that disagree with their type are errors, never allocations;
//! * the pretty and generic form of an op produce the same attribute names and values;
//! * a value must be defined before its use (single-block regions), and every use must
//!   agree with the defining type;
//! * `Op::span` / `Func::span` start at the op name (`func.func`) token.

pub(crate) mod attr;
pub(crate) mod bounded;
pub(crate) mod dense;
pub(crate) mod generic_items;
pub(crate) mod lexer;
pub(crate) mod loc;
pub(crate) mod minifloat;
pub(crate) mod ops;
pub(crate) mod pretty;
pub(crate) mod scope;
pub(crate) mod sdy;
pub(crate) mod syntax;
pub(crate) mod types;

use crate::attr::NamedAttrs;
use crate::module::{FuncId, OpId, Span};
use crate::types::TypeId;
use crate::{Attr, Diagnostic, Func, Module, ParseError};
use lexer::{Lexer, Tok, Token};
use rustc_hash::FxHashMap;

pub(crate) use dense::bytes_to_f64 as dense_bytes_to_f64;

/// Encodes `x` in a 4/6/8-bit float format (nearest, ties to even).
pub(crate) fn minifloat_encode(k: crate::types::F8Kind, x: f64) -> u8 {
    minifloat::encode(k, x)
}

/// Maximum nesting depth of regions, attributes and types.
pub const MAX_DEPTH: u32 = 128;

pub(crate) type PResult<T> = Result<T, ParseError>;

/// Parses one StableHLO module (pretty or generic form, with or without `module { }`).
pub fn parse_module(src: &str) -> Result<Module, ParseError> {
    let mut p = Parser::new(src);
    p.parse_top()?;
    p.lower_bounded_dynamism()?;
    p.resolve_locs();
    Ok(p.m)
}

/// Splits a file at `// -----` lines (optionally followed by a label, `// ----- name`);
/// returns (byte offset of the chunk, chunk text).
pub fn split_input(src: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut pos = 0;
    for line in src.split_inclusive('\n') {
        if line.starts_with("// -----") {
            out.push((start, &src[start..pos]));
            start = pos + line.len();
        }
        pos += line.len();
    }
    out.push((start, &src[start..]));
    out
}

/// A function's arguments as parsed: name token (`None` in a declaration written with
/// types only) and type, plus one attribute dictionary per argument.
type FuncArgs = (Vec<(Option<Token>, TypeId)>, Vec<NamedAttrs>);

/// What a pending `loc(...)` belongs to.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LocTarget {
    Op(OpId),
    Func(FuncId),
}

/// The parser state. Source text is borrowed; names and cached types key into it.
pub(crate) struct Parser<'a> {
    pub src: &'a str,
    pub lx: Lexer<'a>,
    /// Byte offset just after the last consumed token.
    pub pos: usize,
    pub peeked: Option<Token>,
    pub m: Module,
    /// Visible SSA names.
    pub scope: scope::Scopes<'a>,
    /// Serial of the region scope being parsed, and the last serial handed out.
    pub cur_scope: u32,
    pub next_scope: u32,
    /// Tensor types in the compact spelling, by the text between `tensor<` and `>`.
    pub tensor_cache: FxHashMap<&'a [u8], TypeId>,
    pub attr_aliases: FxHashMap<&'a str, Attr>,
    pub type_aliases: FxHashMap<&'a str, TypeId>,
    /// `#locN` alias name -> byte range of the `loc(...)` text.
    pub loc_aliases: FxHashMap<&'a str, (u32, u32)>,
    pub pending_locs: Vec<(LocTarget, u32, u32)>,
    pub depth: u32,
    /// Every bounded dynamic tensor type read (`tensor<?x3xi32, #stablehlo.bounds<48, ?>>`):
    /// its source span and a bit mask of its `?` dimensions (see `bounded`).
    pub bounded_types: Vec<(Span, u64)>,
    /// The `set_dimension_size` ops built, in source order (lowered by `bounded`).
    pub dimension_sizes: Vec<OpId>,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str) -> Self {
        // Real traces spend 60-100 bytes per op (BERT-base training: 93). Reserving for the
        // dense end avoids regrowing (and copying) the op and value arenas mid-parse.
        let est = (src.len() / 64).min(1 << 20);
        let mut m = Module::new();
        m.ops.reserve(est);
        m.values.reserve(est + est / 4);
        Parser {
            src,
            lx: Lexer {
                bytes: src.as_bytes(),
            },
            pos: 0,
            peeked: None,
            m,
            scope: scope::Scopes::with_capacity(est),
            cur_scope: 0,
            next_scope: 0,
            tensor_cache: FxHashMap::default(),
            attr_aliases: FxHashMap::default(),
            type_aliases: FxHashMap::default(),
            loc_aliases: FxHashMap::default(),
            pending_locs: Vec::new(),
            depth: 0,
            bounded_types: Vec::new(),
            dimension_sizes: Vec::new(),
        }
    }

    // ---- token helpers ----

    #[inline]
    pub fn peek(&mut self) -> Token {
        if let Some(t) = self.peeked {
            return t;
        }
        let t = self.lx.next_token(self.pos);
        self.peeked = Some(t);
        t
    }
    #[inline]
    pub fn bump(&mut self) -> Token {
        let t = self.peek();
        self.peeked = None;
        self.pos = t.end as usize;
        t
    }
    /// Moves the cursor to byte `pos` (dropping any peeked token).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos;
        self.peeked = None;
    }
    #[inline]
    pub fn at(&mut self, kind: Tok) -> bool {
        self.peek().kind == kind
    }
    #[inline]
    pub fn eat(&mut self, kind: Tok) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn text(&self, t: Token) -> &'a str {
        &self.src[t.start as usize..t.end as usize]
    }
    /// Is the next token the identifier `kw`?
    pub fn at_kw(&mut self, kw: &str) -> bool {
        let t = self.peek();
        t.kind == Tok::Ident && self.text(t) == kw
    }
    pub fn eat_kw(&mut self, kw: &str) -> bool {
        if self.at_kw(kw) {
            self.bump();
            true
        } else {
            false
        }
    }
    pub fn expect_kw(&mut self, kw: &str) -> PResult<Token> {
        if self.at_kw(kw) {
            Ok(self.bump())
        } else {
            let t = self.peek();
            self.err_expected(t, &format!("'{kw}'"))
        }
    }
    pub fn expect(&mut self, kind: Tok, what: &str) -> PResult<Token> {
        let t = self.peek();
        if t.kind == kind {
            Ok(self.bump())
        } else {
            self.err_expected(t, what)
        }
    }

    // ---- diagnostics ----

    pub fn span_of(t: Token) -> Span {
        Span {
            start: t.start,
            end: t.end,
        }
    }
    pub fn err_at<T>(&self, span: Span, msg: impl Into<String>) -> PResult<T> {
        Err(ParseError(Diagnostic::error(span, msg)))
    }
    /// "expected `what`, found `<token>`" at the token.
    pub fn err_expected<T>(&self, t: Token, what: &str) -> PResult<T> {
        let found = if t.kind == Tok::Eof {
            "end of input".to_string()
        } else {
            let s = self.text(t);
            let mut cut = s.len().min(40);
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("'{}'", &s[..cut])
        };
        self.err_at(Self::span_of(t), format!("expected {what}, found {found}"))
    }
    pub fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let t = self.peek();
            return self.err_at(Self::span_of(t), "nesting too deep");
        }
        Ok(())
    }
    pub fn leave(&mut self) {
        self.depth -= 1;
    }

    // ---- top level ----

    fn parse_top(&mut self) -> PResult<()> {
        let mut seen_module = false;
        loop {
            let t = self.peek();
            match t.kind {
                Tok::Eof => break,
                Tok::Hash => self.parse_attr_alias_def()?,
                Tok::Bang => self.parse_type_alias_def()?,
                Tok::MetaBegin => self.skip_file_metadata()?,
                Tok::Ident if self.text(t) == "module" => {
                    if seen_module || !self.m.funcs.is_empty() {
                        return self.err_at(Self::span_of(t), "only one module per input");
                    }
                    seen_module = true;
                    self.parse_module_op()?;
                }
                Tok::Ident if self.text(t) == "func.func" => self.parse_func()?,
                Tok::Ident if self.text(t) == "sdy.mesh" => self.parse_sdy_mesh()?,
                Tok::Str if self.text(t) == "\"sdy.mesh\"" => self.parse_generic_sdy_mesh()?,
                Tok::Str if self.text(t) == "\"builtin.module\"" => {
                    if seen_module || !self.m.funcs.is_empty() {
                        return self.err_at(Self::span_of(t), "only one module per input");
                    }
                    seen_module = true;
                    self.parse_generic_module()?;
                }
                Tok::Str if self.text(t) == "\"func.func\"" => self.parse_generic_func()?,
                _ => return self.err_expected(t, "'module', 'func.func' or an alias definition"),
            }
        }
        Ok(())
    }

    fn skip_file_metadata(&mut self) -> PResult<()> {
        let open = self.bump();
        loop {
            match self.bump().kind {
                Tok::MetaEnd => return Ok(()),
                Tok::Eof => return self.err_at(Self::span_of(open), "unterminated '{-#'"),
                _ => {}
            }
        }
    }

    fn parse_attr_alias_def(&mut self) -> PResult<()> {
        let name_tok = self.bump();
        let name = self.text(name_tok);
        self.expect(Tok::Equal, "'=' in attribute alias definition")?;
        if self.at_kw("loc") {
            let (s, e) = self.parse_loc_raw()?;
            self.loc_aliases.insert(name, (s, e));
        } else {
            let a = self.parse_attr()?;
            self.attr_aliases.insert(name, a);
        }
        Ok(())
    }

    fn parse_type_alias_def(&mut self) -> PResult<()> {
        let name_tok = self.bump();
        let name = self.text(name_tok);
        self.expect(Tok::Equal, "'=' in type alias definition")?;
        let ty = self.parse_type()?;
        self.type_aliases.insert(name, ty);
        Ok(())
    }

    fn parse_module_op(&mut self) -> PResult<()> {
        self.bump();
        if self.at(Tok::At) {
            let t = self.bump();
            self.m.name = Some(self.symbol_name(t)?);
        }
        if self.eat_kw("attributes") {
            self.m.attrs = self.parse_attr_dict()?;
        }
        self.expect(Tok::LBrace, "'{' to open the module body")?;
        loop {
            let t = self.peek();
            match t.kind {
                Tok::RBrace => break,
                Tok::Ident if self.text(t) == "func.func" => self.parse_func()?,
                Tok::Str if self.text(t) == "\"func.func\"" => self.parse_generic_func()?,
                Tok::Ident if self.text(t) == "sdy.mesh" => self.parse_sdy_mesh()?,
                Tok::Str if self.text(t) == "\"sdy.mesh\"" => self.parse_generic_sdy_mesh()?,
                _ => return self.err_expected(t, "'func.func', 'sdy.mesh' or '}'"),
            }
        }
        self.bump();
        self.parse_opt_loc()?;
        Ok(())
    }

    /// The name of an `@sym` token (quoted or bare), without the `@`.
    pub fn symbol_name(&self, t: Token) -> PResult<String> {
        let s = &self.text(t)[1..];
        if let Some(q) = s.strip_prefix('"') {
            match lexer::unescape(&q[..q.len() - 1]) {
                Some(u) => Ok(u),
                None => self.err_at(Self::span_of(t), "invalid escape in symbol name"),
            }
        } else {
            Ok(s.to_string())
        }
    }

    fn parse_func(&mut self) -> PResult<()> {
        let kw = self.bump();
        let visibility = match self.peek() {
            t if t.kind == Tok::Ident => {
                let v = self.text(t);
                if !matches!(v, "public" | "private" | "nested") {
                    return self.err_expected(t, "symbol name or visibility");
                }
                self.bump();
                (v != "public").then(|| v.to_string())
            }
            _ => None,
        };
        let name_tok = self.expect(Tok::At, "function name '@...'")?;
        let name = self.symbol_name(name_tok)?;
        let (args, arg_attrs) = self.parse_func_args()?;
        let body = self.m.add_region(None);
        let (result_types, result_attrs) = self.parse_func_results()?;
        let attrs = if self.eat_kw("attributes") {
            self.parse_attr_dict()?
        } else {
            NamedAttrs::new()
        };
        let fid = FuncId(self.m.funcs.len() as u32);
        self.m.funcs.push(Func {
            name,
            visibility,
            body,
            result_types,
            arg_attrs,
            result_attrs,
            attrs,
            loc: None,
            span: Span::default(),
        });
        if self.at(Tok::LBrace) {
            let named: Option<Vec<(Token, TypeId)>> =
                args.iter().map(|&(t, ty)| Some((t?, ty))).collect();
            let Some(named) = named else {
                let t = self.peek();
                return self.err_at(
                    Self::span_of(t),
                    "a function with a body needs named arguments ('%name: type')",
                );
            };
            self.parse_region_body(body, &named)?;
        } else {
            // A declaration: the body region keeps the argument types and has no ops.
            for &(_, ty) in &args {
                self.m.add_region_arg(body, ty);
            }
        }
        let end = self.pos as u32;
        if let Some((s, e)) = self.parse_opt_loc()? {
            self.pending_locs.push((LocTarget::Func(fid), s, e));
        }
        self.m.funcs[fid.index()].span = Span {
            start: kw.start,
            end,
        };
        Ok(())
    }

    /// `(%a: t {attrs}? loc?, ...)`, or `(t {attrs}?, ...)` as declarations are written:
    /// argument tokens (`None` when unnamed), types and attribute dictionaries.
    fn parse_func_args(&mut self) -> PResult<FuncArgs> {
        self.expect(Tok::LParen, "'(' to open the argument list")?;
        let mut args = Vec::new();
        let mut arg_attrs = Vec::new();
        if self.eat(Tok::RParen) {
            return Ok((args, arg_attrs));
        }
        let named = self.at(Tok::Percent);
        loop {
            let at = if named {
                let at = self.expect(Tok::Percent, "argument name '%...'")?;
                self.expect(Tok::Colon, "':' after argument name")?;
                Some(at)
            } else {
                None
            };
            let ty = self.parse_type()?;
            args.push((at, ty));
            arg_attrs.push(if self.at(Tok::LBrace) {
                self.parse_attr_dict()?
            } else {
                NamedAttrs::new()
            });
            self.parse_opt_loc()?;
            if self.eat(Tok::RParen) {
                return Ok((args, arg_attrs));
            }
            self.expect(Tok::Comma, "',' or ')' in argument list")?;
        }
    }

    fn parse_func_results(&mut self) -> PResult<(Vec<TypeId>, Vec<NamedAttrs>)> {
        let mut tys = Vec::new();
        let mut attrs = Vec::new();
        if !self.eat(Tok::Arrow) {
            return Ok((tys, attrs));
        }
        if !self.eat(Tok::LParen) {
            tys.push(self.parse_type()?);
            attrs.push(NamedAttrs::new());
            return Ok((tys, attrs));
        }
        if self.eat(Tok::RParen) {
            return Ok((tys, attrs));
        }
        loop {
            tys.push(self.parse_type()?);
            attrs.push(if self.at(Tok::LBrace) {
                self.parse_attr_dict()?
            } else {
                NamedAttrs::new()
            });
            self.parse_opt_loc()?;
            if self.eat(Tok::RParen) {
                return Ok((tys, attrs));
            }
            self.expect(Tok::Comma, "',' or ')' in result list")?;
        }
    }
}
