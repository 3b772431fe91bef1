//! A tiny FileCheck subset: literal `CHECK`, `CHECK-LABEL`, `CHECK-NEXT`, `CHECK-SAME` and
//! `CHECK-NOT` directives from `//` comments, matched in order against an output text.

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Check,
    Next,
    Same,
    Not,
}

fn directives(text: &str) -> Vec<(usize, Kind, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(at) = line.find("//") else { continue };
        let c = line[at + 2..].trim_start();
        let table = [
            ("CHECK-LABEL:", Kind::Check),
            ("CHECK-NEXT:", Kind::Next),
            ("CHECK-SAME:", Kind::Same),
            ("CHECK-NOT:", Kind::Not),
            ("CHECK:", Kind::Check),
        ];
        for (prefix, kind) in table {
            if let Some(p) = c.strip_prefix(prefix) {
                out.push((i + 1, kind, p.trim().to_string()));
                break;
            }
        }
    }
    out
}

fn line_of(text: &str, pos: usize) -> usize {
    text[..pos].matches('\n').count()
}

/// Checks `output` against the directives of `test`; the error names the failing line.
pub fn run_checks(test: &str, output: &str) -> Result<(), String> {
    let dirs = directives(test);
    if dirs.is_empty() {
        return Err("no CHECK directives".into());
    }
    let mut pos = 0;
    let mut prev_line: Option<usize> = None;
    let mut nots: Vec<(usize, String)> = Vec::new();
    let check_nots = |nots: &mut Vec<(usize, String)>, range: &str| -> Result<(), String> {
        for (line, pat) in nots.drain(..) {
            if range.contains(&pat) {
                return Err(format!("line {line}: CHECK-NOT: `{pat}` found"));
            }
        }
        Ok(())
    };
    for (line, kind, pat) in dirs {
        if kind == Kind::Not {
            nots.push((line, pat));
            continue;
        }
        let Some(rel) = output[pos..].find(&pat) else {
            return Err(format!(
                "line {line}: {kind:?}: `{pat}` not found after byte {pos}"
            ));
        };
        let at = pos + rel;
        let l = line_of(output, at);
        match (kind, prev_line) {
            (Kind::Next, Some(p)) if l != p + 1 => {
                return Err(format!(
                    "line {line}: CHECK-NEXT: `{pat}` is on output line {l}, not {}",
                    p + 1
                ))
            }
            (Kind::Same, Some(p)) if l != p => {
                return Err(format!(
                    "line {line}: CHECK-SAME: `{pat}` is not on output line {p}"
                ))
            }
            _ => {}
        }
        check_nots(&mut nots, &output[pos..at])?;
        pos = at + pat.len();
        prev_line = Some(l);
    }
    check_nots(&mut nots, &output[pos..])
}

#[test]
fn matcher_semantics() {
    let out = "a b\nc d\ne\n";
    assert!(run_checks("// CHECK: a\n// CHECK-SAME: b\n// CHECK-NEXT: c", out).is_ok());
    assert!(run_checks("// CHECK: a\n// CHECK-NEXT: e", out).is_err());
    assert!(run_checks("// CHECK: a\n// CHECK-NOT: c\n// CHECK: e", out).is_err());
    assert!(run_checks("// CHECK: c\n// CHECK-NOT: a", out).is_ok());
    assert!(run_checks("// CHECK: e\n// CHECK: a", out).is_err());
}
