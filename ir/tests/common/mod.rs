//! Helpers shared by the parser/printer integration tests: fixture discovery,
//! `// -----` chunking, and parse errors as (line, column, message).
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Every `.mlir` under `fixtures/` plus the hand-written op corpus, sorted.
pub fn mlir_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("../fixtures"), root.join("tests/corpus")];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "mlir") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// One parseable unit of a file.
pub struct Chunk {
    pub file: String,
    /// The file is under a `malformed/` directory: it must be rejected (without panic).
    pub malformed: bool,
    pub label: String,
    pub offset: usize,
    pub text: String,
}

impl Chunk {
    /// Chunks that must be rejected (dynamic shapes).
    pub fn expect_dynamic_error(&self) -> bool {
        self.file.starts_with("parse_only_dynamic") || self.label.starts_with("parse_only_dynamic")
    }
    /// Chunks annotated with `expected-error` (diagnostic tests of other tools).
    pub fn expected_errors(&self) -> Vec<String> {
        let mut out = Vec::new();
        for line in self.text.lines().filter(|l| l.contains("expected-error")) {
            if let (Some(a), Some(b)) = (line.find("{{"), line.rfind("}}")) {
                if a + 2 <= b {
                    out.push(line[a + 2..b].to_string());
                }
            }
        }
        out
    }
    /// Chunks the round-trip tests use (valid, static-shape modules).
    pub fn is_valid_input(&self) -> bool {
        !self.expect_dynamic_error() && !self.text.contains("expected-error") && !self.malformed
    }
    pub fn name(&self) -> String {
        if self.label.is_empty() {
            format!("{}@{}", self.file, self.offset)
        } else {
            format!("{}:{}", self.file, self.label)
        }
    }
}

/// All non-empty `// -----` chunks of all files.
pub fn chunks() -> Vec<Chunk> {
    let mut out = Vec::new();
    for f in mlir_files() {
        let src = std::fs::read_to_string(&f).unwrap();
        let file = f.file_name().unwrap().to_string_lossy().to_string();
        for (off, text) in neuronc_ir::parse::split_input(&src) {
            if text.trim().is_empty() || !text.contains("func.func") {
                continue;
            }
            let before = src[..off].trim_end_matches('\n');
            let line = before.rsplit('\n').next().unwrap_or("");
            let label = line
                .strip_prefix("// -----")
                .map(str::trim)
                .unwrap_or("")
                .to_string();
            out.push(Chunk {
                file: file.clone(),
                malformed: f.components().any(|c| c.as_os_str() == "malformed"),
                label,
                offset: off,
                text: text.to_string(),
            });
        }
    }
    out
}

/// Parses `src` expecting failure; returns (line, column, message), 1-based.
pub fn parse_err(src: &str) -> (usize, usize, String) {
    let e = match neuronc_ir::parse_module(src) {
        Ok(_) => panic!("expected a parse error for:\n{src}"),
        Err(e) => e.0,
    };
    let at = e.span.start as usize;
    let before = &src[..at];
    let line = before.matches('\n').count() + 1;
    let col = at - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col, e.message)
}
