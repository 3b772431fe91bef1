//! torch_xla's `masked_scatter` form of XLA bounded dynamism: a scatter applies only the
//! first `n` of its index rows and updates (`set_dimension_size`), whatever the padding
//! rows hold. Expected values are worked out by hand below.

use neuronc_interp::Tensor;
use neuronc_ir::ElemType;

mod common;

use common::{f32s, run_f32};

const PROGRAM: &str = r#"
func.func @main(%x: tensor<4xf32>, %i: tensor<3x1xi32>, %u: tensor<3xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %0 = stablehlo.set_dimension_size %i, %n, dim = 0 : (tensor<3x1xi32>, tensor<i32>) -> tensor<?x1xi32, #stablehlo.bounds<3, ?>>
  %1 = stablehlo.set_dimension_size %u, %n, dim = 0 : (tensor<3xf32>, tensor<i32>) -> tensor<?xf32, #stablehlo.bounds<3>>
  %2 = "stablehlo.scatter"(%x, %0, %1) <{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<?x1xi32, #stablehlo.bounds<3, ?>>, tensor<?xf32, #stablehlo.bounds<3>>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"#;

/// x = [10, 20, 30, 40], rows [2, 0, 1] add [1, 2, 3]: with n rows applied,
/// n = 0: x; n = 1: x[2] += 1; n = 2: also x[0] += 2; n = 3: also x[1] += 3.
#[test]
fn only_the_first_n_rows_scatter() {
    let want: [[f32; 4]; 4] = [
        [10.0, 20.0, 30.0, 40.0],
        [10.0, 20.0, 31.0, 40.0],
        [12.0, 20.0, 31.0, 40.0],
        [12.0, 23.0, 31.0, 40.0],
    ];
    for (n, want) in want.iter().enumerate() {
        let inputs = vec![
            f32s(&[4], &[10.0, 20.0, 30.0, 40.0]),
            Tensor::from_i64(ElemType::Int(32), &[3, 1], &[2, 0, 1]).expect("indices"),
            f32s(&[3], &[1.0, 2.0, 3.0]),
            Tensor::from_i64(ElemType::Int(32), &[], &[n as i64]).expect("size"),
        ];
        assert_eq!(run_f32(PROGRAM, inputs)[0], want, "n = {n}");
    }
}
