#!/usr/bin/env python3
"""Synthetic StableHLO programs whose size grows with one parameter, for bench/scaling.sh.

Each shape stresses one way a pass can be superlinear: `calls` (a call per layer, as jax
prints), `nested_calls` (a chain of functions each calling the next), `chain` (a long
elementwise chain), `fanout` (one value read by N ops, summed by a tree), `fanin_dense`
(every op reads the previous one and one twice as far back), `mlp` (matmul + bias + tanh
+ row reduction layers), `whiles` (N small while loops), `wide_sig` (N arguments and
results, like a training step's parameters), `concat` (one op with N operands),
`reduces` (N dependent row reductions) and `transposes` (transpose/matmul/reshape layers).

Usage: scaling_gen.py SHAPE N  (prints the module)
"""
import sys

def calls(n):
    out=["func.func public @main(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {"]
    prev="%arg0"
    for i in range(n):
        out.append(f"  %{i} = call @f{i}({prev}) : (tensor<8x16xf32>) -> tensor<8x16xf32>"); prev=f"%{i}"
    out.append(f"  return {prev} : tensor<8x16xf32>\n}}")
    for i in range(n):
        out.append(f"func.func private @f{i}(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {{\n  %0 = stablehlo.exponential %arg0 : tensor<8x16xf32>\n  %1 = stablehlo.add %0, %arg0 : tensor<8x16xf32>\n  return %1 : tensor<8x16xf32>\n}}")
    return "\n".join(out)
def chain(n):
    out=["func.func public @main(%arg0: tensor<128x64xf32>, %arg1: tensor<128x64xf32>) -> tensor<128x64xf32> {"]
    prev="%arg0"
    ops=["stablehlo.add","stablehlo.multiply","stablehlo.subtract","stablehlo.maximum"]
    for i in range(n):
        out.append(f"  %{i} = {ops[i%4]} {prev}, %arg1 : tensor<128x64xf32>"); prev=f"%{i}"
    out.append(f"  return {prev} : tensor<128x64xf32>\n}}")
    return "\n".join(out)
def fanout(n):
    out=["func.func public @main(%arg0: tensor<128x64xf32>) -> tensor<128x64xf32> {",
         "  %e = stablehlo.exponential %arg0 : tensor<128x64xf32>"]
    for i in range(n):
        out.append(f"  %c{i} = stablehlo.constant dense<{i}.0> : tensor<128x64xf32>")
        out.append(f"  %m{i} = stablehlo.multiply %e, %c{i} : tensor<128x64xf32>")
    vals=[f"%m{i}" for i in range(n)]; k=0
    while len(vals)>1:
        nv=[]
        for j in range(0,len(vals)-1,2):
            out.append(f"  %s{k} = stablehlo.add {vals[j]}, {vals[j+1]} : tensor<128x64xf32>"); nv.append(f"%s{k}"); k+=1
        if len(vals)%2: nv.append(vals[-1])
        vals=nv
    out.append(f"  return {vals[0]} : tensor<128x64xf32>\n}}")
    return "\n".join(out)
def mlp(n):
    # n layers of matmul + bias + gelu(tanh) + layernorm-ish reduce
    out=["func.func public @main(%arg0: tensor<128x256xf32>, %w: tensor<256x256xf32>, %b: tensor<256xf32>) -> tensor<128x256xf32> {",
         "  %z = stablehlo.constant dense<0.0> : tensor<f32>",
         "  %cn = stablehlo.constant dense<2.560000e+02> : tensor<128xf32>"]
    prev="%arg0"
    for i in range(n):
        out+= [f"  %d{i} = stablehlo.dot_general {prev}, %w, contracting_dims = [1] x [0] : (tensor<128x256xf32>, tensor<256x256xf32>) -> tensor<128x256xf32>",
               f"  %bb{i} = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<256xf32>) -> tensor<128x256xf32>",
               f"  %a{i} = stablehlo.add %d{i}, %bb{i} : tensor<128x256xf32>",
               f"  %t{i} = stablehlo.tanh %a{i} : tensor<128x256xf32>",
               f"  %r{i} = stablehlo.reduce(%t{i} init: %z) applies stablehlo.add across dimensions = [1] : (tensor<128x256xf32>, tensor<f32>) -> tensor<128xf32>",
               f"  %mn{i} = stablehlo.divide %r{i}, %cn : tensor<128xf32>",
               f"  %mb{i} = stablehlo.broadcast_in_dim %mn{i}, dims = [0] : (tensor<128xf32>) -> tensor<128x256xf32>",
               f"  %o{i} = stablehlo.subtract %t{i}, %mb{i} : tensor<128x256xf32>"]
        prev=f"%o{i}"
    out.append(f"  return {prev} : tensor<128x256xf32>\n}}")
    return "\n".join(out)
def whiles(n):
    out=["func.func public @main(%arg0: tensor<16xf32>) -> tensor<16xf32> {",
         "  %one = stablehlo.constant dense<1> : tensor<i32>", "  %lim = stablehlo.constant dense<4> : tensor<i32>", "  %zero = stablehlo.constant dense<0> : tensor<i32>"]
    prev="%arg0"
    for i in range(n):
        out+=[f"  %w{i}:2 = stablehlo.while(%i = %zero, %x = {prev}) : tensor<i32>, tensor<16xf32>",
              "   cond {", "    %c = stablehlo.compare LT, %i, %lim : (tensor<i32>, tensor<i32>) -> tensor<i1>", "    stablehlo.return %c : tensor<i1>",
              "  } do {", "    %n = stablehlo.add %i, %one : tensor<i32>", "    %y = stablehlo.sine %x : tensor<16xf32>", "    stablehlo.return %n, %y : tensor<i32>, tensor<16xf32>", "  }"]
        prev=f"%w{i}#1"
    out.append(f"  return {prev} : tensor<16xf32>\n}}")
    return "\n".join(out)
def nested_calls(n):
    # call chain depth n: f0 calls f1 calls f2 ... each called twice
    out=["func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {","  %0 = call @f0(%arg0) : (tensor<4xf32>) -> tensor<4xf32>","  return %0 : tensor<4xf32>\n}"]
    for i in range(n):
        body = f"  %0 = stablehlo.sine %arg0 : tensor<4xf32>\n" + (f"  %1 = call @f{i+1}(%0) : (tensor<4xf32>) -> tensor<4xf32>\n  return %1 : tensor<4xf32>" if i+1<n else "  return %0 : tensor<4xf32>")
        out.append(f"func.func private @f{i}(%arg0: tensor<4xf32>) -> tensor<4xf32> {{\n{body}\n}}")
    return "\n".join(out)

def wide_sig(n):
    args=", ".join(f"%a{i}: tensor<64x32xf32>" for i in range(n))
    res=", ".join("tensor<64x32xf32>" for _ in range(n))
    out=[f"func.func public @main({args}) -> ({res}) {{", "  %two = stablehlo.constant dense<2.0> : tensor<64x32xf32>"]
    for i in range(n):
        out.append(f"  %m{i} = stablehlo.multiply %a{i}, %two : tensor<64x32xf32>")
        out.append(f"  %s{i} = stablehlo.subtract %a{i}, %m{i} : tensor<64x32xf32>")
    out.append("  return " + ", ".join(f"%s{i}" for i in range(n)) + " : " + res + "\n}")
    return "\n".join(out)
def concat(n):
    out=["func.func public @main(%arg0: tensor<8x4xf32>) -> tensor<8x" + str(4*n) + "xf32> {"]
    for i in range(n):
        out.append(f"  %e{i} = stablehlo.multiply %arg0, %arg0 : tensor<8x4xf32>" if i%2 else f"  %e{i} = stablehlo.exponential %arg0 : tensor<8x4xf32>")
    ops=", ".join(f"%e{i}" for i in range(n)); tys=", ".join("tensor<8x4xf32>" for _ in range(n))
    out.append(f"  %c = stablehlo.concatenate {ops}, dim = 1 : ({tys}) -> tensor<8x{4*n}xf32>")
    out.append(f"  return %c : tensor<8x{4*n}xf32>\n}}")
    return "\n".join(out)
def reduces(n):
    out=["func.func public @main(%arg0: tensor<128x64xf32>) -> tensor<128xf32> {", "  %z = stablehlo.constant dense<0.0> : tensor<f32>"]
    prev=None
    for i in range(n):
        out.append(f"  %x{i} = stablehlo.multiply %arg0, %arg0 : tensor<128x64xf32>" if i==0 else f"  %x{i} = stablehlo.add %arg0, %bb{i-1} : tensor<128x64xf32>")
        out.append(f"  %r{i} = stablehlo.reduce(%x{i} init: %z) applies stablehlo.add across dimensions = [1] : (tensor<128x64xf32>, tensor<f32>) -> tensor<128xf32>")
        out.append(f"  %bb{i} = stablehlo.broadcast_in_dim %r{i}, dims = [0] : (tensor<128xf32>) -> tensor<128x64xf32>")
    out.append(f"  return %r{n-1} : tensor<128xf32>\n}}")
    return "\n".join(out)
def transposes(n):
    out=["func.func public @main(%arg0: tensor<128x256xf32>, %w: tensor<256x256xf32>) -> tensor<128x256xf32> {"]
    prev="%arg0"
    for i in range(n):
        out+=[f"  %t{i} = stablehlo.transpose {prev}, dims = [1, 0] : (tensor<128x256xf32>) -> tensor<256x128xf32>",
              f"  %d{i} = stablehlo.dot_general %w, %t{i}, contracting_dims = [1] x [0] : (tensor<256x256xf32>, tensor<256x128xf32>) -> tensor<256x128xf32>",
              f"  %u{i} = stablehlo.transpose %d{i}, dims = [1, 0] : (tensor<256x128xf32>) -> tensor<128x256xf32>",
              f"  %r{i} = stablehlo.reshape %u{i} : (tensor<128x256xf32>) -> tensor<128x16x16xf32>",
              f"  %q{i} = stablehlo.reshape %r{i} : (tensor<128x16x16xf32>) -> tensor<128x256xf32>",
              f"  %o{i} = stablehlo.add %q{i}, {prev} : tensor<128x256xf32>"]
        prev=f"%o{i}"
    out.append(f"  return {prev} : tensor<128x256xf32>\n}}")
    return "\n".join(out)
def fanin_dense(n):
    # every op reads the previous two and %arg0 (long dependency reach)
    out=["func.func public @main(%arg0: tensor<16x16xf32>) -> tensor<16x16xf32> {", "  %v0 = stablehlo.exponential %arg0 : tensor<16x16xf32>", "  %v1 = stablehlo.sine %arg0 : tensor<16x16xf32>"]
    for i in range(2,n):
        j = i//2
        out.append(f"  %v{i} = stablehlo.{'add' if i%3 else 'maximum'} %v{i-1}, %v{j} : tensor<16x16xf32>")
    out.append(f"  return %v{n-1} : tensor<16x16xf32>\n}}")
    return "\n".join(out)


if __name__ == "__main__":
    shape, n = sys.argv[1], int(sys.argv[2])
    print(globals()[shape](n))
