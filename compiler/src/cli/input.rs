//! Input and output plumbing shared by the subcommands: reading `FILE` (or `-` for
//! stdin), iterating its units under `--split-input-file`, and writing results.
//!
//! Invariant: with splitting, the outputs of the units are joined with a `// -----` line,
//! one output per unit (an invalid unit contributes an empty output), so chunk `i` of the
//! output always corresponds to chunk `i` of the input.

use std::path::Path;
use std::sync::Arc;

use super::{Ctx, Status};
use crate::error::Error;
use crate::session::Session;
use crate::source::{Source, Unit};

/// The separator between the outputs of split units.
pub const SEPARATOR: &str = "// -----\n";

/// Reads `file` (`-` reads stdin; the diagnostic name is then `<stdin>`).
pub fn read_source(ctx: &mut Ctx<'_>, file: &str) -> Result<Arc<Source>, Error> {
    if file == "-" {
        let mut text = String::new();
        return match ctx.io.stdin.read_to_string(&mut text) {
            Ok(_) => Ok(Source::new("<stdin>", text)),
            Err(source) => Err(Error::Io {
                path: "<stdin>".into(),
                source,
            }),
        };
    }
    Source::read(&ctx.resolve(Path::new(file)), file)
}

/// Runs `f` on each unit of `file`, reporting failures and continuing with the next unit.
/// Returns the joined outputs and whether every unit succeeded.
pub fn each_unit(
    ctx: &mut Ctx<'_>,
    file: &str,
    mut f: impl FnMut(&mut Session, &Unit) -> Result<String, Error>,
) -> Result<(String, Status), Error> {
    let source = read_source(ctx, file)?;
    let mut status = Status::Ok;
    let mut outputs = Vec::new();
    for unit in source.units(ctx.global.split_input_file) {
        match f(&mut ctx.session, &unit) {
            Ok(text) => outputs.push(text),
            Err(e) => {
                ctx.report(&e);
                status = Status::Invalid;
                outputs.push(String::new());
            }
        }
    }
    Ok((join(outputs), status))
}

/// Drops a module the command is done with without freeing it: the process exits soon
/// after, and freeing every op, attribute and type one by one costs about 7% of an
/// `opt -O2` run. CLI only; library callers own and drop their modules normally.
pub fn discard(module: neuronc_ir::Module) {
    std::mem::forget(module);
}

/// Joins unit outputs with [`SEPARATOR`], making sure each output ends with a newline.
/// A single output is returned as it is (no copy of a large module's text).
fn join(mut outputs: Vec<String>) -> String {
    if outputs.len() == 1 {
        let mut text = outputs.pop().unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        return text;
    }
    let mut all = String::new();
    for (i, text) in outputs.iter().enumerate() {
        if i > 0 {
            all.push_str(SEPARATOR);
        }
        all.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            all.push('\n');
        }
    }
    all
}

/// Writes `text` to `output` (resolved against the base directory) or to stdout.
pub fn write_output(ctx: &mut Ctx<'_>, output: Option<&Path>, text: &str) -> Result<(), Error> {
    match output {
        Some(path) => std::fs::write(ctx.resolve(path), text).map_err(|source| Error::Write {
            path: path.display().to_string(),
            source,
        }),
        None => ctx
            .io
            .out
            .write_all(text.as_bytes())
            .map_err(|source| Error::Write {
                path: "<stdout>".into(),
                source,
            }),
    }
}
