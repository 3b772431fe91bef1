//! Fast paths for the small regions of reductions, scatters and maps.
//!
//! Owns: recognizing a region that is one commutative-monoid binary op (or "take the
//! new value") and applying such ops to whole chunks of storage without interpreting the
//! region; plus scalar extraction helpers used by the generic (region-interpreting) paths.
//! Invariant: a fast path computes exactly what interpreting the region would, except
//! that with [`Accum::Wide`] f32-class sums and products accumulate in f64 and round
//! once (closer to the exact value, which is what XLA's reassociated `reduce`s
//! approximate). [`Accum::Sequential`] folds in order, rounding every step to the element
//! type, as XLA:CPU does for the windows of `reduce_window`.

use crate::elementwise::{fmax, fmin};
use crate::tensor::{round_f32, wrap_int, Data, Tensor};
use neuronc_ir::{ElemType, Module, OpKind, RegionId};
use num_complex::Complex;

/// What a two-argument region computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// `return op(arg0, arg1)` with a binary op.
    Bin(OpKind),
    /// `return arg1` (scatter "replace").
    TakeNew,
    /// Anything else: interpret the region.
    Generic,
}

/// Classifies a region with `2` scalar arguments.
pub fn classify(m: &Module, r: RegionId) -> Body {
    let reg = m.region(r);
    if reg.args.len() != 2 {
        return Body::Generic;
    }
    let (a0, a1) = (reg.args[0], reg.args[1]);
    match reg.ops.as_slice() {
        [ret] => {
            let o = m.op(*ret);
            if o.kind.is_terminator() && o.operands == [a1] {
                Body::TakeNew
            } else {
                Body::Generic
            }
        }
        [bin, ret] => {
            let (b, t) = (m.op(*bin), m.op(*ret));
            let ok_args = b.operands == [a0, a1] || b.operands == [a1, a0];
            let ok_ret = t.kind.is_terminator() && t.operands == b.results;
            use OpKind::*;
            let fast = matches!(b.kind, Add | Multiply | Maximum | Minimum | And | Or | Xor);
            if ok_args && ok_ret && fast {
                Body::Bin(b.kind)
            } else {
                Body::Generic
            }
        }
        _ => Body::Generic,
    }
}

/// How an f32-class sum or product of a chunk is accumulated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accum {
    /// In f64, rounded once to the element type at the end.
    Wide,
    /// In chunk order, rounded to the element type after every step.
    Sequential,
}

/// Sum or product of `c` from `init` for f32-class element type `elem`.
fn fold_f32(kind: OpKind, elem: ElemType, c: &[f32], init: f32, accum: Accum) -> f32 {
    let mul = kind == OpKind::Multiply;
    match accum {
        Accum::Wide => {
            let f = |s: f64, &x: &f32| if mul { s * x as f64 } else { s + x as f64 };
            round_f32(elem, c.iter().fold(init as f64, f) as f32)
        }
        Accum::Sequential => c.iter().fold(init, |s, &x| {
            round_f32(elem, if mul { s * x } else { s + x })
        }),
    }
}

/// Folds each of the `outs` contiguous chunks of `chunk` elements of `src`, starting
/// from `init` (a one-element storage). Returns `None` if the op/class pair has no fast path.
pub fn fold_chunks(
    kind: OpKind,
    elem: ElemType,
    src: &Data,
    outs: usize,
    chunk: usize,
    init: &Data,
    accum: Accum,
) -> Option<Data> {
    use OpKind::*;
    if chunk == 0 {
        return Some(init.repeat(0, outs));
    }
    Some(match (src, init) {
        (Data::F32(v), Data::F32(i)) => {
            let i0 = i[0];
            let r: Vec<f32> = match kind {
                Add | Multiply => chunks(v, chunk)
                    .map(|c| fold_f32(kind, elem, c, i0, accum))
                    .collect(),
                Maximum => chunks(v, chunk)
                    .map(|c| c.iter().fold(i0, |s, &x| fmax(s, x)))
                    .collect(),
                Minimum => chunks(v, chunk)
                    .map(|c| c.iter().fold(i0, |s, &x| fmin(s, x)))
                    .collect(),
                _ => return None,
            };
            Data::F32(r)
        }
        (Data::F64(v), Data::F64(i)) => {
            let i0 = i[0];
            let f: fn(f64, f64) -> f64 = match kind {
                Add => |a, b| a + b,
                Multiply => |a, b| a * b,
                Maximum => fmax,
                Minimum => fmin,
                _ => return None,
            };
            Data::F64(
                chunks(v, chunk)
                    .map(|c| c.iter().fold(i0, |s, &x| f(s, x)))
                    .collect(),
            )
        }
        (Data::Int(v), Data::Int(i)) => {
            let i0 = i[0];
            let uns = elem.is_unsigned() || elem.is_bool();
            let f: fn(i64, i64) -> i64 = match kind {
                Add => |a, b| a.wrapping_add(b),
                Multiply => |a, b| a.wrapping_mul(b),
                Maximum if uns => |a, b| (a as u64).max(b as u64) as i64,
                Minimum if uns => |a, b| (a as u64).min(b as u64) as i64,
                Maximum => |a, b| a.max(b),
                Minimum => |a, b| a.min(b),
                And => |a, b| a & b,
                Or => |a, b| a | b,
                Xor => |a, b| a ^ b,
                _ => return None,
            };
            Data::Int(
                chunks(v, chunk)
                    .map(|c| wrap_int(elem, c.iter().fold(i0, |s, &x| f(s, x))))
                    .collect(),
            )
        }
        (Data::C64(v), Data::C64(i)) => Data::C64(fold_complex(kind, v, chunk, i[0])?),
        (Data::C128(v), Data::C128(i)) => Data::C128(fold_complex(kind, v, chunk, i[0])?),
        _ => return None,
    })
}

fn chunks<T>(v: &[T], chunk: usize) -> std::slice::Chunks<'_, T> {
    v.chunks(chunk.max(1))
}

fn fold_complex<T: num_traits::Float>(
    kind: OpKind,
    v: &[Complex<T>],
    chunk: usize,
    i0: Complex<T>,
) -> Option<Vec<Complex<T>>> {
    let f: fn(Complex<T>, Complex<T>) -> Complex<T> = match kind {
        OpKind::Add => |a, b| a + b,
        OpKind::Multiply => |a, b| a * b,
        _ => return None,
    };
    Some(
        chunks(v, chunk)
            .map(|c| c.iter().fold(i0, |s, &x| f(s, x)))
            .collect(),
    )
}

/// Applies a fast binary body to one pair of elements: `dst[i] = op(dst[i], src[j])`.
pub fn combine_at(
    kind: OpKind,
    elem: ElemType,
    dst: &mut Data,
    i: usize,
    src: &Data,
    j: usize,
) -> bool {
    use OpKind::*;
    match (dst, src) {
        (Data::F32(d), Data::F32(s)) => {
            let (a, b) = (d[i], s[j]);
            d[i] = round_f32(
                elem,
                match kind {
                    Add => a + b,
                    Multiply => a * b,
                    Maximum => fmax(a, b),
                    Minimum => fmin(a, b),
                    _ => return false,
                },
            );
        }
        (Data::F64(d), Data::F64(s)) => {
            let (a, b) = (d[i], s[j]);
            d[i] = match kind {
                Add => a + b,
                Multiply => a * b,
                Maximum => fmax(a, b),
                Minimum => fmin(a, b),
                _ => return false,
            };
        }
        (Data::Int(d), Data::Int(s)) => {
            let (a, b) = (d[i], s[j]);
            let uns = elem.is_unsigned() || elem.is_bool();
            d[i] = wrap_int(
                elem,
                match kind {
                    Add => a.wrapping_add(b),
                    Multiply => a.wrapping_mul(b),
                    Maximum if uns => (a as u64).max(b as u64) as i64,
                    Minimum if uns => (a as u64).min(b as u64) as i64,
                    Maximum => a.max(b),
                    Minimum => a.min(b),
                    And => a & b,
                    Or => a | b,
                    Xor => a ^ b,
                    _ => return false,
                },
            );
        }
        (Data::C64(d), Data::C64(s)) => match kind {
            Add => d[i] += s[j],
            Multiply => d[i] *= s[j],
            _ => return false,
        },
        (Data::C128(d), Data::C128(s)) => match kind {
            Add => d[i] += s[j],
            Multiply => d[i] *= s[j],
            _ => return false,
        },
        _ => return false,
    }
    true
}

/// Element `i` of `t` as a scalar tensor.
pub fn scalar_at(t: &Tensor, i: usize) -> Tensor {
    Tensor::scalar(t.elem(), t.data().gather(&[i]))
}
