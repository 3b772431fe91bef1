//! Verifier rules of gather and scatter. Gather result shapes are the ones jax/XLA
//! inferred: `jnp.take(x, i, axis=1)` on 5x7x3 with 4x2x1 indices -> tensor<5x4x2x3xf32>,
//! and `x[i[:, 0], :, i[:, 1]]` with 4x2 indices -> tensor<4x7xf32>.
mod verify_util;
use verify_util::{fails, func, ok};

fn gather(idx: &str, dims: &str, sizes: &str, res: &str) -> String {
    func(&format!("%x: tensor<5x7x3xf32>, %i: {idx}"), res, &format!(
        "%0 = \"stablehlo.gather\"(%x, %i) <{{dimension_numbers = #stablehlo.gather<{dims}>, indices_are_sorted = false, slice_sizes = array<i64: {sizes}>}}> : (tensor<5x7x3xf32>, {idx}) -> {res}\nfunc.return %0 : {res}"))
}

#[test]
fn gather_shapes_match_jax() {
    ok(&gather("tensor<4x2x1xi32>", "offset_dims = [0, 3], collapsed_slice_dims = [1], start_index_map = [1], index_vector_dim = 2", "5, 1, 3", "tensor<5x4x2x3xf32>"));
    ok(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [0, 2], start_index_map = [0, 2], index_vector_dim = 1", "1, 7, 1", "tensor<4x7xf32>"));
    fails(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [0, 2], start_index_map = [0, 2], index_vector_dim = 1", "1, 7, 1", "tensor<7x4xf32>"),
        &["expects result type tensor<4x7xf32>", ][..]);
}

#[test]
fn gather_dimension_rules() {
    fails(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [0, 2], start_index_map = [0, 2], index_vector_dim = 1", "2, 7, 1", "tensor<4x7xf32>"),
        &["expects the slice size of collapsed or batching dimension 0 to be at most 1, but it is 2 [constraint C9"]);
    fails(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [0, 2], start_index_map = [0], index_vector_dim = 1", "1, 7, 1", "tensor<4x7xf32>"),
        &["expects start_index_map to have size 2 (the index vector size), but it has size 1 [constraint C3"]);
    fails(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [2, 0], start_index_map = [0, 2], index_vector_dim = 1", "1, 7, 1", "tensor<4x7xf32>"),
        &["expects collapsed_slice_dims to be sorted, but got [2, 0] [constraint C7"]);
    fails(&gather("tensor<4x2xi32>", "offset_dims = [1], collapsed_slice_dims = [0, 2], start_index_map = [0, 2], index_vector_dim = 1", "1, 8, 1", "tensor<4x8xf32>"),
        &["expects 0 <= slice_sizes <= shape(operand), but slice size 1 is 8 and the dimension is 7 [constraint C21"]);
}

fn scatter(upd: &str, dims: &str) -> String {
    func(
        &format!("%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: {upd}"),
        "tensor<5x3xf32>",
        &format!(
            r#"%0 = "stablehlo.scatter"(%x, %i, %u) ({{
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dims}>}} : (tensor<5x3xf32>, tensor<4x1xi32>, {upd}) -> tensor<5x3xf32>
      func.return %0 : tensor<5x3xf32>"#
        ),
    )
}

#[test]
fn scatter_rules() {
    // x.at[i[:, 0]].add(u): update rows of width 3 at 4 row indices.
    let dn = "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1";
    ok(&scatter("tensor<4x3xf32>", dn));
    fails(&scatter("tensor<5x3xf32>", dn), &["expects update scatter dimension 0 to have size 4 (from scatter_indices), but got 5 [constraint C4"]);
    fails(&scatter("tensor<4x4xf32>", dn), &["expects update window dimension 1 (4) to be at most the corresponding input dimension (3) [constraint C4"]);
    fails(&scatter("tensor<4x3xf32>", "update_window_dims = [1], inserted_window_dims = [0, 0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1"),
        &["[constraint C2 of stablehlo.scatter]"]);
}
