#!/usr/bin/env python3
"""Generates per-op edge-case fixtures for the reference interpreter.

Each case is a small jax program over explicit inputs; XLA:CPU (through jax) computes
the expected outputs. For every case NAME this writes interp/tests/edge/NAME.mlir (the
StableHLO jax lowers to) and NAME.npz (arg_000.. inputs, out_000.. XLA's outputs).
Names ending in `_approx` hold transcendental functions (XLA:CPU uses polynomial
approximations) or reassociated f32 sums (convolutions, batched dots); tests/edge_cases.rs
compares those with rtol 1e-5 and atol 1e-6 x max|ref| instead of rtol 1e-6.
Inputs avoid f32 subnormals: XLA:CPU flushes them to zero, the spec (and this
interpreter) keeps IEEE semantics.

Usage: /work/venv/bin/python interp/tests/gen_edge_cases.py
"""
import os

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

jax.config.update("jax_enable_x64", True)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "edge")
NAN, INF = np.nan, np.inf

I32 = np.array([0, 1, -1, 7, -7, 2**31 - 1, -2**31, 3, -2, 30], np.int32)
J32 = np.array([0, -1, 2, 0, 3, 2, -1, -3, 31, 33], np.int32)
U8 = np.array([0, 1, 255, 128, 7, 200, 3, 9], np.uint8)
V8 = np.array([0, 0, 2, 255, 9, 8, 7, 1], np.uint8)
F = np.array([0.0, -0.0, 1.0, -1.5, 2.5, -2.5, 0.5, 3.5, NAN, INF, -INF, 1e-30, 3e38, -7.25], np.float32)
G = np.array([-0.0, 0.0, NAN, 2.0, -2.0, 0.0, -INF, 1.5, 1.0, INF, 2.0, 1e-30, -3e38, 0.75], np.float32)
POS = np.array([1e-3, 0.1, 0.5, 1.0, 2.0, 3.5, 10.0, 50.0, 87.0, 1e-30], np.float32)
SYM = np.array([-3.0, -1.0, -0.5, -1e-4, 0.0, 1e-4, 0.3, 0.9, 2.0, 7.5], np.float32)


def cases():
    yield "int32_arith", lambda a, b: (a + b, a - b, a * b, lax.div(a, b), lax.rem(a, b),
                                       lax.max(a, b), lax.min(a, b), -a, lax.abs(a)), (I32, J32)
    yield "int32_bits", lambda a, b: (lax.shift_left(a, b), lax.shift_right_arithmetic(a, b),
                                      lax.shift_right_logical(a, b), lax.population_count(a),
                                      lax.clz(a), a & b, a | b, a ^ b, ~a), (I32, J32)
    yield "int32_pow_sign", lambda a, b: (lax.integer_pow(a, 3), a ** 2,
                                          lax.sign(a)), (I32, J32)
    yield "uint8_ops", lambda a, b: (a + b, a * b, lax.div(a, b), lax.rem(a, b), lax.max(a, b),
                                     a < b, lax.shift_left(a, b), lax.shift_right_logical(a, b),
                                     lax.shift_right_arithmetic(a, b), lax.clz(a)), (U8, V8)
    yield "int8_wrap", lambda a, b: (a + b, a * b, -a, lax.div(a, b)), (
        np.array([127, -128, 100, -1, 5], np.int8), np.array([1, -1, 100, 0, -128], np.int8))
    yield "f32_binary", lambda a, b: (a + b, a - b, a * b, a / b, lax.rem(a, b), lax.max(a, b),
                                      lax.min(a, b), lax.atan2(a, b), lax.pow(a, b),
                                      jnp.nextafter(a, b)), (F, G)
    yield "f32_compare", lambda a, b: (a == b, a != b, a < b, a >= b,
                                       lax.sort((a,), num_keys=1)[0]), (F, G)
    yield "f32_round", lambda a: (lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN),
                                  lax.round(a, lax.RoundingMethod.AWAY_FROM_ZERO), lax.floor(a),
                                  lax.ceil(a), lax.sign(a), lax.is_finite(a), -a, lax.abs(a)), (F,)
    yield "f32_select_clamp", lambda p, a, b: (lax.select(p, a, b), lax.clamp(np.float32(-1.0), a, np.float32(2.0))), (
        np.array([True, False] * 7), F, G)
    yield "convert_from_f32", lambda a: tuple(lax.convert_element_type(a, t) for t in (
        jnp.int32, jnp.uint8, jnp.int8, jnp.uint32, jnp.int64, jnp.uint64, jnp.bool_, jnp.float16,
        jnp.bfloat16, jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.float64, jnp.int16)), (
        np.concatenate([F, np.array([3e9, -3e9, 300.7, 65519.0, 65520.0, 460.0, 470.0, 1e-3, 2.0**-24 * 1.5], np.float32)]),)
    yield "convert_from_int", lambda a, u: tuple(lax.convert_element_type(a, t) for t in (
        jnp.float32, jnp.float16, jnp.bfloat16, jnp.int8, jnp.uint16, jnp.bool_, jnp.float64)) + (
        lax.convert_element_type(u, jnp.float32), lax.convert_element_type(u, jnp.int32)), (
        np.array([0, 1, -1, 2**24 + 1, -2**31, 2**31 - 1, 65505, 300, 16777217 * 3], np.int32),
        np.array([0, 1, 2**32 - 1, 2**31, 2**24 + 1, 7, 8, 9, 10], np.uint32))
    yield "convert_from_f64", lambda a: tuple(lax.convert_element_type(a, t) for t in (
        jnp.float32, jnp.bfloat16, jnp.float16, jnp.int64, jnp.uint64)), (
        np.array([1.0 + 2.0**-24, 1.0 + 2.0**-24 + 2.0**-50, 1e300, -1e-300, NAN, 2.0**63, -2.0**63 - 4096.0, 1.00390625 + 1e-12], np.float64),)
    yield "bf16_f16_arith", lambda a, b, c, d: (a + b, a * b, a / b, lax.max(a, b), c + d, c * d, c / d), (
        np.array([1.0, 3.0, 0.1, 100.0, -2.5, 1e30], ml_dtypes.bfloat16),
        np.array([2.0**-8, 7.0, 0.3, 0.01, 2.5, 1e10], ml_dtypes.bfloat16),
        np.array([1.0, 3.0, 0.1, 60000.0, -2.5, 1e-5], np.float16),
        np.array([2.0**-11, 7.0, 0.3, 2.0, 2.5, 1e-3], np.float16))
    yield "reduce_precision", lambda a: (lax.reduce_precision(a, 5, 10), lax.reduce_precision(a, 8, 7),
                                         lax.reduce_precision(a, 4, 3)), (
        np.array([1e-6, 7e4, 1e5, 1.0001, NAN, 6e-5, -3e-5, 1.00390625, 1.005859375, 250.0, 1e-3, -INF], np.float32),)
    yield "unary_approx", lambda a, s: (jnp.exp(s), jnp.log(a), jnp.tanh(s), jax.nn.sigmoid(s), lax.erf(s),
                                    jnp.expm1(s), jnp.log1p(a), jnp.sin(s), jnp.cos(s), jnp.tan(s),
                                    jnp.cbrt(s), lax.rsqrt(a), jnp.sqrt(a), lax.lgamma(a),
                                    lax.digamma(a), lax.erf_inv(s / 8.0), lax.erfc(s)), (POS, SYM)
    yield "pad_slice", lambda x, i: (lax.pad(x, np.float32(-1), ((-1, 2, 1), (1, -1, 0))),
                                     lax.dynamic_slice(x, (i, i), (2, 2)),
                                     lax.dynamic_update_slice(x, jnp.ones((2, 2), x.dtype), (i, -i)),
                                     lax.rev(x, (0, 1)), x[::2, 1::2]), (
        np.arange(12, dtype=np.float32).reshape(3, 4), np.int32(5))
    yield "gather_scatter", lambda x, idx, u: (x[idx], x.at[idx].add(u), x.at[idx].set(u),
                                               x.at[idx].max(u), jnp.take(x, idx, axis=0, mode="clip")), (
        np.arange(10, dtype=np.float32) * 1.5, np.array([3, 0, 3, 9, 1], np.int32),
        np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32))
    yield "dot_int8", lambda a, b: (lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32),
                                    lax.dot(a, b)), (
        np.array([[127, -128, 3], [1, 2, -3]], np.int8), np.array([[127, 1], [-128, 2], [5, 6]], np.int8))
    yield "dot_batched_approx", lambda a, b: (lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                                       jnp.einsum("bij,bkj->bik", a, a)), (
        np.random.RandomState(0).randn(2, 3, 4).astype(np.float32), np.random.RandomState(1).randn(2, 4, 5).astype(np.float32))
    yield "conv_dilated_grouped_approx", lambda x, w: (lax.conv_general_dilated(
        x, w, window_strides=(2, 1), padding=((1, 2), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
        feature_group_count=2),), (
        np.random.RandomState(2).randn(1, 4, 7, 5).astype(np.float32), np.random.RandomState(3).randn(6, 2, 2, 3).astype(np.float32))
    yield "reduce_window_pool", lambda x: (lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (1, 2), ((1, 0), (1, 1))),
                                           lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), ((0, 1), (0, 0)),
                                                             base_dilation=(2, 1)),
                                           lax.cumsum(x, axis=1), lax.cummax(x, axis=0)), (
        np.random.RandomState(4).randn(4, 5).astype(np.float32),)
    yield "sort_topk", lambda x, k: (lax.sort((x, k), num_keys=1, is_stable=True), lax.top_k(x, 3),
                                     jnp.argsort(x), jnp.argmax(x)), (
        np.array([3.0, NAN, -0.0, 0.0, 1.0, -INF, 1.0, 2.0], np.float32), np.arange(8, dtype=np.int32))
    yield "reductions", lambda x, i: (jnp.sum(x, axis=0), jnp.max(x, axis=1), jnp.min(x), jnp.prod(x, axis=1),
                                      jnp.sum(i, axis=1), jnp.max(i), jnp.any(x > 0, axis=0),
                                      jnp.argmin(x, axis=1)), (
        np.array([[1.0, NAN, 2.0], [-0.0, 0.0, -1.0], [INF, 1.0, 2.0]], np.float32),
        np.array([[2**31 - 1, 1, 0], [-5, 3, 2**30]], np.int32))
    yield "rng_bits", lambda k: (lax.rng_bit_generator(k, (4, 6), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
                                 lax.rng_bit_generator(k, (3, 3), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_THREE_FRY),
                                 lax.rng_bit_generator(k, (2, 5), dtype=jnp.uint64, algorithm=lax.RandomAlgorithm.RNG_PHILOX),
                                 lax.rng_bit_generator(k, (7,), dtype=jnp.uint32, algorithm=lax.RandomAlgorithm.RNG_DEFAULT)), (
        np.array([0x1234567890ABCDEF, 42], np.uint64),)
    yield "complex_ops", lambda a, b: (a * b, a / b, jnp.abs(a), jnp.exp(a), jnp.sqrt(a), jnp.real(a * b),
                                       lax.complex(jnp.real(a), jnp.imag(b))), (
        np.array([1 + 2j, -3.5 + 0j, 0 - 1j, 2 + 2j], np.complex64), np.array([2 - 1j, 1 + 1j, 3 + 0j, -1 - 4j], np.complex64))


def flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, fn, args in cases():
        args = tuple(np.asarray(a) for a in args)

        def wrapped(*xs):
            out = []
            for o in flat(fn(*xs)):
                out.extend(flat(o))
            return tuple(out)

        jitted = jax.jit(wrapped)
        text = jitted.lower(*args).as_text()
        outs = [np.asarray(o) for o in jitted(*args)]
        with open(os.path.join(OUT, name + ".mlir"), "w") as f:
            f.write(text)
        arrays = {f"arg_{i:03d}": a for i, a in enumerate(args)}
        arrays.update({f"out_{i:03d}": o for i, o in enumerate(outs)})
        np.savez(os.path.join(OUT, name + ".npz"), **arrays)
        print(f"{name}: {len(args)} inputs, {len(outs)} outputs")


if __name__ == "__main__":
    main()
