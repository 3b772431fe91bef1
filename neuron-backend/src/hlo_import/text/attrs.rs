//! Instruction attributes of HLO text (`dimensions={1}`, `window={size=2x2 stride=2x2}`,
//! `dim_labels=b01f_01io->b01f`, `slice={[0:4:2]}`, `padding=0_1x2_0_1`, …) into the
//! fields of an `HloInstructionProto`.
//!
//! Owns: [`attribute`] (one `key=value`) and [`defaults`] (the values the text omits).
//! Invariants: every key is either stored in the proto, recorded as a called
//! computation, dropped because it cannot change what the instruction computes
//! ([`IGNORED`]: source locations, sharding and scheduling hints, fusion kinds, backend
//! hints of non-custom-calls), or refused with [`ImportError::Unsupported`] naming it and
//! its position; a value that does not fit its key's syntax is an error saying what
//! was expected there.

use super::super::ImportError;
use super::lex::{Cursor, PResult};
use super::parse::{shape, Called, RawInstr};
use super::values::{
    aliasing, backend_config, dim_labels, padding, pairs, precision, replica_groups, slices, window,
};
use crate::hlo::proto::*;

/// Keys whose values never change what an instruction computes: read and dropped.
const IGNORED: &[&str] = &[
    "metadata",
    "sharding",
    "frontend_attributes",
    "kind",
    "control-predecessors",
    "statistics",
    "origin",
    "schedule",
    "custom_call_schedule",
    "parameter_replication",
    "is_cross_program_prefetch",
    "cross_program_prefetch_index",
    "domain",
];

/// Keys naming called computations.
const CALLED: &[&str] = &[
    "to_apply",
    "calls",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
];

/// Reads one `key=value` after an instruction's `,` into `raw`.
pub(super) fn attribute<'a>(c: &mut Cursor<'a>, raw: &mut RawInstr<'a>) -> PResult<()> {
    let (key, at) = c.expect_name("an attribute name")?;
    c.expect("=")?;
    let op = raw.proto.opcode.clone();
    if IGNORED.contains(&key) || (key == "backend_config" && op != "custom-call") {
        c.skip_value()?;
        return Ok(());
    }
    if CALLED.contains(&key) {
        let names = if c.at("{") {
            name_set(c)?
        } else {
            vec![comp_name(c)?]
        };
        raw.called.push(Called {
            key: if key == "calls" { "to_apply" } else { key },
            pos: at,
            names,
        });
        return Ok(());
    }
    let i = &mut raw.proto;
    if scalar_attr(c, i, key, &op)? || dims_attr(c, i, key, &op)? || option_attr(c, i, key)? {
        return Ok(());
    }
    match key {
        "slice" => i.slice_dimensions = slices(c)?,
        "padding" => i.padding_config = Some(padding(c)?),
        "window" => i.window = Some(window(c)?),
        "dim_labels" => i.convolution_dimension_numbers = Some(dim_labels(c)?),
        "operand_precision" => i.precision_config = Some(precision(c)?),
        "replica_groups" => i.replica_groups = replica_groups(c)?,
        "source_target_pairs" => i.source_target_pairs = pairs(c)?,
        "custom_call_target" => i.custom_call_target = c.string()?,
        "backend_config" => i.backend_config = backend_config(c)?,
        "operand_layout_constraints" => {
            i.operand_shapes_with_layout = c.braced(|c| Ok(shape(c)?.0))?;
            i.constrain_layout = true;
        }
        "output_to_operand_aliasing" => i.output_operand_aliasing = aliasing(c)?,
        _ => return Err(c.unsupported(at, format!("attribute `{key}` on `{op}`"))),
    }
    Ok(())
}

/// Values the text leaves out when they are the default.
pub(super) fn defaults(i: &mut HloInstructionProto) {
    if i.opcode == "convolution" {
        i.feature_group_count = i.feature_group_count.max(1);
        i.batch_group_count = i.batch_group_count.max(1);
    }
    if i.opcode == "dot" && i.dot_dimension_numbers.is_none() {
        i.dot_dimension_numbers = Some(DotDimensionNumbers::default());
    }
    if i.opcode == "custom-call" && i.custom_call_api_version == 0 {
        i.custom_call_api_version = CustomCallApiVersion::ApiVersionOriginal as i32;
    }
}

/// Integer and boolean attributes; false if `key` is not one.
fn scalar_attr(
    c: &mut Cursor<'_>,
    i: &mut HloInstructionProto,
    key: &str,
    op: &str,
) -> PResult<bool> {
    match key {
        "index" => i.tuple_index = c.int()?,
        "iota_dimension" => i.dimensions = vec![c.int()?],
        "exponent_bits" => i.exponent_bits = int32(c)?,
        "mantissa_bits" => i.mantissa_bits = int32(c)?,
        "feature_index" => i.feature_index = c.int()?,
        "feature_group_count" => i.feature_group_count = c.int()?,
        "batch_group_count" => i.batch_group_count = c.int()?,
        "channel_id" => i.channel_id = c.int()?,
        "epsilon" => {
            let (t, at) = c.scalar()?;
            i.epsilon = t
                .parse::<f32>()
                .map_err(|_| c.error_at(at, expected("a floating-point number", t)))?;
        }
        "indices_are_sorted" => i.indices_are_sorted = boolean(c)?,
        "unique_indices" => i.unique_indices = boolean(c)?,
        "is_stable" => i.is_stable = boolean(c)?,
        "use_global_device_ids" => i.use_global_device_ids = boolean(c)?,
        "custom_call_has_side_effect" => i.custom_call_has_side_effect = boolean(c)?,
        "k" => i.k = c.int()?,
        "is_composite" => i.is_composite = boolean(c)?,
        "constrain_layout" => i.constrain_layout = boolean(c)?,
        "largest" => i.largest = boolean(c)?,
        "lower" if op == "cholesky" => {
            i.cholesky_options = Some(CholeskyOptions { lower: boolean(c)? })
        }
        "lower" | "left_side" | "unit_diagonal" => {
            let v = boolean(c)?;
            let o = i
                .triangular_solve_options
                .get_or_insert_with(triangular_default);
            match key {
                "lower" => o.lower = v,
                "left_side" => o.left_side = v,
                _ => o.unit_diagonal = v,
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Integer-set attributes (`{1,2}`); false if `key` is not one.
fn dims_attr(
    c: &mut Cursor<'_>,
    i: &mut HloInstructionProto,
    key: &str,
    op: &str,
) -> PResult<bool> {
    let gather = || GatherDimensionNumbers::default();
    let scatter = || ScatterDimensionNumbers::default();
    let dot = || DotDimensionNumbers::default();
    match key {
        "dimensions" => i.dimensions = set(c)?,
        "dynamic_slice_sizes" => i.dynamic_slice_sizes = set(c)?,
        "fft_length" => i.fft_length = set(c)?,
        "slice_sizes" => i.gather_slice_sizes = set(c)?,
        "lhs_batch_dims" => {
            i.dot_dimension_numbers
                .get_or_insert_with(dot)
                .lhs_batch_dimensions = set(c)?
        }
        "rhs_batch_dims" => {
            i.dot_dimension_numbers
                .get_or_insert_with(dot)
                .rhs_batch_dimensions = set(c)?
        }
        "lhs_contracting_dims" => {
            i.dot_dimension_numbers
                .get_or_insert_with(dot)
                .lhs_contracting_dimensions = set(c)?
        }
        "rhs_contracting_dims" => {
            i.dot_dimension_numbers
                .get_or_insert_with(dot)
                .rhs_contracting_dimensions = set(c)?
        }
        "offset_dims" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .offset_dims = set(c)?
        }
        "collapsed_slice_dims" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .collapsed_slice_dims = set(c)?
        }
        "start_index_map" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .start_index_map = set(c)?
        }
        "operand_batching_dims" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .operand_batching_dims = set(c)?
        }
        "start_indices_batching_dims" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .start_indices_batching_dims = set(c)?
        }
        "update_window_dims" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .update_window_dims = set(c)?
        }
        "inserted_window_dims" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .inserted_window_dims = set(c)?
        }
        "scatter_dims_to_operand_dims" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .scatter_dims_to_operand_dims = set(c)?
        }
        "input_batching_dims" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .input_batching_dims = set(c)?
        }
        "scatter_indices_batching_dims" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .scatter_indices_batching_dims = set(c)?
        }
        "index_vector_dim" if op == "scatter" => {
            i.scatter_dimension_numbers
                .get_or_insert_with(scatter)
                .index_vector_dim = c.int()?
        }
        "index_vector_dim" => {
            i.gather_dimension_numbers
                .get_or_insert_with(gather)
                .index_vector_dim = c.int()?
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// Enumerated options (`direction=LT`, `fft_type=RFFT`, …); false if `key` is not one.
fn option_attr(c: &mut Cursor<'_>, i: &mut HloInstructionProto, key: &str) -> PResult<bool> {
    const DIRECTIONS: &[&str] = &["EQ", "NE", "LT", "LE", "GT", "GE"];
    const TYPES: &[&str] = &["FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"];
    const FFTS: &[&str] = &["FFT", "IFFT", "RFFT", "IRFFT"];
    const DISTRIBUTIONS: &[&str] = &["rng_invalid", "rng_uniform", "rng_normal"];
    const ALGORITHMS: &[&str] = &["rng_default", "rng_three_fry", "rng_philox"];
    const TRANSPOSES: &[&str] = &["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"];
    const APIS: &[&str] = &[
        "API_VERSION_UNSPECIFIED",
        "API_VERSION_ORIGINAL",
        "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED",
        "API_VERSION_TYPED_FFI",
    ];
    let table = match key {
        "direction" => DIRECTIONS,
        "type" => TYPES,
        "fft_type" => FFTS,
        "distribution" => DISTRIBUTIONS,
        "algorithm" if i.opcode == "rng-bit-generator" => ALGORITHMS,
        "transpose_a" => TRANSPOSES,
        "api_version" => APIS,
        _ => return Ok(false),
    };
    let k = one_of(c, table)?;
    let name = table.get(k).copied().unwrap_or_default().to_string();
    let k = k as i32;
    match key {
        "direction" => i.comparison_direction = name,
        "type" => i.comparison_type = name,
        "fft_type" => i.fft_type = k,
        "distribution" => i.distribution = k,
        "algorithm" => i.rng_algorithm = k,
        "api_version" => i.custom_call_api_version = k,
        _ => {
            i.triangular_solve_options
                .get_or_insert_with(triangular_default)
                .transpose_a = k
        }
    }
    Ok(true)
}

fn triangular_default() -> TriangularSolveOptions {
    TriangularSolveOptions {
        transpose_a: TriangularTranspose::NoTranspose as i32,
        ..Default::default()
    }
}

pub(super) fn expected(what: &str, found: &str) -> ImportError {
    ImportError::Expected {
        expected: what.to_string(),
        found: format!("`{found}`"),
    }
}

/// The index in `table` of the next name.
pub(super) fn one_of(c: &mut Cursor<'_>, table: &[&str]) -> PResult<usize> {
    let what = format!("one of {}", table.join(", "));
    let (n, at) = c.expect_name(&what)?;
    table
        .iter()
        .position(|t| *t == n)
        .ok_or_else(|| c.error_at(at, expected(&what, n)))
}

fn boolean(c: &mut Cursor<'_>) -> PResult<bool> {
    Ok(one_of(c, &["false", "true"])? == 1)
}

fn int32(c: &mut Cursor<'_>) -> PResult<i32> {
    let at = c.pos;
    let v = c.int()?;
    i32::try_from(v).map_err(|_| c.error_at(at, expected("a 32-bit integer", &v.to_string())))
}

/// `{1,2,3}` or `{}`.
pub(super) fn set(c: &mut Cursor<'_>) -> PResult<Vec<i64>> {
    c.braced(|c| c.int())
}

/// A computation name.
fn comp_name<'a>(c: &mut Cursor<'a>) -> PResult<(&'a str, usize)> {
    c.expect_name("a computation name")
}

/// `{%a, %b}`.
fn name_set<'a>(c: &mut Cursor<'a>) -> PResult<Vec<(&'a str, usize)>> {
    c.braced(comp_name)
}
