//! Byte-level lexer for MLIR text.
//!
//! Owns: [`Tok`] / [`Token`] and [`Lexer::next_token`], which reads one token starting at a
//! byte offset. Tokens carry only their kind and byte range: no allocation per token.
//! Invariants: every call advances past at least one byte unless at end of input, so the
//! parser always terminates; `//` comments and whitespace are skipped; an unknown byte is
//! returned as [`Tok::Error`] (the parser turns it into a diagnostic).

/// Token kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    Eof,
    /// Bare identifier / keyword: `[A-Za-z_][A-Za-z0-9_$.]*`.
    Ident,
    /// `%name` or `%name#N` (SSA value).
    Percent,
    /// `@name` or `@"quoted"`.
    At,
    /// `#name` (attribute alias or dialect attribute).
    Hash,
    /// `!name` (dialect type / type alias).
    Bang,
    /// `^name` (block label).
    Caret,
    /// Decimal or `0x` hexadecimal integer (no sign).
    Int,
    /// Decimal float literal (contains a `.`).
    Float,
    /// `"..."` with escapes.
    Str,
    LParen,
    RParen,
    LBrace,
    RBrace,
    LSquare,
    RSquare,
    Less,
    Greater,
    Comma,
    Colon,
    Equal,
    Arrow,
    Question,
    Star,
    Plus,
    Minus,
    /// `{-#` (file metadata start).
    MetaBegin,
    /// `#-}` (file metadata end).
    MetaEnd,
    /// A byte that starts no token, or an unterminated string.
    Error,
}

/// A token: kind and byte range in the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Tok,
    pub start: u32,
    pub end: u32,
}

/// Byte classes, one bit each, looked up in [`CLASS`] (one load per byte instead of a chain
/// of range tests in the scanning loops).
const IDENT_START: u8 = 1;
const IDENT_CONT: u8 = 2;
const SUFFIX_CONT: u8 = 4;
const DIGIT: u8 = 8;
const HEX: u8 = 16;

/// The class bits of every byte value.
static CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let b = i as u8;
        let alpha = b.is_ascii_alphabetic();
        let digit = b.is_ascii_digit();
        let mut c = 0;
        if alpha || b == b'_' {
            c |= IDENT_START;
        }
        if alpha || digit || b == b'_' || b == b'$' || b == b'.' {
            c |= IDENT_CONT | SUFFIX_CONT;
        }
        if b == b'-' {
            c |= SUFFIX_CONT;
        }
        if digit {
            c |= DIGIT;
        }
        if b.is_ascii_hexdigit() {
            c |= HEX;
        }
        t[i] = c;
        i += 1;
    }
    t
};

#[inline]
fn is(b: u8, class: u8) -> bool {
    CLASS[b as usize] & class != 0
}

/// Stateless lexer over a byte slice.
pub(crate) struct Lexer<'a> {
    pub bytes: &'a [u8],
}

impl<'a> Lexer<'a> {
    /// Skips whitespace and comments from `pos`; returns the next non-trivia offset.
    #[inline]
    pub fn skip_trivia(&self, mut pos: usize) -> usize {
        let b = self.bytes;
        while pos < b.len() {
            match b[pos] {
                b' ' | b'\n' | b'\t' | b'\r' => pos += 1,
                b'/' if b.get(pos + 1) == Some(&b'/') => {
                    while pos < b.len() && b[pos] != b'\n' {
                        pos += 1;
                    }
                }
                _ => break,
            }
        }
        pos
    }

    /// The first offset from `pos` whose byte is not in `class` (or the end).
    #[inline]
    fn scan(&self, mut pos: usize, class: u8) -> usize {
        let b = self.bytes;
        while pos < b.len() && is(b[pos], class) {
            pos += 1;
        }
        pos
    }

    /// Reads the token at or after `pos`.
    pub fn next_token(&self, pos: usize) -> Token {
        let b = self.bytes;
        let start = self.skip_trivia(pos);
        let tok = |kind, end: usize| Token {
            kind,
            start: start as u32,
            end: end as u32,
        };
        let Some(&c) = b.get(start) else {
            return tok(Tok::Eof, start);
        };
        let next = b.get(start + 1).copied();
        match c {
            b'(' => tok(Tok::LParen, start + 1),
            b')' => tok(Tok::RParen, start + 1),
            b'{' if next == Some(b'-') && b.get(start + 2) == Some(&b'#') => {
                tok(Tok::MetaBegin, start + 3)
            }
            b'{' => tok(Tok::LBrace, start + 1),
            b'}' => tok(Tok::RBrace, start + 1),
            b'[' => tok(Tok::LSquare, start + 1),
            b']' => tok(Tok::RSquare, start + 1),
            b'<' => tok(Tok::Less, start + 1),
            b'>' => tok(Tok::Greater, start + 1),
            b',' => tok(Tok::Comma, start + 1),
            b':' => tok(Tok::Colon, start + 1),
            b'=' => tok(Tok::Equal, start + 1),
            b'?' => tok(Tok::Question, start + 1),
            b'*' => tok(Tok::Star, start + 1),
            b'+' => tok(Tok::Plus, start + 1),
            b'-' if next == Some(b'>') => tok(Tok::Arrow, start + 2),
            b'-' => tok(Tok::Minus, start + 1),
            b'"' => self.lex_string(start),
            b'%' => {
                // MLIR suffix-id: all digits, or a letter/`$._-` then `[A-Za-z0-9$._-]*`.
                let end = if next.is_some_and(|d| d.is_ascii_digit()) {
                    self.scan(start + 1, DIGIT)
                } else {
                    self.scan(start + 1, SUFFIX_CONT)
                };
                if end == start + 1 {
                    return tok(Tok::Error, start + 1);
                }
                // `%name#N` result-number suffix.
                let end = if b.get(end) == Some(&b'#')
                    && b.get(end + 1).is_some_and(|d| d.is_ascii_digit())
                {
                    self.scan(end + 1, DIGIT)
                } else {
                    end
                };
                tok(Tok::Percent, end)
            }
            b'#' if next == Some(b'-') && b.get(start + 2) == Some(&b'}') => {
                tok(Tok::MetaEnd, start + 3)
            }
            b'@' if next == Some(b'"') => {
                let t = self.lex_string(start + 1);
                Token {
                    kind: if t.kind == Tok::Str {
                        Tok::At
                    } else {
                        Tok::Error
                    },
                    start: start as u32,
                    end: t.end,
                }
            }
            b'#' | b'!' | b'^' | b'@' => {
                let end = self.scan(start + 1, SUFFIX_CONT);
                let kind = match c {
                    b'#' => Tok::Hash,
                    b'!' => Tok::Bang,
                    b'^' => Tok::Caret,
                    _ => Tok::At,
                };
                if end == start + 1 {
                    tok(Tok::Error, start + 1)
                } else {
                    tok(kind, end)
                }
            }
            b'0'..=b'9' => self.lex_number(start),
            _ if is(c, IDENT_START) => tok(Tok::Ident, self.scan(start + 1, IDENT_CONT)),
            _ => {
                // Skip a whole UTF-8 character so spans stay on char boundaries.
                let mut end = start + 1;
                while end < b.len() && (b[end] & 0xC0) == 0x80 {
                    end += 1;
                }
                tok(Tok::Error, end)
            }
        }
    }

    fn lex_string(&self, start: usize) -> Token {
        let b = self.bytes;
        let mut pos = start + 1;
        while pos < b.len() {
            match b[pos] {
                b'"' => {
                    return Token {
                        kind: Tok::Str,
                        start: start as u32,
                        end: (pos + 1) as u32,
                    }
                }
                b'\\' => pos += 2,
                _ => pos += 1,
            }
        }
        Token {
            kind: Tok::Error,
            start: start as u32,
            end: b.len() as u32,
        }
    }

    fn lex_number(&self, start: usize) -> Token {
        let b = self.bytes;
        let tok = |kind, end: usize| Token {
            kind,
            start: start as u32,
            end: end as u32,
        };
        if b[start] == b'0' && b.get(start + 1) == Some(&b'x') {
            let end = self.scan(start + 2, HEX);
            if end > start + 2 {
                return tok(Tok::Int, end);
            }
        }
        let mut end = self.scan(start, DIGIT);
        if b.get(end) != Some(&b'.') {
            return tok(Tok::Int, end);
        }
        end = self.scan(end + 1, DIGIT);
        if matches!(b.get(end), Some(b'e' | b'E')) {
            let mut e = end + 1;
            if matches!(b.get(e), Some(b'+' | b'-')) {
                e += 1;
            }
            let e2 = self.scan(e, DIGIT);
            if e2 > e {
                end = e2;
            }
        }
        tok(Tok::Float, end)
    }
}

/// Unescapes the contents of a string token (without its quotes).
pub(crate) fn unescape(raw: &str) -> Option<String> {
    if !raw.contains('\\') {
        return Some(raw.to_string());
    }
    let b = raw.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = *b.get(i + 1)?;
        match c {
            b'\\' | b'"' => out.push(c),
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            _ => {
                let h = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(h, 16).ok()?);
                i += 3;
                continue;
            }
        }
        i += 2;
    }
    String::from_utf8(out).ok()
}
