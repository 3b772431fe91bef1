// Hand-written corpus: at least one example of every OpKind, in pretty form where the op
// has one (generic otherwise), validated by jaxlib's MLIR (see jaxlib_roundtrip.rs).
// The `check` dialect examples are in ops_check.mlir (jaxlib does not register it).

// ----- unary_float
func.func public @unary_float(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xi32>) {
  %0 = stablehlo.abs %x : tensor<2x3xf32>
  %1 = stablehlo.cbrt %0 : tensor<2x3xf32>
  %2 = stablehlo.ceil %1 : tensor<2x3xf32>
  %3 = stablehlo.cosine %2 : tensor<2x3xf32>
  %4 = stablehlo.exponential %3 : tensor<2x3xf32>
  %5 = stablehlo.exponential_minus_one %4 : tensor<2x3xf32>
  %6 = stablehlo.floor %5 : tensor<2x3xf32>
  %7 = stablehlo.log %6 : tensor<2x3xf32>
  %8 = stablehlo.log_plus_one %7 : tensor<2x3xf32>
  %9 = stablehlo.logistic %8 : tensor<2x3xf32>
  %10 = stablehlo.negate %9 : tensor<2x3xf32>
  %11 = stablehlo.round_nearest_afz %10 : tensor<2x3xf32>
  %12 = stablehlo.round_nearest_even %11 : tensor<2x3xf32>
  %13 = stablehlo.rsqrt %12 : tensor<2x3xf32>
  %14 = stablehlo.sign %13 : tensor<2x3xf32>
  %15 = stablehlo.sine %14 : tensor<2x3xf32>
  %16 = stablehlo.sqrt %15 : tensor<2x3xf32>
  %17 = stablehlo.tan %16 : tensor<2x3xf32>
  %ra = stablehlo.exponential %17 {result_accuracy = #stablehlo.result_accuracy<atol = 1.0e-05, ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<2x3xf32>
  %18 = stablehlo.tanh %ra {result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>} : tensor<2x3xf32>
  %19 = stablehlo.reduce_precision %18, format = e5m10 : tensor<2x3xf32>
  %20 = stablehlo.is_finite %19 : (tensor<2x3xf32>) -> tensor<2x3xi1>
  %21 = stablehlo.convert %19 : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %22 = stablehlo.bitcast_convert %19 : (tensor<2x3xf32>) -> tensor<2x3xi32>
  return %19, %20, %21, %22 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf16>, tensor<2x3xi32>
}

// ----- unary_int
func.func public @unary_int(%x: tensor<4xi32>, %b: tensor<4xi1>) -> (tensor<4xi32>, tensor<4xi1>) {
  %0 = stablehlo.count_leading_zeros %x : tensor<4xi32>
  %1 = stablehlo.not %0 : tensor<4xi32>
  %2 = stablehlo.popcnt %1 : tensor<4xi32>
  %3 = stablehlo.not %b : tensor<4xi1>
  return %2, %3 : tensor<4xi32>, tensor<4xi1>
}

// ----- complex
func.func public @complex(%re: tensor<2xf32>, %im: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>) {
  %0 = stablehlo.complex %re, %im : tensor<2xcomplex<f32>>
  %1 = stablehlo.real %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %2 = stablehlo.imag %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %3 = stablehlo.abs %0 : (tensor<2xcomplex<f32>>) -> tensor<2xf32>
  %4 = stablehlo.constant dense<[(1.5, -2.0), (0.0, 3.25)]> : tensor<2xcomplex<f32>>
  %5 = stablehlo.multiply %0, %4 : tensor<2xcomplex<f32>>
  return %1, %2, %3, %5 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xcomplex<f32>>
}

// ----- binary
func.func public @binary(%a: tensor<3xf32>, %b: tensor<3xf32>, %i: tensor<3xi32>, %j: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = stablehlo.add %a, %b : tensor<3xf32>
  %1 = stablehlo.atan2 %0, %b : tensor<3xf32>
  %2 = stablehlo.divide %1, %b : tensor<3xf32>
  %3 = stablehlo.maximum %2, %b : tensor<3xf32>
  %4 = stablehlo.minimum %3, %b : tensor<3xf32>
  %5 = stablehlo.multiply %4, %b : tensor<3xf32>
  %6 = stablehlo.power %5, %b : tensor<3xf32>
  %7 = stablehlo.remainder %6, %b : tensor<3xf32>
  %8 = stablehlo.subtract %7, %b : tensor<3xf32>
  %9 = stablehlo.and %i, %j : tensor<3xi32>
  %10 = stablehlo.or %9, %j : tensor<3xi32>
  %11 = stablehlo.xor %10, %j : tensor<3xi32>
  %12 = stablehlo.shift_left %11, %j : tensor<3xi32>
  %13 = stablehlo.shift_right_arithmetic %12, %j : tensor<3xi32>
  %14 = stablehlo.shift_right_logical %13, %j : tensor<3xi32>
  return %8, %14 : tensor<3xf32>, tensor<3xi32>
}

// ----- compare_select_clamp
func.func public @compare_select_clamp(%a: tensor<3xf32>, %b: tensor<3xf32>, %lo: tensor<f32>, %hi: tensor<f32>, %p: tensor<i1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = stablehlo.compare GT, %a, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %1 = stablehlo.compare EQ, %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
  %2 = stablehlo.select %0, %a, %b : tensor<3xi1>, tensor<3xf32>
  %3 = stablehlo.select %p, %2, %b : tensor<i1>, tensor<3xf32>
  %4 = stablehlo.clamp %lo, %3, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %5 = stablehlo.clamp %a, %4, %b : tensor<3xf32>
  return %5, %1 : tensor<3xf32>, tensor<3xi1>
}

// ----- constants
func.func public @constants() -> (tensor<2x2xf32>, tensor<4xi1>, tensor<3xbf16>, tensor<2xf16>, tensor<2xf8E4M3FN>, tensor<3xui8>, tensor<2xi4>, tensor<f64>, tensor<0xf32>, tensor<20xf32>, tensor<2xf32>, tensor<i64>) {
  %0 = stablehlo.constant dense<[[1.0, -2.5], [3.0e+10, 1.0e-07]]> : tensor<2x2xf32>
  %1 = stablehlo.constant dense<[true, false, true, true]> : tensor<4xi1>
  %2 = stablehlo.constant dense<[1.0, 0x7FC0, -0.5]> : tensor<3xbf16>
  %3 = stablehlo.constant dense<[0.1, 65504.0]> : tensor<2xf16>
  %4 = stablehlo.constant dense<[1.0, -448.0]> : tensor<2xf8E4M3FN>
  %5 = stablehlo.constant dense<[0, 128, 255]> : tensor<3xui8>
  %6 = stablehlo.constant dense<[-8, 7]> : tensor<2xi4>
  %7 = stablehlo.constant dense<3.141592653589793> : tensor<f64>
  %8 = stablehlo.constant dense<> : tensor<0xf32>
  %9 = stablehlo.constant dense<"0x000000000000803F0000004000004040000080400000A0400000C0400000E040000000410000104100002041000030410000404100005041000060410000704100008041000088410000904100009841"> : tensor<20xf32>
  %10 = stablehlo.constant dense<[0x7F800000, 0xFF800000]> : tensor<2xf32>
  %11 = stablehlo.constant dense<-9223372036854775808> : tensor<i64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11 : tensor<2x2xf32>, tensor<4xi1>, tensor<3xbf16>, tensor<2xf16>, tensor<2xf8E4M3FN>, tensor<3xui8>, tensor<2xi4>, tensor<f64>, tensor<0xf32>, tensor<20xf32>, tensor<2xf32>, tensor<i64>
}

// ----- shape_ops
func.func public @shape_ops(%x: tensor<2x3xf32>, %s: tensor<f32>, %i: tensor<i32>) -> (tensor<3x2xf32>, tensor<4x2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<5x7xf32>, tensor<i32>, tensor<4xi32>, tensor<2x3x5xf32>) {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = stablehlo.broadcast %x, sizes = [4] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>
  %2 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  %3 = stablehlo.reverse %x, dims = [0, 1] : tensor<2x3xf32>
  %4 = stablehlo.slice %x [0:1, 1:3] : (tensor<2x3xf32>) -> tensor<1x2xf32>
  %5 = stablehlo.slice %x [1:2, 0:3:2] : (tensor<2x3xf32>) -> tensor<1x2xf32>
  %6 = stablehlo.dynamic_update_slice %x, %4, %i, %i : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %7 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %8 = stablehlo.pad %x, %s, low = [1, 2], high = [1, 0], interior = [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x7xf32>
  %9 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  %10 = stablehlo.iota dim = 0 : tensor<4xi32>
  %11 = stablehlo.broadcast_in_dim %x, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x5xf32>
  %12 = stablehlo.dynamic_slice %x, %i, %i, sizes = [1, 2] : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
  return %0, %1, %2, %3, %12, %5, %6, %7, %8, %9, %10, %11 : tensor<3x2xf32>, tensor<4x2x3xf32>, tensor<6xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<2x3xf32>, tensor<4x3xf32>, tensor<5x7xf32>, tensor<i32>, tensor<4xi32>, tensor<2x3x5xf32>
}

// ----- gather_scatter
func.func public @gather_scatter(%x: tensor<5x4xf32>, %idx: tensor<3x1xi32>, %upd: tensor<3x4xf32>, %v: tensor<3xi32>) -> (tensor<3x4xf32>, tensor<5x4xf32>, tensor<3x4xf32>) {
  %0 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  %1 = "stablehlo.scatter"(%x, %idx, %upd) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<5x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %2 = "stablehlo.torch_index_select"(%x, %v) <{batch_dims = 0 : i64, dim = 0 : i64}> : (tensor<5x4xf32>, tensor<3xi32>) -> tensor<3x4xf32>
  return %0, %1, %2 : tensor<3x4xf32>, tensor<5x4xf32>, tensor<3x4xf32>
}

// ----- contractions
func.func public @contractions(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %m: tensor<3x4xf32>, %n: tensor<4x5xf32>) -> (tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x3xf32>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.dot_general %m, %n, contracting_dims = [1] x [0] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %2 = stablehlo.dot %m, %n, precision = [HIGH, HIGH] : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %3 = stablehlo.einsum %m, %n, config = "ab,bc->ac" : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %4 = stablehlo.unary_einsum %m, config = "ab->ba" : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %5 = stablehlo.dot_general %m, %n, contracting_dims = [1] x [0], algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %0, %1, %2, %5, %4 : tensor<2x3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<4x3xf32>
}

// ----- convolution
func.func public @convolution(%x: tensor<1x8x8x3xf32>, %w: tensor<3x3x3x4xf32>, %d: tensor<2x2xi32>) -> (tensor<1x4x4x4xf32>, tensor<1x8x8x4xf32>) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32>
  %1 = "stablehlo.dynamic_conv"(%x, %w, %d) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64}> : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>, tensor<2x2xi32>) -> tensor<1x8x8x4xf32>
  return %0, %1 : tensor<1x4x4x4xf32>, tensor<1x8x8x4xf32>
}

// ----- linalg_fft
func.func public @linalg_fft(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>, %c: tensor<8xcomplex<f32>>, %r: tensor<8xf32>) -> (tensor<4x4xf32>, tensor<4x3xf32>, tensor<8xcomplex<f32>>, tensor<5xcomplex<f32>>) {
  %0 = stablehlo.cholesky %a, lower = true : tensor<4x4xf32>
  %1 = "stablehlo.triangular_solve"(%0, %b) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false}> : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %2 = stablehlo.fft %c, type = FFT, length = [8] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  %3 = stablehlo.fft %r, type = RFFT, length = [8] : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  %4 = stablehlo.cholesky %a : tensor<4x4xf32>
  return %4, %1, %2, %3 : tensor<4x4xf32>, tensor<4x3xf32>, tensor<8xcomplex<f32>>, tensor<5xcomplex<f32>>
}

// ----- reductions
func.func public @reductions(%x: tensor<4x6xf32>, %y: tensor<4x6xi32>, %z: tensor<f32>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<6xf32>, tensor<6xi32>, tensor<4x3xf32>) {
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<4xf32>
  %1:2 = stablehlo.reduce(%x init: %z), (%y init: %k) across dimensions = [0] : (tensor<4x6xf32>, tensor<4x6xi32>, tensor<f32>, tensor<i32>) -> (tensor<6xf32>, tensor<6xi32>)
   reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {
    %m = stablehlo.maximum %a, %c : tensor<f32>
    %n = stablehlo.minimum %b, %d : tensor<i32>
    stablehlo.return %m, %n : tensor<f32>, tensor<i32>
  }
  %2 = "stablehlo.reduce_window"(%x, %z) <{padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 2>, window_strides = array<i64: 1, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %0, %1#0, %1#1, %2 : tensor<4xf32>, tensor<6xf32>, tensor<6xi32>, tensor<4x3xf32>
}

// ----- region_ops
func.func public @region_ops(%x: tensor<4x6xf32>, %src: tensor<2x3xf32>, %z: tensor<f32>, %k: tensor<4xi32>) -> (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4xi32>, tensor<4x6xf32>) {
  %0 = "stablehlo.select_and_scatter"(%x, %src, %z) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  %1 = "stablehlo.sort"(%x) <{dimension = 1 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %2 = "stablehlo.map"(%k, %k) <{dimensions = array<i64: 0>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.multiply %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %3 = stablehlo.optimization_barrier %1 : tensor<4x6xf32>
  return %0, %3, %2, %1 : tensor<4x6xf32>, tensor<4x6xf32>, tensor<4xi32>, tensor<4x6xf32>
}

// ----- batch_norm
func.func public @batch_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<5xf32>, %o: tensor<5xf32>, %m: tensor<5xf32>, %v: tensor<5xf32>) -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<5xf32>) {
  %0 = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) <{epsilon = 1.0e-03 : f32, feature_index = 3 : i64}> : (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) -> tensor<2x3x4x5xf32>
  %1:3 = "stablehlo.batch_norm_training"(%x, %s, %o) <{epsilon = 1.0e-03 : f32, feature_index = 3 : i64}> : (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<5xf32>)
  %2:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %0) <{epsilon = 1.0e-03 : f32, feature_index = 3 : i64}> : (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<2x3x4x5xf32>) -> (tensor<2x3x4x5xf32>, tensor<5xf32>, tensor<5xf32>)
  return %1#0, %2#0, %2#2 : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<5xf32>
}

// ----- control_flow
func.func public @control_flow(%x: tensor<3xf32>, %n: tensor<i32>, %p: tensor<i1>, %i: tensor<i32>) -> (tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:2 = stablehlo.while(%iterArg = %n, %iterArg_0 = %x) : tensor<i32>, tensor<3xf32>
    cond {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare GT, %iterArg, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %1 = stablehlo.subtract %iterArg, %c : tensor<i32>
    %2 = stablehlo.add %iterArg_0, %iterArg_0 : tensor<3xf32>
    stablehlo.return %1, %2 : tensor<i32>, tensor<3xf32>
  }
  %1 = "stablehlo.if"(%p) ({
    %2 = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %2 : tensor<3xf32>
  }, {
    stablehlo.return %x : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  %2 = "stablehlo.case"(%i) ({
    stablehlo.return %x : tensor<3xf32>
  }, {
    %3 = stablehlo.sine %x : tensor<3xf32>
    stablehlo.return %3 : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  %3 = func.call @helper(%2) : (tensor<3xf32>) -> tensor<3xf32>
  %4 = call @helper(%3) : (tensor<3xf32>) -> tensor<3xf32>
  func.return %0#0, %1, %3, %4 : tensor<i32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
func.func private @helper(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.cosine %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// ----- tuples_tokens_calls
module @tuples attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%x: tensor<2xf32> {mhlo.sharding = "{replicated}"}, %y: tensor<i32>) -> (tensor<2xf32> {jax.result_info = "result"}, tensor<i32>, !stablehlo.token, tensor<2xf32>, tensor<2xf32>) {
    %0 = stablehlo.tuple %x, %y : tuple<tensor<2xf32>, tensor<i32>>
    %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<2xf32>
    %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
    %3 = stablehlo.create_token : !stablehlo.token
    %4 = stablehlo.after_all %3, %3 : !stablehlo.token
    %5 = stablehlo.custom_call @my_target(%1) {api_version = 2 : i32, backend_config = "cfg", has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>
    %6 = stablehlo.custom_call @"quoted.target"(%5) {api_version = 4 : i32, backend_config = {k = 1 : i64, s = "v"}, called_computations = [@callee], mhlo.frontend_attributes = {a = "b"}, operand_layouts = [dense<[0]> : tensor<1xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[0]> : tensor<1xindex>]} : (tensor<2xf32>) -> tensor<2xf32>
    %7 = stablehlo.composite "my.composite" %6 {composite_attributes = {alpha = 1.0 : f32}, decomposition = @callee, version = 1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
    return %1, %2, %4, %6, %7 : tensor<2xf32>, tensor<i32>, !stablehlo.token, tensor<2xf32>, tensor<2xf32>
  }
  func.func private @callee(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}

// ----- rng
func.func public @rng(%a: tensor<f32>, %b: tensor<f32>, %state: tensor<2xui64>) -> (tensor<3x4xf32>, tensor<2xui64>, tensor<3x4xui32>) {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %0 = stablehlo.rng %a, %b, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x4xf32>
  %1:2 = stablehlo.rng_bit_generator %state, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x4xui32>)
  return %0, %1#0, %1#1 : tensor<3x4xf32>, tensor<2xui64>, tensor<3x4xui32>
}

// ----- io_collectives
func.func public @io_collectives(%x: tensor<4x2xf32>, %t: !stablehlo.token) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<ui32>, tensor<ui32>, !stablehlo.token, tensor<4x2xf32>) {
  %0:2 = "stablehlo.infeed"(%t) <{infeed_config = "", layout = [[0, 1]]}> : (!stablehlo.token) -> (tensor<4x2xf32>, !stablehlo.token)
  %1 = "stablehlo.outfeed"(%x, %0#1) <{outfeed_config = ""}> : (tensor<4x2xf32>, !stablehlo.token) -> !stablehlo.token
  %2 = "stablehlo.send"(%x, %1) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true}> : (tensor<4x2xf32>, !stablehlo.token) -> !stablehlo.token
  %3:2 = "stablehlo.recv"(%2) <{channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true}> : (!stablehlo.token) -> (tensor<4x2xf32>, !stablehlo.token)
  %4 = "stablehlo.all_gather"(%x) <{all_gather_dim = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %5 = "stablehlo.all_reduce"(%x) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %6 = "stablehlo.reduce_scatter"(%x) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>, scatter_dimension = 0 : i64}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %7 = "stablehlo.all_to_all"(%x) <{concat_dimension = 0 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>, split_count = 1 : i64, split_dimension = 0 : i64}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %8 = "stablehlo.collective_permute"(%x) <{source_target_pairs = dense<[[0, 0]]> : tensor<1x2xi64>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %9 = "stablehlo.collective_broadcast"(%x) <{replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %10 = "stablehlo.cross-replica-sum"(%x) {replica_groups = dense<[[0]]> : tensor<1x1xi64>} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %11 = stablehlo.replica_id : tensor<ui32>
  %12 = stablehlo.partition_id : tensor<ui32>
  %13 = stablehlo.slice %6 [0:2, 0:2] : (tensor<4x2xf32>) -> tensor<2x2xf32>
  return %0#0, %3#0, %13, %4, %5, %7, %8, %11, %12, %3#1, %10 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<2x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<ui32>, tensor<ui32>, !stablehlo.token, tensor<4x2xf32>
}

// ----- dynamic_ops_static_shapes
func.func public @dynamic_ops_static_shapes(%x: tensor<2x3xf32>, %shape: tensor<2xi64>, %s: tensor<f32>, %p: tensor<2xi64>, %idx: tensor<2x1xi64>, %ss: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<6xi64>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>) {
  %0 = stablehlo.dynamic_broadcast_in_dim %x, %shape, dims = [0, 1] : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %six = stablehlo.constant dense<6> : tensor<1xi64>
  %1 = stablehlo.dynamic_iota %six, dim = 0 : (tensor<1xi64>) -> tensor<6xi64>
  %2 = stablehlo.dynamic_reshape %x, %shape : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %lo = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %zero = stablehlo.constant dense<0> : tensor<2xi64>
  %3 = stablehlo.dynamic_pad %x, %s, %lo, %zero, %zero : (tensor<2x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<3x3xf32>
  %4 = "stablehlo.dynamic_gather"(%x, %idx, %ss) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>}> : (tensor<2x3xf32>, tensor<2x1xi64>, tensor<2xi64>) -> tensor<2x3xf32>
  %one = stablehlo.constant dense<1> : tensor<2xi64>
  %lim = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %5 = stablehlo.real_dynamic_slice %x, %zero, %lim, %one : (tensor<2x3xf32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<1x2xf32>
  return %0, %1, %2, %3, %4, %5, %0 : tensor<2x3xf32>, tensor<6xi64>, tensor<2x3xf32>, tensor<3x3xf32>, tensor<2x3xf32>, tensor<1x2xf32>, tensor<2x3xf32>
}

// ----- chlo
func.func public @chlo(%x: tensor<4xf32>, %y: tensor<4xf32>, %s: tensor<f32>, %c: tensor<4xcomplex<f32>>, %p: tensor<4xi1>, %i: tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi1>, tensor<4xcomplex<f32>>, tensor<4xi32>, tensor<2xf32>, tensor<2xi32>) {
  %0 = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  %1 = chlo.erfc %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = chlo.erf_inv %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = chlo.square %2 : tensor<4xf32> -> tensor<4xf32>
  %4 = chlo.tan %3 : tensor<4xf32> -> tensor<4xf32>
  %5 = chlo.lgamma %4 : tensor<4xf32> -> tensor<4xf32>
  %6 = chlo.digamma %5 : tensor<4xf32> -> tensor<4xf32>
  %7 = chlo.acos %6 : tensor<4xf32> -> tensor<4xf32>
  %8 = chlo.acosh %7 : tensor<4xf32> -> tensor<4xf32>
  %9 = chlo.asin %8 : tensor<4xf32> -> tensor<4xf32>
  %10 = chlo.asinh %9 : tensor<4xf32> -> tensor<4xf32>
  %11 = chlo.atan %10 : tensor<4xf32> -> tensor<4xf32>
  %12 = chlo.atanh %11 : tensor<4xf32> -> tensor<4xf32>
  %13 = chlo.cosh %12 : tensor<4xf32> -> tensor<4xf32>
  %14 = chlo.sinh %13 : tensor<4xf32> -> tensor<4xf32>
  %15 = chlo.bessel_i1e %14 : tensor<4xf32> -> tensor<4xf32>
  %16 = chlo.is_inf %15 : tensor<4xf32> -> tensor<4xi1>
  %17 = chlo.is_neg_inf %15 : tensor<4xf32> -> tensor<4xi1>
  %18 = chlo.is_pos_inf %15 : tensor<4xf32> -> tensor<4xi1>
  %19 = chlo.conj %c : tensor<4xcomplex<f32>> -> tensor<4xcomplex<f32>>
  %20 = chlo.next_after %15, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %21 = chlo.polygamma %20, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %22 = chlo.zeta %21, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %23 = chlo.broadcast_add %22, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %24 = chlo.broadcast_atan2 %23, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %25 = chlo.broadcast_divide %24, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %26 = chlo.broadcast_maximum %25, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %27 = chlo.broadcast_minimum %26, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %28 = chlo.broadcast_multiply %27, %y {broadcast_dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %29 = chlo.broadcast_next_after %28, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %30 = chlo.broadcast_polygamma %29, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %31 = chlo.broadcast_power %30, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %32 = chlo.broadcast_remainder %31, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %33 = chlo.broadcast_subtract %32, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %34 = chlo.broadcast_zeta %33, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %35 = chlo.broadcast_compare %34, %y {comparison_direction = #chlo<comparison_direction LT>} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %36 = chlo.broadcast_and %35, %p : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %37 = chlo.broadcast_or %36, %16 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %38 = chlo.broadcast_xor %37, %17 : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %39 = chlo.broadcast_select %38, %34, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %40 = chlo.broadcast_complex %39, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  %41 = chlo.broadcast_shift_left %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %42 = chlo.broadcast_shift_right_arithmetic %41, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %43 = chlo.broadcast_shift_right_logical %42, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %44:2 = chlo.top_k(%39, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
  %45 = "chlo.constant_like"(%39) <{value = 1.0 : f32}> : (tensor<4xf32>) -> tensor<4xf32>
  %46 = chlo.constant dense<2.0> : tensor<4xf32>
  %47 = chlo.broadcast_add %45, %46 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %47, %38, %40, %43, %44#0, %44#1 : tensor<4xf32>, tensor<4xi1>, tensor<4xcomplex<f32>>, tensor<4xi32>, tensor<2xf32>, tensor<2xi32>
}

// ----- async_start_done
func.func public @async_start_done(%x: tensor<8x2xf32>, %i: tensor<i64>) -> (tensor<8x8xf32>, tensor<4x2xf32>) {
  %0 = "stablehlo.async_start"(%x) ({
  ^bb0(%a: tensor<8x2xf32>):
    %g = "stablehlo.all_gather"(%a) <{all_gather_dim = 1 : i64, replica_groups = dense<[[0]]> : tensor<1x1xi64>}> : (tensor<8x2xf32>) -> tensor<8x8xf32>
    stablehlo.return %g : tensor<8x8xf32>
  }) : (tensor<8x2xf32>) -> !stablehlo.future<tensor<8x8xf32>>
  %1 = "stablehlo.async_start"(%x, %i, %i) ({
  ^bb0(%a: tensor<8x2xf32>, %b: tensor<i64>, %c: tensor<i64>):
    %s = stablehlo.dynamic_slice %a, %b, %c, sizes = [4, 2] : (tensor<8x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x2xf32>
    stablehlo.return %s : tensor<4x2xf32>
  }) : (tensor<8x2xf32>, tensor<i64>, tensor<i64>) -> !stablehlo.future<tensor<4x2xf32>>
  %2 = "stablehlo.async_done"(%0) : (!stablehlo.future<tensor<8x8xf32>>) -> tensor<8x8xf32>
  %3 = "stablehlo.async_done"(%1) : (!stablehlo.future<tensor<4x2xf32>>) -> tensor<4x2xf32>
  return %2, %3 : tensor<8x8xf32>, tensor<4x2xf32>
}

// ----- declaration_call
func.func private @decl(tensor<4xf32> {jax.arg = 1 : i64}, tensor<i32>) -> tensor<4xf32>
func.func private @no_args()
func.func public @declaration_call(%x: tensor<4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %0 = call @decl(%x, %i) : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// ----- stablehlo_return_ends_function
func.func public @stablehlo_return_ends_function(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.negate %x : tensor<4xf32>
  stablehlo.return %0 : tensor<4xf32>
}

// ----- sdy_sharding
module @sdy_sharding attributes {mhlo.num_partitions = 1 : i32} {
  sdy.mesh @mesh = <["x"=1]> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}}
  sdy.mesh @mesh2 = <["a"=2, "b"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>
  sdy.mesh @empty = <[]>
  func.func public @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]> : tensor<2x4xf32>
    %1 = sdy.reshard %0 <@mesh2, [{"a", ?}, {"b"}p1]> {foo = 1 : i64} : tensor<2x4xf32>
    %2 = stablehlo.add %1, %0 {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j], [i, j])->([i, j]) {i=2, j=4}>} : tensor<2x4xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [{}, {}], replicated={"x"}> : tensor<2x4xf32>
    return %3 : tensor<2x4xf32>
  }
}

// ----- sdy_generic
"builtin.module"() <{sym_name = "sdy_generic"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> {stablehlo.mesh = {axes = [{name = "x", size = 1 : i64}]}} : () -> ()
  "func.func"() <{function_type = (tensor<2x4xf32>) -> tensor<2x4xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<2x4xf32>):
    %0 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %1 = "sdy.reshard"(%0) <{sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
    "func.return"(%1) : (tensor<2x4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// ----- dot_general_mixed_f8
func.func public @dot_general_mixed_f8(%a: tensor<2x3xf8E4M3FN>, %b: tensor<3x2xf8E5M2>, %c: tensor<3x2xbf16>) -> (tensor<2x2xf32>, tensor<2x2xbf16>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf8E4M3FN>, tensor<3x2xf8E5M2>) -> tensor<2x2xf32>
  %1 = stablehlo.dot_general %a, %c, contracting_dims = [1] x [0] : (tensor<2x3xf8E4M3FN>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
  return %0, %1 : tensor<2x2xf32>, tensor<2x2xbf16>
}
