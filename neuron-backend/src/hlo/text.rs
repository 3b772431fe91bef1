//! HLO text printer: renders an emitted [`HloModuleProto`] in the syntax of XLA's HLO
//! text format (the one `HloModule::ToString` prints and XLA's HLO parser reads).
//!
//! Owns: [`print_hlo_text`].
//! Invariants: the text is derived from the proto alone, so the two artifacts describe the
//! same module; output is deterministic (attributes in a fixed order, maps sorted).

use super::proto::*;
use std::fmt::Write;

/// Prints a module as HLO text.
pub fn print_hlo_text(m: &HloModuleProto) -> String {
    let mut out = String::new();
    let names: std::collections::HashMap<i64, &str> = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| (i.id, i.name.as_str())))
        .chain(m.computations.iter().map(|c| (c.id, c.name.as_str())))
        .collect();
    let _ = write!(out, "HloModule {}", m.name);
    if let Some(ps) = &m.host_program_shape {
        let params: Vec<_> = ps.parameters.iter().map(shape).collect();
        let res = ps.result.as_ref().map(shape).unwrap_or_default();
        let _ = write!(
            out,
            ", entry_computation_layout={{({})->{res}}}",
            params.join(", ")
        );
    }
    if let Some(a) = &m.input_output_alias {
        let items: Vec<_> = a
            .entries
            .iter()
            .map(|e| {
                let kind = if e.kind == AliasKind::MustAlias as i32 {
                    "must-alias"
                } else {
                    "may-alias"
                };
                format!(
                    "{{{}}}: ({}, {{{}}}, {kind})",
                    list(&e.output_shape_index),
                    e.parameter_number,
                    list(&e.parameter_shape_index)
                )
            })
            .collect();
        let _ = write!(out, ", input_output_alias={{ {} }}", items.join(", "));
    }
    if let Some(d) = &m.buffer_donor {
        let items: Vec<_> = d
            .entries
            .iter()
            .map(|e| {
                format!(
                    "({}, {{{}}})",
                    e.parameter_number,
                    list(&e.parameter_shape_index)
                )
            })
            .collect();
        let _ = write!(out, ", buffer_donor={{ {} }}", items.join(", "));
    }
    if let Some(fa) = &m.frontend_attributes {
        let _ = write!(out, ", frontend_attributes={}", frontend(fa));
    }
    out.push_str("\n\n");
    for c in &m.computations {
        if c.id == m.entry_computation_id {
            out.push_str("ENTRY ");
        }
        let _ = writeln!(out, "{} {{", c.name);
        for i in &c.instructions {
            out.push_str(if i.id == c.root_id { "  ROOT " } else { "  " });
            instruction(&mut out, i, &names);
            out.push('\n');
        }
        out.push_str("}\n\n");
    }
    out
}

fn list(v: &[i64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn prim_name(p: i32) -> String {
    PrimitiveType::try_from(p)
        .map(|p| match p {
            PrimitiveType::Pred => "pred".to_string(),
            PrimitiveType::OpaqueType => "opaque".to_string(),
            other => format!("{other:?}").to_lowercase(),
        })
        .unwrap_or_else(|_| "invalid".into())
}

/// `f32[2,3]{1,0}`, `(f32[], s32[4]{0})`, `token[]`.
pub fn shape(s: &ShapeProto) -> String {
    if s.element_type == PrimitiveType::Tuple as i32 {
        let parts: Vec<_> = s.tuple_shapes.iter().map(shape).collect();
        return format!("({})", parts.join(", "));
    }
    let mut t = format!("{}[{}]", prim_name(s.element_type), list(&s.dimensions));
    if let Some(l) = &s.layout {
        if !s.dimensions.is_empty() {
            let _ = write!(t, "{{{}}}", list(&l.minor_to_major));
        }
    }
    t
}

fn frontend(fa: &FrontendAttributes) -> String {
    let items: Vec<_> = fa
        .map
        .iter()
        .map(|(k, v)| format!("{k}={}", quote(v)))
        .collect();
    format!("{{{}}}", items.join(","))
}

fn quote(s: &str) -> String {
    let mut q = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            '\n' => q.push_str("\\n"),
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

fn instruction(
    out: &mut String,
    i: &HloInstructionProto,
    names: &std::collections::HashMap<i64, &str>,
) {
    let name_of = |id: &i64| names.get(id).copied().unwrap_or("?").to_string();
    let s = i.shape.as_ref().map(shape).unwrap_or_default();
    let _ = write!(out, "{} = {s} {}(", i.name, i.opcode);
    match i.opcode.as_str() {
        "parameter" => {
            let _ = write!(out, "{}", i.parameter_number);
        }
        "constant" => out.push_str(&i.literal.as_ref().map(literal).unwrap_or_default()),
        _ => out.push_str(
            &i.operand_ids
                .iter()
                .map(name_of)
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
    out.push(')');
    for a in attributes(i, &name_of) {
        out.push_str(", ");
        out.push_str(&a);
    }
}

/// The `key=value` attributes of an instruction, in a fixed order.
fn attributes(i: &HloInstructionProto, name_of: &dyn Fn(&i64) -> String) -> Vec<String> {
    let mut a = Vec::new();
    let op = i.opcode.as_str();
    let set = |v: &[i64]| format!("{{{}}}", list(v));
    match op {
        "get-tuple-element" => a.push(format!("index={}", i.tuple_index)),
        "iota" => a.push(format!(
            "iota_dimension={}",
            i.dimensions.first().unwrap_or(&0)
        )),
        "broadcast" | "transpose" | "reverse" | "reduce" | "concatenate" | "sort" | "map"
        | "all-gather" | "reduce-scatter" | "all-to-all" => {
            a.push(format!("dimensions={}", set(&i.dimensions)))
        }
        "slice" => {
            let parts: Vec<_> = i
                .slice_dimensions
                .iter()
                .map(|d| format!("[{}:{}:{}]", d.start, d.limit, d.stride))
                .collect();
            a.push(format!("slice={{{}}}", parts.join(", ")));
        }
        "dynamic-slice" => a.push(format!(
            "dynamic_slice_sizes={}",
            set(&i.dynamic_slice_sizes)
        )),
        "pad" => {
            if let Some(p) = &i.padding_config {
                let parts: Vec<_> = p
                    .dimensions
                    .iter()
                    .map(|d| {
                        format!(
                            "{}_{}_{}",
                            d.edge_padding_low, d.edge_padding_high, d.interior_padding
                        )
                    })
                    .collect();
                a.push(format!("padding={}", parts.join("x")));
            }
        }
        "compare" => {
            a.push(format!("direction={}", i.comparison_direction));
            a.push(format!("type={}", i.comparison_type));
        }
        "reduce-precision" => {
            a.push(format!("exponent_bits={}", i.exponent_bits));
            a.push(format!("mantissa_bits={}", i.mantissa_bits));
        }
        "batch-norm-training" | "batch-norm-inference" | "batch-norm-grad" => {
            a.push(format!("epsilon={}", float(i.epsilon as f64)));
            a.push(format!("feature_index={}", i.feature_index));
        }
        "rng" => a.push(
            if i.distribution == RandomDistribution::RngNormal as i32 {
                "distribution=rng_normal"
            } else {
                "distribution=rng_uniform"
            }
            .into(),
        ),
        "rng-bit-generator" => a.push(format!(
            "algorithm={}",
            ["rng_default", "rng_three_fry", "rng_philox"][i.rng_algorithm.clamp(0, 2) as usize]
        )),
        "cholesky" => a.push(format!(
            "lower={}",
            i.cholesky_options.as_ref().is_some_and(|o| o.lower)
        )),
        "fft" => {
            let t = ["FFT", "IFFT", "RFFT", "IRFFT"][i.fft_type.clamp(0, 3) as usize];
            a.push(format!("fft_type={t}"));
            a.push(format!("fft_length={}", set(&i.fft_length)));
        }
        _ => {}
    }
    if let Some(t) = &i.triangular_solve_options {
        let tr = ["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"]
            [t.transpose_a.clamp(0, 3) as usize];
        a.push(format!(
            "left_side={}, lower={}, unit_diagonal={}, transpose_a={tr}",
            t.left_side, t.lower, t.unit_diagonal
        ));
    }
    if let Some(w) = &i.window {
        a.push(format!("window={{{}}}", window(w)));
    }
    if let Some(d) = &i.convolution_dimension_numbers {
        a.push(format!("dim_labels={}", dim_labels(d)));
    }
    if op == "convolution" {
        if i.feature_group_count > 1 {
            a.push(format!("feature_group_count={}", i.feature_group_count));
        }
        if i.batch_group_count > 1 {
            a.push(format!("batch_group_count={}", i.batch_group_count));
        }
    }
    if let Some(d) = &i.dot_dimension_numbers {
        for (k, v) in [
            ("lhs_batch_dims", &d.lhs_batch_dimensions),
            ("lhs_contracting_dims", &d.lhs_contracting_dimensions),
            ("rhs_batch_dims", &d.rhs_batch_dimensions),
            ("rhs_contracting_dims", &d.rhs_contracting_dimensions),
        ] {
            if !v.is_empty() {
                a.push(format!("{k}={}", set(v)));
            }
        }
    }
    if let Some(p) = &i.precision_config {
        if p.operand_precision.iter().any(|&x| x != 0) {
            let names: Vec<_> = p
                .operand_precision
                .iter()
                .map(|&x| ["default", "high", "highest"][x.clamp(0, 2) as usize])
                .collect();
            a.push(format!("operand_precision={{{}}}", names.join(",")));
        }
    }
    if let Some(g) = &i.gather_dimension_numbers {
        a.push(format!("offset_dims={}", set(&g.offset_dims)));
        a.push(format!(
            "collapsed_slice_dims={}",
            set(&g.collapsed_slice_dims)
        ));
        a.push(format!("start_index_map={}", set(&g.start_index_map)));
        if !g.operand_batching_dims.is_empty() {
            a.push(format!(
                "operand_batching_dims={}",
                set(&g.operand_batching_dims)
            ));
            a.push(format!(
                "start_indices_batching_dims={}",
                set(&g.start_indices_batching_dims)
            ));
        }
        a.push(format!("index_vector_dim={}", g.index_vector_dim));
        a.push(format!("slice_sizes={}", set(&i.gather_slice_sizes)));
    }
    if let Some(s) = &i.scatter_dimension_numbers {
        a.push(format!("update_window_dims={}", set(&s.update_window_dims)));
        a.push(format!(
            "inserted_window_dims={}",
            set(&s.inserted_window_dims)
        ));
        a.push(format!(
            "scatter_dims_to_operand_dims={}",
            set(&s.scatter_dims_to_operand_dims)
        ));
        if !s.input_batching_dims.is_empty() {
            a.push(format!(
                "input_batching_dims={}",
                set(&s.input_batching_dims)
            ));
            a.push(format!(
                "scatter_indices_batching_dims={}",
                set(&s.scatter_indices_batching_dims)
            ));
        }
        a.push(format!("index_vector_dim={}", s.index_vector_dim));
    }
    if i.indices_are_sorted {
        a.push("indices_are_sorted=true".into());
    }
    if i.unique_indices {
        a.push("unique_indices=true".into());
    }
    if i.is_stable {
        a.push("is_stable=true".into());
    }
    collective_attrs(i, &mut a);
    called(i, name_of, &mut a);
    custom_call_attrs(i, &mut a);
    if let Some(fa) = &i.frontend_attributes {
        a.push(format!("frontend_attributes={}", frontend(fa)));
    }
    a
}

fn collective_attrs(i: &HloInstructionProto, a: &mut Vec<String>) {
    if !i.replica_groups.is_empty() {
        let g: Vec<_> = i
            .replica_groups
            .iter()
            .map(|g| format!("{{{}}}", list(&g.replica_ids)))
            .collect();
        a.push(format!("replica_groups={{{}}}", g.join(",")));
    }
    if !i.source_target_pairs.is_empty() {
        let g: Vec<_> = i
            .source_target_pairs
            .iter()
            .map(|p| format!("{{{},{}}}", p.source, p.target))
            .collect();
        a.push(format!("source_target_pairs={{{}}}", g.join(",")));
    }
    if i.channel_id > 0 {
        a.push(format!("channel_id={}", i.channel_id));
    }
    if i.use_global_device_ids {
        a.push("use_global_device_ids=true".into());
    }
}

/// Called-computation attributes, named as the HLO parser expects per opcode.
fn called(i: &HloInstructionProto, name_of: &dyn Fn(&i64) -> String, a: &mut Vec<String>) {
    let c: Vec<String> = i.called_computation_ids.iter().map(name_of).collect();
    match (i.opcode.as_str(), c.as_slice()) {
        (_, []) => {}
        ("while", [body, cond]) => {
            a.push(format!("condition={cond}"));
            a.push(format!("body={body}"));
        }
        ("select-and-scatter", [sel, sc]) => {
            a.push(format!("select={sel}"));
            a.push(format!("scatter={sc}"));
        }
        ("conditional", _) => a.push(format!("branch_computations={{{}}}", c.join(", "))),
        (_, [one]) => a.push(format!("to_apply={one}")),
        _ => a.push(format!("called_computations={{{}}}", c.join(", "))),
    }
}

fn custom_call_attrs(i: &HloInstructionProto, a: &mut Vec<String>) {
    if i.opcode != "custom-call" {
        return;
    }
    a.push(format!(
        "custom_call_target={}",
        quote(&i.custom_call_target)
    ));
    if i.custom_call_has_side_effect {
        a.push("custom_call_has_side_effect=true".into());
    }
    if !i.backend_config.is_empty() {
        let b = String::from_utf8_lossy(&i.backend_config);
        a.push(format!("backend_config={}", quote(&b)));
    }
    let api = [
        "API_VERSION_UNSPECIFIED",
        "API_VERSION_ORIGINAL",
        "API_VERSION_STATUS_RETURNING",
        "API_VERSION_STATUS_RETURNING_UNIFIED",
        "API_VERSION_TYPED_FFI",
    ][i.custom_call_api_version.clamp(0, 4) as usize];
    a.push(format!("api_version={api}"));
    if i.constrain_layout && !i.operand_shapes_with_layout.is_empty() {
        let l: Vec<_> = i.operand_shapes_with_layout.iter().map(shape).collect();
        a.push(format!("operand_layout_constraints={{{}}}", l.join(", ")));
    }
    if !i.output_operand_aliasing.is_empty() {
        let items: Vec<_> = i
            .output_operand_aliasing
            .iter()
            .map(|o| {
                format!(
                    "{{{}}}: ({}, {{{}}})",
                    list(&o.output_shape_index),
                    o.operand_index,
                    list(&o.operand_shape_index)
                )
            })
            .collect();
        a.push(format!(
            "output_to_operand_aliasing={{{}}}",
            items.join(", ")
        ));
    }
}

fn window(w: &Window) -> String {
    let join = |f: &dyn Fn(&WindowDimension) -> String| {
        w.dimensions.iter().map(f).collect::<Vec<_>>().join("x")
    };
    let mut parts = vec![format!("size={}", join(&|d| d.size.to_string()))];
    let any = |f: &dyn Fn(&WindowDimension) -> bool| w.dimensions.iter().any(f);
    if any(&|d| d.stride != 1) {
        parts.push(format!("stride={}", join(&|d| d.stride.to_string())));
    }
    if any(&|d| d.padding_low != 0 || d.padding_high != 0) {
        parts.push(format!(
            "pad={}",
            join(&|d| format!("{}_{}", d.padding_low, d.padding_high))
        ));
    }
    if any(&|d| d.base_dilation != 1) {
        parts.push(format!(
            "lhs_dilate={}",
            join(&|d| d.base_dilation.to_string())
        ));
    }
    if any(&|d| d.window_dilation != 1) {
        parts.push(format!(
            "rhs_dilate={}",
            join(&|d| d.window_dilation.to_string())
        ));
    }
    if any(&|d| d.window_reversal) {
        parts.push(format!(
            "rhs_reversal={}",
            join(&|d| u8::from(d.window_reversal).to_string())
        ));
    }
    parts.join(" ")
}

/// `b01f_01io->b01f` style labels.
fn dim_labels(d: &ConvolutionDimensionNumbers) -> String {
    fn labels(rank: usize, fixed: &[(i64, char)], spatial: &[i64]) -> String {
        let mut v = vec!['?'; rank];
        for &(dim, ch) in fixed {
            if let Some(x) = v.get_mut(dim as usize) {
                *x = ch;
            }
        }
        for (k, &dim) in spatial.iter().enumerate() {
            if let Some(x) = v.get_mut(dim as usize) {
                *x = char::from_digit(k as u32, 36).unwrap_or('?');
            }
        }
        v.into_iter().collect()
    }
    let r = d.input_spatial_dimensions.len() + 2;
    format!(
        "{}_{}->{}",
        labels(
            r,
            &[
                (d.input_batch_dimension, 'b'),
                (d.input_feature_dimension, 'f')
            ],
            &d.input_spatial_dimensions
        ),
        labels(
            r,
            &[
                (d.kernel_input_feature_dimension, 'i'),
                (d.kernel_output_feature_dimension, 'o')
            ],
            &d.kernel_spatial_dimensions
        ),
        labels(
            r,
            &[
                (d.output_batch_dimension, 'b'),
                (d.output_feature_dimension, 'f')
            ],
            &d.output_spatial_dimensions
        ),
    )
}

fn float(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        format!("{v:?}")
    }
}

/// The flat element strings of a literal.
fn elements(l: &LiteralProto) -> Vec<String> {
    fn le<const N: usize>(b: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
        b.chunks_exact(N).map(|c| {
            let mut a = [0u8; N];
            a.copy_from_slice(c);
            a
        })
    }
    let f32s = |v: &[f32]| v.iter().map(|&x| float(x as f64)).collect::<Vec<_>>();
    let p = l
        .shape
        .as_ref()
        .and_then(|s| PrimitiveType::try_from(s.element_type).ok());
    use PrimitiveType as P;
    match p {
        Some(P::Pred) => l.preds.iter().map(|b| b.to_string()).collect(),
        Some(P::S8) => l.s8s.iter().map(|&b| (b as i8).to_string()).collect(),
        Some(P::U8) => l.u8s.iter().map(|b| b.to_string()).collect(),
        Some(P::S4 | P::S2) => l
            .s4s
            .iter()
            .chain(&l.s2s)
            .map(|&b| (b as i8).to_string())
            .collect(),
        Some(P::U4 | P::U2) => l.u4s.iter().chain(&l.u2s).map(|b| b.to_string()).collect(),
        Some(P::S16) => le::<2>(&l.s16s)
            .map(|b| i16::from_le_bytes(b).to_string())
            .collect(),
        Some(P::U16) => le::<2>(&l.u16s)
            .map(|b| u16::from_le_bytes(b).to_string())
            .collect(),
        Some(P::F16) => le::<2>(&l.f16s)
            .map(|b| float(half::f16::from_le_bytes(b).to_f64()))
            .collect(),
        Some(P::Bf16) => le::<2>(&l.bf16s)
            .map(|b| float(half::bf16::from_le_bytes(b).to_f64()))
            .collect(),
        Some(P::S32) => l.s32s.iter().map(|x| x.to_string()).collect(),
        Some(P::U32) => l.u32s.iter().map(|x| x.to_string()).collect(),
        Some(P::S64) => l.s64s.iter().map(|x| x.to_string()).collect(),
        Some(P::U64) => l.u64s.iter().map(|x| x.to_string()).collect(),
        Some(P::F32) => f32s(&l.f32s),
        Some(P::F64) => l.f64s.iter().map(|&x| float(x)).collect(),
        Some(P::C64) => l
            .c64s
            .chunks(2)
            .map(|c| format!("({}, {})", float(c[0] as f64), float(c[1] as f64)))
            .collect(),
        Some(P::C128) => l
            .c128s
            .chunks(2)
            .map(|c| format!("({}, {})", float(c[0]), float(c[1])))
            .collect(),
        // 8-bit floats: the raw codes are not printable without a decoder; the proto is
        // the normative artifact.
        _ => Vec::new(),
    }
}

/// `1.5`, `{1, 2}`, `{ {1, 2}, {3, 4} }`.
fn literal(l: &LiteralProto) -> String {
    let dims = l
        .shape
        .as_ref()
        .map(|s| s.dimensions.clone())
        .unwrap_or_default();
    let elems = elements(l);
    if dims.is_empty() {
        return elems.into_iter().next().unwrap_or_default();
    }
    let mut out = String::new();
    nest(&mut out, &dims, &elems, &mut 0);
    out
}

fn nest(out: &mut String, dims: &[i64], elems: &[String], pos: &mut usize) {
    out.push('{');
    let n = dims[0].max(0) as usize;
    for k in 0..n {
        if k > 0 {
            out.push_str(", ");
        }
        if dims.len() == 1 {
            out.push_str(elems.get(*pos).map(String::as_str).unwrap_or("0"));
            *pos += 1;
        } else {
            nest(out, &dims[1..], elems, pos);
        }
    }
    out.push('}');
}
