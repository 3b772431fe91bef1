//! Times `run_function` on a module: `time_run FILE.mlir [INPUTS.npz] [REPEATS]`.
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
    let inputs: Vec<Tensor> = match npz_arg {
        Some(p) => {
            npz::load_args(&npz::read_npz(p.as_ref()).expect("npz"), &types).expect("inputs")
        }
        None => {
            let mut seed = 0u64;
            types.iter().map(|t| random_input(t, &mut seed)).collect()
        }
    };
    let reps: usize = args.last().and_then(|a| a.parse().ok()).unwrap_or(3);
    for _ in 0..reps {
        let t = std::time::Instant::now();
        let out = run_function(&m, &f, inputs.clone(), &RunOptions::default());
        match out {
            Ok(o) => println!(
                "run: {:.1} ms ({} outputs)",
                t.elapsed().as_secs_f64() * 1e3,
                o.len()
            ),
            Err(e) => {
                println!("error: {e}");
                return;
            }
        }
    }
}
