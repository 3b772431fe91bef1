//! The compile cache of `neuronc-rs compile`, through the real binary: a hit writes the
//! same bytes as a fresh compile without compiling, damaged entries are recompiled,
//! anything that changes the output changes the key, and the cache stays where it is
//! told. Every run uses temporary directories; `HOME` and `XDG_CACHE_HOME` point into
//! them too, so a test can never touch the user's cache.

mod common;

use common::{files, fixture, neuronc, root, without_compile_time, MAX_SIZE_VAR};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use neuronc::build::{build, BuildOptions};
use neuronc::ir::PrintOptions;
use neuronc_backend::engine::AutoCast;

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Compiles and asserts success; returns stdout.
fn compile_ok(home: &Path, args: &[&str]) -> String {
    let o = neuronc(home, args);
    assert!(o.status.success(), "{args:?} failed:\n{}", stderr(&o));
    for text in [stdout(&o), stderr(&o)] {
        assert!(
            !text.contains(['\x1b', '\r']),
            "control characters without a terminal:\n{text:?}"
        );
    }
    stdout(&o)
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

/// Every artifact byte-identical, except `compile_time_s` in `report.json`.
fn assert_same_artifacts(a: &Path, b: &Path) {
    let (fa, fb) = (files(a), files(b));
    assert_eq!(
        fa.keys().collect::<Vec<_>>(),
        fb.keys().collect::<Vec<_>>(),
        "{} vs {}",
        a.display(),
        b.display()
    );
    assert_eq!(fa.len(), 6, "six artifacts in {}", a.display());
    for (name, x) in &fa {
        let y = &fb[name];
        if name == "report.json" {
            assert_eq!(without_compile_time(x), without_compile_time(y));
        } else {
            assert!(
                x == y,
                "{name} differs between {} and {}",
                a.display(),
                b.display()
            );
        }
    }
}

/// The cache entries under `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "entry") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

const MLP: &str = "fixtures/models/jax_mlp_train_step.mlir";

#[test]
fn a_hit_writes_the_same_bytes_without_compiling() {
    let t = tempfile::tempdir().expect("tempdir");
    let (home, cache) = (t.path(), t.path().join("cache"));
    let cache = cache.to_str().expect("utf-8 path");
    let dir = |n: &str| t.path().join(n).display().to_string();
    let input = fixture(MLP);
    let fresh = compile_ok(
        home,
        &["compile", &input, "-o", &dir("fresh"), "--no-cache"],
    );
    let miss = compile_ok(
        home,
        &["compile", &input, "-o", &dir("miss"), "--cache-dir", cache],
    );
    let hit = compile_ok(
        home,
        &["compile", &input, "-o", &dir("hit"), "--cache-dir", cache],
    );
    assert!(!first_line(&fresh).contains("(cached)"));
    assert!(!first_line(&miss).contains("(cached)"), "{miss}");
    assert!(first_line(&hit).ends_with(" (cached)"), "{hit}");
    assert_same_artifacts(&t.path().join("fresh"), &t.path().join("miss"));
    assert_same_artifacts(&t.path().join("miss"), &t.path().join("hit"));
    // Not recompiled: a compile measures its own time anew, the hit repeats the stored
    // report (compile_time_s included) byte for byte.
    let report = |d: &str| std::fs::read(t.path().join(d).join("report.json")).expect("report");
    assert_eq!(report("miss"), report("hit"));
    // Same summary, but for the directory and the marker.
    let normalize = |s: &str, d: &str| s.replace(" (cached)", "").replace(&dir(d), "DIR");
    assert_eq!(normalize(&miss, "miss"), normalize(&hit, "hit"));
    assert_eq!(entries(Path::new(cache)).len(), 1);
}

/// Damages an entry's bytes in place.
type Damage = fn(&mut Vec<u8>);

#[test]
fn damaged_entries_are_compiled_afresh() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path();
    let cache = t.path().join("cache").display().to_string();
    let dir = |n: &str| t.path().join(n).display().to_string();
    let input = fixture(MLP);
    compile_ok(home, &["compile", &input, "-o", &dir("ref"), "--no-cache"]);
    compile_ok(
        home,
        &["compile", &input, "-o", &dir("fill"), "--cache-dir", &cache],
    );
    let damages: [(&str, Damage); 3] = [
        ("flipped payload byte", |b| {
            let mid = b.len() / 2;
            b[mid] ^= 0x40;
        }),
        ("truncated", |b| b.truncate(b.len() / 3)),
        ("empty", |b| b.clear()),
    ];
    for (what, damage) in damages {
        let [entry] = entries(Path::new(&cache)).try_into().expect("one entry");
        let mut bytes = std::fs::read(&entry).expect("entry");
        damage(&mut bytes);
        std::fs::write(&entry, bytes).expect("damage");
        let o = neuronc(
            home,
            &["compile", &input, "-o", &dir(what), "--cache-dir", &cache],
        );
        assert!(o.status.success(), "{what}: {}", stderr(&o));
        assert!(!first_line(&stdout(&o)).contains("(cached)"), "{what}");
        assert!(stderr(&o).contains("damaged"), "{what}: {}", stderr(&o));
        assert_same_artifacts(&t.path().join("ref"), &t.path().join(what));
        // The fresh compile replaced the entry: the next run hits.
        let again = compile_ok(
            home,
            &[
                "compile",
                &input,
                "-o",
                &dir("again"),
                "--cache-dir",
                &cache,
            ],
        );
        assert!(first_line(&again).contains("(cached)"), "{what}: {again}");
        assert_same_artifacts(&t.path().join("ref"), &t.path().join("again"));
    }
}

/// A small module whose constant we can change.
fn scaled(c: &str, extra: &str) -> String {
    format!(
        "{extra}func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {{\n  %c = stablehlo.constant dense<{c}> : tensor<4x8xf32>\n  %y = stablehlo.multiply %x, %c : tensor<4x8xf32>\n  func.return %y : tensor<4x8xf32>\n}}\n"
    )
}

#[test]
fn the_key_covers_input_target_and_flags_but_not_formatting() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path();
    let cache = t.path().join("cache").display().to_string();
    let write = |name: &str, text: String| {
        let p = t.path().join(name);
        std::fs::write(&p, text).expect("write input");
        p.display().to_string()
    };
    let base = write("base.mlir", scaled("2.0", ""));
    let other_constant = write("changed.mlir", scaled("3.0", ""));
    let reformatted = write(
        "reformatted.mlir",
        scaled("2.000", "// a comment and blank lines change nothing\n\n"),
    );
    let out = t.path().join("out").display().to_string();
    let cached = |input: &str, flags: &[&str]| {
        let mut args = vec!["compile", input, "-o", &out, "--cache-dir", &cache];
        args.extend_from_slice(flags);
        first_line(&compile_ok(home, &args)).ends_with("(cached)")
    };
    assert!(!cached(&base, &[]));
    assert!(cached(&base, &[]));
    assert!(
        !cached(&base, &["--target", "trn2"]),
        "target is in the key"
    );
    assert!(
        !cached(&base, &["--auto-cast", "none"]),
        "auto-cast is in the key"
    );
    assert!(!cached(&other_constant, &[]), "the IR is in the key");
    assert!(
        cached(&reformatted, &[]),
        "the canonical IR is hashed, not the text"
    );
    assert!(cached(&base, &["--target", "trn2"]));
    assert!(cached(&base, &["--auto-cast", "none"]));
    assert_eq!(entries(Path::new(&cache)).len(), 4);
}

/// The key hashes the module printed with locations; that text must determine the
/// artifacts, or two inputs with one key could need different outputs.
#[test]
fn the_printed_module_compiles_to_the_same_artifacts() {
    let opts = BuildOptions {
        target: "trn1".into(),
        auto_cast: AutoCast::Matmult,
        ..BuildOptions::default()
    };
    for path in [
        MLP,
        "fixtures/models/cnn_bn_infer.mlir",
        "fixtures/models/bert_tiny_train_step.mlir",
    ] {
        let text = std::fs::read_to_string(root().join(path)).expect("fixture");
        let module = neuronc::compile(path, &text).expect("verifies");
        let printed = neuronc::ir::print::print_module(
            &module,
            &PrintOptions {
                debug_locs: true,
                ..PrintOptions::default()
            },
        );
        let reparsed = neuronc::compile("printed", &printed).expect("printed text verifies");
        let a = build(module, &opts).expect("compiles");
        let b = build(reparsed, &opts).expect("compiles");
        for ((n, x), (m, y)) in a.files.iter().zip(&b.files) {
            assert_eq!(n, m);
            if *n == "report.json" {
                assert_eq!(without_compile_time(x), without_compile_time(y), "{path}");
            } else {
                assert!(x == y, "{path}: {n} differs after print and re-parse");
            }
        }
    }
}

#[test]
fn the_cache_goes_where_it_is_told_and_nowhere_else() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let input = fixture("fixtures/models/jax_sort.mlir");
    let out = t.path().join("out").display().to_string();
    // Default: ~/.cache/neuronc-rs.
    compile_ok(&home, &["compile", &input, "-o", &out]);
    assert_eq!(entries(&home.join(".cache/neuronc-rs")).len(), 1);
    // $XDG_CACHE_HOME, then $NEURONC_CACHE_DIR, then --cache-dir win.
    let xdg = t.path().join("xdg");
    let env_dir = t.path().join("env");
    let flag_dir = t.path().join("flag");
    let run = |extra_env: &[(&str, &Path)], args: &[&str]| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_neuronc-rs"));
        c.args(["compile", &input, "-o", &out])
            .args(args)
            .env_remove("NEURONC_CACHE_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", &home);
        for (k, v) in extra_env {
            c.env(k, v);
        }
        let o = c.output().expect("runs");
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run(&[("XDG_CACHE_HOME", &xdg)], &[]);
    assert_eq!(entries(&xdg.join("neuronc-rs")).len(), 1);
    run(
        &[("XDG_CACHE_HOME", &xdg), ("NEURONC_CACHE_DIR", &env_dir)],
        &[],
    );
    assert_eq!(entries(&env_dir).len(), 1);
    let flag = flag_dir.display().to_string();
    run(&[("NEURONC_CACHE_DIR", &env_dir)], &["--cache-dir", &flag]);
    assert_eq!(entries(&flag_dir).len(), 1);
    // --no-cache writes no cache anywhere.
    let clean = t.path().join("clean");
    std::fs::create_dir(&clean).expect("clean home");
    let nc = Command::new(env!("CARGO_BIN_EXE_neuronc-rs"))
        .args(["compile", &input, "-o", &out, "--no-cache"])
        .env_remove("NEURONC_CACHE_DIR")
        .env_remove("XDG_CACHE_HOME")
        .env("HOME", &clean)
        .output()
        .expect("runs");
    assert!(nc.status.success());
    assert_eq!(std::fs::read_dir(&clean).expect("clean home").count(), 0);
}

#[test]
fn the_size_limit_evicts_old_entries() {
    let t = tempfile::tempdir().expect("tempdir");
    let home = t.path();
    let cache = t.path().join("cache").display().to_string();
    let out = t.path().join("out").display().to_string();
    let input = fixture(MLP);
    let run = |target: &str, limit: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_neuronc-rs"))
            .args(["compile", &input, "-o", &out, "--cache-dir", &cache])
            .args(["--target", target])
            .env("HOME", home)
            .env(MAX_SIZE_VAR, limit)
            .output()
            .expect("runs");
        assert!(o.status.success(), "{}", stderr(&o));
    };
    run("trn1", "1G");
    let [one] = entries(Path::new(&cache)).try_into().expect("one entry");
    let size = std::fs::metadata(&one).expect("entry").len();
    // Room for one entry only: storing the trn2 entry evicts the trn1 one.
    run("trn2", &(size + size / 2).to_string());
    let left = entries(Path::new(&cache));
    assert_eq!(left.len(), 1);
    assert_ne!(left[0], one);
}

#[test]
fn concurrent_compiles_share_one_cache_safely() {
    let t = tempfile::tempdir().expect("tempdir");
    let cache = t.path().join("cache").display().to_string();
    let input = fixture(MLP);
    let dirs: Vec<String> = (0..4)
        .map(|i| t.path().join(format!("out{i}")).display().to_string())
        .collect();
    let children: Vec<_> = dirs
        .iter()
        .map(|d| {
            Command::new(env!("CARGO_BIN_EXE_neuronc-rs"))
                .args(["compile", &input, "-o", d, "--cache-dir", &cache])
                .env("HOME", t.path())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawns")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("waits").success());
    }
    for d in &dirs[1..] {
        assert_same_artifacts(Path::new(&dirs[0]), Path::new(d));
    }
    let out = t.path().join("after").display().to_string();
    let hit = compile_ok(
        t.path(),
        &["compile", &input, "-o", &out, "--cache-dir", &cache],
    );
    assert!(first_line(&hit).ends_with("(cached)"), "{hit}");
    assert_same_artifacts(Path::new(&dirs[0]), Path::new(&out));
    assert_eq!(
        entries(Path::new(&cache)).len(),
        1,
        "no torn or temporary entries"
    );
    let tmp = Path::new(&cache).join("v1/tmp");
    assert_eq!(std::fs::read_dir(tmp).map_or(0, |d| d.count()), 0);
}

#[test]
fn the_cache_command_reports_and_clears() {
    let t = tempfile::tempdir().expect("tempdir");
    let cache = t.path().join("cache").display().to_string();
    let out = t.path().join("out").display().to_string();
    let input = fixture("fixtures/models/jax_sort.mlir");
    for target in ["trn1", "inf2"] {
        compile_ok(
            t.path(),
            &[
                "compile",
                &input,
                "-o",
                &out,
                "--cache-dir",
                &cache,
                "--target",
                target,
            ],
        );
    }
    let shown = compile_ok(t.path(), &["cache", "--cache-dir", &cache]);
    assert!(shown.contains("2 entries"), "{shown}");
    let cleared = compile_ok(t.path(), &["cache", "--cache-dir", &cache, "--clear"]);
    assert!(cleared.contains("cleared 2 entries"), "{cleared}");
    assert!(entries(Path::new(&cache)).is_empty());
    let again = compile_ok(
        t.path(),
        &["compile", &input, "-o", &out, "--cache-dir", &cache],
    );
    assert!(!first_line(&again).contains("(cached)"), "{again}");
}
