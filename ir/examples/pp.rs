// Temporary debugging helper (deleted before hand-off).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let src = std::fs::read_to_string(&args[1]).unwrap();
    let generic = args.get(2).is_some_and(|a| a == "g");
    if args.get(4).is_some() { calib(&src); }
    let reps: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let m = neuronc_ir::parse_module(&src).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        drop(m);
    }
    if reps > 0 {
        let dt = best;
        eprintln!("parse {:.3} ms, {:.1} MB/s", dt * 1e3, src.len() as f64 / dt / 1e6);
    }
    match neuronc_ir::parse_module(&src) {
        Ok(m) => print!("{}", neuronc_ir::print_module(&m, &neuronc_ir::PrintOptions { generic, debug_locs: false })),
        Err(e) => { eprintln!("{e}"); std::process::exit(1) }
    }
}
#[allow(dead_code)]
fn calib(src: &str) {
    let t = std::time::Instant::now();
    let mut acc = 0u64;
    for _ in 0..100 {
        for b in src.bytes() { acc = acc.wrapping_mul(31).wrapping_add(b as u64); }
    }
    let dt = t.elapsed().as_secs_f64() / 100.0;
    eprintln!("calib hash loop {:.1} MB/s ({acc})", src.len() as f64 / dt / 1e6);
}
