//! Elementwise ops: unary and binary arithmetic, comparisons, select, clamp, and the
//! elementwise CHLO ops.
//!
//! Owns: the per-element semantics of the spec for every element class. Floats narrower
//! than f32 are computed in f32 and rounded back to their type after every op (what
//! XLA:CPU does); integers are computed on canonical `i64` and wrapped to their width.
//! Complex unary ops are computed in `f64` (complex64 rounded once at the end).
//! Invariant: each op matches its kind once, outside the element loop; loops do not
//! allocate per element.

use crate::complexfn;
use crate::complexspecial;
use crate::mathfn::{self, ShiftKind};
use crate::tensor::{round_f32, wrap_int, Data, Tensor};
use neuronc_ir::{ElemType, OpKind, TensorType};
use num_complex::Complex as Cx;
use num_traits::Float;

type R<T> = Result<T, String>;

/// Float helper trait over `f32`/`f64`.
pub trait Fl: Float + Copy + Send + Sync + 'static {
    fn f64(self) -> f64;
    fn of(x: f64) -> Self;
    fn next_after(self, y: Self) -> Self;
}
impl Fl for f32 {
    fn f64(self) -> f64 {
        self as f64
    }
    fn of(x: f64) -> Self {
        x as f32
    }
    fn next_after(self, y: Self) -> Self {
        mathfn::next_after_f32(self, y)
    }
}
impl Fl for f64 {
    fn f64(self) -> f64 {
        self
    }
    fn of(x: f64) -> Self {
        x
    }
    fn next_after(self, y: Self) -> Self {
        mathfn::next_after_f64(self, y)
    }
}

/// IEEE maximum with NaN propagation; `max(-0, +0) == +0`.
pub fn fmax<T: Fl>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a == b {
        if a.is_sign_negative() {
            b
        } else {
            a
        }
    } else if a > b {
        a
    } else {
        b
    }
}

/// IEEE minimum with NaN propagation; `min(-0, +0) == -0`.
pub fn fmin<T: Fl>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

fn sign<T: Fl>(x: T) -> T {
    if x.is_nan() || x == T::zero() {
        x
    } else if x > T::zero() {
        T::one()
    } else {
        -T::one()
    }
}

fn via64<T: Fl>(f: fn(f64) -> f64) -> impl Fn(T) -> T {
    move |x: T| T::of(f(x.f64()))
}

// `chlo.sinh`, `chlo.cosh` and `chlo.atanh` on real floats are defined by their CHLO
// decompositions (StableHLO's `chlo-legalize-to-stablehlo`, which XLA also applies),
// evaluated in the element type (f32 for narrower floats): the results differ from the
// correctly rounded ones by a few ulp, and the corpus' expected values are these.

/// `exp(x + log ½) ± exp(log ½ - x)`: `(e^x ± e^-x) / 2` without overflowing early.
fn half_exp_pair<T: Fl>(x: T) -> (T, T) {
    let log_half = T::of(0.5).ln();
    ((x + log_half).exp(), (log_half - x).exp())
}

/// `sinh x`: `½ (expm1 x + expm1 x / (expm1 x + 1))` for `|x| < 1`, else
/// `exp(x + log ½) - exp(log ½ - x)`.
fn chlo_sinh<T: Fl>(x: T) -> T {
    if x.abs() < T::one() {
        let em1 = x.exp_m1();
        T::of(0.5) * (em1 + em1 / (em1 + T::one()))
    } else {
        let (a, b) = half_exp_pair(x);
        a - b
    }
}

/// `cosh x = exp(x + log ½) + exp(log ½ - x)`.
fn chlo_cosh<T: Fl>(x: T) -> T {
    let (a, b) = half_exp_pair(x);
    a + b
}

/// `atanh x = ½ (log1p x - log1p(-x))` for `|x| <= 1`, NaN otherwise.
fn chlo_atanh<T: Fl>(x: T) -> T {
    if x.abs() > T::one() {
        T::nan()
    } else {
        (x.ln_1p() - (-x).ln_1p()) * T::of(0.5)
    }
}

/// The function of a unary float op, or `None` if the kind is not one.
fn unary_float_fn<T: Fl>(kind: OpKind) -> Option<Box<dyn Fn(T) -> T + Send + Sync>> {
    use OpKind::*;
    Some(match kind {
        Abs => Box::new(|x: T| x.abs()),
        Cbrt => Box::new(|x: T| x.cbrt()),
        Ceil => Box::new(|x: T| x.ceil()),
        Floor => Box::new(|x: T| x.floor()),
        Cosine => Box::new(|x: T| x.cos()),
        Sine => Box::new(|x: T| x.sin()),
        Tan | ChloTan => Box::new(|x: T| x.tan()),
        Tanh => Box::new(|x: T| x.tanh()),
        Exponential => Box::new(|x: T| x.exp()),
        ExponentialMinusOne => Box::new(|x: T| x.exp_m1()),
        Log => Box::new(|x: T| x.ln()),
        LogPlusOne => Box::new(|x: T| x.ln_1p()),
        Logistic => Box::new(|x: T| T::one() / (T::one() + (-x).exp())),
        Negate => Box::new(|x: T| -x),
        RoundNearestAfz => Box::new(|x: T| x.round()),
        RoundNearestEven => Box::new(via64(mathfn::round_even)),
        Rsqrt => Box::new(|x: T| T::one() / x.sqrt()),
        Sqrt => Box::new(|x: T| x.sqrt()),
        Sign => Box::new(sign::<T>),
        ChloSquare => Box::new(|x: T| x * x),
        ChloErf => Box::new(via64(libm::erf)),
        ChloErfc => Box::new(via64(libm::erfc)),
        ChloErfInv => Box::new(via64(mathfn::erf_inv)),
        ChloLgamma => Box::new(via64(libm::lgamma)),
        ChloDigamma => Box::new(via64(mathfn::digamma)),
        ChloAcos => Box::new(|x: T| x.acos()),
        ChloAcosh => Box::new(|x: T| x.acosh()),
        ChloAsin => Box::new(|x: T| x.asin()),
        ChloAsinh => Box::new(|x: T| x.asinh()),
        ChloAtan => Box::new(|x: T| x.atan()),
        ChloAtanh => Box::new(chlo_atanh::<T>),
        ChloCosh => Box::new(chlo_cosh::<T>),
        ChloSinh => Box::new(chlo_sinh::<T>),
        ChloBesselI1e => Box::new(via64(mathfn::bessel_i1e)),
        ChloConj | Real => Box::new(|x: T| x),
        Imag => Box::new(|_x: T| T::zero()),
        _ => return None,
    })
}

fn map1<A: Copy, B>(v: &[A], f: impl Fn(A) -> B) -> Vec<B> {
    v.iter().map(|&x| f(x)).collect()
}

/// Elements per thread below which [`par_map1`] stays on the calling thread.
const PAR_MIN: usize = 1 << 15;

/// [`map1`] split over up to `available_parallelism` scoped threads for large inputs (the
/// result does not depend on the split).
fn par_map1<A: Copy + Sync, B: Copy + Default + Send>(
    v: &[A],
    f: impl Fn(A) -> B + Sync,
) -> Vec<B> {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = cores.min(v.len() / PAR_MIN);
    if threads <= 1 {
        return map1(v, f);
    }
    let mut out = vec![B::default(); v.len()];
    let chunk = v.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        for (o, i) in out.chunks_mut(chunk).zip(v.chunks(chunk)) {
            s.spawn(move || o.iter_mut().zip(i).for_each(|(o, &x)| *o = f(x)));
        }
    });
    out
}

fn map2<A: Copy, B>(a: &[A], b: &[A], f: impl Fn(A, A) -> B) -> Vec<B> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// Rounds f32-class storage to `elem` in place (no-op for f32).
pub fn round_vec(elem: ElemType, v: &mut [f32]) {
    if elem != ElemType::F32 {
        for x in v {
            *x = round_f32(elem, *x);
        }
    }
}

/// Elementwise unary op; `out` is the result type.
pub fn unary(kind: OpKind, x: &Tensor, out: &TensorType) -> R<Tensor> {
    use OpKind::*;
    let e = x.elem();
    let data = match x.data() {
        Data::F32(v) => match kind {
            IsFinite => Data::Int(map1(v, |a| a.is_finite() as i64)),
            ChloIsInf => Data::Int(map1(v, |a| a.is_infinite() as i64)),
            ChloIsPosInf => Data::Int(map1(v, |a| (a == f32::INFINITY) as i64)),
            ChloIsNegInf => Data::Int(map1(v, |a| (a == f32::NEG_INFINITY) as i64)),
            _ => {
                let f = unary_float_fn::<f32>(kind).ok_or("not a float op")?;
                let mut r = par_map1(v, f);
                round_vec(out.elem, &mut r);
                Data::F32(r)
            }
        },
        Data::F64(v) => match kind {
            IsFinite => Data::Int(map1(v, |a| a.is_finite() as i64)),
            ChloIsInf => Data::Int(map1(v, |a| a.is_infinite() as i64)),
            ChloIsPosInf => Data::Int(map1(v, |a| (a == f64::INFINITY) as i64)),
            ChloIsNegInf => Data::Int(map1(v, |a| (a == f64::NEG_INFINITY) as i64)),
            _ => Data::F64(par_map1(
                v,
                unary_float_fn::<f64>(kind).ok_or("not a float op")?,
            )),
        },
        Data::Int(v) => Data::Int(unary_int(kind, e, v)?),
        Data::C64(v) => {
            let wide = map1(v, |z| Cx::new(z.re as f64, z.im as f64));
            narrow_complex(unary_complex(kind, &wide, e)?)
        }
        Data::C128(v) => unary_complex(kind, v, e)?,
    };
    Tensor::new(out.clone(), data)
}

fn unary_int(kind: OpKind, e: ElemType, v: &[i64]) -> R<Vec<i64>> {
    use OpKind::*;
    Ok(match kind {
        Abs => map1(v, |a| wrap_int(e, a.wrapping_abs())),
        Negate => map1(v, |a| wrap_int(e, a.wrapping_neg())),
        Not => map1(v, |a| wrap_int(e, !a)),
        Popcnt => map1(v, |a| mathfn::int_popcnt(e, a)),
        CountLeadingZeros => map1(v, |a| mathfn::int_clz(e, a)),
        Sign => map1(v, |a| {
            if e.is_unsigned() {
                (a != 0) as i64
            } else {
                a.signum()
            }
        }),
        ChloSquare => map1(v, |a| wrap_int(e, a.wrapping_mul(a))),
        _ => return Err(format!("not defined on {e}")),
    })
}

/// A unary op on complex elements, computed in `f64` (complex64 operands are widened
/// by the caller and the result rounded once by [`narrow_complex`]).
fn unary_complex(kind: OpKind, v: &[Cx<f64>], out: ElemType) -> R<Data> {
    use OpKind::*;
    let one = Cx::new(1.0, 0.0);
    let c: Vec<Cx<f64>> = match kind {
        Abs => return Ok(Data::F64(map1(v, complexspecial::abs))),
        Real => return Ok(Data::F64(map1(v, |z| z.re))),
        Imag => return Ok(Data::F64(map1(v, |z| z.im))),
        IsFinite => {
            return Ok(Data::Int(map1(v, |z| {
                (z.re.is_finite() && z.im.is_finite()) as i64
            })))
        }
        Negate => map1(v, |z| -z),
        Exponential => map1(v, |z| z.exp()),
        ExponentialMinusOne => map1(v, complexfn::expm1),
        Log => map1(v, |z| z.ln()),
        LogPlusOne => map1(v, complexfn::log1p),
        Sqrt => map1(v, complexspecial::sqrt),
        Rsqrt => map1(v, |z| z.sqrt().inv()),
        Cosine => map1(v, |z| z.cos()),
        Sine => map1(v, |z| z.sin()),
        Tan | ChloTan => map1(v, |z| z.tan()),
        Tanh => map1(v, complexspecial::tanh),
        Logistic => map1(v, |z| (one + (-z).exp()).inv()),
        Sign => map1(v, |z| {
            if z.re == 0.0 && z.im == 0.0 {
                z
            } else {
                z / z.norm()
            }
        }),
        ChloConj => map1(v, |z| z.conj()),
        ChloSquare => map1(v, |z| z * z),
        ChloAsin => map1(v, complexfn::asin),
        ChloAcos => map1(v, complexfn::acos),
        ChloAsinh => map1(v, complexfn::asinh),
        ChloAcosh => map1(v, complexfn::acosh),
        ChloAtan => map1(v, complexfn::atan),
        ChloAtanh => map1(v, complexfn::atanh),
        ChloSinh => map1(v, complexfn::sinh),
        ChloCosh => map1(v, complexfn::cosh),
        _ => return Err(format!("not defined on {out}")),
    };
    Ok(Data::C128(c))
}

/// Rounds the `f64` result of a complex64 computation back to complex64 / f32.
fn narrow_complex(d: Data) -> Data {
    match d {
        Data::C128(v) => Data::C64(map1(&v, |z| Cx::new(z.re as f32, z.im as f32))),
        Data::F64(v) => Data::F32(map1(&v, |x| x as f32)),
        other => other,
    }
}

/// Elementwise binary op on same-shape operands; `out` is the result type.
pub fn binary(kind: OpKind, a: &Tensor, b: &Tensor, out: &TensorType) -> R<Tensor> {
    if a.len() != b.len() {
        return Err(format!(
            "operand shapes {:?} and {:?} differ",
            a.shape(),
            b.shape()
        ));
    }
    let data = match (a.data(), b.data()) {
        (Data::F32(x), Data::F32(y)) => match kind {
            OpKind::Complex => Data::C64(map2(x, y, Cx::new)),
            _ => {
                let mut r = binary_float(kind, x, y)?;
                round_vec(out.elem, &mut r);
                Data::F32(r)
            }
        },
        (Data::F64(x), Data::F64(y)) => match kind {
            OpKind::Complex => Data::C128(map2(x, y, Cx::new)),
            _ => Data::F64(binary_float(kind, x, y)?),
        },
        (Data::Int(x), Data::Int(y)) => Data::Int(binary_int(kind, a.elem(), x, y)?),
        (Data::C64(x), Data::C64(y)) if is_divide(kind) => Data::C64(map2(x, y, |p, q| {
            let w = |z: Cx<f32>| Cx::new(z.re as f64, z.im as f64);
            let r = complexspecial::div(w(p), w(q));
            Cx::new(r.re as f32, r.im as f32)
        })),
        (Data::C128(x), Data::C128(y)) if is_divide(kind) => {
            Data::C128(map2(x, y, complexspecial::div))
        }
        (Data::C64(x), Data::C64(y)) => Data::C64(binary_complex(kind, x, y)?),
        (Data::C128(x), Data::C128(y)) => Data::C128(binary_complex(kind, x, y)?),
        _ => return Err("operand element types differ".into()),
    };
    Tensor::new(out.clone(), data)
}

fn binary_float<T: Fl>(kind: OpKind, x: &[T], y: &[T]) -> R<Vec<T>> {
    use OpKind::*;
    Ok(match kind {
        Add | ChloBroadcastAdd => map2(x, y, |a, b| a + b),
        Subtract | ChloBroadcastSubtract => map2(x, y, |a, b| a - b),
        Multiply | ChloBroadcastMultiply => map2(x, y, |a, b| a * b),
        Divide | ChloBroadcastDivide => map2(x, y, |a, b| a / b),
        Remainder | ChloBroadcastRemainder => map2(x, y, |a, b| a % b),
        Maximum | ChloBroadcastMaximum => map2(x, y, fmax),
        Minimum | ChloBroadcastMinimum => map2(x, y, fmin),
        Power | ChloBroadcastPower => map2(x, y, |a, b| a.powf(b)),
        Atan2 | ChloBroadcastAtan2 => map2(x, y, |a, b| a.atan2(b)),
        ChloNextAfter | ChloBroadcastNextAfter => map2(x, y, |a, b| a.next_after(b)),
        ChloPolygamma | ChloBroadcastPolygamma => {
            map2(x, y, |n, v| T::of(mathfn::polygamma(n.f64(), v.f64())))
        }
        ChloZeta | ChloBroadcastZeta => map2(x, y, |s, q| T::of(mathfn::zeta(s.f64(), q.f64()))),
        _ => return Err("not defined on floats".into()),
    })
}

fn binary_int(kind: OpKind, e: ElemType, x: &[i64], y: &[i64]) -> R<Vec<i64>> {
    use OpKind::*;
    let uns = e.is_unsigned() || e.is_bool();
    Ok(match kind {
        Add | ChloBroadcastAdd => map2(x, y, |a, b| wrap_int(e, a.wrapping_add(b))),
        Subtract | ChloBroadcastSubtract => map2(x, y, |a, b| wrap_int(e, a.wrapping_sub(b))),
        Multiply | ChloBroadcastMultiply => map2(x, y, |a, b| wrap_int(e, a.wrapping_mul(b))),
        Divide | ChloBroadcastDivide => map2(x, y, |a, b| mathfn::int_div(e, a, b)),
        Remainder | ChloBroadcastRemainder => map2(x, y, |a, b| mathfn::int_rem(e, a, b)),
        Maximum | ChloBroadcastMaximum if uns => map2(x, y, |a, b| (a as u64).max(b as u64) as i64),
        Minimum | ChloBroadcastMinimum if uns => map2(x, y, |a, b| (a as u64).min(b as u64) as i64),
        Maximum | ChloBroadcastMaximum => map2(x, y, |a, b| a.max(b)),
        Minimum | ChloBroadcastMinimum => map2(x, y, |a, b| a.min(b)),
        And | ChloBroadcastAnd => map2(x, y, |a, b| a & b),
        Or | ChloBroadcastOr => map2(x, y, |a, b| a | b),
        Xor | ChloBroadcastXor => map2(x, y, |a, b| a ^ b),
        Power | ChloBroadcastPower => map2(x, y, |a, b| mathfn::int_pow(e, a, b)),
        ShiftLeft | ChloBroadcastShiftLeft => {
            map2(x, y, |a, b| mathfn::int_shift(e, ShiftKind::Left, a, b))
        }
        ShiftRightLogical | ChloBroadcastShiftRightLogical => map2(x, y, |a, b| {
            mathfn::int_shift(e, ShiftKind::RightLogical, a, b)
        }),
        ShiftRightArithmetic | ChloBroadcastShiftRightArithmetic => map2(x, y, |a, b| {
            mathfn::int_shift(e, ShiftKind::RightArithmetic, a, b)
        }),
        _ => return Err(format!("not defined on {e}")),
    })
}

/// `divide` in any spelling (complex division goes through [`complexspecial::div`]).
fn is_divide(kind: OpKind) -> bool {
    matches!(kind, OpKind::Divide | OpKind::ChloBroadcastDivide)
}

fn binary_complex<T: Fl>(kind: OpKind, x: &[Cx<T>], y: &[Cx<T>]) -> R<Vec<Cx<T>>> {
    use OpKind::*;
    Ok(match kind {
        Add | ChloBroadcastAdd => map2(x, y, |a, b| a + b),
        Subtract | ChloBroadcastSubtract => map2(x, y, |a, b| a - b),
        Multiply | ChloBroadcastMultiply => map2(x, y, |a, b| a * b),
        // Divide is routed to `complexspecial::div` by `binary`.
        Power | ChloBroadcastPower => map2(x, y, |a, b| {
            if a.re == T::zero() && a.im == T::zero() {
                if b.re == T::zero() && b.im == T::zero() {
                    Cx::new(T::one(), T::zero())
                } else {
                    Cx::new(T::zero(), T::zero())
                }
            } else {
                (b * a.ln()).exp()
            }
        }),
        // XLA's complex atan2(y, x): -i * log((x + iy) / sqrt(x^2 + y^2)).
        Atan2 | ChloBroadcastAtan2 => map2(x, y, |a, b| {
            let i = Cx::new(T::zero(), T::one());
            let q = b + i * a;
            let s = (b * b + a * a).sqrt();
            -(i * (q / s).ln())
        }),
        _ => return Err("not defined on complex".into()),
    })
}

/// `compare` with a direction (`EQ`..`LT`) and comparison type.
pub fn compare(a: &Tensor, b: &Tensor, dir: &str, cmp_type: Option<&str>) -> R<Tensor> {
    use std::cmp::Ordering;
    let test: fn(Option<Ordering>) -> bool = match dir {
        "EQ" => |o| o == Some(Ordering::Equal),
        "NE" => |o| o != Some(Ordering::Equal),
        "GE" => |o| matches!(o, Some(Ordering::Greater | Ordering::Equal)),
        "GT" => |o| o == Some(Ordering::Greater),
        "LE" => |o| matches!(o, Some(Ordering::Less | Ordering::Equal)),
        "LT" => |o| o == Some(Ordering::Less),
        _ => return Err(format!("unknown comparison direction {dir}")),
    };
    let total = cmp_type == Some("TOTALORDER");
    let uns = a.elem().is_unsigned() || a.elem().is_bool() || cmp_type == Some("UNSIGNED");
    let r: Vec<i64> = match (a.data(), b.data()) {
        (Data::F32(x), Data::F32(y)) if total => {
            map2(x, y, |p, q| test(Some(p.total_cmp(&q))) as i64)
        }
        (Data::F64(x), Data::F64(y)) if total => {
            map2(x, y, |p, q| test(Some(p.total_cmp(&q))) as i64)
        }
        (Data::F32(x), Data::F32(y)) => map2(x, y, |p, q| test(p.partial_cmp(&q)) as i64),
        (Data::F64(x), Data::F64(y)) => map2(x, y, |p, q| test(p.partial_cmp(&q)) as i64),
        (Data::Int(x), Data::Int(y)) if uns => {
            map2(x, y, |p, q| test(Some((p as u64).cmp(&(q as u64)))) as i64)
        }
        (Data::Int(x), Data::Int(y)) => map2(x, y, |p, q| test(Some(p.cmp(&q))) as i64),
        (Data::C64(x), Data::C64(y)) => map2(x, y, |p, q| test(lex(p, q)) as i64),
        (Data::C128(x), Data::C128(y)) => map2(x, y, |p, q| test(lex(p, q)) as i64),
        _ => return Err("operand element types differ".into()),
    };
    Tensor::new(TensorType::new(ElemType::I1, a.shape()), Data::Int(r))
}

fn lex<T: Fl>(p: Cx<T>, q: Cx<T>) -> Option<std::cmp::Ordering> {
    match p.re.partial_cmp(&q.re)? {
        std::cmp::Ordering::Equal => p.im.partial_cmp(&q.im),
        o => Some(o),
    }
}

/// Expands a scalar tensor to `n` elements (or returns the tensor's data unchanged).
pub fn expand(t: &Tensor, n: usize) -> std::borrow::Cow<'_, Data> {
    if t.len() == n {
        std::borrow::Cow::Borrowed(t.data())
    } else {
        std::borrow::Cow::Owned(t.data().repeat(0, n))
    }
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar.
pub fn select(p: &Tensor, t: &Tensor, f: &Tensor) -> R<Tensor> {
    let n = t.len();
    let pd = expand(p, n);
    let Data::Int(pv) = &*pd else {
        return Err("predicate is not i1".into());
    };
    if f.len() != n || pv.len() != n {
        return Err("operand shapes differ".into());
    }
    let mut out = f.data().clone();
    for (i, &c) in pv.iter().enumerate() {
        if c != 0 {
            out.set_from(i, t.data(), i);
        }
    }
    Tensor::new(t.ty().clone(), out)
}

/// `clamp(min, x, max)`; `min`/`max` may be scalars.
pub fn clamp(lo: &Tensor, x: &Tensor, hi: &Tensor) -> R<Tensor> {
    let n = x.len();
    let lo_t = Tensor::new(x.ty().clone(), expand(lo, n).into_owned())?;
    let hi_t = Tensor::new(x.ty().clone(), expand(hi, n).into_owned())?;
    let m = binary(OpKind::Maximum, x, &lo_t, x.ty())?;
    binary(OpKind::Minimum, &m, &hi_t, x.ty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_propagate_nan_and_order_zeros() {
        assert!(fmax(f32::NAN, 1.0).is_nan());
        assert!(fmin(1.0, f32::NAN).is_nan());
        assert!(fmax(-0.0f32, 0.0).is_sign_positive());
        assert!(fmin(0.0f32, -0.0).is_sign_negative());
    }

    #[test]
    fn int_add_wraps() {
        let a = Tensor::from_i64(ElemType::Int(8), &[1], &[127]).unwrap();
        let r = binary(OpKind::Add, &a, &a, a.ty()).unwrap();
        assert_eq!(r.as_i64().unwrap(), &[-2]);
    }

    #[test]
    fn bf16_results_are_rounded() {
        let t = TensorType::new(ElemType::BF16, &[1]);
        let a = Tensor::from_f64_as(ElemType::BF16, &[1], &[1.0]).unwrap();
        let b = Tensor::from_f64_as(ElemType::BF16, &[1], &[1.0 / 256.0]).unwrap();
        // 1 + 2^-8 is a tie between 1 and 1 + 2^-7 in bf16: rounds to even (1.0).
        let r = binary(OpKind::Add, &a, &b, &t).unwrap();
        assert_eq!(r.as_f32().unwrap(), &[1.0]);
    }
}
