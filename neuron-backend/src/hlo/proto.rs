//! The subset of XLA's `xla.HloModuleProto` message family that neuronc emits, as
//! hand-written `prost` messages.
//!
//! Owns: the wire format. Field numbers and enum values are facts taken from XLA's public
//! `xla/service/hlo.proto` and `xla/xla_data.proto` (openxla/xla); message and field names
//! follow them so that a reader can check one against the other. Fields neuronc never
//! sets are left out: protobuf readers skip absent fields, so a subset encodes a valid
//! message.
//! Invariants: field numbers never change; the `prost` encoding of a message is a pure
//! function of its contents (maps are `BTreeMap`s so their entries are written in key
//! order), which is what makes emission byte-deterministic.

use std::collections::BTreeMap;

/// `xla.PrimitiveType` (xla_data.proto).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum PrimitiveType {
    PrimitiveTypeInvalid = 0,
    Pred = 1,
    S2 = 26,
    S4 = 21,
    S8 = 2,
    S16 = 3,
    S32 = 4,
    S64 = 5,
    U2 = 27,
    U4 = 22,
    U8 = 6,
    U16 = 7,
    U32 = 8,
    U64 = 9,
    F16 = 10,
    F32 = 11,
    Bf16 = 16,
    F64 = 12,
    F8e5m2 = 19,
    F8e4m3 = 28,
    F8e4m3fn = 20,
    F8e4m3b11fnuz = 23,
    F8e3m4 = 29,
    F8e5m2fnuz = 24,
    F8e4m3fnuz = 25,
    F4e2m1fn = 32,
    F8e8m0fnu = 33,
    C64 = 15,
    C128 = 18,
    Tuple = 13,
    OpaqueType = 14,
    Token = 17,
}

/// `xla.LayoutProto`: only the dense minor-to-major order is used.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LayoutProto {
    #[prost(int64, repeated, tag = "1")]
    pub minor_to_major: Vec<i64>,
}

/// `xla.ShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShapeProto {
    #[prost(enumeration = "PrimitiveType", tag = "2")]
    pub element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
    #[prost(message, optional, tag = "5")]
    pub layout: Option<LayoutProto>,
    #[prost(bool, repeated, tag = "6")]
    pub is_dynamic_dimension: Vec<bool>,
}

/// `xla.ProgramShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProgramShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub parameters: Vec<ShapeProto>,
    #[prost(message, optional, tag = "2")]
    pub result: Option<ShapeProto>,
    #[prost(string, repeated, tag = "3")]
    pub parameter_names: Vec<String>,
}

/// `xla.OpMetadata` (source location of an instruction).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
    #[prost(string, tag = "3")]
    pub source_file: String,
    #[prost(int32, tag = "4")]
    pub source_line: i32,
}

/// `xla.LiteralProto`: constant data, one repeated/bytes field per element type.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LiteralProto {
    #[prost(message, optional, tag = "1")]
    pub shape: Option<ShapeProto>,
    #[prost(bool, repeated, tag = "2")]
    pub preds: Vec<bool>,
    #[prost(bytes = "vec", tag = "26")]
    pub s2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "21")]
    pub s4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "15")]
    pub s8s: Vec<u8>,
    #[prost(bytes = "vec", tag = "27")]
    pub u2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "22")]
    pub u4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "3")]
    pub u8s: Vec<u8>,
    #[prost(int32, repeated, tag = "4")]
    pub s32s: Vec<i32>,
    #[prost(int64, repeated, tag = "5")]
    pub s64s: Vec<i64>,
    #[prost(uint32, repeated, tag = "6")]
    pub u32s: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub u64s: Vec<u64>,
    #[prost(float, repeated, tag = "8")]
    pub f32s: Vec<f32>,
    #[prost(double, repeated, tag = "9")]
    pub f64s: Vec<f64>,
    #[prost(float, repeated, tag = "12")]
    pub c64s: Vec<f32>,
    #[prost(double, repeated, tag = "18")]
    pub c128s: Vec<f64>,
    #[prost(message, repeated, tag = "10")]
    pub tuple_literals: Vec<LiteralProto>,
    #[prost(bytes = "vec", tag = "11")]
    pub f16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "13")]
    pub bf16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "16")]
    pub u16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "17")]
    pub s16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "32")]
    pub f4e2m1fns: Vec<u8>,
    #[prost(bytes = "vec", tag = "29")]
    pub f8e3m4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "23")]
    pub f8e4m3b11fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "20")]
    pub f8e4m3fns: Vec<u8>,
    #[prost(bytes = "vec", tag = "25")]
    pub f8e4m3fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "28")]
    pub f8e4m3s: Vec<u8>,
    #[prost(bytes = "vec", tag = "24")]
    pub f8e5m2fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "19")]
    pub f8e5m2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "33")]
    pub f8e8m0fnus: Vec<u8>,
}

/// `xla.WindowDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WindowDimension {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(int64, tag = "2")]
    pub stride: i64,
    #[prost(int64, tag = "3")]
    pub padding_low: i64,
    #[prost(int64, tag = "4")]
    pub padding_high: i64,
    #[prost(int64, tag = "5")]
    pub window_dilation: i64,
    #[prost(int64, tag = "6")]
    pub base_dilation: i64,
    #[prost(bool, tag = "7")]
    pub window_reversal: bool,
}

/// `xla.Window`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Window {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<WindowDimension>,
}

/// `xla.PaddingConfig.PaddingConfigDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PaddingConfigDimension {
    #[prost(int64, tag = "1")]
    pub edge_padding_low: i64,
    #[prost(int64, tag = "2")]
    pub edge_padding_high: i64,
    #[prost(int64, tag = "3")]
    pub interior_padding: i64,
}

/// `xla.PaddingConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PaddingConfig {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<PaddingConfigDimension>,
}

/// `xla.GatherDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GatherDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub offset_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub collapsed_slice_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub start_index_map: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub operand_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub start_indices_batching_dims: Vec<i64>,
}

/// `xla.ScatterDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScatterDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub update_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub inserted_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub scatter_dims_to_operand_dims: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub input_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `xla.ConvolutionDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConvolutionDimensionNumbers {
    #[prost(int64, tag = "7")]
    pub input_batch_dimension: i64,
    #[prost(int64, tag = "8")]
    pub input_feature_dimension: i64,
    #[prost(int64, repeated, tag = "11")]
    pub input_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "3")]
    pub kernel_input_feature_dimension: i64,
    #[prost(int64, tag = "4")]
    pub kernel_output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "6")]
    pub kernel_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "9")]
    pub output_batch_dimension: i64,
    #[prost(int64, tag = "10")]
    pub output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "12")]
    pub output_spatial_dimensions: Vec<i64>,
}

/// `xla.DotDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DotDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub lhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub rhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub lhs_batch_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub rhs_batch_dimensions: Vec<i64>,
}

/// `xla.PrecisionConfig.Precision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum Precision {
    Default = 0,
    High = 1,
    Highest = 2,
}

/// `xla.PrecisionConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrecisionConfig {
    #[prost(enumeration = "Precision", repeated, tag = "1")]
    pub operand_precision: Vec<i32>,
}

/// `xla.TriangularSolveOptions.Transpose`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum TriangularTranspose {
    TransposeInvalid = 0,
    NoTranspose = 1,
    Transpose = 2,
    Adjoint = 3,
}

/// `xla.TriangularSolveOptions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TriangularSolveOptions {
    #[prost(bool, tag = "1")]
    pub left_side: bool,
    #[prost(bool, tag = "2")]
    pub lower: bool,
    #[prost(bool, tag = "3")]
    pub unit_diagonal: bool,
    #[prost(enumeration = "TriangularTranspose", tag = "4")]
    pub transpose_a: i32,
}

/// `xla.CholeskyOptions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CholeskyOptions {
    #[prost(bool, tag = "1")]
    pub lower: bool,
}

/// `xla.FrontendAttributes`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FrontendAttributes {
    #[prost(btree_map = "string, string", tag = "1")]
    pub map: BTreeMap<String, String>,
}

/// `xla.ReplicaGroup`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReplicaGroup {
    #[prost(int64, repeated, tag = "1")]
    pub replica_ids: Vec<i64>,
}

/// `xla.SourceTarget` (collective-permute pairs).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SourceTarget {
    #[prost(int64, tag = "1")]
    pub source: i64,
    #[prost(int64, tag = "2")]
    pub target: i64,
}

/// `xla.HloInstructionProto.SliceDimensions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SliceDimensions {
    #[prost(int64, tag = "1")]
    pub start: i64,
    #[prost(int64, tag = "2")]
    pub limit: i64,
    #[prost(int64, tag = "3")]
    pub stride: i64,
}

/// `xla.OutputOperandAliasing` (custom-call output/operand aliases).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OutputOperandAliasing {
    #[prost(int64, repeated, tag = "1")]
    pub output_shape_index: Vec<i64>,
    #[prost(int64, tag = "2")]
    pub operand_index: i64,
    #[prost(int64, repeated, tag = "3")]
    pub operand_shape_index: Vec<i64>,
}

/// `xla.FftType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum FftType {
    Fft = 0,
    Ifft = 1,
    Rfft = 2,
    Irfft = 3,
}

/// `xla.RandomDistribution`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum RandomDistribution {
    RngInvalid = 0,
    RngUniform = 1,
    RngNormal = 2,
}

/// `xla.RandomAlgorithm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum RandomAlgorithm {
    RngDefault = 0,
    RngThreeFry = 1,
    RngPhilox = 2,
}

/// `xla.CustomCallApiVersion` (hlo.proto).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum CustomCallApiVersion {
    ApiVersionUnspecified = 0,
    ApiVersionOriginal = 1,
    ApiVersionStatusReturning = 2,
    ApiVersionStatusReturningUnified = 3,
    ApiVersionTypedFfi = 4,
}

/// `xla.HloInstructionProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    #[prost(message, optional, tag = "8")]
    pub literal: Option<LiteralProto>,
    #[prost(int64, tag = "9")]
    pub parameter_number: i64,
    #[prost(int64, tag = "13")]
    pub tuple_index: i64,
    #[prost(int64, repeated, tag = "14")]
    pub dimensions: Vec<i64>,
    #[prost(message, optional, tag = "15")]
    pub window: Option<Window>,
    #[prost(message, optional, tag = "16")]
    pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
    #[prost(int64, tag = "50")]
    pub feature_group_count: i64,
    #[prost(int64, tag = "58")]
    pub batch_group_count: i64,
    #[prost(message, repeated, tag = "17")]
    pub slice_dimensions: Vec<SliceDimensions>,
    #[prost(int32, tag = "18")]
    pub exponent_bits: i32,
    #[prost(int32, tag = "19")]
    pub mantissa_bits: i32,
    #[prost(int64, repeated, tag = "20")]
    pub dynamic_slice_sizes: Vec<i64>,
    #[prost(message, optional, tag = "21")]
    pub padding_config: Option<PaddingConfig>,
    #[prost(enumeration = "RandomDistribution", tag = "23")]
    pub distribution: i32,
    #[prost(float, tag = "24")]
    pub epsilon: f32,
    #[prost(int64, tag = "25")]
    pub feature_index: i64,
    #[prost(int64, tag = "26")]
    pub channel_id: i64,
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    #[prost(message, optional, tag = "30")]
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    #[prost(enumeration = "FftType", tag = "31")]
    pub fft_type: i32,
    #[prost(int64, repeated, tag = "32")]
    pub fft_length: Vec<i64>,
    #[prost(string, tag = "63")]
    pub comparison_direction: String,
    #[prost(message, optional, tag = "33")]
    pub gather_dimension_numbers: Option<GatherDimensionNumbers>,
    #[prost(int64, repeated, tag = "34")]
    pub gather_slice_sizes: Vec<i64>,
    #[prost(int64, tag = "35")]
    pub id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "37")]
    pub control_predecessor_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub called_computation_ids: Vec<i64>,
    #[prost(bytes = "vec", tag = "43")]
    pub backend_config: Vec<u8>,
    #[prost(bool, tag = "56")]
    pub constrain_layout: bool,
    #[prost(message, repeated, tag = "57")]
    pub operand_shapes_with_layout: Vec<ShapeProto>,
    #[prost(message, repeated, tag = "49")]
    pub replica_groups: Vec<ReplicaGroup>,
    #[prost(bool, tag = "71")]
    pub use_global_device_ids: bool,
    #[prost(bool, tag = "60")]
    pub is_stable: bool,
    #[prost(message, optional, tag = "48")]
    pub scatter_dimension_numbers: Option<ScatterDimensionNumbers>,
    #[prost(message, optional, tag = "51")]
    pub precision_config: Option<PrecisionConfig>,
    #[prost(message, repeated, tag = "52")]
    pub source_target_pairs: Vec<SourceTarget>,
    #[prost(message, optional, tag = "59")]
    pub triangular_solve_options: Option<TriangularSolveOptions>,
    #[prost(message, optional, tag = "62")]
    pub cholesky_options: Option<CholeskyOptions>,
    #[prost(bool, tag = "65")]
    pub custom_call_has_side_effect: bool,
    #[prost(message, repeated, tag = "74")]
    pub output_operand_aliasing: Vec<OutputOperandAliasing>,
    #[prost(bool, tag = "67")]
    pub indices_are_sorted: bool,
    #[prost(message, optional, tag = "68")]
    pub frontend_attributes: Option<FrontendAttributes>,
    #[prost(bool, tag = "69")]
    pub unique_indices: bool,
    #[prost(enumeration = "RandomAlgorithm", tag = "70")]
    pub rng_algorithm: i32,
    #[prost(string, tag = "72")]
    pub comparison_type: String,
    #[prost(enumeration = "CustomCallApiVersion", tag = "77")]
    pub custom_call_api_version: i32,
    #[prost(int64, tag = "81")]
    pub k: i64,
    #[prost(bool, tag = "85")]
    pub largest: bool,
    #[prost(bool, tag = "89")]
    pub is_composite: bool,
}

/// `xla.HloComputationProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    #[prost(message, optional, tag = "4")]
    pub program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub root_id: i64,
}

/// `xla.Kind` (hlo.proto): input/output alias kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum AliasKind {
    UndefinedAlias = 0,
    MayAlias = 1,
    MustAlias = 2,
}

/// `xla.HloInputOutputAliasProto.AliasEntryProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AliasEntryProto {
    #[prost(int64, repeated, tag = "1")]
    pub output_shape_index: Vec<i64>,
    #[prost(int64, tag = "2")]
    pub parameter_number: i64,
    #[prost(int64, repeated, tag = "3")]
    pub parameter_shape_index: Vec<i64>,
    #[prost(enumeration = "AliasKind", tag = "4")]
    pub kind: i32,
}

/// `xla.HloInputOutputAliasProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInputOutputAliasProto {
    #[prost(message, repeated, tag = "1")]
    pub entries: Vec<AliasEntryProto>,
}

/// `xla.HloBufferDonorProto.BufferDonorEntryProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BufferDonorEntryProto {
    #[prost(int64, tag = "1")]
    pub parameter_number: i64,
    #[prost(int64, repeated, tag = "2")]
    pub parameter_shape_index: Vec<i64>,
}

/// `xla.HloBufferDonorProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloBufferDonorProto {
    #[prost(message, repeated, tag = "1")]
    pub entries: Vec<BufferDonorEntryProto>,
}

/// `xla.HloModuleProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
    /// Callees before callers.
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    #[prost(message, optional, tag = "4")]
    pub host_program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(message, optional, tag = "8")]
    pub input_output_alias: Option<HloInputOutputAliasProto>,
    #[prost(message, optional, tag = "18")]
    pub buffer_donor: Option<HloBufferDonorProto>,
    #[prost(bool, tag = "11")]
    pub is_dynamic: bool,
    #[prost(message, optional, tag = "19")]
    pub frontend_attributes: Option<FrontendAttributes>,
}
