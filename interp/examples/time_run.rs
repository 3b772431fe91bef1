//! Times `run_function` on a module: `time_run FILE.mlir [INPUTS.npz] [REPEATS]`; with
//! `--profile` (anywhere), also prints the time per op kind of one run; with
//! `--save OUT.npz`, writes the outputs of the last run.
//! Without an npz, inputs are deterministic pseudo-random (floats in [-1, 1), integers
//! in [0, 4), booleans alternating), like `tools/xla_run.py --random-inputs`.

use neuronc_interp::{npz, run_function, RunOptions, Tensor};
use neuronc_ir::ElemType;

fn random_input(ty: &neuronc_ir::TensorType, seed: &mut u64) -> Tensor {
    let n = ty.num_elements() as usize;
    let mut next = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (*seed >> 33) as f64 / (1u64 << 31) as f64
    };
    let v: Vec<f64> = (0..n).map(|_| next()).collect();
    match ty.elem {
        e if e.is_float() => Tensor::from_f64_as(
            e,
            &ty.shape,
            &v.iter().map(|x| 2.0 * x - 1.0).collect::<Vec<_>>(),
        ),
        ElemType::I1 => {
            Tensor::from_bool(&ty.shape, &v.iter().map(|x| *x < 0.5).collect::<Vec<_>>())
        }
        e => Tensor::from_i64(
            e,
            &ty.shape,
            &v.iter().map(|x| (x * 4.0) as i64).collect::<Vec<_>>(),
        ),
    }
    .expect("valid random input")
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: time_run FILE.mlir [IN.npz] [REPEATS]");
    let src = std::fs::read_to_string(path).expect("readable file");
    let t0 = std::time::Instant::now();
    let m = neuronc_ir::parse_module(&src).expect("parses");
    println!("parse: {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    let f = m.entry().expect("entry").name.clone();
    let types = neuronc_interp::arg_types(&m, &f).expect("tensor args");
    let npz_arg = args.get(2).filter(|a| a.ends_with(".npz"));
    let t0 = std::time::Instant::now();
    let inputs: Vec<Tensor> = match npz_arg {
        Some(p) => {
            npz::load_args(&npz::read_npz(p.as_ref()).expect("npz"), &types).expect("inputs")
        }
        None => {
            let mut seed = 0u64;
            types.iter().map(|t| random_input(t, &mut seed)).collect()
        }
    };
    if args.iter().any(|a| a == "--profile") {
        let t = std::time::Instant::now();
        let (_, prof) =
            neuronc_interp::run_function_profiled(&m, &f, inputs.clone()).expect("runs");
        let total = t.elapsed().as_secs_f64() * 1e3;
        println!("profiled run: {total:.1} ms");
        for r in prof.rows() {
            let ms = r.time.as_secs_f64() * 1e3;
            println!(
                "{:>28} {:>5} ops {:>9.1} ms {:>5.1}%",
                r.kind,
                r.count,
                ms,
                100.0 * ms / total
            );
        }
    }
    println!("inputs: {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
    let reps: usize = args
        .iter()
        .skip(2)
        .find_map(|a| a.parse().ok())
        .unwrap_or(3);
    let save = args
        .iter()
        .position(|a| a == "--save")
        .and_then(|i| args.get(i + 1));
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let out = run_function(&m, &f, inputs.clone(), &RunOptions::default());
        match out {
            Ok(o) => {
                println!(
                    "run: {:.1} ms ({} outputs)",
                    t.elapsed().as_secs_f64() * 1e3,
                    o.len()
                );
                if let Some(p) = save {
                    npz::save_outputs(p.as_ref(), &o).expect("writable output");
                }
            }
            Err(e) => {
                println!("error: {e}");
                return;
            }
        }
    }
}
