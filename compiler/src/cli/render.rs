//! Compiler-style rendering of [`Diagnostics`]:
//!
//! ```text
//! model.mlir:12:8: error: operand types do not match
//!   %2 = stablehlo.add %0, %1 : tensor<2xf32>
//!        ^~~~~~~~~~~~~
//! model.mlir:11:3: note: operand defined here
//!   ...
//! note: unlocated notes have no position
//! ```
//!
//! `codespan-reporting` (short display style) renders the `file:line:col: severity:
//! message` headers and resolves byte offsets to lines and columns; the source line and
//! the caret under the span are added here. Colour is ANSI only when asked for.
//! Invariant: never panics, whatever the spans (they are clamped to the text and to
//! character boundaries).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::{Files, SimpleFile};
use codespan_reporting::term::termcolor::{Ansi, NoColor};
use codespan_reporting::term::{self, Config, DisplayStyle};
use neuronc_ir::{Severity, Span};

use crate::error::Diagnostics;

/// One rendered diagnostic, as the golden runner matches it against `expected-*` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reported {
    pub severity: Severity,
    /// 1-based line in the whole file.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    pub message: String,
}

/// Renders every diagnostic; returns the text and the reported positions.
pub fn render(diags: &Diagnostics, color: bool) -> (String, Vec<Reported>) {
    let file = SimpleFile::new(diags.source.name.as_str(), diags.source.text.as_str());
    let mut text = String::new();
    let mut reported = Vec::new();
    for d in &diags.diagnostics {
        let severity = match d.severity {
            Severity::Error => CsSeverity::Error,
            Severity::Warning => CsSeverity::Warning,
        };
        let (line, column) = located(&file, d.span, severity, &d.message, &mut text, color);
        reported.push(Reported {
            severity: d.severity,
            line,
            column,
            message: d.message.clone(),
        });
        for (span, note) in &d.notes {
            match span {
                Some(span) => {
                    located(&file, *span, CsSeverity::Note, note, &mut text, color);
                }
                None => text.push_str(&header(&file, None, CsSeverity::Note, note, color)),
            }
        }
    }
    (text, reported)
}

/// Renders `file:line:col: severity: message`, the source line and the caret; returns the
/// 1-based line and column.
fn located(
    file: &SimpleFile<&str, &str>,
    span: Span,
    severity: CsSeverity,
    message: &str,
    text: &mut String,
    color: bool,
) -> (usize, usize) {
    let src = *file.source();
    let start = floor_boundary(src, span.start as usize);
    let end = floor_boundary(src, (span.end as usize).max(start)).max(start);
    text.push_str(&header(file, Some(start..end), severity, message, color));
    let Ok(location) = file.location((), start) else {
        return (1, 1);
    };
    let Ok(range) = file.line_range((), location.line_number - 1) else {
        return (location.line_number, location.column_number);
    };
    let line = src[range.clone()].trim_end_matches(['\n', '\r']);
    text.push_str(line);
    text.push('\n');
    text.push_str(&caret(
        line,
        start - range.start,
        end.min(range.start + line.len()) - start,
    ));
    (location.line_number, location.column_number)
}

/// The caret line: `^` under the first byte of the span, `~` under the rest of it on the
/// same line. Tabs in the source line are kept so the caret lines up.
fn caret(line: &str, start: usize, len: usize) -> String {
    let mut s: String = line[..start]
        .chars()
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    s.push('^');
    let marked = line[start..].get(..len).unwrap_or("").chars().count();
    s.extend(std::iter::repeat_n('~', marked.saturating_sub(1)));
    s.push('\n');
    s
}

/// `name:line:col: severity: message\n` via codespan-reporting's short style.
fn header(
    file: &SimpleFile<&str, &str>,
    range: Option<std::ops::Range<usize>>,
    severity: CsSeverity,
    message: &str,
    color: bool,
) -> String {
    let mut diag = CsDiagnostic::new(severity).with_message(message);
    if let Some(range) = range {
        diag = diag.with_labels(vec![Label::primary((), range)]);
    }
    let config = Config {
        display_style: DisplayStyle::Short,
        ..Config::default()
    };
    let bytes = if color {
        let mut w = Ansi::new(Vec::new());
        let _ = term::emit(&mut w, &config, file, &diag);
        w.into_inner()
    } else {
        let mut w = NoColor::new(Vec::new());
        let _ = term::emit(&mut w, &config, file, &diag);
        w.into_inner()
    };
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The largest char boundary of `s` that is `<= i` (and `<= s.len()`).
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Stage;
    use crate::source::{Source, Unit};
    use neuronc_ir::Diagnostic;

    fn span(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    #[test]
    fn renders_header_line_caret_and_notes() {
        let text = "module {\n  %0 = bad op\n}\n";
        let src = Source::new("m.mlir", text);
        let d = Diagnostic::error(span(16, 22), "unknown op")
            .with_note_at(span(0, 6), "in this module")
            .with_note("try again");
        let diags = Diagnostics::new(Stage::Parse, &Unit::whole(&src), vec![d]);
        let (out, reported) = render(&diags, false);
        assert_eq!(
            out,
            "m.mlir:2:8: error: unknown op\n  %0 = bad op\n       ^~~~~~\n\
             m.mlir:1:1: note: in this module\nmodule {\n^~~~~~\nnote: try again\n"
        );
        assert_eq!(reported[0].line, 2);
        assert_eq!(reported[0].column, 8);
    }

    #[test]
    fn unit_offsets_shift_lines_and_bad_spans_do_not_panic() {
        let text = "a\n// -----\nxé\n";
        let src = Source::new("s.mlir", text);
        let units = src.units(true);
        assert_eq!(units.len(), 2);
        let d = Diagnostic::error(span(1, 2), "here");
        let far = Diagnostic::error(span(9999, 10000), "past the end");
        let mid = Diagnostic::error(span(2, 3), "inside a char"); // 'é' starts at byte 1
        let diags = Diagnostics::new(Stage::Verify, &units[1], vec![d, far, mid]);
        let (out, reported) = render(&diags, false);
        assert_eq!(reported[0].line, 3);
        assert_eq!(reported[0].column, 2);
        assert!(
            out.starts_with("s.mlir:3:2: error: here\nxé\n ^\n"),
            "{out}"
        );
        assert_eq!(reported[2].column, 2);
    }
}
