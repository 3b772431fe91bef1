//! `neuronc-rs compile FILE... -o DIR [--target trn1|trn2|inf2] [--auto-cast none|matmult|all]
//! [--float-semantics xla|strict] [--recompute-for-contraction] [-j N]
//! [--no-cache | --cache-dir CACHE]`: writes `model.hlo.pb`, `model.hlo.txt`,
//! `program.nir`, `timeline.json`, `report.json` and `manifest.json` to DIR (with several
//! inputs, to `DIR/<file stem>/` each) and prints a one-screen summary per file.
//!
//! Invariants:
//! * a compile is looked up in the compile cache ([`crate::cache`]) under the hash of the
//!   verified module printed canonically, the target, the flags and the compiler build;
//!   a hit writes the stored files, byte-identical to a fresh compile (`report.json` keeps
//!   the `compile_time_s` of the compile that filled the entry), and the summary says
//!   `(cached)`; cache trouble of any kind is a warning and a fresh compile, never an
//!   error or different output;
//! * the summary is rebuilt from `report.json` for fresh and cached compiles alike;
//! * several inputs compile in parallel on a rayon pool of `-j` threads, started in input
//!   order; diagnostics and summaries are printed in input order as soon as every earlier
//!   file is done, and a failing input (even a compiler panic) does not stop the others
//!   (exit code 1); a unit that fails makes the exit code 1 in every mode;
//! * progress goes to a terminal stderr only ([`crate::progress`]), never to stdout.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use clap::{Args, ValueEnum};
use neuronc_backend::engine::AutoCast;
use neuronc_ir::PrintOptions;

use super::run::Semantics;
use super::{input, Command, Ctx, Status};
use crate::build::{build_with_progress, semantics_name, BuildOptions, Recompute, TransposeCost};
use crate::cache::{self, Cache, Key, KeyInputs, Lookup};
use crate::error::Error;
use crate::progress::{Progress, Stage};
use crate::session::{Session, Timings};
use crate::source::{Source, Unit};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Cast {
    None,
    Matmult,
    All,
}

impl Cast {
    pub fn to_auto_cast(self) -> AutoCast {
        match self {
            Cast::None => AutoCast::None,
            Cast::Matmult => AutoCast::Matmult,
            Cast::All => AutoCast::All,
        }
    }
}

#[derive(Args, Debug)]
pub struct CompileArgs {
    /// Input files (`-` reads stdin). With several, each compiles into DIR/<file stem>/.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// NeuronCore generation to plan for.
    #[arg(long, default_value = "trn1", value_parser = ["trn1", "trn2", "inf2"])]
    pub target: String,
    /// Which ops run in bf16.
    #[arg(long, value_enum, default_value = "matmult")]
    pub auto_cast: Cast,
    /// `xla`: compile what XLA:CPU (jax, torch_xla) computes for bf16 programs (bf16
    /// results converted to f32 stay f32, bf16 sums in XLA's order); `strict`: round every
    /// op result to its type, as the StableHLO spec says.
    #[arg(long, value_enum, default_value = "xla")]
    pub float_semantics: Semantics,
    /// When to give attention probabilities (a matmul operand reduced along its
    /// contracted axis) their own copy computed with that axis on the partitions instead
    /// of a transpose (pass `recompute-for-contraction`: fewer transposes, more
    /// Vector/Scalar work). `auto`: only when the plan's transposes would move more than
    /// 5% of its matmul operand bytes and recomputing brings them within that at most 15%
    /// slower (predicted); the bare flag means `on`.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", num_args = 0..=1,
          require_equals = true, default_missing_value = "on")]
    pub recompute_for_contraction: Recompute,
    /// Compile up to N files at once [default: the number of cores].
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// Neither read nor fill the compile cache.
    #[arg(long)]
    pub no_cache: bool,
    /// Compile cache directory [default: $NEURONC_CACHE_DIR, else
    /// $XDG_CACHE_HOME/neuronc-rs, else ~/.cache/neuronc-rs].
    #[arg(long, value_name = "CACHE", conflicts_with = "no_cache")]
    pub cache_dir: Option<PathBuf>,
}

/// Environment variable with the cache size limit (bytes, or with a K/M/G suffix).
const MAX_SIZE_VAR: &str = "NEURONC_CACHE_MAX_SIZE";

impl Command for CompileArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let cache = self.open_cache(ctx);
        let job = Job {
            opts: BuildOptions {
                target: self.target.clone(),
                auto_cast: self.auto_cast.to_auto_cast(),
                float_semantics: self.float_semantics.to_interp(),
                recompute_for_contraction: self.recompute_for_contraction,
            },
            cache: cache.as_ref(),
            split: ctx.global.split_input_file,
        };
        let status = if self.files.len() == 1 {
            self.run_one(ctx, &job)
        } else {
            self.run_many(ctx, &job)
        };
        if let Some(c) = cache.filter(|c| c.stored.load(Ordering::Relaxed)) {
            if let Err(e) = c.cache.evict() {
                warn(ctx, &format!("compile cache: {e}"));
            }
        }
        status
    }
}

impl CompileArgs {
    /// The cache to use, or `None` (disabled, or unusable: then a warning says why).
    fn open_cache(&self, ctx: &mut Ctx<'_>) -> Option<CacheCtx> {
        if self.no_cache {
            return None;
        }
        let cache = locate_cache(ctx, self.cache_dir.as_deref())?;
        match cache::compiler_id() {
            Ok(compiler) => Some(CacheCtx {
                cache,
                compiler,
                stored: AtomicBool::new(false),
            }),
            Err(e) => {
                warn(ctx, &format!("compile cache disabled: {e}"));
                None
            }
        }
    }

    /// One input: artifacts go straight into DIR.
    fn run_one(&self, ctx: &mut Ctx<'_>, job: &Job<'_>) -> Result<Status, Error> {
        let source = input::read_source(ctx, &self.files[0])?;
        let mut progress = Progress::stages(Progress::wanted(ctx.io.color));
        let out = job.compile_source(&mut ctx.session, &source, &progress);
        progress.suspend(|| report(ctx, &out));
        let Some(built) = out.built else {
            return Ok(out.status);
        };
        let dir = ctx.resolve(&self.output);
        progress.stage(Stage::Write);
        write_artifacts(&dir, &built.files)?;
        progress.finish();
        input::write_output(ctx, None, &built.summary_text(&self.target, &dir))?;
        Ok(out.status)
    }

    /// Several inputs, compiled in parallel; results are printed in input order.
    fn run_many(&self, ctx: &mut Ctx<'_>, job: &Job<'_>) -> Result<Status, Error> {
        let inputs = self.inputs(ctx)?;
        let threads = self.jobs.map_or_else(
            || std::thread::available_parallelism().map_or(1, NonZeroUsize::get),
            |j| j as usize,
        );
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::Run(format!("cannot start {threads} compile threads: {e}")))?;
        let mut progress = Progress::files(Progress::wanted(ctx.io.color), inputs.len() as u64);
        let (tx, rx) = mpsc::channel();
        let mut status = Status::Ok;
        std::thread::scope(|s| {
            let inputs = &inputs;
            // FIFO: files start in input order, so summaries can be printed early.
            s.spawn(move || {
                pool.scope_fifo(|fifo| {
                    for (i, input) in inputs.iter().enumerate() {
                        let tx = tx.clone();
                        fifo.spawn_fifo(move |_| {
                            // The receiver outlives every sender.
                            let _ = tx.send((i, job.compile_file_contained(input)));
                        });
                    }
                });
            });
            let mut pending = BTreeMap::new();
            let mut next = 0;
            for (i, out) in rx {
                pending.insert(i, out);
                while let Some(out) = pending.remove(&next) {
                    let input = &inputs[next];
                    status = status.and(self.finish_file(ctx, &progress, input, out));
                    next += 1;
                }
            }
        });
        progress.finish();
        Ok(status)
    }

    /// Reports one file of a multi-file compile and prints its summary.
    fn finish_file(
        &self,
        ctx: &mut Ctx<'_>,
        progress: &Progress,
        input: &InputFile,
        out: FileOutcome,
    ) -> Status {
        add_timings(&mut ctx.session.timings, &out.timings);
        let status = progress.suspend(|| {
            report(ctx, &out);
            let Some(built) = &out.built else {
                return Status::Invalid;
            };
            let text = built.summary_text(&self.target, &input.out_dir);
            match input::write_output(ctx, None, &text).and_then(|()| flush(ctx)) {
                Ok(()) => out.status,
                Err(e) => {
                    ctx.report(&e);
                    Status::Invalid
                }
            }
        });
        progress.file_done(&input.name);
        status
    }

    /// The inputs of a multi-file compile with their output directories; refuses stdin
    /// and two inputs that would share an output directory.
    fn inputs(&self, ctx: &Ctx<'_>) -> Result<Vec<InputFile>, Error> {
        let dir = ctx.resolve(&self.output);
        let mut by_stem: BTreeMap<&OsStr, &str> = BTreeMap::new();
        let mut inputs = Vec::with_capacity(self.files.len());
        for name in &self.files {
            if name == "-" {
                return Err(Error::Run(
                    "stdin (`-`) cannot be compiled together with other files".into(),
                ));
            }
            let path = Path::new(name);
            let stem = path
                .file_stem()
                .ok_or_else(|| Error::Run(format!("{name}: has no file name")))?;
            if let Some(other) = by_stem.insert(stem, name) {
                return Err(Error::Run(format!(
                    "{other} and {name} would both be compiled into {}; rename one",
                    dir.join(stem).display()
                )));
            }
            inputs.push(InputFile {
                name: name.clone(),
                path: ctx.resolve(path),
                out_dir: dir.join(stem),
            });
        }
        Ok(inputs)
    }
}

/// The cache in `dir` (resolved), else in [`cache::default_dir`], with the size limit
/// of `$NEURONC_CACHE_MAX_SIZE`; `None` when no directory is known.
pub(super) fn locate_cache(ctx: &mut Ctx<'_>, dir: Option<&Path>) -> Option<Cache> {
    let dir = match dir {
        Some(d) => ctx.resolve(d),
        None => cache::default_dir()?,
    };
    let max = match std::env::var(MAX_SIZE_VAR) {
        Ok(v) => parse_size(&v).unwrap_or_else(|| {
            warn(
                ctx,
                &format!("ignoring {MAX_SIZE_VAR}={v:?} (e.g. 500M, 2G)"),
            );
            cache::DEFAULT_MAX_BYTES
        }),
        Err(_) => cache::DEFAULT_MAX_BYTES,
    };
    Some(Cache::new(&dir, max))
}

/// The cache and what keys need besides the module.
struct CacheCtx {
    cache: Cache,
    compiler: String,
    /// Whether anything was stored (then the cache is trimmed at the end).
    stored: AtomicBool,
}

/// One input of a multi-file compile.
struct InputFile {
    /// As given on the command line (diagnostics and progress show it).
    name: String,
    path: PathBuf,
    out_dir: PathBuf,
}

/// What compiling one file produced, for the main thread to report.
struct FileOutcome {
    /// In unit order.
    errors: Vec<Error>,
    warnings: Vec<String>,
    /// The last unit that compiled (as before caching: with `--split-input-file` each
    /// unit is compiled and the last one's artifacts are written).
    built: Option<Built>,
    status: Status,
    timings: Timings,
}

impl FileOutcome {
    fn failed(e: Error) -> FileOutcome {
        FileOutcome {
            errors: vec![e],
            warnings: Vec::new(),
            built: None,
            status: Status::Invalid,
            timings: Timings::default(),
        }
    }
}

/// The artifacts of one compiled unit and its summary.
struct Built {
    name: String,
    files: Vec<(String, Vec<u8>)>,
    summary: Summary,
    cached: bool,
}

/// Everything one compile needs besides its input; shared by the worker threads.
struct Job<'a> {
    opts: BuildOptions,
    cache: Option<&'a CacheCtx>,
    split: bool,
}

impl Job<'_> {
    /// Compiles every unit of `source`, continuing after failures.
    fn compile_source(
        &self,
        session: &mut Session,
        source: &Arc<Source>,
        progress: &Progress,
    ) -> FileOutcome {
        let mut out = FileOutcome {
            errors: Vec::new(),
            warnings: Vec::new(),
            built: None,
            status: Status::Ok,
            timings: Timings::default(),
        };
        for unit in source.units(self.split) {
            match self.compile_unit(session, &unit, progress, &mut out.warnings) {
                Ok(built) => out.built = Some(built),
                Err(e) => {
                    out.errors.push(e);
                    out.status = Status::Invalid;
                }
            }
        }
        out
    }

    /// [`Job::compile_file`], with a panic (a compiler bug) turned into an error of this
    /// file, so the other files still compile and every result is reported.
    fn compile_file_contained(&self, input: &InputFile) -> FileOutcome {
        let run = std::panic::AssertUnwindSafe(|| self.compile_file(input));
        std::panic::catch_unwind(run).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            FileOutcome::failed(Error::Run(format!(
                "{}: internal compiler error: {what}",
                input.name
            )))
        })
    }

    /// A worker's whole job for one file of a multi-file compile: read, compile, write.
    fn compile_file(&self, input: &InputFile) -> FileOutcome {
        let mut session = Session::new();
        let mut out = match Source::read(&input.path, input.name.as_str()) {
            Ok(source) => self.compile_source(&mut session, &source, &Progress::stages(false)),
            Err(e) => FileOutcome::failed(e),
        };
        out.timings = session.timings;
        if let Some(built) = &out.built {
            if let Err(e) = write_artifacts(&input.out_dir, &built.files) {
                out.errors.push(e);
                out.built = None;
                out.status = Status::Invalid;
            }
        }
        out
    }

    /// Loads one unit and compiles it, or takes its artifacts from the cache.
    fn compile_unit(
        &self,
        session: &mut Session,
        unit: &Unit,
        progress: &Progress,
        warnings: &mut Vec<String>,
    ) -> Result<Built, Error> {
        progress.stage(Stage::ParseVerify);
        let module = session.load(unit)?;
        let name = unit.source.name.clone();
        let key = self.cache.map(|c| self.key(c, session, &module));
        if let (Some(c), Some(key)) = (self.cache, key) {
            if let Some(built) = lookup(c, &key, &name, warnings) {
                return Ok(built);
            }
        }
        let art = build_with_progress(module, &self.opts, &mut |s| progress.stage(s.into()))?;
        let files: Vec<(String, Vec<u8>)> = art
            .files
            .into_iter()
            .map(|(n, b)| (n.to_string(), b))
            .collect();
        let summary = Summary::from_files(&files)
            .map_err(|e| Error::Run(format!("internal: report.json: {e}")))?;
        if let (Some(c), Some(key)) = (self.cache, key) {
            let refs: Vec<(&str, &[u8])> = files
                .iter()
                .map(|(n, b)| (n.as_str(), b.as_slice()))
                .collect();
            match c.cache.put(&key, &refs) {
                Ok(()) => c.stored.store(true, Ordering::Relaxed),
                Err(e) => warnings.push(format!("compile cache: {e}")),
            }
        }
        Ok(Built {
            name,
            files,
            summary,
            cached: false,
        })
    }

    fn key(&self, c: &CacheCtx, session: &mut Session, module: &neuronc_ir::Module) -> Key {
        let ir = session.print(
            module,
            &PrintOptions {
                debug_locs: true,
                ..PrintOptions::default()
            },
        );
        let auto_cast = format!("{:?}", self.opts.auto_cast);
        Key::new(&KeyInputs {
            ir: &ir,
            target: &self.opts.target,
            flags: &[
                ("auto_cast", auto_cast.as_str()),
                ("float_semantics", semantics_name(self.opts.float_semantics)),
                (
                    "recompute_for_contraction",
                    self.opts.recompute_for_contraction.name(),
                ),
            ],
            compiler: &c.compiler,
        })
    }
}

/// A cache hit as a [`Built`]; misses and damaged entries give `None` (with a warning
/// for damage).
fn lookup(c: &CacheCtx, key: &Key, name: &str, warnings: &mut Vec<String>) -> Option<Built> {
    let damaged = match c.cache.get(key) {
        Ok(Lookup::Hit(files)) => match Summary::from_files(&files) {
            Ok(summary) => {
                return Some(Built {
                    name: name.to_string(),
                    files,
                    summary,
                    cached: true,
                })
            }
            Err(reason) => reason,
        },
        Ok(Lookup::Miss) => return None,
        Ok(Lookup::Corrupt(reason)) => reason,
        Err(e) => {
            warnings.push(format!("compile cache: {e}"));
            return None;
        }
    };
    warnings.push(format!(
        "compile cache: entry {key} for {name} is damaged ({damaged}); compiling afresh"
    ));
    None
}

/// The numbers of the summary, read back from `report.json`.
struct Summary {
    kernels: u64,
    instructions: u64,
    predicted_s: f64,
    roofline_s: f64,
    bound: String,
    compile_s: f64,
    hbm_bytes: u64,
    sbuf_peak: u64,
    psum_peak: u64,
    engine_busy_s: Vec<(String, f64)>,
    /// (kernel, engine, busy seconds), heaviest first.
    top_kernels: Vec<(u64, String, f64)>,
    /// The summary line of an applied `recompute-for-contraction`, if it was.
    recompute: Option<String>,
}

impl Summary {
    fn from_files(files: &[(String, Vec<u8>)]) -> Result<Summary, String> {
        let (_, bytes) = files
            .iter()
            .find(|(n, _)| n == "report.json")
            .ok_or("no report.json")?;
        let r: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        let u = |k: &str| r[k].as_u64().ok_or(format!("no integer {k}"));
        let f = |k: &str| r[k].as_f64().ok_or(format!("no number {k}"));
        let busy = r["engine_busy_s"].as_object().ok_or("no engine_busy_s")?;
        Ok(Summary {
            kernels: u("fusion_kernels")?,
            instructions: u("instructions")?,
            predicted_s: f("predicted_time_s")?,
            roofline_s: f("roofline_time_s")?,
            bound: r["roofline_bound"].as_str().unwrap_or_default().to_string(),
            compile_s: f("compile_time_s")?,
            hbm_bytes: u("hbm_bytes")?,
            sbuf_peak: u("sbuf_peak_bytes")?,
            psum_peak: u("psum_peak_bytes")?,
            engine_busy_s: busy
                .iter()
                .map(|(k, v)| (k.clone(), v.as_f64().unwrap_or(0.0)))
                .collect(),
            top_kernels: r["top_kernels"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|k| {
                            (
                                k["kernel"].as_u64().unwrap_or_default(),
                                k["engine"].as_str().unwrap_or_default().to_string(),
                                k["busy_s"].as_f64().unwrap_or_default(),
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            recompute: recompute_line(&r["recompute_for_contraction"]),
        })
    }
}

/// `  recompute-for-contraction: applied (...)` from `report.json`'s record, when the
/// pass was applied.
fn recompute_line(r: &serde_json::Value) -> Option<String> {
    if r["applied"].as_bool() != Some(true) {
        return None;
    }
    let mode = r["mode"].as_str().unwrap_or("on");
    let a = &r["alternative"];
    let why = match (
        a["transpose_bytes"].as_u64(),
        a["matmul_operand_bytes"].as_u64(),
    ) {
        (Some(transpose_bytes), Some(matmul_operand_bytes)) => {
            let without = TransposeCost {
                transposes: 0,
                transpose_bytes,
                matmul_operand_bytes,
            };
            format!(
                ", {mode}: without it transposes would move {:.2}% of the matmul operand \
                 bytes, over the {:.0}% budget",
                100.0 * without.share(),
                100.0 * crate::plan::TRANSPOSE_BUDGET
            )
        }
        _ => format!(", {mode}"),
    };
    let t = &r["predicted_time_s"];
    let why = match t["without"].as_f64() {
        Some(without) => format!("{why}; predicted {:.3} ms without it", without * 1e3),
        None => why,
    };
    Some(format!(
        "  recompute-for-contraction: applied{why} (attention probabilities recomputed with \
         keys on the partitions instead of transposed)\n"
    ))
}

impl Built {
    fn summary_text(&self, target: &str, dir: &Path) -> String {
        let r = &self.summary;
        let mut s = format!(
            "compiled {} for {} -> {}{}\n  fusion kernels: {}, engine instructions: {}\n  predicted time: {:.3} ms (roofline {:.3} ms, bound by {}), compile {:.3} s\n  hbm traffic: {:.1} MB, sbuf peak {:.1} KiB, psum peak {:.1} KiB\n  engine busy:",
            self.name,
            target,
            dir.display(),
            if self.cached { " (cached)" } else { "" },
            r.kernels,
            r.instructions,
            r.predicted_s * 1e3,
            r.roofline_s * 1e3,
            r.bound,
            r.compile_s,
            r.hbm_bytes as f64 / 1e6,
            r.sbuf_peak as f64 / 1024.0,
            r.psum_peak as f64 / 1024.0,
        );
        for (engine, busy) in &r.engine_busy_s {
            let util = 100.0 * busy / r.predicted_s.max(1e-12);
            s.push_str(&format!(" {engine} {util:.0}%"));
        }
        s.push('\n');
        if let Some(line) = &r.recompute {
            s.push_str(line);
        }
        if !r.top_kernels.is_empty() {
            s.push_str("  top kernels (busiest engine, program.nir ids):");
            for (k, engine, busy) in &r.top_kernels {
                s.push_str(&format!(" k{k} {engine} {:.3} ms;", busy * 1e3));
            }
            s.pop();
            s.push('\n');
        }
        s
    }
}

/// Renders a file's errors and warnings to stderr, in order.
fn report(ctx: &mut Ctx<'_>, out: &FileOutcome) {
    for e in &out.errors {
        ctx.report(e);
    }
    for w in &out.warnings {
        warn(ctx, w);
    }
}

pub(super) fn warn(ctx: &mut Ctx<'_>, message: &str) {
    // As in `Ctx::report`: a broken stderr leaves nowhere to complain.
    let _ = writeln!(ctx.io.err, "neuronc-rs: warning: {message}");
}

fn flush(ctx: &mut Ctx<'_>) -> Result<(), Error> {
    ctx.io.out.flush().map_err(|source| Error::Write {
        path: "<stdout>".into(),
        source,
    })
}

fn write_artifacts(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Write {
        path: dir.display().to_string(),
        source: e,
    })?;
    for (file, bytes) in files {
        let path = dir.join(file);
        std::fs::write(&path, bytes).map_err(|e| Error::Write {
            path: path.display().to_string(),
            source: e,
        })?;
    }
    Ok(())
}

fn add_timings(total: &mut Timings, t: &Timings) {
    total.parse += t.parse;
    total.verify += t.verify;
    total.print += t.print;
    total.run += t.run;
}

/// `123`, `500K`, `64M`, `2G` (powers of 1024) to bytes.
fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.char_indices().last()? {
        (i, 'k' | 'K') => (&t[..i], 10),
        (i, 'm' | 'M') => (&t[..i], 20),
        (i, 'g' | 'G') => (&t[..i], 30),
        _ => (t, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

#[cfg(test)]
mod tests {
    use super::{parse_size, CacheCtx, Job};
    use crate::build::{BuildOptions, FloatSemantics};
    use crate::cache::Cache;
    use crate::session::Session;
    use std::sync::atomic::AtomicBool;

    fn cache_ctx(dir: &std::path::Path) -> CacheCtx {
        CacheCtx {
            cache: Cache::new(dir, 1 << 20),
            compiler: "test".into(),
            stored: AtomicBool::new(false),
        }
    }

    /// The two float semantics compile a bf16 program differently, so they must not share
    /// a cache entry; everything else equal, the keys differ.
    #[test]
    fn float_semantics_is_part_of_the_cache_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let c = cache_ctx(dir.path());
        let text = crate::build::BF16_WIDENED;
        let module = crate::compile("m", text).expect("verifies");
        let key = |float_semantics| {
            let job = Job {
                opts: BuildOptions {
                    float_semantics,
                    ..BuildOptions::default()
                },
                cache: Some(&c),
                split: false,
            };
            job.key(&c, &mut Session::new(), &module)
        };
        assert_ne!(key(FloatSemantics::Xla), key(FloatSemantics::Strict));
        assert_eq!(key(FloatSemantics::Xla), key(FloatSemantics::Xla));
    }

    /// `--recompute-for-contraction` plans another program: its own cache entry.
    #[test]
    fn recompute_is_part_of_the_cache_key() {
        let dir = tempfile::tempdir().expect("temp dir");
        let c = cache_ctx(dir.path());
        let module = crate::compile("m", crate::build::BF16_WIDENED).expect("verifies");
        let key = |recompute_for_contraction| {
            let job = Job {
                opts: BuildOptions {
                    recompute_for_contraction,
                    ..BuildOptions::default()
                },
                cache: Some(&c),
                split: false,
            };
            job.key(&c, &mut Session::new(), &module)
        };
        use crate::build::Recompute;
        assert_ne!(key(Recompute::Off), key(Recompute::On));
        assert_ne!(key(Recompute::Auto), key(Recompute::On));
        assert_ne!(key(Recompute::Auto), key(Recompute::Off));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("2K"), Some(2048));
        assert_eq!(parse_size("3m"), Some(3 << 20));
        assert_eq!(parse_size(" 1G "), Some(1 << 30));
        assert_eq!(parse_size("G"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("99999999999G"), None);
    }
}
