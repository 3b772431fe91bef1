//! `rng_bit_generator` as XLA:CPU expands it (THREE_FRY and PHILOX; DEFAULT is PHILOX on
//! CPU, checked against jax's `rbg` PRNG outputs in `fixtures/jax/rng_rbg`).
//!
//! Owns: Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds) and XLA's mapping of
//! counters to output elements:
//! * THREE_FRY (no even dimension: the largest is padded by one, then sliced):
//!   state `[key, counter]`; block `j` encrypts counter `counter + j` split
//!   into (low, high) 32-bit words; 64-bit outputs join them (low, high); 32-bit outputs
//!   interleave the two words along the first even dimension (see [`threefry_bits`]).
//!   The new counter is `counter + blocks`.
//! * PHILOX: state `[key, counter_lo, (counter_hi)]` (a 2-word state uses the key as
//!   `counter_hi`, as XLA does); block `j` uses the 128-bit
//!   counter `counter + j`; 32-bit outputs interleave the 4 words of each block, 64-bit
//!   outputs join words (0,1) and (2,3). The new counter is `counter + blocks`.
//!
//! Narrower outputs (8/16-bit) are the low bits of 32-bit outputs.
//! Invariant: output is a pure function of the state and the result type.

use crate::dispatch::Ctx;
use crate::eval::{Res, Val};
use crate::shape::slice;
use crate::tensor::{wrap_int, Data, Tensor};
use neuronc_ir::{ElemType, TensorType};

fn threefry2x32(key: [u32; 2], x: [u32; 2]) -> [u32; 2] {
    const ROT: [[u32; 4]; 2] = [[13, 15, 26, 6], [17, 29, 16, 24]];
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [x[0].wrapping_add(ks[0]), x[1].wrapping_add(ks[1])];
    for i in 0..5 {
        for &r in &ROT[i % 2] {
            x[0] = x[0].wrapping_add(x[1]);
            x[1] = x[1].rotate_left(r) ^ x[0];
        }
        x[0] = x[0].wrapping_add(ks[(i + 1) % 3]);
        x[1] = x[1]
            .wrapping_add(ks[(i + 2) % 3])
            .wrapping_add(i as u32 + 1);
    }
    x
}

fn philox4x32(key: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    let (mut k, mut c) = (key, c);
    for _ in 0..10 {
        let p0 = 0xD251_1F53u64 * c[0] as u64;
        let p1 = 0xCD9E_8D57u64 * c[2] as u64;
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
        k = [
            k[0].wrapping_add(0x9E37_79B9),
            k[1].wrapping_add(0xBB67_AE85),
        ];
    }
    c
}

fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// Threefry bits for a result of `shape` with `bits` (32 or 64) wide values, and the
/// new counter. For 32-bit values XLA halves the first even dimension `d`, encrypts one
/// block per element of the halved shape, and interleaves the two words along `d`;
/// without an even dimension the flat words are interleaved and truncated.
fn threefry_bits(key: u64, ctr: u64, shape: &[i64], bits: u32) -> (Vec<u64>, u64) {
    let k = split(key);
    let n: usize = shape.iter().map(|&d| d.max(0) as usize).product();
    let block = |j: usize| threefry2x32(k, split(ctr.wrapping_add(j as u64)));
    if bits == 64 {
        let v = (0..n)
            .map(&block)
            .map(|o| o[0] as u64 | (o[1] as u64) << 32)
            .collect();
        return (v, ctr.wrapping_add(n as u64));
    }
    let Some(d) = shape.iter().position(|&x| x > 0 && x % 2 == 0) else {
        // No even dimension: XLA pads the largest one (the first on ties) by one
        // element and slices it off.
        if n == 0 {
            return (Vec::new(), ctr);
        }
        let mut padded = if shape.is_empty() {
            vec![1]
        } else {
            shape.to_vec()
        };
        let big = padded
            .iter()
            .enumerate()
            .fold(0, |b, (i, &x)| if x > padded[b] { i } else { b });
        padded[big] += 1;
        let (full, c) = threefry_bits(key, ctr, &padded, 32);
        let src_shape = TensorType::new(ElemType::UInt(32), &padded);
        let t = Tensor::new(
            src_shape,
            Data::Int(full.iter().map(|&x| x as i64).collect()),
        );
        let want: Vec<i64> = if shape.is_empty() {
            vec![1]
        } else {
            shape.to_vec()
        };
        let sliced = t.and_then(|t| {
            slice(
                &t,
                &vec![0; want.len()],
                &vec![1; want.len()],
                &TensorType::new(ElemType::UInt(32), &want),
            )
        });
        let v = sliced
            .map(|t| t.to_i64_vec().iter().map(|&x| x as u64).collect())
            .unwrap_or_default();
        return (v, c);
    };
    let outer: usize = shape[..d].iter().map(|&x| x as usize).product();
    let hd = shape[d] as usize / 2;
    let inner: usize = shape[d + 1..].iter().map(|&x| x as usize).product();
    let mut v = vec![0u64; n];
    for o in 0..outer {
        for i in 0..hd {
            for q in 0..inner {
                let w = block((o * hd + i) * inner + q);
                for (b, word) in w.iter().enumerate() {
                    v[(o * shape[d] as usize + 2 * i + b) * inner + q] = *word as u64;
                }
            }
        }
    }
    (v, ctr.wrapping_add((n / 2) as u64))
}

/// Philox bits: `n` values, and the new 128-bit counter.
fn philox_bits(key: u64, ctr: u128, n: usize, bits: u32) -> (Vec<u64>, u128) {
    let k = split(key);
    let per = if bits == 64 { 2 } else { 4 };
    let blocks = n.div_ceil(per);
    let mut v = Vec::with_capacity(blocks * per);
    for j in 0..blocks {
        let c = ctr.wrapping_add(j as u128);
        let w = [
            c as u32,
            (c >> 32) as u32,
            (c >> 64) as u32,
            (c >> 96) as u32,
        ];
        let o = philox4x32(k, w);
        if bits == 64 {
            v.push(o[0] as u64 | (o[1] as u64) << 32);
            v.push(o[2] as u64 | (o[3] as u64) << 32);
        } else {
            v.extend(o.iter().map(|&x| x as u64));
        }
    }
    v.truncate(n);
    (v, ctr.wrapping_add(blocks as u128))
}

pub(crate) fn rng_bit_generator(cx: &Ctx<'_>, ins: &[&Tensor]) -> Res<Vec<Val>> {
    let state = ins.first().ok_or_else(|| cx.err("missing state"))?;
    let s: Vec<u64> = state.to_i64_vec().iter().map(|&x| x as u64).collect();
    let alg = cx.enum_val("rng_algorithm").unwrap_or("DEFAULT");
    let (st_ty, out_ty) = (cx.out(0)?, cx.out(1)?);
    let n = out_ty.num_elements() as usize;
    let bits = if out_ty.elem.bits() > 32 { 64 } else { 32 };
    let key = *s.first().ok_or_else(|| cx.err("empty state"))?;
    let (vals, new_state) = match alg {
        "THREE_FRY" => {
            let ctr = *s
                .get(1)
                .ok_or_else(|| cx.err("THREE_FRY needs a 2-element state"))?;
            let (v, c) = threefry_bits(key, ctr, &out_ty.shape, bits);
            (v, vec![key, c])
        }
        _ => {
            let lo = *s
                .get(1)
                .ok_or_else(|| cx.err("PHILOX needs a 2- or 3-element state"))?;
            // With a 2-word state XLA uses the key as the counter's high word.
            let hi = s.get(2).copied().unwrap_or(key);
            let (v, c) = philox_bits(key, (hi as u128) << 64 | lo as u128, n, bits);
            let mut ns = vec![key, c as u64];
            if s.len() > 2 {
                ns.push((c >> 64) as u64);
            }
            (v, ns)
        }
    };
    let st: Vec<i64> = new_state.iter().map(|&x| x as i64).collect();
    let st = cx.wrap(Tensor::from_i64(st_ty.elem, &st_ty.shape, &st))?;
    let out = if out_ty.elem.is_integer() {
        let v: Vec<i64> = vals
            .iter()
            .map(|&x| wrap_int(out_ty.elem, x as i64))
            .collect();
        cx.wrap(Tensor::new(out_ty.clone(), Data::Int(v)))?
    } else {
        // Float results reinterpret the bits.
        let w = out_ty.elem.byte_width();
        let bytes: Vec<u8> = vals
            .iter()
            .flat_map(|&x| x.to_le_bytes()[..w].to_vec())
            .collect();
        cx.wrap(Tensor::from_bytes(out_ty.clone(), &bytes))?
    };
    Ok(vec![Val::T(st), Val::T(out)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Outputs of `lax.rng_bit_generator` on XLA:CPU (jax 0.10) for the state
    /// `[0x1234567890abcdef, 0x0fedcba987654321]`.
    const KEY: u64 = 0x1234_5678_90ab_cdef;
    const CTR: u64 = 0x0fed_cba9_8765_4321;

    #[test]
    fn threefry_matches_xla() {
        let (v, c) = threefry_bits(KEY, CTR, &[5], 32);
        assert_eq!(
            v,
            [0x59624565, 0x8edcb267, 0xfb959682, 0x5939043b, 0x53db7532]
        );
        assert_eq!(c, CTR + 3);
        let (v, _) = threefry_bits(KEY, CTR, &[3], 64);
        assert_eq!(
            v,
            [0x8edcb26759624565, 0x5939043bfb959682, 0x86ef5fa853db7532]
        );
        let (v, _) = threefry_bits(KEY, CTR, &[2, 3], 32);
        assert_eq!(
            v,
            [0x59624565, 0xfb959682, 0x53db7532, 0x8edcb267, 0x5939043b, 0x86ef5fa8]
        );
        let (v, _) = threefry_bits(KEY, CTR, &[3, 2], 32);
        assert_eq!(
            v,
            [0x59624565, 0x8edcb267, 0xfb959682, 0x5939043b, 0x53db7532, 0x86ef5fa8]
        );
    }

    #[test]
    fn philox_matches_xla() {
        let ctr = (KEY as u128) << 64 | CTR as u128;
        let (v, c) = philox_bits(KEY, ctr, 5, 32);
        assert_eq!(
            v,
            [0x29cfe01d, 0x8ab07f09, 0x6a8b578f, 0x615ae743, 0x872131d3]
        );
        assert_eq!(c, ctr + 2);
        let (v, _) = philox_bits(KEY, ctr, 3, 64);
        assert_eq!(
            v,
            [0x8ab07f0929cfe01d, 0x615ae7436a8b578f, 0xbbe37a72872131d3]
        );
    }

    #[test]
    fn threefry_known_answer() {
        // Random123 known-answer test for threefry2x32_20 with zero key and counter.
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
    }

    #[test]
    fn philox_known_answer() {
        // Random123 known-answer test for philox4x32_10 with zero key and counter.
        assert_eq!(
            philox4x32([0, 0], [0, 0, 0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
    }
}
