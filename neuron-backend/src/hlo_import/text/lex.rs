//! The character cursor of the HLO text reader: whitespace and comments, names,
//! integers, scalar tokens, quoted strings, balanced values, and positioned errors.
//!
//! Owns: [`Cursor`] and the error constructors every other part of the reader uses.
//! Invariants: the cursor only moves forward and always sits on a char boundary; every
//! error it builds is an [`ImportError::Text`] carrying the 1-based line and column of
//! the offending byte and, for syntax errors, what was expected and what was found
//! instead; nothing here panics on any input (all indexing goes through `get`).

use super::super::ImportError;

/// The result of a reading step.
pub(super) type PResult<T> = Result<T, ImportError>;

/// 1-based line and column (in characters) of byte `pos` of `src`.
pub(super) fn line_col(src: &str, pos: usize) -> (usize, usize) {
    let before = src.get(..pos).unwrap_or(src);
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, col)
}

/// `err` located at byte `pos` of `src`.
pub(super) fn located(src: &str, pos: usize, err: ImportError) -> ImportError {
    let (line, col) = line_col(src, pos);
    ImportError::Text {
        line,
        col,
        source: Box::new(err),
    }
}

/// Whether `c` can continue a name (`get-tuple-element.3`, `region_0.2.clone`).
fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// A position in HLO text.
pub(super) struct Cursor<'a> {
    pub src: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(src: &'a str) -> Self {
        Cursor { src, pos: 0 }
    }

    /// The text from the cursor on.
    pub fn rest(&self) -> &'a str {
        self.src.get(self.pos..).unwrap_or("")
    }

    /// The next character (without skipping whitespace).
    pub fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    /// The character after the next one.
    pub fn peek2(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }

    /// Moves past the next character.
    pub fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }

    /// Skips whitespace and `/* … */` and `// …` comments.
    pub fn ws(&mut self) {
        loop {
            let r = self.rest();
            let t = r.trim_start();
            self.pos += r.len() - t.len();
            if t.starts_with("/*") {
                self.pos += t.find("*/").map_or(t.len(), |e| e + 2);
            } else if t.starts_with("//") {
                self.pos += t.find('\n').unwrap_or(t.len());
            } else {
                return;
            }
        }
    }

    /// Whether the text at the cursor (after whitespace) starts with `s`.
    pub fn at(&mut self, s: &str) -> bool {
        self.ws();
        self.rest().starts_with(s)
    }

    /// Consumes `s` if the text at the cursor (after whitespace) starts with it.
    pub fn eat(&mut self, s: &str) -> bool {
        let here = self.at(s);
        if here {
            self.pos += s.len();
        }
        here
    }

    /// Consumes `s` or fails saying it was expected.
    pub fn expect(&mut self, s: &str) -> PResult<()> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.expected(&format!("`{s}`")))
        }
    }

    /// `{item, item, …}` (possibly empty): the items `item` reads, in order.
    pub fn braced<T>(&mut self, mut item: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        self.expect("{")?;
        let mut v = Vec::new();
        while !self.eat("}") {
            v.push(item(self)?);
            if !self.at("}") {
                self.expect(",")?;
            }
        }
        Ok(v)
    }

    /// A description of what is at the cursor, for "found …".
    pub fn found(&self) -> String {
        let r = self.rest();
        let Some(c) = r.chars().next() else {
            return "end of input".into();
        };
        if name_char(c) || c == '%' {
            let n = r
                .char_indices()
                .skip(1)
                .find(|&(_, c)| !name_char(c))
                .map_or(r.len(), |(k, _)| k);
            let word: String = r.get(..n).unwrap_or("").chars().take(40).collect();
            return format!("`{word}`");
        }
        if c == '\n' {
            return "end of line".into();
        }
        format!("`{c}`")
    }

    /// "expected `what`, found …" at the cursor (after whitespace).
    pub fn expected(&mut self, what: &str) -> ImportError {
        self.ws();
        let found = self.found();
        self.error_at(
            self.pos,
            ImportError::Expected {
                expected: what.to_string(),
                found,
            },
        )
    }

    /// `err` located at byte `pos`.
    pub fn error_at(&self, pos: usize, err: ImportError) -> ImportError {
        located(self.src, pos, err)
    }

    /// An unsupported feature at byte `pos`.
    pub fn unsupported(&self, pos: usize, what: String) -> ImportError {
        self.error_at(pos, ImportError::Unsupported(what))
    }

    /// A name (instruction, computation, opcode, attribute or keyword), with an optional
    /// leading `%`; returns it without the `%`, or `None` (cursor unmoved) if there is none.
    /// A `-` directly followed by `>` ends a name (`b01f_01io->b01f`).
    pub fn name(&mut self) -> Option<&'a str> {
        self.ws();
        let start = self.pos;
        let r = self.rest();
        let body = r.strip_prefix('%').unwrap_or(r);
        let skip = r.len() - body.len();
        let mut end = 0;
        for (k, c) in body.char_indices() {
            let arrow = c == '-' && body.get(k + 1..).is_some_and(|t| t.starts_with('>'));
            if !name_char(c) || arrow {
                break;
            }
            end = k + c.len_utf8();
        }
        if end == 0 {
            self.pos = start;
            return None;
        }
        self.pos = start + skip + end;
        body.get(..end)
    }

    /// A name, or an error saying `what` was expected.
    pub fn expect_name(&mut self, what: &str) -> PResult<(&'a str, usize)> {
        self.ws();
        let at = self.pos;
        match self.name() {
            Some(n) => Ok((n, at)),
            None => Err(self.expected(what)),
        }
    }

    /// A decimal integer with an optional sign.
    pub fn int(&mut self) -> PResult<i64> {
        self.ws();
        let at = self.pos;
        let r = self.rest();
        let sign = usize::from(r.starts_with('-') || r.starts_with('+'));
        let digits = r
            .get(sign..)
            .unwrap_or("")
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        if digits == 0 {
            return Err(self.expected("an integer"));
        }
        let text = r.get(..sign + digits).unwrap_or("");
        self.pos += sign + digits;
        text.parse::<i64>().map_err(|_| {
            self.error_at(
                at,
                ImportError::Expected {
                    expected: "an integer that fits in 64 bits".into(),
                    found: format!("`{text}`"),
                },
            )
        })
    }

    /// A scalar literal token as written (`-1.5e-05`, `inf`, `nan(0x7f)`, `true`, `42`),
    /// with its position.
    pub fn scalar(&mut self) -> PResult<(&'a str, usize)> {
        self.ws();
        let at = self.pos;
        let r = self.rest();
        let mut n = r
            .char_indices()
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_')))
            .map_or(r.len(), |(k, _)| k);
        if r.get(n..).is_some_and(|t| t.starts_with('(')) && r.get(..n).is_some_and(is_nan) {
            n += r.get(n..).and_then(|t| t.find(')')).map_or(0, |e| e + 1);
        }
        if n == 0 {
            return Err(self.expected("a number"));
        }
        self.pos += n;
        Ok((r.get(..n).unwrap_or(""), at))
    }

    /// A double-quoted string with C escapes (`\"`, `\\`, `\n`, `\t`, `\r`, `\'`, octal).
    pub fn string(&mut self) -> PResult<String> {
        self.ws();
        if self.peek() != Some('"') {
            return Err(self.expected("a quoted string"));
        }
        let start = self.pos;
        self.bump();
        let mut bytes = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.unclosed(start));
            };
            self.bump();
            match c {
                '"' => break,
                '\\' => self.escape(&mut bytes)?,
                c => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A string opened at byte `at` that never closes.
    fn unclosed(&self, at: usize) -> ImportError {
        let e = ImportError::Expected {
            expected: "a string closed by `\"`".into(),
            found: "end of input".into(),
        };
        self.error_at(at, e)
    }

    /// The escape after a `\` in a string.
    fn escape(&mut self, bytes: &mut Vec<u8>) -> PResult<()> {
        let at = self.pos;
        let c = self.peek();
        self.bump();
        let b = match c {
            Some('n') => b'\n',
            Some('t') => b'\t',
            Some('r') => b'\r',
            Some(c @ ('"' | '\\' | '\'' | '?')) => c as u8,
            Some(c @ '0'..='7') => {
                let mut v = c as u32 - '0' as u32;
                for _ in 0..2 {
                    match self.peek() {
                        Some(d @ '0'..='7') => {
                            v = v * 8 + (d as u32 - '0' as u32);
                            self.bump();
                        }
                        _ => break,
                    }
                }
                (v & 0xff) as u8
            }
            _ => {
                self.pos = at;
                return Err(self.expected("an escape (`n`, `t`, `\"`, `\\`, octal)"));
            }
        };
        bytes.push(b);
        Ok(())
    }

    /// Skips one attribute value whose meaning is not needed: everything up to the next
    /// `,` or line end outside brackets and strings (or up to a closing bracket that
    /// is not its own). Returns the skipped text.
    pub fn skip_value(&mut self) -> PResult<&'a str> {
        self.ws();
        let start = self.pos;
        let r = self.rest();
        let mut depth: Vec<char> = Vec::new();
        let mut chars = r.char_indices().peekable();
        let mut end = r.len();
        while let Some((k, c)) = chars.next() {
            match c {
                '"' => {
                    let mut closed = false;
                    while let Some((_, d)) = chars.next() {
                        if d == '\\' {
                            chars.next();
                        } else if d == '"' {
                            closed = true;
                            break;
                        }
                    }
                    if !closed {
                        return Err(self.unclosed(start + k));
                    }
                }
                '{' | '[' | '(' => depth.push(c),
                '}' | ']' | ')' => {
                    let open = match c {
                        '}' => '{',
                        ']' => '[',
                        _ => '(',
                    };
                    if depth.last() == Some(&open) {
                        depth.pop();
                    } else if depth.is_empty() {
                        end = k;
                        break;
                    } else {
                        self.pos = start + k;
                        return Err(self.expected("balanced brackets"));
                    }
                }
                ',' | '\n' if depth.is_empty() => {
                    end = k;
                    break;
                }
                _ => {}
            }
        }
        if !depth.is_empty() {
            self.pos = start + end;
            return Err(self.expected("a closing bracket"));
        }
        self.pos = start + end;
        Ok(r.get(..end).unwrap_or("").trim_end())
    }
}

/// Whether a token is a (signed) NaN spelling.
fn is_nan(t: &str) -> bool {
    matches!(t.trim_start_matches(['-', '+']), "nan")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stop_at_arrows_and_strip_percent() {
        let mut c = Cursor::new("  %get-tuple-element.3 b01f_01io->b01f");
        assert_eq!(c.name(), Some("get-tuple-element.3"));
        assert_eq!(c.name(), Some("b01f_01io"));
        assert!(c.eat("->"));
        assert_eq!(c.name(), Some("b01f"));
        assert_eq!(c.name(), None);
    }

    #[test]
    fn comments_are_whitespace_and_errors_have_positions() {
        let mut c = Cursor::new("/*index=5*/ 12\n  x");
        assert_eq!(c.int().ok(), Some(12));
        let e = c.int().err().map(|e| e.to_string());
        assert_eq!(e.as_deref(), Some("2:3: expected an integer, found `x`"));
    }

    #[test]
    fn strings_unescape_and_values_skip_balanced() {
        let mut c = Cursor::new(r#""a\"b\n\101" {x={"}"}, y=1}, next"#);
        assert_eq!(c.string().ok().as_deref(), Some("a\"b\nA"));
        assert_eq!(c.skip_value().ok(), Some(r#"{x={"}"}, y=1}"#));
        assert!(c.eat(","));
        assert_eq!(c.scalar().ok().map(|s| s.0), Some("next"));
        let mut c = Cursor::new("-nan(0x7f) 1e-05");
        assert_eq!(c.scalar().ok().map(|s| s.0), Some("-nan(0x7f)"));
        assert_eq!(c.scalar().ok().map(|s| s.0), Some("1e-05"));
    }
}
