//! `neuronc-rs compile FILE -o DIR [--target trn1|trn2|inf2] [--auto-cast none|matmult|all]`:
//! writes `model.hlo.pb`, `model.hlo.txt`, `program.nir`, `timeline.json`, `report.json`
//! and `manifest.json` to DIR and prints a one-screen summary.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use neuronc_backend::engine::AutoCast;

use super::{input, Command, Ctx, Status};
use crate::build::{build, BuildOptions};
use crate::error::Error;

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
    /// Input file (`-` reads stdin).
    pub file: String,
    /// Output directory (created if missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// NeuronCore generation to plan for.
    #[arg(long, default_value = "trn1", value_parser = ["trn1", "trn2", "inf2"])]
    pub target: String,
    /// Which ops run in bf16.
    #[arg(long, value_enum, default_value = "matmult")]
    pub auto_cast: Cast,
}

impl Command for CompileArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let opts = BuildOptions {
            target: self.target.clone(),
            auto_cast: self.auto_cast.to_auto_cast(),
        };
        let mut built = None;
        let (_, status) = input::each_unit(ctx, &self.file, |session, unit| {
            let module = session.load(unit)?;
            built = Some((unit.source.name.clone(), build(module, &opts)?));
            Ok(String::new())
        })?;
        let Some((name, art)) = built else {
            return Ok(status);
        };
        let dir = ctx.resolve(&self.output);
        std::fs::create_dir_all(&dir).map_err(|e| Error::Write {
            path: dir.display().to_string(),
            source: e,
        })?;
        for (file, bytes) in &art.files {
            let path = dir.join(file);
            std::fs::write(&path, bytes).map_err(|e| Error::Write {
                path: path.display().to_string(),
                source: e,
            })?;
        }
        let r = &art.report;
        let mut s = format!(
            "compiled {} for {} -> {}\n  fusion kernels: {}, engine instructions: {}\n  predicted time: {:.3} ms (roofline {:.3} ms, bound by {}), compile {:.3} s\n  hbm traffic: {:.1} MB, sbuf peak {:.1} KiB, psum peak {:.1} KiB\n  engine busy:",
            name,
            self.target,
            dir.display(),
            art.kernels,
            r.instructions,
            r.predicted_time_s * 1e3,
            r.roofline_time_s * 1e3,
            r.roofline_bound,
            art.compile_time_s,
            r.hbm_bytes as f64 / 1e6,
            r.sbuf_peak_bytes as f64 / 1024.0,
            r.psum_peak_bytes as f64 / 1024.0,
        );
        for (engine, busy) in &r.engine_busy_s {
            let util = 100.0 * busy / r.predicted_time_s.max(1e-12);
            s.push_str(&format!(" {engine} {util:.0}%"));
        }
        s.push('\n');
        input::write_output(ctx, None, &s)?;
        Ok(Status::Ok)
    }
}
