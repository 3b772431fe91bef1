//! Pipelines: ordered pass lists with fixpoint groups, parsed from `--passes=` text or
//! taken from the `-O0`/`-O1`/`-O2` presets.
//!
//! Grammar (whitespace around items is ignored):
//! ```text
//! pipeline := item (',' item)*
//! item     := PASS-NAME | 'fixpoint' ('<' N '>')? '(' pipeline ')'
//! ```
//! A fixpoint group reruns its items until none of them changes the module, at most `N`
//! times ([`DEFAULT_FIXPOINT_LIMIT`] when omitted). A group made only of passes that track
//! their edits (`canonicalize`, `cse`, `dce`, `narrow-index`) runs incrementally, with the
//! output of full runs (see [`crate::edits`]).
//! Invariant: every pass name in a [`Pipeline`] was resolved through the registry, so a
//! pipeline that parsed can always be run.

use crate::error::PassError;
use crate::pass::Pass;
use crate::registry;

/// Iteration limit of `fixpoint(...)` without an explicit `<N>`.
pub const DEFAULT_FIXPOINT_LIMIT: u32 = 8;

/// One step of a pipeline.
pub enum PipelineItem {
    Pass(Box<dyn Pass>),
    /// Rerun `items` until nothing changes, at most `max_iterations` times.
    Fixpoint {
        items: Vec<PipelineItem>,
        max_iterations: u32,
    },
}

/// An ordered list of passes and fixpoint groups.
#[derive(Default)]
pub struct Pipeline {
    pub items: Vec<PipelineItem>,
}

impl std::fmt::Display for PipelineItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PipelineItem::Pass(p) => f.write_str(p.name()),
            PipelineItem::Fixpoint {
                items,
                max_iterations,
            } => {
                write!(f, "fixpoint<{max_iterations}>(")?;
                write_items(f, items)?;
                f.write_str(")")
            }
        }
    }
}

fn write_items(f: &mut std::fmt::Formatter<'_>, items: &[PipelineItem]) -> std::fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// Prints the pipeline in the syntax [`Pipeline::parse`] reads.
impl std::fmt::Display for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write_items(f, &self.items)
    }
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pipeline({self})")
    }
}

impl Pipeline {
    /// Parses `--passes=` text, e.g. `inline,fixpoint<4>(canonicalize,cse),dce`.
    pub fn parse(text: &str) -> Result<Pipeline, PassError> {
        let mut p = Parser { text, pos: 0 };
        let items = p.items()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text after the pipeline"));
        }
        Ok(Pipeline { items })
    }

    /// The preset for `-O<level>`:
    /// * `-O0`: nothing.
    /// * `-O1`: `inline,canonicalize,cse,dce`.
    /// * `-O2`: `inline,decompose-batch-norm,fixpoint<8>(canonicalize,cse,dce,narrow-index),scale-after-contraction,sink-constants,neuron-fuse,dce,duplicate-function-elimination`
    ///   (`narrow-index` narrows provably small i64 index arithmetic to i32, inside the
    ///   fixpoint so that canonicalize folds the converts it leaves; `neuron-fuse` outlines
    ///   NeuronCore kernels as `neuronc.kernel` composites, and the kernels of repeated
    ///   layers, identical, then share one function).
    pub fn preset(level: u8) -> Result<Pipeline, PassError> {
        let text = match level {
            0 => return Ok(Pipeline::default()),
            1 => "inline,canonicalize,cse,dce",
            2 => "inline,decompose-batch-norm,fixpoint<8>(canonicalize,cse,dce,narrow-index),scale-after-contraction,sink-constants,neuron-fuse,dce,duplicate-function-elimination",
            _ => return Err(PassError::UnknownOptLevel(level)),
        };
        Pipeline::parse(text)
    }

    /// Names of all passes, in pipeline order, flattened (for reports).
    pub fn pass_names(&self) -> Vec<&'static str> {
        fn walk(items: &[PipelineItem], out: &mut Vec<&'static str>) {
            for item in items {
                match item {
                    PipelineItem::Pass(p) => out.push(p.name()),
                    PipelineItem::Fixpoint { items, .. } => walk(items, out),
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.items, &mut out);
        out
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, reason: &str) -> PassError {
        PassError::InvalidPipeline {
            text: self.text.to_string(),
            reason: format!("{reason} (at offset {})", self.pos),
        }
    }

    fn skip_ws(&mut self) {
        let rest = &self.text[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.text[self.pos..].starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn word(&mut self) -> &str {
        self.skip_ws();
        let rest = &self.text[self.pos..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(rest.len());
        self.pos += len;
        &rest[..len]
    }

    fn items(&mut self) -> Result<Vec<PipelineItem>, PassError> {
        let mut items = vec![self.item()?];
        while self.eat(',') {
            items.push(self.item()?);
        }
        Ok(items)
    }

    fn item(&mut self) -> Result<PipelineItem, PassError> {
        let name = self.word().to_string();
        if name.is_empty() {
            return Err(self.error("expected a pass name"));
        }
        if name == "fixpoint" {
            return self.fixpoint();
        }
        match registry::lookup(&name) {
            Some(info) => Ok(PipelineItem::Pass((info.make)())),
            None => Err(PassError::UnknownPass {
                name,
                known: registry::known_names(),
            }),
        }
    }

    fn fixpoint(&mut self) -> Result<PipelineItem, PassError> {
        let mut max_iterations = DEFAULT_FIXPOINT_LIMIT;
        if self.eat('<') {
            let n = self.word();
            max_iterations = n
                .parse()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| self.error("expected a positive iteration limit"))?;
            if !self.eat('>') {
                return Err(self.error("expected `>`"));
            }
        }
        if !self.eat('(') {
            return Err(self.error("expected `(` after fixpoint"));
        }
        let items = self.items()?;
        if !self.eat(')') {
            return Err(self.error("expected `)`"));
        }
        Ok(PipelineItem::Fixpoint {
            items,
            max_iterations,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_nested_fixpoints() {
        let p = Pipeline::parse(" inline, fixpoint<3>(canonicalize, cse),dce").unwrap();
        assert_eq!(p.to_string(), "inline,fixpoint<3>(canonicalize,cse),dce");
        assert_eq!(p.pass_names(), ["inline", "canonicalize", "cse", "dce"]);
        let q = Pipeline::parse("fixpoint(fixpoint<2>(dce))").unwrap();
        assert_eq!(q.to_string(), "fixpoint<8>(fixpoint<2>(dce))");
    }

    #[test]
    fn rejects_bad_text() {
        assert!(matches!(
            Pipeline::parse("cse,frobnicate"),
            Err(PassError::UnknownPass { name, .. }) if name == "frobnicate"
        ));
        for bad in [
            "",
            "cse,",
            "fixpoint(cse",
            "fixpoint<0>(cse)",
            "cse dce",
            "fixpoint<x>(cse)",
        ] {
            assert!(
                matches!(Pipeline::parse(bad), Err(PassError::InvalidPipeline { .. })),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn presets() {
        assert!(Pipeline::preset(0).unwrap().items.is_empty());
        assert_eq!(
            Pipeline::preset(1).unwrap().to_string(),
            "inline,canonicalize,cse,dce"
        );
        assert!(Pipeline::preset(2)
            .unwrap()
            .pass_names()
            .contains(&"decompose-batch-norm"));
        assert!(matches!(
            Pipeline::preset(3),
            Err(PassError::UnknownOptLevel(3))
        ));
    }
}
