//! `run --random-inputs SEED`: deterministic pseudo-random arguments.
//!
//! Owns [`inputs`]. Distributions follow `tools/xla_run.py --random-inputs` (floats
//! uniform in [-1, 1), integers uniform in [0, 4) so they are valid small indices,
//! booleans by coin flip, complex parts as floats); the generator is our own SplitMix64,
//! so the values differ from numpy's — pass them to other tools with `--save-inputs`.
//! Invariants: same seed and types, same values, on every platform.

use neuronc_interp::{Data, Tensor};
use neuronc_ir::{ElemType, TensorType};
use num_complex::Complex;

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed 64-bit generator.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1) with 53 random bits.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn float(&mut self) -> f64 {
        2.0 * self.unit() - 1.0
    }
}

/// One argument per type, drawn in argument order from one stream seeded with `seed`.
pub fn inputs(types: &[TensorType], seed: u64) -> Vec<Tensor> {
    let mut g = SplitMix(seed);
    types.iter().map(|t| one(t, &mut g)).collect()
}

fn one(ty: &TensorType, g: &mut SplitMix) -> Tensor {
    let n = ty
        .shape
        .iter()
        .map(|&d| d.max(0) as usize)
        .product::<usize>();
    let data = match ty.elem {
        ElemType::I1 => Data::Int((0..n).map(|_| (g.next() >> 63) as i64).collect()),
        ElemType::Complex64 => Data::C64(
            (0..n)
                .map(|_| Complex::new(g.float() as f32, g.float() as f32))
                .collect(),
        ),
        ElemType::Complex128 => {
            Data::C128((0..n).map(|_| Complex::new(g.float(), g.float())).collect())
        }
        e if e.is_float() && e.bits() > 32 => Data::F64((0..n).map(|_| g.float()).collect()),
        e if e.is_float() => Data::F32(
            (0..n)
                .map(|_| neuronc_interp::tensor::round_f32(e, g.float() as f32))
                .collect(),
        ),
        _ => Data::Int((0..n).map(|_| (g.unit() * 4.0) as i64).collect()),
    };
    // Every arm builds data of `ty`'s storage class and length, which `Tensor::new` checks.
    Tensor::new(ty.clone(), data).unwrap_or_else(|_| zeros(ty))
}

fn zeros(ty: &TensorType) -> Tensor {
    let n = ty
        .shape
        .iter()
        .map(|&d| d.max(0) as usize)
        .product::<usize>();
    Tensor::new(ty.clone(), Data::zeros(ty.elem, n))
        .expect("Data::zeros builds the storage class of its element type")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_and_in_range() {
        let types = [
            TensorType::new(ElemType::F32, &[64]),
            TensorType::new(ElemType::Int(32), &[64]),
            TensorType::new(ElemType::I1, &[64]),
        ];
        let a = inputs(&types, 7);
        assert_eq!(a, inputs(&types, 7));
        assert_ne!(a, inputs(&types, 8));
        assert!(a[0]
            .as_f32()
            .unwrap()
            .iter()
            .all(|v| (-1.0..1.0).contains(v)));
        assert!(a[1].as_i64().unwrap().iter().all(|v| (0..4).contains(v)));
        assert!(a[2].as_i64().unwrap().iter().all(|v| (0..2).contains(v)));
    }
}
