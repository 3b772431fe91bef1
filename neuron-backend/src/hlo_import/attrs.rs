//! Attribute spellings of imported ops, in MLIR's generic form: integer arrays, the
//! `#stablehlo.dot<…>` / `#stablehlo.gather<…>` / `#stablehlo.scatter<…>` /
//! `#stablehlo.conv<…>` structures, windows and padding, comparison, collective,
//! triangular-solve and FFT options, and string escapes.
//!
//! Owns: pure functions from an `HloInstructionProto`'s fields to attribute text.
//! Invariant: empty lists are omitted from the `#stablehlo.*<…>` structures (as MLIR
//! prints them); a field XLA requires but the proto lacks is [`ImportError::Malformed`].

use super::types::{dense_text, tensor_type};
use super::{ImportError, Typed};
use crate::hlo::proto::{
    ConvolutionDimensionNumbers, FftType, HloInstructionProto, RandomAlgorithm, ShapeProto,
    TriangularTranspose, Window,
};
use std::fmt::Write;

/// `array<i64: a, b>`.
pub(super) fn array(v: &[i64]) -> String {
    if v.is_empty() {
        return "array<i64>".into();
    }
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("array<i64: {}>", items.join(", "))
}

/// `[a, b]` (for the fields of `#stablehlo.dot<…>` and friends).
pub(super) fn list(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// `name = [..]` entries of the non-empty lists, joined by `, `.
pub(super) fn fields(items: &[(&str, &[i64])]) -> Vec<String> {
    items
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(n, v)| format!("{n} = {}", list(v)))
        .collect()
}

/// An `f32` attribute in a spelling MLIR reads back exactly.
pub(super) fn f32_attr(x: f32) -> String {
    format!("{x:.9e} : f32")
}

/// The StableHLO op and attributes of an instruction that becomes one op without regions
/// whose attributes are all in the instruction (`None`: not such an opcode).
pub(super) fn simple_op(
    i: &HloInstructionProto,
    shape: &ShapeProto,
) -> Result<Option<(&'static str, Vec<String>)>, ImportError> {
    let dims = &i.dimensions;
    let first_dim = || {
        dims.first()
            .copied()
            .ok_or_else(|| ImportError::malformed("missing dimension"))
    };
    Ok(Some(match i.opcode.as_str() {
        "constant" => {
            let lit = i
                .literal
                .as_ref()
                .ok_or_else(|| ImportError::malformed("constant without a literal"))?;
            let t = tensor_type(shape)?;
            let value = format!("value = {} : {t}", dense_text(lit, shape)?);
            ("stablehlo.constant", vec![value])
        }
        "erf" => ("chlo.erf", vec![]),
        "partition-id" => ("stablehlo.partition_id", vec![]),
        "replica-id" => ("stablehlo.replica_id", vec![]),
        "broadcast" => (
            "stablehlo.broadcast_in_dim",
            vec![format!("broadcast_dimensions = {}", array(dims))],
        ),
        "transpose" => (
            "stablehlo.transpose",
            vec![format!("permutation = {}", array(dims))],
        ),
        "reverse" => (
            "stablehlo.reverse",
            vec![format!("dimensions = {}", array(dims))],
        ),
        "concatenate" => (
            "stablehlo.concatenate",
            vec![format!("dimension = {} : i64", first_dim()?)],
        ),
        "iota" => (
            "stablehlo.iota",
            vec![format!("iota_dimension = {} : i64", first_dim()?)],
        ),
        "dot" => ("stablehlo.dot_general", vec![dot_attr(i)?]),
        "slice" => ("stablehlo.slice", slice_attrs(i)),
        "pad" => ("stablehlo.pad", pad_attrs(i)?),
        "dynamic-slice" => (
            "stablehlo.dynamic_slice",
            vec![format!("slice_sizes = {}", array(&i.dynamic_slice_sizes))],
        ),
        "gather" => ("stablehlo.gather", gather_attrs(i)?),
        "convolution" => ("stablehlo.convolution", conv_attrs(i)?),
        "reduce-precision" => (
            "stablehlo.reduce_precision",
            vec![
                format!("exponent_bits = {} : i32", i.exponent_bits),
                format!("mantissa_bits = {} : i32", i.mantissa_bits),
            ],
        ),
        "batch-norm-training" => ("stablehlo.batch_norm_training", batch_norm_attrs(i)),
        "batch-norm-inference" => ("stablehlo.batch_norm_inference", batch_norm_attrs(i)),
        "batch-norm-grad" => ("stablehlo.batch_norm_grad", batch_norm_attrs(i)),
        "cholesky" => {
            let lower = i.cholesky_options.as_ref().is_some_and(|o| o.lower);
            ("stablehlo.cholesky", vec![format!("lower = {lower}")])
        }
        "triangular-solve" => ("stablehlo.triangular_solve", triangular_attrs(i)?),
        "fft" => ("stablehlo.fft", fft_attrs(i)?),
        "rng-bit-generator" => ("stablehlo.rng_bit_generator", vec![rng_attr(i)]),
        "all-gather" => {
            let mut a = collective_attrs(i)?;
            a.push(format!("all_gather_dim = {} : i64", first_dim()?));
            ("stablehlo.all_gather", a)
        }
        "collective-permute" => ("stablehlo.collective_permute", permute_attrs(i)),
        _ => return Ok(None),
    }))
}

fn batch_norm_attrs(i: &HloInstructionProto) -> Vec<String> {
    vec![
        format!("epsilon = {}", f32_attr(i.epsilon)),
        format!("feature_index = {} : i64", i.feature_index),
    ]
}

fn rng_attr(i: &HloInstructionProto) -> String {
    let alg = match RandomAlgorithm::try_from(i.rng_algorithm) {
        Ok(RandomAlgorithm::RngThreeFry) => "THREE_FRY",
        Ok(RandomAlgorithm::RngPhilox) => "PHILOX",
        _ => "DEFAULT",
    };
    format!("rng_algorithm = #stablehlo<rng_algorithm {alg}>")
}

fn permute_attrs(i: &HloInstructionProto) -> Vec<String> {
    let pairs: Vec<String> = i
        .source_target_pairs
        .iter()
        .map(|p| format!("[{}, {}]", p.source, p.target))
        .collect();
    let mut a = channel(i);
    a.push(format!(
        "source_target_pairs = dense<[{}]> : tensor<{}x2xi64>",
        pairs.join(", "),
        pairs.len()
    ));
    a
}

/// `channel_handle` of a collective with a channel (type 1: device to device).
pub(super) fn channel(i: &HloInstructionProto) -> Vec<String> {
    if i.channel_id > 0 {
        vec![format!(
            "channel_handle = #stablehlo.channel_handle<handle = {}, type = 1>",
            i.channel_id
        )]
    } else {
        Vec::new()
    }
}

/// Replica groups (a rectangular `dense<…>`, padded with -1 as StableHLO does), channel
/// and device-id mode of a collective.
pub(super) fn collective_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let width = i
        .replica_groups
        .iter()
        .map(|g| g.replica_ids.len())
        .max()
        .unwrap_or(0);
    let rows: Vec<String> = i
        .replica_groups
        .iter()
        .map(|g| {
            let mut ids = g.replica_ids.clone();
            ids.resize(width, -1);
            list(&ids)
        })
        .collect();
    let mut a = channel(i);
    a.push(format!(
        "replica_groups = dense<[{}]> : tensor<{}x{width}xi64>",
        rows.join(", "),
        rows.len()
    ));
    if i.use_global_device_ids {
        a.push("use_global_device_ids".into());
    }
    Ok(a)
}

/// A string attribute with MLIR escapes.
pub(super) fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' | b'\\' => {
                q.push('\\');
                q.push(b as char);
            }
            0x20..=0x7e => q.push(b as char),
            _ => {
                let _ = write!(q, "\\{b:02X}");
            }
        }
    }
    q.push('"');
    q
}

pub(super) fn compare_attrs(
    i: &HloInstructionProto,
    operands: &[Typed],
) -> Result<Vec<String>, ImportError> {
    let dir = match i.comparison_direction.as_str() {
        d @ ("EQ" | "NE" | "LT" | "LE" | "GT" | "GE") => d,
        d => {
            return Err(ImportError::malformed(format!(
                "comparison direction `{d}`"
            )))
        }
    };
    let ty = match i.comparison_type.as_str() {
        "" => {
            let t = operands.first().map(|o| o.1.as_str()).unwrap_or("");
            let elem = t.rsplit('x').next().unwrap_or(t);
            if elem.contains('f') || elem.contains("complex") {
                "FLOAT"
            } else if elem.starts_with("ui") || elem.starts_with("i1>") || t.ends_with("<i1>") {
                "UNSIGNED"
            } else {
                "SIGNED"
            }
        }
        "FLOAT" => "FLOAT",
        "TOTALORDER" => "TOTALORDER",
        "SIGNED" => "SIGNED",
        "UNSIGNED" => "UNSIGNED",
        t => return Err(ImportError::malformed(format!("comparison type `{t}`"))),
    };
    Ok(vec![
        format!("compare_type = #stablehlo<comparison_type {ty}>"),
        format!("comparison_direction = #stablehlo<comparison_direction {dir}>"),
    ])
}

pub(super) fn dot_attr(i: &HloInstructionProto) -> Result<String, ImportError> {
    let d = i
        .dot_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("dot without dimension numbers"))?;
    let f = fields(&[
        ("lhs_batching_dimensions", &d.lhs_batch_dimensions),
        ("rhs_batching_dimensions", &d.rhs_batch_dimensions),
        ("lhs_contracting_dimensions", &d.lhs_contracting_dimensions),
        ("rhs_contracting_dimensions", &d.rhs_contracting_dimensions),
    ]);
    Ok(format!(
        "dot_dimension_numbers = #stablehlo.dot<{}>",
        f.join(", ")
    ))
}

pub(super) fn slice_attrs(i: &HloInstructionProto) -> Vec<String> {
    let get = |f: fn(&crate::hlo::proto::SliceDimensions) -> i64| -> Vec<i64> {
        i.slice_dimensions.iter().map(f).collect()
    };
    vec![
        format!("limit_indices = {}", array(&get(|s| s.limit))),
        format!("start_indices = {}", array(&get(|s| s.start))),
        format!("strides = {}", array(&get(|s| s.stride))),
    ]
}

pub(super) fn pad_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let p = i
        .padding_config
        .as_ref()
        .ok_or_else(|| ImportError::malformed("pad without a padding config"))?;
    let get = |f: fn(&crate::hlo::proto::PaddingConfigDimension) -> i64| -> Vec<i64> {
        p.dimensions.iter().map(f).collect()
    };
    Ok(vec![
        format!(
            "edge_padding_high = {}",
            array(&get(|d| d.edge_padding_high))
        ),
        format!("edge_padding_low = {}", array(&get(|d| d.edge_padding_low))),
        format!("interior_padding = {}", array(&get(|d| d.interior_padding))),
    ])
}

pub(super) fn gather_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let g = i
        .gather_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("gather without dimension numbers"))?;
    let mut f = fields(&[
        ("offset_dims", &g.offset_dims),
        ("collapsed_slice_dims", &g.collapsed_slice_dims),
        ("operand_batching_dims", &g.operand_batching_dims),
        (
            "start_indices_batching_dims",
            &g.start_indices_batching_dims,
        ),
        ("start_index_map", &g.start_index_map),
    ]);
    f.push(format!("index_vector_dim = {}", g.index_vector_dim));
    Ok(vec![
        format!("dimension_numbers = #stablehlo.gather<{}>", f.join(", ")),
        format!("indices_are_sorted = {}", i.indices_are_sorted),
        format!("slice_sizes = {}", array(&i.gather_slice_sizes)),
    ])
}

pub(super) fn scatter_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let s = i
        .scatter_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("scatter without dimension numbers"))?;
    let mut f = fields(&[
        ("update_window_dims", &s.update_window_dims),
        ("inserted_window_dims", &s.inserted_window_dims),
        ("input_batching_dims", &s.input_batching_dims),
        (
            "scatter_indices_batching_dims",
            &s.scatter_indices_batching_dims,
        ),
        (
            "scatter_dims_to_operand_dims",
            &s.scatter_dims_to_operand_dims,
        ),
    ]);
    f.push(format!("index_vector_dim = {}", s.index_vector_dim));
    Ok(vec![
        format!("indices_are_sorted = {}", i.indices_are_sorted),
        format!(
            "scatter_dimension_numbers = #stablehlo.scatter<{}>",
            f.join(", ")
        ),
        format!("unique_indices = {}", i.unique_indices),
    ])
}

/// `padding = dense<[[lo, hi], …]> : tensor<Nx2xi64>`.
pub(super) fn padding_attr(w: &Window) -> String {
    let pairs: Vec<String> = w
        .dimensions
        .iter()
        .map(|d| format!("[{}, {}]", d.padding_low, d.padding_high))
        .collect();
    format!(
        "padding = dense<[{}]> : tensor<{}x2xi64>",
        pairs.join(", "),
        w.dimensions.len()
    )
}

/// `reduce_window` (with dilations) or `select_and_scatter` window attributes.
pub(super) fn window_attrs(w: &Window, dilations: bool) -> Vec<String> {
    let get = |f: fn(&crate::hlo::proto::WindowDimension) -> i64| -> Vec<i64> {
        w.dimensions.iter().map(f).collect()
    };
    let mut a = vec![
        format!("window_dimensions = {}", array(&get(|d| d.size))),
        format!("window_strides = {}", array(&get(|d| d.stride))),
        padding_attr(w),
    ];
    if dilations {
        a.push(format!(
            "base_dilations = {}",
            array(&get(|d| d.base_dilation.max(1)))
        ));
        a.push(format!(
            "window_dilations = {}",
            array(&get(|d| d.window_dilation.max(1)))
        ));
    }
    a
}

/// `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`.
pub(super) fn conv_labels(d: &ConvolutionDimensionNumbers) -> Result<String, ImportError> {
    fn one(rank: usize, named: &[(i64, &str)], spatial: &[i64]) -> Result<String, ImportError> {
        let mut labels = vec![String::new(); rank];
        let mut set = |pos: i64, l: String| -> Result<(), ImportError> {
            let slot = usize::try_from(pos)
                .ok()
                .and_then(|p| labels.get_mut(p))
                .ok_or_else(|| ImportError::malformed(format!("convolution dimension {pos}")))?;
            *slot = l;
            Ok(())
        };
        for &(pos, l) in named {
            set(pos, l.to_string())?;
        }
        for (k, &pos) in spatial.iter().enumerate() {
            set(pos, k.to_string())?;
        }
        Ok(format!("[{}]", labels.join(", ")))
    }
    let rank = d.input_spatial_dimensions.len() + 2;
    Ok(format!(
        "#stablehlo.conv<{}x{}->{}>",
        one(
            rank,
            &[
                (d.input_batch_dimension, "b"),
                (d.input_feature_dimension, "f")
            ],
            &d.input_spatial_dimensions
        )?,
        one(
            rank,
            &[
                (d.kernel_input_feature_dimension, "i"),
                (d.kernel_output_feature_dimension, "o")
            ],
            &d.kernel_spatial_dimensions
        )?,
        one(
            rank,
            &[
                (d.output_batch_dimension, "b"),
                (d.output_feature_dimension, "f")
            ],
            &d.output_spatial_dimensions
        )?,
    ))
}

pub(super) fn conv_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let d = i
        .convolution_dimension_numbers
        .as_ref()
        .ok_or_else(|| ImportError::malformed("convolution without dimension numbers"))?;
    let default = Window::default();
    let w = i.window.as_ref().unwrap_or(&default);
    let get = |f: fn(&crate::hlo::proto::WindowDimension) -> i64| -> Vec<i64> {
        w.dimensions.iter().map(f).collect()
    };
    let reversal: Vec<&str> = w
        .dimensions
        .iter()
        .map(|d| if d.window_reversal { "true" } else { "false" })
        .collect();
    let mut a = vec![
        format!("batch_group_count = {} : i64", i.batch_group_count.max(1)),
        format!("dimension_numbers = {}", conv_labels(d)?),
        format!(
            "feature_group_count = {} : i64",
            i.feature_group_count.max(1)
        ),
    ];
    if !w.dimensions.is_empty() {
        a.push(format!(
            "lhs_dilation = {}",
            array(&get(|d| d.base_dilation.max(1)))
        ));
        a.push(padding_attr(w));
        a.push(format!(
            "rhs_dilation = {}",
            array(&get(|d| d.window_dilation.max(1)))
        ));
        a.push(format!(
            "window_reversal = array<i1: {}>",
            reversal.join(", ")
        ));
        a.push(format!(
            "window_strides = {}",
            array(&get(|d| d.stride.max(1)))
        ));
    }
    Ok(a)
}

pub(super) fn triangular_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let o = i
        .triangular_solve_options
        .as_ref()
        .ok_or_else(|| ImportError::malformed("triangular-solve without options"))?;
    let t = match TriangularTranspose::try_from(o.transpose_a) {
        Ok(TriangularTranspose::Transpose) => "TRANSPOSE",
        Ok(TriangularTranspose::Adjoint) => "ADJOINT",
        _ => "NO_TRANSPOSE",
    };
    Ok(vec![
        format!("left_side = {}", o.left_side),
        format!("lower = {}", o.lower),
        format!("transpose_a = #stablehlo<transpose {t}>"),
        format!("unit_diagonal = {}", o.unit_diagonal),
    ])
}

pub(super) fn fft_attrs(i: &HloInstructionProto) -> Result<Vec<String>, ImportError> {
    let t = match FftType::try_from(i.fft_type) {
        Ok(FftType::Fft) => "FFT",
        Ok(FftType::Ifft) => "IFFT",
        Ok(FftType::Rfft) => "RFFT",
        Ok(FftType::Irfft) => "IRFFT",
        Err(_) => return Err(ImportError::malformed(format!("fft type {}", i.fft_type))),
    };
    Ok(vec![
        format!("fft_length = {}", array(&i.fft_length)),
        format!("fft_type = #stablehlo<fft_type {t}>"),
    ])
}
