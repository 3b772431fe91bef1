//! `neuronc-rs cache [--cache-dir CACHE] [--clear]`: prints where the compile cache of
//! `compile` lives, how many entries it holds and their size against the limit; `--clear`
//! deletes every entry. The cache itself is [`crate::cache`].

use std::path::PathBuf;

use clap::Args;

use super::compile::locate_cache;
use super::{input, Command, Ctx, Status};
use crate::error::Error;

#[derive(Args, Debug)]
pub struct CacheArgs {
    /// Cache directory [default: as for `compile`].
    #[arg(long, value_name = "CACHE")]
    pub cache_dir: Option<PathBuf>,
    /// Delete every entry.
    #[arg(long)]
    pub clear: bool,
}

impl Command for CacheArgs {
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Status, Error> {
        let Some(cache) = locate_cache(ctx, self.cache_dir.as_deref()) else {
            return Err(Error::Run(
                "no cache directory: set NEURONC_CACHE_DIR, XDG_CACHE_HOME or HOME".into(),
            ));
        };
        let failed = |e: crate::cache::CacheError| Error::Run(format!("compile cache: {e}"));
        let (entries, bytes) = cache.usage().map_err(failed)?;
        let mb = |b: u64| b as f64 / 1e6;
        let text = if self.clear {
            cache.clear().map_err(failed)?;
            format!(
                "cleared {entries} entries ({:.1} MB) from {}\n",
                mb(bytes),
                cache.root().display()
            )
        } else {
            format!(
                "{}\n  {entries} entries, {:.1} MB of {:.1} MB (limit: $NEURONC_CACHE_MAX_SIZE)\n",
                cache.root().display(),
                mb(bytes),
                mb(cache.max_bytes())
            )
        };
        input::write_output(ctx, None, &text)?;
        Ok(Status::Ok)
    }
}
