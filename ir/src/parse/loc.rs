//! Debug locations: `loc(...)` after ops, arguments, functions and the module, and the
//! `#locN = loc(...)` alias definitions that may follow their uses.
//!
//! Owns: skipping a location while parsing (only its byte range is kept) and resolving the
//! kept ranges once the whole input is read: `#locN` references are replaced by their
//! definitions (memoized, depth- and size-bounded), and each distinct resolved text is
//! interned once with [`crate::Module::add_loc`].

use super::lexer::{Lexer, Tok};
use super::{LocTarget, PResult, Parser};
use crate::module::LocId;
use rustc_hash::FxHashMap;

/// Largest resolved location text; longer expansions keep their `#loc` references.
const MAX_LOC_TEXT: usize = 8192;
/// Alias chains deeper than this are left unexpanded.
const MAX_LOC_DEPTH: u32 = 32;

impl<'a> Parser<'a> {
    /// Parses `loc(...)` if present; returns its byte range.
    pub fn parse_opt_loc(&mut self) -> PResult<Option<(u32, u32)>> {
        if !self.at_kw("loc") {
            return Ok(None);
        }
        self.parse_loc_raw().map(Some)
    }

    /// Parses `loc(...)` (balanced parentheses) and returns its byte range.
    pub fn parse_loc_raw(&mut self) -> PResult<(u32, u32)> {
        let kw = self.expect_kw("loc")?;
        let open = self.expect(Tok::LParen, "'(' after 'loc'")?;
        let mut depth = 1u32;
        loop {
            let t = self.bump();
            match t.kind {
                Tok::LParen => depth += 1,
                Tok::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok((kw.start, t.end));
                    }
                }
                Tok::Eof | Tok::Error => {
                    return self.err_at(Self::span_of(open), "unterminated 'loc('")
                }
                _ => {}
            }
        }
    }

    /// Turns every pending location range into a [`LocId`].
    pub fn resolve_locs(&mut self) {
        let pending = std::mem::take(&mut self.pending_locs);
        if pending.is_empty() {
            return;
        }
        let mut r = LocResolver {
            src: self.src,
            aliases: &self.loc_aliases,
            memo: FxHashMap::default(),
            active: Vec::new(),
        };
        let mut ids: FxHashMap<String, LocId> = FxHashMap::default();
        for (target, s, e) in pending {
            let text = r.expand(s as usize, e as usize, 0);
            let id = match ids.get(&text) {
                Some(&id) => id,
                None => {
                    let id = self.m.add_loc(text.clone());
                    ids.insert(text, id);
                    id
                }
            };
            match target {
                LocTarget::Op(op) => self.m.op_mut(op).loc = Some(id),
                LocTarget::Func(f) => self.m.funcs[f.index()].loc = Some(id),
            }
        }
    }
}

struct LocResolver<'a, 'p> {
    src: &'a str,
    aliases: &'p FxHashMap<&'a str, (u32, u32)>,
    memo: FxHashMap<&'a str, String>,
    /// Aliases being expanded (cycle guard).
    active: Vec<&'a str>,
}

impl<'a> LocResolver<'a, '_> {
    /// Expands `#loc` references in `src[s..e]` (a `loc(...)` text).
    fn expand(&mut self, s: usize, e: usize, depth: u32) -> String {
        let text = &self.src[s..e];
        if !text.contains('#') || depth > MAX_LOC_DEPTH {
            return text.to_string();
        }
        let lx = Lexer {
            bytes: &self.src.as_bytes()[..e],
        };
        let mut out = String::with_capacity(text.len());
        let mut last = s;
        let mut pos = s;
        loop {
            let t = lx.next_token(pos);
            if t.kind == Tok::Eof {
                break;
            }
            pos = t.end as usize;
            if t.kind != Tok::Hash {
                continue;
            }
            let name = &self.src[t.start as usize..t.end as usize];
            let Some(inner) = self.alias_inner(name, depth) else {
                continue;
            };
            if out.len() + inner.len() > MAX_LOC_TEXT {
                return text.to_string();
            }
            out.push_str(&self.src[last..t.start as usize]);
            out.push_str(&inner);
            last = t.end as usize;
        }
        out.push_str(&self.src[last..e]);
        out
    }

    /// The expansion of alias `name` without its `loc(` `)` wrapper.
    fn alias_inner(&mut self, name: &'a str, depth: u32) -> Option<String> {
        if let Some(s) = self.memo.get(name) {
            return Some(s.clone());
        }
        let &(s, e) = self.aliases.get(name)?;
        if self.active.contains(&name) {
            return None;
        }
        self.active.push(name);
        let full = self.expand(s as usize, e as usize, depth + 1);
        self.active.pop();
        let inner = full.strip_prefix("loc(")?.strip_suffix(')')?.to_string();
        self.memo.insert(name, inner.clone());
        Some(inner)
    }
}
