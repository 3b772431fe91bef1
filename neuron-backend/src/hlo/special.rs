//! Special functions without an HLO opcode, built from elementwise HLO: `lgamma` and
//! `digamma` (Lanczos approximation, g = 7, n = 9, with the reflection formula below 1/2)
//! and `erf_inv` (Giles' single-precision polynomial, "Approximating the erfinv
//! function", GPU Computing Gems, 2011).
//!
//! Owns: [`Emitter::gamma_fn`], [`Emitter::erf_inv`].
//! Invariants: 16-bit float inputs are computed in f32 and converted back; the formulas
//! are the published ones (the Lanczos coefficients are the standard g = 7 set).

use super::emit::{Comp, Emitter};
use super::proto::PrimitiveType;
use super::shape::{prim_of, with_prim};
use super::HloError;
use neuronc_ir::OpKind;

/// Lanczos coefficients for g = 7, n = 9.
const LANCZOS: [f64; 9] = [
    0.999_999_999_999_809_9,
    676.520_368_121_885_1,
    -1_259.139_216_722_402_8,
    771.323_428_777_653_1,
    -176.615_029_162_140_6,
    12.507_343_278_686_905,
    -0.138_571_095_265_720_12,
    9.984_369_578_019_572e-6,
    1.505_632_735_149_311_6e-7,
];
const LANCZOS_G: f64 = 7.0;

impl Emitter<'_> {
    /// Converts 16-bit floats to f32; returns the value to compute on and the original type.
    fn widen(&mut self, c: &mut Comp, x: i64) -> (i64, Option<PrimitiveType>) {
        let s = c.shape(x).clone();
        match prim_of(&s) {
            Some(p @ (PrimitiveType::F16 | PrimitiveType::Bf16)) => {
                let w = self.add3(c, "convert", with_prim(&s, PrimitiveType::F32), vec![x]);
                (w, Some(p))
            }
            _ => (x, None),
        }
    }

    fn narrow(&mut self, c: &mut Comp, x: i64, to: Option<PrimitiveType>) -> i64 {
        match to {
            Some(p) => {
                let s = with_prim(c.shape(x), p);
                self.add3(c, "convert", s, vec![x])
            }
            None => x,
        }
    }

    fn select3(&mut self, c: &mut Comp, p: i64, a: i64, b: i64) -> i64 {
        let s = c.shape(a).clone();
        self.add3(c, "select", s, vec![p, a, b])
    }

    /// `lgamma(x)` or `digamma(x)`.
    pub fn gamma_fn(&mut self, c: &mut Comp, kind: OpKind, x0: i64) -> Result<i64, HloError> {
        let (x, orig) = self.widen(c, x0);
        let half = self.k(c, x, 0.5)?;
        let one = self.k(c, x, 1.0)?;
        let reflect = self.cmp(c, "LT", x, half);
        let one_minus = self.bin(c, "subtract", one, x);
        let y = self.select3(c, reflect, one_minus, x);
        // z = y - 1; a = p0 + sum p_i / (z + i); a' = -sum p_i / (z + i)^2
        let z = self.bin(c, "subtract", y, one);
        let mut a = self.k(c, x, LANCZOS[0])?;
        let mut da = self.k(c, x, 0.0)?;
        for (i, &p) in LANCZOS.iter().enumerate().skip(1) {
            let ki = self.k(c, x, i as f64)?;
            let zi = self.bin(c, "add", z, ki);
            let pk = self.k(c, x, p)?;
            let q = self.bin(c, "divide", pk, zi);
            a = self.bin(c, "add", a, q);
            let q2 = self.bin(c, "divide", q, zi);
            da = self.bin(c, "subtract", da, q2);
        }
        let gh = self.k(c, x, LANCZOS_G + 0.5)?;
        let t = self.bin(c, "add", z, gh);
        let log_t = self.un(c, "log", t);
        let pi = self.k(c, x, std::f64::consts::PI)?;
        let pix = self.bin(c, "multiply", pi, x);
        let r = if kind == OpKind::ChloLgamma {
            // 0.5 ln(2 pi) + (z + 0.5) ln t - t + ln a
            let c0 = self.k(c, x, 0.5 * (2.0 * std::f64::consts::PI).ln())?;
            let zh = self.bin(c, "add", z, half);
            let m = self.bin(c, "multiply", zh, log_t);
            let s = self.bin(c, "subtract", m, t);
            let la = self.un(c, "log", a);
            let s = self.bin(c, "add", s, la);
            let lg = self.bin(c, "add", s, c0);
            // reflection: ln(pi) - ln|sin(pi x)| - lgamma(1 - x)
            let sn = self.un(c, "sine", pix);
            let asn = self.un(c, "abs", sn);
            let lsn = self.un(c, "log", asn);
            let lpi = self.k(c, x, std::f64::consts::PI.ln())?;
            let r1 = self.bin(c, "subtract", lpi, lsn);
            let refl = self.bin(c, "subtract", r1, lg);
            self.select3(c, reflect, refl, lg)
        } else {
            // ln t - g / t + a' / a
            let g = self.k(c, x, LANCZOS_G)?;
            let gt = self.bin(c, "divide", g, t);
            let q = self.bin(c, "divide", da, a);
            let d = self.bin(c, "subtract", log_t, gt);
            let dg = self.bin(c, "add", d, q);
            // reflection: digamma(1 - x) - pi / tan(pi x)
            let tn = self.un(c, "tan", pix);
            let pt = self.bin(c, "divide", pi, tn);
            let refl = self.bin(c, "subtract", dg, pt);
            self.select3(c, reflect, refl, dg)
        };
        Ok(self.narrow(c, r, orig))
    }

    fn horner(&mut self, c: &mut Comp, w: i64, coeffs: &[f64]) -> Result<i64, HloError> {
        let mut p = self.k(c, w, coeffs[0])?;
        for &k in &coeffs[1..] {
            let pw = self.bin(c, "multiply", p, w);
            let kk = self.k(c, w, k)?;
            p = self.bin(c, "add", kk, pw);
        }
        Ok(p)
    }

    /// `erf_inv(x)` (Giles), `±inf` at `x = ±1`.
    pub fn erf_inv(&mut self, c: &mut Comp, x0: i64) -> Result<i64, HloError> {
        let (x, orig) = self.widen(c, x0);
        let one = self.k(c, x, 1.0)?;
        let a = self.bin(c, "subtract", one, x);
        let b = self.bin(c, "add", one, x);
        let ab = self.bin(c, "multiply", a, b);
        let l = self.un(c, "log", ab);
        let w = self.un(c, "negate", l);
        let five = self.k(c, x, 5.0)?;
        let small = self.cmp(c, "LT", w, five);
        let k25 = self.k(c, x, 2.5)?;
        let w1 = self.bin(c, "subtract", w, k25);
        let p1 = self.horner(
            c,
            w1,
            &[
                2.810_226_36e-08,
                3.432_739_39e-07,
                -3.523_387_7e-06,
                -4.391_506_54e-06,
                0.000_218_580_87,
                -0.001_253_725_03,
                -0.004_177_681_64,
                0.246_640_727,
                1.501_409_41,
            ],
        )?;
        let sw = self.un(c, "sqrt", w);
        let k3 = self.k(c, x, 3.0)?;
        let w2 = self.bin(c, "subtract", sw, k3);
        let p2 = self.horner(
            c,
            w2,
            &[
                -0.000_200_214_257,
                0.000_100_950_558,
                0.001_349_343_22,
                -0.003_673_428_44,
                0.005_739_507_73,
                -0.007_622_461_3,
                0.009_438_870_47,
                1.001_674_06,
                2.832_976_82,
            ],
        )?;
        let p = self.select3(c, small, p1, p2);
        let px = self.bin(c, "multiply", p, x);
        let ax = self.un(c, "abs", x);
        let at_one = self.cmp(c, "EQ", ax, one);
        let inf = self.k(c, x, f64::INFINITY)?;
        let sinf = self.bin(c, "multiply", x, inf);
        let r = self.select3(c, at_one, sinf, px);
        Ok(self.narrow(c, r, orig))
    }
}
