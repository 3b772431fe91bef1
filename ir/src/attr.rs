//! Attribute values attached to ops, functions and the module.
//!
//! Owns: [`Attr`] (the MLIR builtin attribute kinds StableHLO uses, the structured
//! `#stablehlo.*` attributes, and an opaque fallback that is printed back verbatim),
//! [`DenseElements`] and [`NamedAttrs`].
//! Invariants: the pretty and generic forms of an op produce the *same* attribute names and
//! values (the names of the generic form / MLIR properties, e.g. `permutation` for
//! `transpose`'s `dims = [...]`); `NamedAttrs` keeps names sorted and unique, like MLIR's
//! `DictionaryAttr`, so printing is canonical.

use crate::types::{ElemType, TypeId};
use std::sync::Arc;

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// `unit` (presence-only attribute).
    Unit,
    Bool(bool),
    /// Integer attribute `v : type`; unsigned 64-bit values are stored by bit pattern.
    Int(i64, ElemType),
    /// Float attribute `v : type`.
    Float(f64, ElemType),
    /// `"..."` (unescaped contents).
    Str(String),
    /// A type used as an attribute value.
    Type(TypeId),
    /// `@name` or nested `@a::@b` (stored without the leading `@`).
    Symbol(String),
    /// `[a, b, ...]`.
    Array(Vec<Attr>),
    /// `array<i64: 1, 2>` (also `i32`, `i8`, ... element types).
    IntArray(ElemType, Vec<i64>),
    /// `array<i1: true, false>`.
    BoolArray(Vec<bool>),
    /// `array<f32: ...>` / `array<f64: ...>`.
    FloatArray(ElemType, Vec<f64>),
    /// `{name = value, ...}`.
    Dict(NamedAttrs),
    /// `dense<...> : tensor<...>`.
    Elements(Arc<DenseElements>),
    /// `#stablehlo.comparison_direction<EQ>` etc.: enum-valued StableHLO attributes.
    Enum(EnumAttr),
    /// `#stablehlo.dot<...>`.
    DotDims(DotDims),
    /// `#stablehlo.conv<...>` (or `[b, 0, 1, f]x[...]->[...]` in pretty form).
    ConvDims(ConvDims),
    /// `#stablehlo.gather<...>`.
    GatherDims(GatherDims),
    /// `#stablehlo.scatter<...>`.
    ScatterDims(ScatterDims),
    /// `#stablehlo.channel_handle<handle = 1, type = 0>`.
    ChannelHandle {
        handle: i64,
        ty: i64,
    },
    /// `#stablehlo.output_operand_alias<...>`.
    OutputOperandAlias {
        output_tuple_indices: Vec<i64>,
        operand_index: i64,
        operand_tuple_indices: Vec<i64>,
    },
    /// `#stablehlo.result_accuracy<atol = .., rtol = .., ulps = .., mode = ..>`; `mode` is
    /// the `result_accuracy_mode` case (`DEFAULT`, `HIGHEST`, `TOLERANCE`).
    ResultAccuracy {
        atol: f64,
        rtol: f64,
        ulps: i64,
        mode: String,
    },
    /// Any other attribute (`#mhlo.xyz<...>`, `#dialect<...>`, `affine_map<...>`):
    /// its source text, printed back unchanged.
    Opaque(String),
}

/// The enum-valued StableHLO attributes. The payload is the enum case as spelled in MLIR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumAttr {
    pub kind: EnumKind,
    /// Case name as printed, e.g. `GT`, `FLOAT`, `DEFAULT`, `HIGHEST`.
    pub value: String,
}

/// Which `#stablehlo.<kind><VALUE>` enum an [`EnumAttr`] belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnumKind {
    ComparisonDirection,
    ComparisonType,
    Precision,
    RngAlgorithm,
    RngDistribution,
    FftType,
    Transpose,
    ResultAccuracyMode,
}

impl EnumKind {
    /// The mnemonic after `#stablehlo.`.
    pub fn mnemonic(self) -> &'static str {
        match self {
            EnumKind::ComparisonDirection => "comparison_direction",
            EnumKind::ComparisonType => "comparison_type",
            EnumKind::Precision => "precision",
            EnumKind::RngAlgorithm => "rng_algorithm",
            EnumKind::RngDistribution => "rng_distribution",
            EnumKind::FftType => "fft_type",
            EnumKind::Transpose => "transpose",
            EnumKind::ResultAccuracyMode => "result_accuracy_mode",
        }
    }
    pub fn from_mnemonic(s: &str) -> Option<EnumKind> {
        Some(match s {
            "comparison_direction" => EnumKind::ComparisonDirection,
            "comparison_type" => EnumKind::ComparisonType,
            "precision" => EnumKind::Precision,
            "rng_algorithm" => EnumKind::RngAlgorithm,
            "rng_distribution" => EnumKind::RngDistribution,
            "fft_type" => EnumKind::FftType,
            "transpose" => EnumKind::Transpose,
            "result_accuracy_mode" => EnumKind::ResultAccuracyMode,
            _ => return None,
        })
    }
    /// The valid case names.
    pub fn cases(self) -> &'static [&'static str] {
        match self {
            EnumKind::ComparisonDirection => &["EQ", "NE", "GE", "GT", "LE", "LT"],
            EnumKind::ComparisonType => &["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"],
            EnumKind::Precision => &["DEFAULT", "HIGH", "HIGHEST"],
            EnumKind::RngAlgorithm => &["DEFAULT", "THREE_FRY", "PHILOX"],
            EnumKind::RngDistribution => &["UNIFORM", "NORMAL"],
            EnumKind::FftType => &["FFT", "IFFT", "RFFT", "IRFFT"],
            EnumKind::Transpose => &["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
            EnumKind::ResultAccuracyMode => &["DEFAULT", "HIGHEST", "TOLERANCE"],
        }
    }
}

/// `#stablehlo.dot<lhs_batching_dimensions = [...], ...>`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct DotDims {
    pub lhs_batching: Vec<i64>,
    pub rhs_batching: Vec<i64>,
    pub lhs_contracting: Vec<i64>,
    pub rhs_contracting: Vec<i64>,
}

/// Convolution dimension numbers. Spatial dims are listed in spatial order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ConvDims {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_input_feature: i64,
    pub kernel_output_feature: i64,
    pub kernel_spatial: Vec<i64>,
    pub output_batch: i64,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

/// `#stablehlo.gather<...>`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct GatherDims {
    pub offset_dims: Vec<i64>,
    pub collapsed_slice_dims: Vec<i64>,
    pub operand_batching_dims: Vec<i64>,
    pub start_indices_batching_dims: Vec<i64>,
    pub start_index_map: Vec<i64>,
    pub index_vector_dim: i64,
}

/// `#stablehlo.scatter<...>`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ScatterDims {
    pub update_window_dims: Vec<i64>,
    pub inserted_window_dims: Vec<i64>,
    pub input_batching_dims: Vec<i64>,
    pub scatter_indices_batching_dims: Vec<i64>,
    pub scatter_dims_to_operand_dims: Vec<i64>,
    pub index_vector_dim: i64,
}

/// The payload of a `dense<...>` attribute: a tensor constant.
///
/// Data is stored little-endian, `ty`'s element byte width per element (sub-byte types
/// one byte each, `i1` as 0/1 bytes, complex as real then imaginary part).
#[derive(Clone, Debug, PartialEq)]
pub struct DenseElements {
    /// The tensor type of the constant.
    pub ty: TypeId,
    pub elem: ElemType,
    /// Number of elements of `ty`.
    pub len: u64,
    pub data: DenseData,
}

/// Storage of [`DenseElements`].
#[derive(Clone, Debug, PartialEq)]
pub enum DenseData {
    /// One element's bytes, repeated `len` times.
    Splat(Box<[u8]>),
    /// All elements' bytes (`len * byte_width`).
    Full(Arc<[u8]>),
}

impl DenseElements {
    /// The bytes of element `i` (for splats, the one element).
    pub fn element_bytes(&self, i: u64) -> &[u8] {
        let w = self.elem.byte_width();
        match &self.data {
            DenseData::Splat(b) => b,
            DenseData::Full(b) => &b[i as usize * w..(i as usize + 1) * w],
        }
    }
    pub fn is_splat(&self) -> bool {
        matches!(self.data, DenseData::Splat(_))
    }
    /// Materializes all element bytes (expands splats).
    pub fn to_bytes(&self) -> Vec<u8> {
        match &self.data {
            DenseData::Splat(b) => b.repeat(self.len as usize),
            DenseData::Full(b) => b.to_vec(),
        }
    }
}

/// A sorted, duplicate-free list of named attributes.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct NamedAttrs(Vec<(String, Attr)>);

impl NamedAttrs {
    pub fn new() -> Self {
        NamedAttrs(Vec::new())
    }
    /// An empty list with room for `n` entries (for builders that know how many they set).
    pub fn with_capacity(n: usize) -> Self {
        NamedAttrs(Vec::with_capacity(n))
    }
    /// Inserts or replaces `name`. Returns the previous value.
    ///
    /// Names set in increasing order (as builders and the parser mostly set them) are
    /// appended without a search.
    pub fn set(&mut self, name: impl Into<String>, value: Attr) -> Option<Attr> {
        let name = name.into();
        let appends = match self.0.last() {
            Some((last, _)) => last.as_str() < name.as_str(),
            None => true,
        };
        if appends {
            self.0.push((name, value));
            return None;
        }
        match self.0.binary_search_by(|(n, _)| n.as_str().cmp(&name)) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                self.0.insert(i, (name, value));
                None
            }
        }
    }
    pub fn get(&self, name: &str) -> Option<&Attr> {
        self.0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| &self.0[i].1)
    }
    pub fn remove(&mut self, name: &str) -> Option<Attr> {
        self.0
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| self.0.remove(i).1)
    }
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    /// Index of `name` in the sorted entries.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.0.binary_search_by(|(n, _)| n.as_str().cmp(name)).ok()
    }
    /// The entry at index `i` (`i < len()`).
    pub fn entry(&self, i: usize) -> (&str, &Attr) {
        let (n, a) = &self.0[i];
        (n.as_str(), a)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Attr)> {
        self.0.iter().map(|(n, a)| (n.as_str(), a))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `array<i64: ...>` (or a `dense<...>` 1-D integer tensor, or an array of ints) as a slice of i64.
    pub fn i64_array(&self, name: &str) -> Option<Vec<i64>> {
        self.get(name).and_then(Attr::as_i64_array)
    }
    /// An integer attribute.
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.get(name)? {
            Attr::Int(v, _) => Some(*v),
            _ => None,
        }
    }
    pub fn bool(&self, name: &str) -> Option<bool> {
        match self.get(name)? {
            Attr::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn str(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Attr::Str(s) => Some(s),
            _ => None,
        }
    }
    /// The case of an enum attribute, e.g. `comparison_direction` → `"GT"`.
    pub fn enum_value(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Attr::Enum(e) => Some(&e.value),
            _ => None,
        }
    }
}

impl Attr {
    /// Integer list view of `array<i64: ...>`, `[1, 2]` of ints, or a 1-D integer `dense<...>`.
    pub fn as_i64_array(&self) -> Option<Vec<i64>> {
        match self {
            Attr::IntArray(_, v) => Some(v.clone()),
            Attr::Array(items) => items
                .iter()
                .map(|a| match a {
                    Attr::Int(v, _) => Some(*v),
                    _ => None,
                })
                .collect(),
            Attr::Elements(e) if e.elem.is_integer() => {
                let w = e.elem.byte_width();
                (0..e.len)
                    .map(|i| {
                        let b = e.element_bytes(i);
                        let mut buf = [0u8; 8];
                        buf[..w].copy_from_slice(b);
                        let raw = i64::from_le_bytes(buf);
                        let shift = 64 - 8 * w as u32;
                        Some(if e.elem.is_unsigned() || shift == 0 {
                            raw
                        } else {
                            (raw << shift) >> shift
                        })
                    })
                    .collect()
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Attr, NamedAttrs};

    fn names(a: &NamedAttrs) -> Vec<&str> {
        a.iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn set_keeps_names_sorted_and_unique_in_any_order() {
        // Increasing (appended), then before the first, between two, and a replacement.
        let mut a = NamedAttrs::with_capacity(2);
        assert_eq!(a.set("b", Attr::Bool(true)), None);
        assert_eq!(a.set("d", Attr::Unit), None);
        assert_eq!(a.set("a", Attr::Unit), None);
        assert_eq!(a.set("c", Attr::Unit), None);
        assert_eq!(a.set("b", Attr::Bool(false)), Some(Attr::Bool(true)));
        // Replacing the last entry is not an append.
        assert_eq!(a.set("d", Attr::Bool(true)), Some(Attr::Unit));
        assert_eq!(names(&a), ["a", "b", "c", "d"]);
        assert_eq!(a.bool("b"), Some(false));
        assert_eq!(a.bool("d"), Some(true));
        assert_eq!(a.position("c"), Some(2));
    }
}
