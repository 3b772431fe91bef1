//! `CHECK:`-style matching of a command's output, a small subset of LLVM FileCheck.
//!
//! Directives are matched in file order against the output; patterns are literal
//! substrings (leading/trailing whitespace of the pattern ignored):
//! * `CHECK:` / `CHECK-LABEL:` — the pattern occurs after the previous match;
//! * `CHECK-NEXT:` — ... and on the line right after the previous match's line;
//! * `CHECK-SAME:` — ... and on the same line as the previous match;
//! * `CHECK-NOT:` — the pattern does not occur between the previous match and the next
//!   positive match (or the end of the output).
//!
//! Invariant: a failure message names the directive's line in the test file and shows
//! the output, so a failing test explains itself.

use std::fmt::Write;

/// Kinds of check directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Check,
    Label,
    Next,
    Same,
    Not,
}

impl CheckKind {
    /// The directive as written, e.g. `CHECK-NEXT`.
    pub fn keyword(self) -> &'static str {
        match self {
            CheckKind::Check => "CHECK",
            CheckKind::Label => "CHECK-LABEL",
            CheckKind::Next => "CHECK-NEXT",
            CheckKind::Same => "CHECK-SAME",
            CheckKind::Not => "CHECK-NOT",
        }
    }
    /// Parses the text of a comment (after `//`) as a directive.
    pub fn parse(comment: &str) -> Option<(CheckKind, &str)> {
        let comment = comment.trim_start();
        for kind in [
            CheckKind::Label,
            CheckKind::Next,
            CheckKind::Same,
            CheckKind::Not,
            CheckKind::Check,
        ] {
            if let Some(rest) = comment
                .strip_prefix(kind.keyword())
                .and_then(|r| r.strip_prefix(':'))
            {
                return Some((kind, rest.trim()));
            }
        }
        None
    }
}

/// One directive of a test file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// 1-based line of the directive in the test file.
    pub line: usize,
    pub kind: CheckKind,
    pub pattern: String,
}

/// Index of the line (0-based) containing byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].bytes().filter(|&b| b == b'\n').count()
}

/// Matches `checks` against `output`.
pub fn check_output(checks: &[Check], output: &str) -> Result<(), String> {
    let mut pos = 0;
    let mut prev_line: Option<usize> = None;
    let mut nots: Vec<&Check> = Vec::new();
    for check in checks {
        if check.kind == CheckKind::Not {
            nots.push(check);
            continue;
        }
        let Some(found) = output[pos..].find(&check.pattern).map(|i| i + pos) else {
            return Err(failure(
                check,
                "pattern not found after the previous match",
                output,
            ));
        };
        let line = line_of(output, found);
        let wanted = match check.kind {
            CheckKind::Next => Some(prev_line.map_or(0, |l| l + 1)),
            CheckKind::Same => Some(prev_line.unwrap_or(0)),
            _ => None,
        };
        if let Some(wanted) = wanted {
            if line != wanted {
                let msg = format!(
                    "found on output line {} instead of line {}",
                    line + 1,
                    wanted + 1
                );
                return Err(failure(check, &msg, output));
            }
        }
        forbid(&nots, &output[pos..found], output)?;
        nots.clear();
        pos = found + check.pattern.len();
        prev_line = Some(line);
    }
    forbid(&nots, &output[pos..], output)
}

/// Fails if any `CHECK-NOT` pattern occurs in `range`.
fn forbid(nots: &[&Check], range: &str, output: &str) -> Result<(), String> {
    match nots.iter().find(|n| range.contains(n.pattern.as_str())) {
        Some(n) => Err(failure(n, "forbidden pattern found", output)),
        None => Ok(()),
    }
}

fn failure(check: &Check, what: &str, output: &str) -> String {
    let mut s = format!(
        "line {}: {}: {}: {:?}\n--- output ---\n",
        check.line,
        check.kind.keyword(),
        what,
        check.pattern
    );
    const MAX_LINES: usize = 60;
    for (i, l) in output.lines().enumerate().take(MAX_LINES) {
        let _ = writeln!(s, "{:>4} | {l}", i + 1);
    }
    if output.lines().count() > MAX_LINES {
        s.push_str("     | ...\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checks(spec: &[(CheckKind, &str)]) -> Vec<Check> {
        spec.iter()
            .enumerate()
            .map(|(i, (k, p))| Check {
                line: i + 1,
                kind: *k,
                pattern: p.to_string(),
            })
            .collect()
    }

    const OUT: &str = "func a\n  add x\n  mul y\nfunc b\n  sub z\n";

    #[test]
    fn in_order_next_same_and_not() {
        use CheckKind::*;
        let ok = checks(&[
            (Label, "func a"),
            (Next, "add"),
            (Same, "x"),
            (Not, "sub"),
            (Check, "func b"),
            (Next, "sub"),
        ]);
        assert_eq!(check_output(&ok, OUT), Ok(()));
        assert!(check_output(&checks(&[(Check, "mul"), (Check, "add")]), OUT).is_err());
        assert!(check_output(&checks(&[(Check, "func a"), (Next, "mul")]), OUT).is_err());
        assert!(check_output(&checks(&[(Check, "add"), (Same, "y")]), OUT).is_err());
        assert!(check_output(
            &checks(&[(Check, "func a"), (Not, "mul"), (Check, "func b")]),
            OUT
        )
        .is_err());
        assert!(check_output(&checks(&[(Check, "func b"), (Not, "z")]), OUT).is_err());
        assert!(check_output(&checks(&[(Check, "nowhere")]), OUT).is_err());
    }

    #[test]
    fn parses_directives() {
        assert_eq!(
            CheckKind::parse(" CHECK-NEXT: a b "),
            Some((CheckKind::Next, "a b"))
        );
        assert_eq!(CheckKind::parse(" CHECK: x"), Some((CheckKind::Check, "x")));
        assert_eq!(CheckKind::parse(" CHECKS: x"), None);
    }
}
