//! Infinite arguments of the complex `chlo.acos` / `chlo.asin` / `chlo.atanh` decompositions.
//!
//! Owns: [`Emitter::complex_inf_patch`], [`Emitter::complex_atanh`]. The closed forms in `chlo.rs` evaluate
//! `inf - inf` or `inf / inf` when a part of the argument is infinite; XLA's own CHLO
//! lowering returns the C99 Annex G values there, which this patch selects instead:
//! * `acos(x + iy) = atan2(|y|, x) - i·inf·sign(y)` (so `acos(+inf + i) = 0 - i·inf`),
//! * `asin(x + iy) = copysign(atan2(|x|, |y|), x) + i·copysign(inf, y)`,
//! * `atanh(x + iy) = copysign(0, x) + i·copysign(π/2, y)`.
//!
//! Invariants: only complex operands are patched (real ones pass through unchanged);
//! elements with a NaN part keep the closed form's value.

use super::emit::{Comp, Emitter};
use super::proto::PrimitiveType;
use super::shape::{self, with_prim};
use super::HloError;

/// Which function's infinite-argument values to select.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum InfPatch {
    Acos,
    Asin,
    Atanh,
}

impl Emitter<'_> {
    /// `r` (the closed form of `f(x)`) with the elements where `x` has an infinite part
    /// and no NaN part replaced by the Annex G value of `f`.
    pub(super) fn complex_inf_patch(
        &mut self,
        c: &mut Comp,
        f: InfPatch,
        x: i64,
        r: i64,
    ) -> Result<i64, HloError> {
        let s = c.shape(x).clone();
        let (part, int) = match shape::prim_of(&s) {
            Some(PrimitiveType::C64) => (PrimitiveType::F32, PrimitiveType::S32),
            Some(PrimitiveType::C128) => (PrimitiveType::F64, PrimitiveType::S64),
            _ => return Ok(r),
        };
        let ps = with_prim(&s, part);
        let re = self.add3(c, "real", ps.clone(), vec![x]);
        let im = self.add3(c, "imag", ps.clone(), vec![x]);
        let inf = self.k(c, re, f64::INFINITY)?;
        let are = self.un(c, "abs", re);
        let aim = self.un(c, "abs", im);
        let re_inf = self.cmp(c, "EQ", are, inf);
        let im_inf = self.cmp(c, "EQ", aim, inf);
        let any_inf = self.bin(c, "or", re_inf, im_inf);
        let re_ok = self.cmp(c, "EQ", re, re);
        let im_ok = self.cmp(c, "EQ", im, im);
        let no_nan = self.bin(c, "and", re_ok, im_ok);
        let pick = self.bin(c, "and", any_inf, no_nan);
        let im_neg = self.sign_bit(c, im, int)?;
        let (new_re, new_im) = match f {
            InfPatch::Acos => {
                let a = self.bin(c, "atan2", aim, re);
                let neg_inf = self.k(c, re, f64::NEG_INFINITY)?;
                let b = self.add3(c, "select", ps.clone(), vec![im_neg, inf, neg_inf]);
                (a, b)
            }
            InfPatch::Asin => {
                let re_neg = self.sign_bit(c, re, int)?;
                let a = self.bin(c, "atan2", are, aim);
                let na = self.un(c, "negate", a);
                let a = self.add3(c, "select", ps.clone(), vec![re_neg, na, a]);
                let neg_inf = self.k(c, re, f64::NEG_INFINITY)?;
                let b = self.add3(c, "select", ps.clone(), vec![im_neg, neg_inf, inf]);
                (a, b)
            }
            InfPatch::Atanh => {
                let re_neg = self.sign_bit(c, re, int)?;
                let zero = self.k(c, re, 0.0)?;
                let nzero = self.k(c, re, -0.0)?;
                let a = self.add3(c, "select", ps.clone(), vec![re_neg, nzero, zero]);
                let half_pi = self.k(c, re, std::f64::consts::FRAC_PI_2)?;
                let nhalf_pi = self.k(c, re, -std::f64::consts::FRAC_PI_2)?;
                let b = self.add3(c, "select", ps.clone(), vec![im_neg, nhalf_pi, half_pi]);
                (a, b)
            }
        };
        let special = self.add3(c, "complex", s.clone(), vec![new_re, new_im]);
        Ok(self.add3(c, "select", s, vec![pick, special, r]))
    }

    /// Complex `atanh(x + iy)` from its real and imaginary parts (`None` for real
    /// operands): `Re = log1p(4x / ((1-x)² + y²)) / 4`, `Im = atan2(2y, (1-x)(1+x) - y²) / 2`,
    /// which stays finite-or-infinite at `z = ±1` where `(log1p(z) - log1p(-z)) / 2`
    /// gives `inf - inf`; infinite parts are patched as in [`Self::complex_inf_patch`].
    pub(super) fn complex_atanh(&mut self, c: &mut Comp, x: i64) -> Result<Option<i64>, HloError> {
        let s = c.shape(x).clone();
        let part = match shape::prim_of(&s) {
            Some(PrimitiveType::C64) => PrimitiveType::F32,
            Some(PrimitiveType::C128) => PrimitiveType::F64,
            _ => return Ok(None),
        };
        let ps = with_prim(&s, part);
        let re = self.add3(c, "real", ps.clone(), vec![x]);
        let im = self.add3(c, "imag", ps, vec![x]);
        let one = self.k(c, re, 1.0)?;
        let omx = self.bin(c, "subtract", one, re);
        let opx = self.bin(c, "add", one, re);
        let y2 = self.bin(c, "multiply", im, im);
        let omx2 = self.bin(c, "multiply", omx, omx);
        let den = self.bin(c, "add", omx2, y2);
        let four = self.k(c, re, 4.0)?;
        let fx = self.bin(c, "multiply", four, re);
        let q = self.bin(c, "divide", fx, den);
        let l = self.un(c, "log-plus-one", q);
        let quarter = self.k(c, re, 0.25)?;
        let new_re = self.bin(c, "multiply", l, quarter);
        let two = self.k(c, re, 2.0)?;
        let ty = self.bin(c, "multiply", two, im);
        let p = self.bin(c, "multiply", omx, opx);
        let d = self.bin(c, "subtract", p, y2);
        let a = self.bin(c, "atan2", ty, d);
        let half = self.k(c, re, 0.5)?;
        let new_im = self.bin(c, "multiply", a, half);
        let r = self.add3(c, "complex", s, vec![new_re, new_im]);
        Ok(Some(self.complex_inf_patch(c, InfPatch::Atanh, x, r)?))
    }

    /// `v < 0` by its sign bit (true for -0.0), through a bitcast to the same-width int.
    fn sign_bit(&mut self, c: &mut Comp, v: i64, int: PrimitiveType) -> Result<i64, HloError> {
        let is = with_prim(c.shape(v), int);
        let bits = self.add3(c, "bitcast-convert", is, vec![v]);
        let zero = self.k(c, bits, 0.0)?;
        Ok(self.cmp(c, "LT", bits, zero))
    }
}
