//! The `neuronc-rs` command line: wires the process's stdin/stdout/stderr to
//! [`neuronc::cli::run`] and exits with its code (0 ok, 1 invalid input, 2 usage).

use std::io::{BufWriter, IsTerminal};

/// mimalloc instead of the system allocator: the IR allocates many small vectors and
/// strings, and glibc's malloc/free were about 15% of an `opt -O2` run. mimalloc v2,
/// not v3: with transparent huge pages, v3 spread a 10 MB live heap over ~60 MB of
/// touched (hence kernel-zeroed) pages on `opt -O2` of the BERT-base training step, v2
/// over ~32 MB, which cut the process's CPU time by ~10% (and `compile`'s by ~20%).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let color = stderr.is_terminal() && std::env::var_os("NO_COLOR").is_none();
    // Unlocked handles: `compile -j` runs the pipeline on worker threads, and a worker
    // that writes to stderr (a panic message) must not wait on a lock held for the run.
    let mut out = BufWriter::new(stdout);
    let mut err = stderr;
    let mut stdin = std::io::stdin().lock();
    let outcome = neuronc::cli::run(
        std::env::args_os(),
        neuronc::cli::Io {
            stdin: &mut stdin,
            out: &mut out,
            err: &mut err,
            base_dir: None,
            color,
        },
    );
    drop(out);
    std::process::exit(outcome.code);
}
