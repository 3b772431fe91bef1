//! `expected-error` / `expected-warning` directives and their matching against reported
//! diagnostics, in the manner of MLIR's `-verify-diagnostics`.
//!
//! Syntax (in a `//` comment): `expected-error {{substring}}` (diagnostic on this line),
//! `expected-error@+N {{...}}` / `@-N` (N lines below / above), `@above`, `@below`.
//! Matching: every expected diagnostic must be reported on its line with a message that
//! contains the substring, and every reported diagnostic must be expected. Line numbers are
//! whole-file lines, so with `--split-input-file` each chunk's directives can only match
//! that chunk's diagnostics. Notes are not checked.

use neuronc_ir::Severity;

use crate::cli::Reported;

/// One `expected-*` directive, resolved to the line it refers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expected {
    /// Line of the directive itself (1-based).
    pub directive_line: usize,
    /// Line the diagnostic must be reported at (1-based).
    pub line: usize,
    pub severity: Severity,
    pub message: String,
}

/// Parses an `expected-*` directive in the comment of line `line` (1-based).
/// `Ok(None)`: no directive; `Err`: a malformed one.
pub fn parse(comment: &str, line: usize) -> Result<Option<Expected>, String> {
    let comment = comment.trim_start();
    let (severity, rest) = if let Some(r) = comment.strip_prefix("expected-error") {
        (Severity::Error, r)
    } else if let Some(r) = comment.strip_prefix("expected-warning") {
        (Severity::Warning, r)
    } else {
        return Ok(None);
    };
    let bad = |why: &str| format!("line {line}: malformed expected-* directive: {why}");
    let (offset, rest) = match rest.strip_prefix('@') {
        None => (0i64, rest),
        Some(r) => {
            let end = r
                .find(|c: char| c.is_whitespace() || c == '{')
                .unwrap_or(r.len());
            let n = match &r[..end] {
                "above" => -1,
                "below" => 1,
                s => s.parse::<i64>().map_err(|_| bad("bad @offset"))?,
            };
            (n, &r[end..])
        }
    };
    let rest = rest.trim_start();
    let message = rest
        .strip_prefix("{{")
        .and_then(|r| r.rfind("}}").map(|end| &r[..end]))
        .ok_or_else(|| bad("expected {{message}}"))?;
    let target = i64::try_from(line)
        .unwrap_or(i64::MAX)
        .saturating_add(offset);
    if target < 1 {
        return Err(bad("@offset points before the first line"));
    }
    Ok(Some(Expected {
        directive_line: line,
        line: target as usize,
        severity,
        message: message.trim().to_string(),
    }))
}

/// Checks that `reported` and `expected` match one to one.
pub fn check_diagnostics(expected: &[Expected], reported: &[Reported]) -> Result<(), String> {
    let mut used = vec![false; reported.len()];
    let mut problems = Vec::new();
    for e in expected {
        let hit = reported.iter().enumerate().position(|(i, r)| {
            !used[i]
                && r.line == e.line
                && r.severity == e.severity
                && r.message.contains(&e.message)
        });
        match hit {
            Some(i) => used[i] = true,
            None => {
                let mut msg = format!(
                    "line {}: expected {} at line {} was not reported: {{{{{}}}}}",
                    e.directive_line,
                    severity_name(e.severity),
                    e.line,
                    e.message
                );
                for r in reported.iter().filter(|r| r.line == e.line) {
                    msg.push_str(&format!("\n    reported there instead: {}", r.message));
                }
                problems.push(msg);
            }
        }
    }
    for (r, _) in reported.iter().zip(&used).filter(|(_, u)| !**u) {
        problems.push(format!(
            "unexpected {} at line {}:{}: {}",
            severity_name(r.severity),
            r.line,
            r.column,
            r.message
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rep(line: usize, message: &str) -> Reported {
        Reported {
            severity: Severity::Error,
            line,
            column: 1,
            message: message.into(),
        }
    }

    #[test]
    fn parses_offsets() {
        let e = parse(" expected-error@+2 {{bad {{thing}} here}}", 10)
            .unwrap()
            .unwrap();
        assert_eq!((e.line, e.message.as_str()), (12, "bad {{thing}} here"));
        assert_eq!(parse("expected-error {{x}}", 4).unwrap().unwrap().line, 4);
        assert_eq!(
            parse("expected-error@above {{x}}", 4)
                .unwrap()
                .unwrap()
                .line,
            3
        );
        assert_eq!(
            parse("expected-warning@-3 {{x}}", 4).unwrap().unwrap().line,
            1
        );
        assert!(parse("expected-error@-9 {{x}}", 4).is_err());
        assert!(parse("expected-error x", 4).is_err());
        assert_eq!(parse("CHECK: x", 4), Ok(None));
    }

    #[test]
    fn matches_one_to_one() {
        let e = |line, m: &str| {
            parse(&format!("expected-error@+0 {{{{{m}}}}}"), line)
                .unwrap()
                .unwrap()
        };
        assert!(check_diagnostics(&[e(3, "shape")], &[rep(3, "bad shape here")]).is_ok());
        assert!(check_diagnostics(&[e(3, "shape")], &[rep(4, "bad shape here")]).is_err());
        assert!(check_diagnostics(&[e(3, "shape")], &[rep(3, "shape"), rep(3, "shape")]).is_err());
        assert!(check_diagnostics(&[e(3, "shape"), e(3, "shape")], &[rep(3, "shape")]).is_err());
        assert!(check_diagnostics(&[], &[]).is_ok());
    }
}
