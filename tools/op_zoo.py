#!/usr/bin/env python3
"""Emit StableHLO test programs from jax that exercise as many ops as jax produces.

Writes, for every program NAME below:
  fixtures/jax/NAME.mlir   jax.jit(f, keep_unused=True).lower(*args).as_text()
  fixtures/jax/NAME.npz    arg_000.. (inputs, argument order) and out_000..
                           (jax-computed outputs, result order = flattened pytree)
and a few NAME_loc.mlir (+ copy of the npz) printed with debug locations
(loc(...) and #loc aliases; absolute paths rewritten relative to the repo).
fixtures/jax/op_zoo.mlir concatenates all programs (without locations),
separated by `// -----` lines; as a whole it is also a valid MLIR file
(an implicit top-level module holding one module per program).

Every program is re-run from its printed text through tools/xla_run.py's
compile_and_run (XLA:CPU) and compared with jax's outputs; the script fails
if any comparison is off. Deterministic (fixed seeds).

Usage: python tools/op_zoo.py [--out fixtures/jax] [--only NAME,...] [--list]
Requirements: tools/requirements-oracle.txt
"""
import argparse
import os
import re
import sys
from functools import partial

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
import ml_dtypes  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from xla_run import compile_and_run  # noqa: E402

PROGRAMS = []  # (name, fn, args_fn, x64, loc, (rtol, atol))


def program(name, x64=False, loc=False, tol=(1e-5, 1e-6), platform=None, run=True):
    """platform: lower for another jax platform (e.g. 'tpu' gives stablehlo.cholesky
    instead of LAPACK custom calls); the text is still run on XLA:CPU.
    run=False: parse-only program (dynamic shapes or nondeterministic ops): no npz,
    lowered with jax.export (args may be jax.ShapeDtypeStruct with symbolic dims)."""
    def deco(fn):
        PROGRAMS.append((name, fn, x64, loc, tol, platform, run))
        return fn
    return deco


def R(seed=0):
    return np.random.default_rng(seed)


def U(shape, lo=-1.0, hi=1.0, dtype=np.float32, seed=0):
    return R(seed).uniform(lo, hi, size=shape).astype(dtype)


def I(shape, lo, hi, dtype=np.int32, seed=0):
    return R(seed).integers(lo, hi, size=shape).astype(dtype)


# ---------------------------------------------------------------- elementwise
@program("unary_math", loc=True, tol=(2e-5, 2e-6))
def _():
    def f(x, p):
        return dict(
            abs=jnp.abs(x), neg=-x, exp=jnp.exp(x), expm1=jnp.expm1(x),
            sin=jnp.sin(x), cos=jnp.cos(x), tan=jnp.tan(x), tanh=jnp.tanh(x),
            logistic=jax.nn.sigmoid(x), floor=jnp.floor(3 * x), ceil=jnp.ceil(3 * x),
            round_afz=lax.round(3 * x, lax.RoundingMethod.AWAY_FROM_ZERO),
            round_even=lax.round(3 * x, lax.RoundingMethod.TO_NEAREST_EVEN),
            sign=jnp.sign(x), cbrt=jnp.cbrt(x), erf=lax.erf(x), erfc=lax.erfc(x),
            erf_inv=lax.erf_inv(0.9 * x), atan=jnp.arctan(x), asin=jnp.arcsin(x),
            acos=jnp.arccos(x), sinh=jnp.sinh(x), cosh=jnp.cosh(x),
            asinh=jnp.arcsinh(x), atanh=jnp.arctanh(0.9 * x),
            log=jnp.log(p), log1p=jnp.log1p(x), sqrt=jnp.sqrt(p), rsqrt=lax.rsqrt(p),
            acosh=jnp.arccosh(1 + p), lgamma=lax.lgamma(p), digamma=lax.digamma(p),
            square=jnp.square(x), ipow=lax.integer_pow(x, 3), exp2=jnp.exp2(x),
            is_finite=jnp.isfinite(x / (x - x[0])),
            bessel_i0e=lax.bessel_i0e(x), bessel_i1e=lax.bessel_i1e(x),
            igamma=lax.igamma(p, 2 * p), igammac=lax.igammac(p, 2 * p),
            polygamma=lax.polygamma(jnp.ones_like(p), p + 1),
            zeta=lax.zeta(p + 2, p + 1),
            reduce_precision=lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2),
        )
    return f, [U((4, 8)), U((4, 8), 0.1, 3.0, seed=1)]


@program("binary_math")
def _():
    def f(x, y, p):
        return dict(
            add=x + y, sub=x - y, mul=x * y, div=x / y, rem=lax.rem(x, y),
            fmod=jnp.fmod(x, y), mod=jnp.mod(x, y),
            pow=lax.pow(p, y), max=jnp.maximum(x, y), min=jnp.minimum(x, y),
            atan2=jnp.arctan2(x, y), nextafter=lax.nextafter(x, y),
            clamp=lax.clamp(-0.5, x, 0.5), clamp_t=lax.clamp(y - 1, x, y + 1),
            eq=x == y, ne=x != y, lt=x < y, le=x <= y, gt=x > y, ge=x >= y,
            select=lax.select(x > y, x, y), where=jnp.where(x > 0, x, 0.0),
            copysign=jnp.copysign(x, y), hypot=jnp.hypot(x, y),
            logaddexp=jnp.logaddexp(x, y),
        )
    return f, [U((3, 5)), U((3, 5), 0.2, 2.0, seed=2), U((3, 5), 0.1, 3.0, seed=3)]


@program("int_bit_ops")
def _():
    def f(a, b, s, u):
        return dict(
            add=a + b, sub=a - b, mul=a * b, div=lax.div(a, b), rem=lax.rem(a, b),
            floordiv=a // b, max=jnp.maximum(a, b), min=jnp.minimum(a, b),
            and_=a & b, or_=a | b, xor=a ^ b, not_=~a, neg=-a, abs=jnp.abs(a),
            sign=jnp.sign(a), shl=lax.shift_left(a, s), shr_a=lax.shift_right_arithmetic(a, s),
            shr_l=lax.shift_right_logical(a, s), popcnt=lax.population_count(a),
            clz=lax.clz(a), u_shr=lax.shift_right_logical(u, jnp.uint8(3)),
            u_popcnt=lax.population_count(u), u_clz=lax.clz(u), u_add=u + u,
            u_div=u // jnp.uint8(7), ipow=lax.integer_pow(a, 2), pow=jnp.power(a, jnp.abs(b) % 4),
            lt=a < b, ult=u < jnp.uint8(100), bool_and=(a > 0) & (b > 0),
            bool_or=(a > 0) | (b > 0), bool_xor=(a > 0) ^ (b > 0), bool_not=~(a > 0),
            clamp=lax.clamp(-3, a, 3),
        )
    b = I((4, 6), 1, 9, seed=5) * np.where(I((4, 6), 0, 2, seed=6) > 0, 1, -1).astype(np.int32)
    return f, [I((4, 6), -100, 100, seed=4), b, I((4, 6), 0, 31, seed=7),
               I((4, 6), 0, 256, np.uint8, seed=8)]


@program("convert_bitcast")
def _():
    def f(x, i):
        return dict(
            to_bf16=x.astype(jnp.bfloat16), to_f16=x.astype(jnp.float16),
            to_i32=(10 * x).astype(jnp.int32), to_u8=(jnp.abs(x) * 100).astype(jnp.uint8),
            to_i8=(x * 100).astype(jnp.int8), to_bool=x > 0, bool_to_f=(x > 0).astype(jnp.float32),
            i_to_f=i.astype(jnp.float32), i_to_bf16=i.astype(jnp.bfloat16),
            bf16_to_f16=x.astype(jnp.bfloat16).astype(jnp.float16),
            bitcast_i32=lax.bitcast_convert_type(x, jnp.int32),
            bitcast_u8=lax.bitcast_convert_type(x, jnp.uint8),
            bitcast_from_u16=lax.bitcast_convert_type(
                lax.bitcast_convert_type(x, jnp.uint16), jnp.float32),
            bitcast_bf16=lax.bitcast_convert_type(i.astype(jnp.int16), jnp.bfloat16),
            to_f8=x.astype(jnp.float8_e4m3fn).astype(jnp.float32),
            rp=lax.reduce_precision(x, 8, 7),
        )
    return f, [U((2, 5), -3, 3), I((2, 5), -1000, 1000, seed=9)]


@program("low_precision", tol=(1e-2, 1e-2))
def _():
    def f(a, b, h):
        c = jnp.dot(a, b, preferred_element_type=jnp.float32)
        s = jax.nn.softmax(jnp.dot(a, b), axis=-1)
        g = jax.nn.gelu(h) * h + jnp.tanh(h)
        return c, s, g, jnp.sum(h, axis=0), jax.nn.relu(a).max(axis=1)
    return f, [U((4, 8)).astype(ml_dtypes.bfloat16), U((8, 3), seed=1).astype(ml_dtypes.bfloat16),
               U((5, 6), seed=2).astype(np.float16)]


@program("x64_types", x64=True, tol=(1e-12, 1e-12))
def _():
    def f(x, i, u):
        return dict(
            f64=jnp.exp(x) * x + jnp.sin(x), f64_sum=jnp.sum(x, axis=1),
            i64=i * 3 + (i >> 2), i64_cmp=i > 5, u64=u * u + 7,
            cvt=i.astype(jnp.float64) + x, cvt_i=(x * 10).astype(jnp.int64),
            argmax=jnp.argmax(x, axis=1), iota=jnp.arange(5) + i[0],
            matmul=x @ x.T,
        )
    return f, [U((5, 5), dtype=np.float64), I((5, 5), -50, 50, np.int64, seed=1),
               I((5,), 0, 1000, np.uint64, seed=2)]


@program("complex_ops", tol=(1e-5, 1e-5))
def _():
    def f(re, im, z):
        c = lax.complex(re, im)
        return dict(c=c, real=jnp.real(c * z), imag=jnp.imag(c * z), abs=jnp.abs(c),
                    conj=jnp.conj(c), exp=jnp.exp(c), add=c + z, div=c / z,
                    angle=jnp.angle(c), sqrt=jnp.sqrt(z), log=jnp.log(z))
    z = (U((3, 4), seed=3) + 1j * U((3, 4), seed=4)).astype(np.complex64)
    return f, [U((3, 4)), U((3, 4), seed=1), z]


@program("fft", tol=(1e-4, 1e-4))
def _():
    def f(x, z):
        return dict(fft=jnp.fft.fft(z), ifft=jnp.fft.ifft(z), rfft=jnp.fft.rfft(x),
                    irfft=jnp.fft.irfft(jnp.fft.rfft(x), n=x.shape[-1]),
                    fft2=jnp.fft.fft2(z))
    z = (U((4, 8), seed=3) + 1j * U((4, 8), seed=4)).astype(np.complex64)
    return f, [U((4, 8)), z]


# ------------------------------------------------------------------- linalg
@program("linalg_cpu", tol=(1e-4, 1e-4))
def _():
    def f(a, b):
        spd = a @ a.T + 4 * jnp.eye(4, dtype=a.dtype)
        l = jnp.linalg.cholesky(spd)
        x = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
        xu = lax.linalg.triangular_solve(l.T, b, left_side=True, lower=False,
                                         transpose_a=True)
        return l, x, xu
    return f, [U((4, 4)), U((4, 3), seed=1)]


@program("triangular_solve")
def _():
    def f(l, b, b2):
        return (lax.linalg.triangular_solve(l, b, left_side=True, lower=True),
                lax.linalg.triangular_solve(l, b2, left_side=False, lower=True,
                                            transpose_a=True, unit_diagonal=True))
    l = np.tril(U((4, 4))) + 3 * np.eye(4, dtype=np.float32)
    return f, [l, U((4, 3), seed=1), U((2, 4), seed=2)]


@program("linalg_hlo", platform="tpu", tol=(1e-4, 1e-5))
def _():
    def f(a, b, b2):
        spd = a @ a.T + 4 * jnp.eye(4, dtype=a.dtype)
        l = jnp.linalg.cholesky(spd)
        u = lax.linalg.cholesky(spd, symmetrize_input=False)
        x = lax.linalg.triangular_solve(l, b, left_side=True, lower=True)
        y = lax.linalg.triangular_solve(l, b2, left_side=False, lower=True,
                                        transpose_a=True, unit_diagonal=True)
        return l, u, x, y
    return f, [U((4, 4)), U((4, 3), seed=1), U((2, 4), seed=2)]


@program("parse_only_dynamic", run=False)
def _():
    def f(x, y):
        z = jnp.concatenate([x, y], axis=0)
        return jnp.sum(z * 2, axis=1), z.reshape(-1), jnp.arange(x.shape[0]), x[1:] @ y.T[:, :1]
    b = jax.export.symbolic_shape("b")[0]
    return f, [jax.ShapeDtypeStruct((b, 4), jnp.float32), jax.ShapeDtypeStruct((3, 4), jnp.float32)]


@program("parse_only_rng_uniform", run=False, platform="tpu")
def _():
    def f(x):
        return x + lax.rng_uniform(0.0, 1.0, x.shape), lax.rng_uniform(0, 10, (3,))
    return f, [jax.ShapeDtypeStruct((2, 3), jnp.float32)]


# ------------------------------------------------------------ sort / top_k
@program("sort_topk")
def _():
    def f(x, k, v):
        s1 = jnp.sort(x, axis=-1)
        s2 = lax.sort((k, v), num_keys=1)
        s3 = lax.sort((k, x[:, 0], v), dimension=0, num_keys=2, is_stable=True)
        tv, ti = lax.top_k(x, 3)
        return dict(sort=s1, sort_desc=-jnp.sort(-x, axis=0), kv=s2, k2=s3,
                    argsort=jnp.argsort(x, axis=-1), topk_v=tv, topk_i=ti,
                    argmax=jnp.argmax(x, axis=-1), argmin=jnp.argmin(x, axis=0))
    return f, [U((6, 7)), I((6,), 0, 3, seed=1), U((6,), seed=2)]


# --------------------------------------------------------------- reductions
@program("reductions", tol=(1e-5, 1e-5))
def _():
    def f(x, i):
        return dict(
            sum=jnp.sum(x, axis=1), max=jnp.max(x, axis=0), min=jnp.min(x),
            prod=jnp.prod(x, axis=(0, 2)), mean=jnp.mean(x, axis=-1), var=jnp.var(x, axis=1),
            all=jnp.all(x > -0.9, axis=1), any=jnp.any(x > 0.9, axis=2),
            isum=jnp.sum(i, axis=0), imax=jnp.max(i, axis=1),
            cumsum=jnp.cumsum(x, axis=1), cumprod=jnp.cumprod(x, axis=2),
            cummax=lax.cummax(x, axis=0), cumlse=lax.cumlogsumexp(x, axis=2),
            logsumexp=jax.nn.logsumexp(x, axis=1),
            argmax_multi=lax.reduce((x, lax.broadcasted_iota(jnp.int32, x.shape, 1)),
                                    (-jnp.inf, 0), lambda a, b: (
                                        jnp.maximum(a[0], b[0]),
                                        jnp.where(a[0] >= b[0], a[1], b[1])), (1,)),
        )
    return f, [U((3, 4, 5)), I((3, 4), -9, 9, seed=1)]


@program("reduce_window_pool")
def _():
    def f(x):
        mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
        av = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1),
                               ((0, 0), (1, 1), (0, 1), (0, 0)),
                               window_dilation=(1, 2, 1, 1), base_dilation=(1, 1, 2, 1))
        return mx, av
    return f, [U((2, 7, 6, 3))]


@program("select_and_scatter")
def _():
    def pool(x):
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def f(x, g):
        y, vjp = jax.vjp(pool, x)
        return y, vjp(g)[0]
    return f, [U((2, 6, 6, 3)), U((2, 3, 3, 3), seed=1)]


# ------------------------------------------------------------ gather/scatter
@program("gather_scatter")
def _():
    def f(x, idx, idx2, upd, seg):
        return dict(
            take=x[idx], take2=x[idx2[:, 0], idx2[:, 1]],
            take_along=jnp.take_along_axis(x, jnp.argsort(x, axis=1), axis=1),
            add=x.at[idx].add(upd), set=x.at[idx].set(upd), mul=x.at[idx].multiply(upd),
            smin=x.at[idx].min(upd), smax=x.at[idx].max(upd),
            pt_set=x.at[idx2[:, 0], idx2[:, 1]].set(1.0),
            seg_sum=jax.ops.segment_sum(x, seg, num_segments=3),
            embed=jnp.take(x, seg, axis=0, mode="clip"),
        )
    return f, [U((5, 4)), np.array([0, 2, 2, 4], np.int32),
               np.array([[0, 1], [4, 3], [2, 2]], np.int32), U((4, 4), seed=1),
               np.array([0, 0, 1, 2, 2], np.int32)]


@program("slicing")
def _():
    def f(x, i, j, u):
        return dict(
            dslice=lax.dynamic_slice(x, (i, j), (2, 3)),
            dupd=lax.dynamic_update_slice(x, u, (i, j)),
            slice=x[1:5:2, ::3], rev=x[::-1, ::-1], rev1=lax.rev(x, (1,)),
            pad=lax.pad(x, 0.5, ((1, 2, 1), (-1, 0, 2))),
            concat=jnp.concatenate([x, 2 * x], axis=1), transpose=x.T,
            reshape=x.reshape(3, 2, 6), bcast=jnp.broadcast_to(x[:, :1], (6, 6)),
            iota=lax.iota(jnp.int32, 7), iota2=lax.broadcasted_iota(jnp.float32, (3, 4), 1),
            tril=jnp.tril(x[:, :6]), dyn_idx=x[i], expand=x[None, :, None, :2],
            squeeze=x[:1, :1].squeeze(),
        )
    return f, [U((6, 6)), np.int32(3), np.int32(1), U((2, 3), seed=1)]


# ---------------------------------------------------------------- random
@program("rng_threefry")
def _():
    def f(kd):
        key = jax.random.wrap_key_data(kd, impl="threefry2x32")
        k1, k2 = jax.random.split(key)
        return (jax.random.uniform(k1, (4, 3)), jax.random.normal(k2, (5,)),
                jax.random.bernoulli(k1, 0.3, (6,)), jax.random.randint(k2, (3,), 0, 10),
                jax.random.permutation(k1, 6))
    return f, [np.array([0, 42], np.uint32)]


@program("rng_rbg")
def _():
    def f(kd, st):
        key = jax.random.wrap_key_data(kd, impl="rbg")
        k1, k2 = jax.random.split(key)
        st2, bits = lax.rng_bit_generator(st, (4, 5), dtype=jnp.uint32,
                                          algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
        st3, bits64 = lax.rng_bit_generator(st, (3,), dtype=jnp.uint64 if jax.config.jax_enable_x64 else jnp.uint8,
                                            algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        return (jax.random.uniform(k1, (4, 3)), jax.random.normal(k2, (5,)),
                st2, bits, st3, bits64)
    return f, [np.array([0, 42, 0, 42], np.uint32), np.array([1, 2, 3, 4], np.uint32)]


# ------------------------------------------------------------------ conv/dot
@program("conv", tol=(1e-4, 1e-5))
def _():
    def f(x, w, wg, wd):
        dn = ("NHWC", "HWIO", "NHWC")
        y1 = lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 2)), dimension_numbers=dn)
        y2 = lax.conv_general_dilated(x, wg, (1, 1), "SAME", rhs_dilation=(2, 2),
                                      dimension_numbers=dn, feature_group_count=2)
        y3 = lax.conv_general_dilated(x, wd, (1, 1), ((1, 1), (1, 1)), lhs_dilation=(2, 2),
                                      dimension_numbers=dn)
        nchw = lax.conv_general_dilated(jnp.transpose(x, (0, 3, 1, 2)), jnp.transpose(w, (3, 2, 0, 1)),
                                        (1, 1), "VALID")
        # weight gradient of a grouped conv -> batch_group_count
        gw = jax.grad(lambda w_: jnp.sum(lax.conv_general_dilated(
            x, w_, (1, 1), "SAME", dimension_numbers=dn, feature_group_count=2) ** 2))(wg)
        conv1d = lax.conv_general_dilated(x[:, 0], w[0], (1,), "SAME",
                                          dimension_numbers=("NWC", "WIO", "NWC"))
        return y1, y2, y3, nchw, gw, conv1d
    return f, [U((2, 8, 8, 4)), U((3, 3, 4, 6), seed=1), U((3, 3, 2, 6), seed=2),
               U((2, 2, 4, 5), seed=3)]


@program("dot_general", tol=(1e-5, 1e-5))
def _():
    def f(a, b, c, v):
        return dict(
            matmul=a @ b, batched=jnp.einsum("bij,bjk->bik", c, c),
            contract2=jnp.einsum("bij,bij->j", c, c), vecmat=v @ b, outer=jnp.outer(v, v),
            hp=jnp.dot(a, b, precision=lax.Precision.HIGHEST),
            dg=lax.dot_general(c, c, (((2,), (1,)), ((0,), (0,)))),
            tdot=jnp.tensordot(c, a, axes=([1], [1])),
        )
    return f, [U((3, 4)), U((4, 5), seed=1), U((2, 4, 4), seed=2), U((4,), seed=3)]


# -------------------------------------------------------------- control flow
@program("control_flow", loc=True)
def _():
    def f(x, n, i, p):
        w = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.1 + 0.1), (0, x))
        fl = lax.fori_loop(0, 5, lambda k, a: a + k * x, jnp.zeros_like(x))
        c = lax.cond(p, lambda a: jnp.sin(a), lambda a: jnp.cos(a) * 2, x)
        s = lax.switch(i, [lambda a: a + 1, lambda a: a * 3, lambda a: -a], x)
        sc_c, sc_y = lax.scan(lambda carry, xi: (carry + xi, carry * xi), jnp.zeros(x.shape[1:]), x)
        m = lax.map(lambda r: jnp.sum(r ** 2), x)
        return w, fl, c, s, sc_c, sc_y, m
    return f, [U((4, 3)), np.int32(4), np.int32(1), np.bool_(True)]


@program("calls_barrier_composite")
def _():
    @jax.jit
    def inner(a):
        return jnp.tanh(a) * 2

    @jax.custom_vjp
    def clip_grad(a):
        return a

    clip_grad.defvjp(lambda a: (a, None), lambda _, g: (jnp.clip(g, -0.1, 0.1),))

    def f(x, y):
        a = inner(x) + inner(y)
        b, c = lax.optimization_barrier((a, x))
        comp = lax.composite(lambda t, s: t * s + 1.0, name="zoo.fma1")(b, c)
        ck = jax.checkpoint(lambda t: jnp.sin(jnp.sin(t)))
        g = jax.grad(lambda t: jnp.sum(ck(clip_grad(t) * 3)))(x)
        return comp, g
    return f, [U((3, 4)), U((3, 4), seed=1)]


@program("collectives_1dev")
def _():
    from jax.sharding import Mesh, PartitionSpec as P
    mesh = Mesh(np.array(jax.devices()[:1]), ("i",))

    def body(x):
        a = lax.psum(x, "i")
        b = lax.all_gather(x, "i")
        c = lax.ppermute(x, "i", [(0, 0)])
        d = lax.pmax(x, "i")
        e = lax.psum_scatter(x, "i", tiled=True)          # reduce_scatter
        i = lax.axis_index("i") + jnp.zeros(x.shape, jnp.int32)  # partition_id
        return a, b[0], c, d, e, i

    def f(x):
        return jax.shard_map(body, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    return f, [U((4, 3))]


@program("mlp_grad_step", tol=(1e-5, 1e-6))
def _():
    def loss(params, x, y):
        w1, b1, w2, b2 = params
        h = jax.nn.relu(x @ w1 + b1)
        logits = h @ w2 + b2
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 3), axis=-1))

    def f(w1, b1, w2, b2, x, y):
        l, g = jax.value_and_grad(loss)((w1, b1, w2, b2), x, y)
        new = [p - 0.1 * gp for p, gp in zip((w1, b1, w2, b2), g)]
        return l, *new
    return f, [U((5, 8)), U((8,), seed=1), U((8, 3), seed=2), U((3,), seed=3),
               U((6, 5), seed=4), I((6,), 0, 3, seed=5)]


# ------------------------------------------------------------------- driver
def count_ops(text):
    from mlir_check import make_context, parse_module
    ctx = make_context()
    m = parse_module(text, ctx)
    with ctx:
        g = m.operation.get_asm(print_generic_op_form=True)
    ops = re.findall(r'^\s*(?:%[^=]+=\s*)?"([a-z_]+\.[a-z_0-9]+)"', g, re.M)
    c = {}
    for o in ops:
        c[o] = c.get(o, 0) + 1
    return c


def compare(name, outs, ref, tol):
    rtol, atol = tol
    worst = (0.0, 0.0)
    for i, (o, r) in enumerate(zip(outs, ref)):
        assert o.shape == r.shape and o.dtype == r.dtype, (name, i, o.shape, r.shape, o.dtype, r.dtype)
        if o.dtype.kind in "biu":
            assert np.array_equal(o, r), (name, i)
            continue
        ct = np.complex128 if o.dtype.kind == "c" else np.float64
        a, b = o.astype(ct), r.astype(ct)
        fin = np.isfinite(a) & np.isfinite(b)
        assert np.array_equal(np.isnan(a), np.isnan(b)), (name, i, "nan")
        if fin.any():
            d = np.abs(a - b)[fin]
            worst = (max(worst[0], float(d.max())),
                     max(worst[1], float((d / np.maximum(np.abs(b[fin]), 1e-30)).max())))
        if not np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{name}: out_{i:03d} mismatch (max abs {worst[0]})")
    return worst


def strip_locs(text):
    """Reprint without locations so modules can be concatenated (no #loc alias clashes)."""
    from mlir_check import make_context, parse_module
    ctx = make_context()
    m = parse_module(text, ctx)
    with ctx:
        return m.operation.get_asm(enable_debug_info=False)


def relativize(text):
    return text.replace(REPO + "/", "").replace(REPO, ".")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "fixtures", "jax"))
    ap.add_argument("--only", default="")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    os.makedirs(a.out, exist_ok=True)
    zoo, all_ops, summary = [], {}, []
    for name, mk, x64, loc, tol, platform, run in PROGRAMS:
        if a.list:
            print(name)
            continue
        if only and name not in only:
            continue
        jax.config.update("jax_enable_x64", x64)
        f, args = mk()
        jf = jax.jit(f, keep_unused=True)
        if not run:
            exp = jax.export.export(jf, platforms=[platform or "cpu"])(*args)
            text = relativize(exp.mlir_module())
            with open(os.path.join(a.out, name + ".mlir"), "w") as fh:
                fh.write(text)
            ops = count_ops(text)  # parses + verifies
            for k, v in ops.items():
                all_ops[k] = all_ops.get(k, 0) + v
            zoo.append(f"// ----- {name}\n" + re.sub(r"^module @\S+", f"module @{name}", strip_locs(text), count=1, flags=re.M))
            print(f"{name}: {sum(ops.values())} ops (parse-only, no npz)")
            continue
        if platform:
            lowered = jf.trace(*args).lower(lowering_platforms=(platform,))
        else:
            lowered = jf.lower(*args)
        text = lowered.as_text()
        outs = [np.asarray(o) for o in jax.tree.leaves(jf(*args))]
        xla = compile_and_run(text, [np.asarray(x) for x in args])
        assert len(xla) == len(outs), (name, len(xla), len(outs))
        worst = compare(name, xla, outs, tol)
        arrays = {f"arg_{i:03d}": np.asarray(x) for i, x in enumerate(args)}
        arrays.update({f"out_{i:03d}": o for i, o in enumerate(outs)})
        with open(os.path.join(a.out, name + ".mlir"), "w") as fh:
            fh.write(text)
        np.savez_compressed(os.path.join(a.out, name + ".npz"), **arrays)
        if loc:
            with open(os.path.join(a.out, name + "_loc.mlir"), "w") as fh:
                fh.write(relativize(lowered.as_text(debug_info=True)))
            np.savez_compressed(os.path.join(a.out, name + "_loc.npz"), **arrays)
        ops = count_ops(text)
        for k, v in ops.items():
            all_ops[k] = all_ops.get(k, 0) + v
        zoo.append(f"// ----- {name}\n" + re.sub(r"^module @\S+", f"module @{name}", strip_locs(text), count=1, flags=re.M))
        summary.append((name, sum(ops.values()), len(args), len(outs), worst))
        print(f"{name}: {sum(ops.values())} ops, {len(args)} args, {len(outs)} outs, "
              f"xla-vs-jax max abs {worst[0]:.2e} rel {worst[1]:.2e}")
    jax.config.update("jax_enable_x64", False)
    if a.list:
        return
    if not only:
        with open(os.path.join(a.out, "op_zoo.mlir"), "w") as fh:
            fh.write("// Generated by tools/op_zoo.py: all programs of fixtures/jax/*.mlir.\n")
            fh.write("\n".join(zoo))
    print(f"distinct ops: {len(all_ops)}")
    for k in sorted(all_ops):
        print(f"  {k}: {all_ops[k]}")


if __name__ == "__main__":
    main()
