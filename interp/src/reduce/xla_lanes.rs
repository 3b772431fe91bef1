//! XLA:CPU's evaluation order of an f16 `reduce`-sum or product (the `xla` float
//! semantics): [`fold`], applied to the reduces that [`crate::excess_precision`] marks
//! with [`ATTR`].
//!
//! # What XLA:CPU computes
//! XLA:CPU emits a reduce as a loop nest: the kept dimensions outside, then the reduced
//! ones in dimension order (size-1 dimensions have no loop), one accumulator, every step
//! an `fadd reassoc half` (or `fmul`), rounded to f16. LLVM then fully unrolls the
//! innermost reduced loop (at most 32 trips: `TreeReductionRewriter` has split longer
//! reduced dimensions into `reduce_window`s, which stay sequential) and the loop
//! vectorizer, allowed to reassociate, turns the next reduced loop (`t` trips, now the
//! innermost) into `VF` lanes: lane `l` starts from the accumulator (`l = 0`) or the
//! identity (-0 / 1), adds the inner elements of trips `l, l + VF, ...` in order, and the
//! lanes are combined by halving (`l[i] + l[i + VF/2]`, repeated). Further reduced loops
//! outside stay loops carrying the accumulator. Which `VF` the vectorizer picks for `t`
//! trips ([`stages`]) was read from the optimized LLVM IR that jaxlib 0.10.2 dumps
//! (`XLA_FLAGS=--xla_dump_to`, on this x86-64 AMD EPYC host, `prefer-vector-width=256`):
//! `t` in {2, 4, 8, 16}: `VF = t`; other `t < 16`: no vectorization (sequential); `t` in
//! 17..32: a vector loop of `VF` 16, 4 or 8 (depending on `t`), a vectorized epilogue of
//! `VF` 2 for 18 and 19, and the remaining trips scalar. At `t = 2` a loop whose body
//! loads two or more full-size arrays (XLA fuses elementwise producers into the reduce:
//! `x*y`, `x+y`, `y*(x-m)`, `x*y*y` were tried) is not vectorized, while one-array
//! bodies (`x`, `x*x`, `x-m`, `(x-m)^2`) are; from `t = 4` on all of them were. It was
//! checked bit for bit
//! against XLA:CPU on random inputs for every `t` in 2..32 with inner sizes 2..32, two to
//! four reduced dimensions, sums and products, and init values other than the identity.
//! The choice is LLVM's cost model for this target: another host CPU may pick other
//! widths. bf16 reduces are not vectorized (their reducer rounds through f32 adds, which
//! the vectorizer does not recognize as a reduction) and stay sequential.
//!
//! Invariant: every reduced element is combined exactly once, with every step rounded to
//! the element type; with fewer than two reduced dimensions of size > 1 the order is the
//! sequential row-major one, except for a reduce marked [`KEPT_LOOP`] (one reduced loop that
//! LLVM keeps, [`crate::xla_unroll`]), which gets the stages of a next-to-innermost loop of
//! as many trips over single elements.

use crate::tensor::round_f32;
use neuronc_ir::{ElemType, OpKind};

/// Marks a `reduce` (in the interpreter's rewritten copy of a module) to be folded in
/// XLA:CPU's order instead of the strict semantics' single rounding.
pub(crate) const ATTR: &str = "neuronc.xla_cpu_order";

/// The [`ATTR`] value (in place of a stream count) of a reduce over one dimension whose
/// loop LLVM keeps instead of unrolling ([`crate::xla_unroll`]): that loop itself is
/// vectorized, in the stages a next-to-innermost loop of as many trips gets.
pub(crate) const KEPT_LOOP: i64 = -1;

/// The vector stages `(VF, vector iterations)` LLVM uses for a reduction loop of `t`
/// trips whose body loads `streams` full-size arrays; the trips they leave run scalar, in
/// order, after them.
fn stages(t: usize, streams: i64) -> &'static [(usize, usize)] {
    match t {
        2 if streams >= 2 => &[],
        2 => &[(2, 1)],
        4 => &[(4, 1)],
        8 => &[(8, 1)],
        16 | 17 => &[(16, 1)],
        18 | 19 => &[(16, 1), (2, 1)],
        20..=23 => &[(4, 5)],
        24..=27 => &[(8, 3)],
        28..=31 => &[(4, 7)],
        32 => &[(16, 2)],
        _ => &[],
    }
}

/// Whether XLA:CPU vectorizes a reduce over dimensions of sizes `sizes` (in dimension
/// order) whose body loads `streams` full-size arrays; when not, [`fold`] is the
/// sequential row-major fold.
pub(crate) fn vectorized(sizes: &[i64], streams: i64) -> bool {
    let dims: Vec<i64> = sizes.iter().copied().filter(|&n| n != 1).collect();
    match dims[..] {
        [t] if streams == KEPT_LOOP => usize::try_from(t).is_ok_and(|t| !stages(t, 1).is_empty()),
        [.., t, _] => usize::try_from(t).is_ok_and(|t| !stages(t, streams).is_empty()),
        _ => false,
    }
}

/// One rounded step of the reduction.
fn step(kind: OpKind, elem: ElemType, a: f32, b: f32) -> f32 {
    round_f32(
        elem,
        if kind == OpKind::Multiply {
            a * b
        } else {
            a + b
        },
    )
}

/// Folds each of the `outs` contiguous chunks of `src` (the reduced elements of one output
/// in row-major order of the reduced dimensions, whose sizes are `sizes`) from `init`, in
/// XLA:CPU's order (see the module documentation).
pub(crate) fn fold(
    kind: OpKind,
    elem: ElemType,
    src: &[f32],
    (outs, sizes, streams): (usize, &[usize], i64),
    init: f32,
) -> Vec<f32> {
    let dims: Vec<usize> = sizes.iter().copied().filter(|&n| n != 1).collect();
    let chunk: usize = dims.iter().product();
    if chunk == 0 {
        return vec![init; outs];
    }
    (0..outs)
        .map(|o| {
            let c = &src[o * chunk..(o + 1) * chunk];
            match dims[..] {
                [t] if streams == KEPT_LOOP => {
                    fold_lanes(kind, elem, c, stages(t, 1), (t, 1), init)
                }
                [.., t, m] => fold_lanes(kind, elem, c, stages(t, streams), (t, m), init),
                _ => c.iter().fold(init, |s, &x| step(kind, elem, s, x)),
            }
        })
        .collect()
}

/// One output: the loops outside the vectorized one run in order, each pass through the
/// vector stages starting from the accumulator.
fn fold_lanes(
    kind: OpKind,
    elem: ElemType,
    c: &[f32],
    stages: &[(usize, usize)],
    (t, m): (usize, usize),
    init: f32,
) -> f32 {
    let identity = if kind == OpKind::Multiply { 1.0 } else { -0.0 };
    let mut acc = init;
    for outer in c.chunks(t * m) {
        let mut done = 0;
        for &(vf, iters) in stages {
            let mut lanes = vec![identity; vf];
            lanes[0] = acc;
            for trip in done..done + vf * iters {
                let lane = &mut lanes[(trip - done) % vf];
                for &x in &outer[trip * m..(trip + 1) * m] {
                    *lane = step(kind, elem, *lane, x);
                }
            }
            acc = combine(kind, elem, lanes);
            done += vf * iters;
        }
        for &x in &outer[done * m..] {
            acc = step(kind, elem, acc, x);
        }
    }
    acc
}

/// The lanes combined by halving: `l[i] + l[i + n/2]` until one is left.
fn combine(kind: OpKind, elem: ElemType, mut lanes: Vec<f32>) -> f32 {
    while lanes.len() > 1 {
        let half = lanes.len() / 2;
        lanes = (0..half)
            .map(|i| step(kind, elem, lanes[i], lanes[i + half]))
            .collect();
    }
    lanes[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-derived: f16 spacing is 2 in [2048, 4096), so adding 1 to 2048 is lost (tie to
    /// even) while 1 + 1 is kept. Sizes [2, 2]: lanes (2048 + 1, -0 + 1 + 1) = (2048, 2),
    /// combined 2050; sequentially 2048 + 1 + 1 + 1 = 2048.
    #[test]
    fn two_lanes_keep_what_a_sequential_sum_loses() {
        let src = [2048.0, 1.0, 1.0, 1.0];
        let lanes = fold(OpKind::Add, ElemType::F16, &src, (1, &[2, 2], 1), 0.0);
        assert_eq!(lanes, vec![2050.0]);
        let seq = fold(OpKind::Add, ElemType::F16, &src, (1, &[4], 1), 0.0);
        assert_eq!(seq, vec![2048.0]);
        // Three trips are not vectorized: sequential.
        let src = [2048.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let three = fold(OpKind::Add, ElemType::F16, &src, (1, &[3, 1, 2], 1), 0.0);
        assert_eq!(three, vec![2048.0]);
    }

    /// Every element is used once, whatever the stage plan.
    #[test]
    fn every_element_counts_once() {
        for t in 1..=33 {
            let src = vec![1.0; t * 3];
            let got = fold(OpKind::Add, ElemType::F32, &src, (1, &[t, 3], 1), 0.0);
            assert_eq!(got, vec![(t * 3) as f32], "t = {t}");
        }
    }
}
