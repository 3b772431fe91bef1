//! Helpers shared by the tests that run the `neuronc-rs` binary on artifact directories
//! (`compile_cache`, `compile_parallel`): fixture paths, a binary run whose cache
//! environment is scrubbed and rooted in a temporary `HOME`, and artifact comparison.

#![allow(dead_code)] // each test binary uses a subset

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Environment variable with the cache size limit.
pub const MAX_SIZE_VAR: &str = "NEURONC_CACHE_MAX_SIZE";

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Absolute path of a file under the repository root.
pub fn fixture(name: &str) -> String {
    root().join(name).display().to_string()
}

/// Runs the binary with a scrubbed cache environment rooted in `home`.
pub fn neuronc(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neuronc-rs"))
        .args(args)
        .env_remove("NEURONC_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env_remove(MAX_SIZE_VAR)
        .env("HOME", home)
        .output()
        .expect("the binary runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The files of an artifact directory, by name.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("artifact directory") {
        let e = e.expect("entry");
        let name = e.file_name().to_string_lossy().into_owned();
        out.insert(name, std::fs::read(e.path()).expect("readable"));
    }
    out
}

/// `report.json` without its `compile_time_s` line (the one value allowed to differ).
pub fn without_compile_time(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"compile_time_s\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The artifacts of `dir` with `report.json`'s `compile_time_s` dropped.
pub fn comparable(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut f = files(dir);
    if let Some(report) = f.get_mut("report.json") {
        *report = without_compile_time(report).into_bytes();
    }
    f
}
