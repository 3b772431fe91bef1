//! Element types, tensor/tuple/token/future types and the type interner.
//!
//! Owns: [`ElemType`] (every StableHLO element type), [`Type`] and [`TypeId`], and
//! [`TypeInterner`], which hands out one id per structurally distinct type.
//! Invariants: a `TypeId` is only meaningful for the interner (module) that made it;
//! tensor shapes are static (every dimension `>= 0`) and their element count fits the
//! limits in [`MAX_ELEMENTS`] — the parser rejects anything else before interning.

use rustc_hash::FxHashMap;
use std::fmt;

/// Largest number of elements a tensor type may describe. Types beyond this are rejected
/// at parse time so that no later stage can be tricked into a huge allocation.
pub const MAX_ELEMENTS: u64 = 1 << 40;

/// A StableHLO element type.
///
/// `Int(n)` is MLIR's signless `iN`, which StableHLO treats as signed; `UInt(n)` is `uiN`.
/// `I1` is the boolean type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    I1,
    /// Signed (signless) integer of 2, 4, 8, 16, 32 or 64 bits.
    Int(u8),
    /// Unsigned integer of 2, 4, 8, 16, 32 or 64 bits.
    UInt(u8),
    F16,
    BF16,
    F32,
    F64,
    /// The 4/6/8-bit float family.
    F8(F8Kind),
    /// `complex<f32>`.
    Complex64,
    /// `complex<f64>`.
    Complex128,
}

/// The small float formats of the StableHLO spec (MLIR names in [`F8Kind::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum F8Kind {
    E3M4,
    E4M3,
    E4M3FN,
    E4M3FNUZ,
    E4M3B11FNUZ,
    E5M2,
    E5M2FNUZ,
    E8M0FNU,
    F4E2M1FN,
    F6E2M3FN,
    F6E3M2FN,
}

impl F8Kind {
    pub const ALL: [F8Kind; 11] = [
        F8Kind::E3M4,
        F8Kind::E4M3,
        F8Kind::E4M3FN,
        F8Kind::E4M3FNUZ,
        F8Kind::E4M3B11FNUZ,
        F8Kind::E5M2,
        F8Kind::E5M2FNUZ,
        F8Kind::E8M0FNU,
        F8Kind::F4E2M1FN,
        F8Kind::F6E2M3FN,
        F8Kind::F6E3M2FN,
    ];

    /// The MLIR spelling, e.g. `f8E4M3FN`.
    pub fn name(self) -> &'static str {
        match self {
            F8Kind::E3M4 => "f8E3M4",
            F8Kind::E4M3 => "f8E4M3",
            F8Kind::E4M3FN => "f8E4M3FN",
            F8Kind::E4M3FNUZ => "f8E4M3FNUZ",
            F8Kind::E4M3B11FNUZ => "f8E4M3B11FNUZ",
            F8Kind::E5M2 => "f8E5M2",
            F8Kind::E5M2FNUZ => "f8E5M2FNUZ",
            F8Kind::E8M0FNU => "f8E8M0FNU",
            F8Kind::F4E2M1FN => "f4E2M1FN",
            F8Kind::F6E2M3FN => "f6E2M3FN",
            F8Kind::F6E3M2FN => "f6E3M2FN",
        }
    }

    /// Storage width in bits (4, 6 or 8).
    pub fn bits(self) -> u32 {
        match self {
            F8Kind::F4E2M1FN => 4,
            F8Kind::F6E2M3FN | F8Kind::F6E3M2FN => 6,
            _ => 8,
        }
    }
}

impl ElemType {
    /// Parses an MLIR element type keyword (`f32`, `i1`, `ui8`, `bf16`, `f8E4M3FN`, ...).
    /// `complex<...>` is handled by the parser, not here.
    pub fn from_keyword(s: &str) -> Option<ElemType> {
        Some(match s {
            "i1" => ElemType::I1,
            "f16" => ElemType::F16,
            "bf16" => ElemType::BF16,
            "f32" => ElemType::F32,
            "f64" => ElemType::F64,
            "index" => ElemType::Int(64),
            _ => {
                if let Some(k) = F8Kind::ALL.iter().find(|k| k.name() == s) {
                    return Some(ElemType::F8(*k));
                }
                let (unsigned, digits) = if let Some(d) = s.strip_prefix("ui") {
                    (true, d)
                } else if let Some(d) = s.strip_prefix("si") {
                    (false, d)
                } else if let Some(d) = s.strip_prefix('i') {
                    (false, d)
                } else {
                    return None;
                };
                let bits: u8 = digits.parse().ok()?;
                if !matches!(bits, 2 | 4 | 8 | 16 | 32 | 64) {
                    return None;
                }
                if unsigned {
                    ElemType::UInt(bits)
                } else {
                    ElemType::Int(bits)
                }
            }
        })
    }

    /// Width in bits of one element (complex: both parts).
    pub fn bits(self) -> u32 {
        match self {
            ElemType::I1 => 1,
            ElemType::Int(b) | ElemType::UInt(b) => b as u32,
            ElemType::F16 | ElemType::BF16 => 16,
            ElemType::F32 => 32,
            ElemType::F64 => 64,
            ElemType::F8(k) => k.bits(),
            ElemType::Complex64 => 64,
            ElemType::Complex128 => 128,
        }
    }

    /// Bytes one element occupies in memory and in dense-elements storage (sub-byte types
    /// take one byte each, as in MLIR's dense storage).
    pub fn byte_width(self) -> usize {
        (self.bits() as usize).div_ceil(8)
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F16 | ElemType::BF16 | ElemType::F32 | ElemType::F64 | ElemType::F8(_)
        )
    }
    pub fn is_complex(self) -> bool {
        matches!(self, ElemType::Complex64 | ElemType::Complex128)
    }
    /// Integer types, excluding `i1`.
    pub fn is_integer(self) -> bool {
        matches!(self, ElemType::Int(_) | ElemType::UInt(_))
    }
    pub fn is_bool(self) -> bool {
        self == ElemType::I1
    }
    pub fn is_unsigned(self) -> bool {
        matches!(self, ElemType::UInt(_))
    }
    pub fn is_signed_int(self) -> bool {
        matches!(self, ElemType::Int(_))
    }

    /// The element type of the real/imaginary part of a complex type.
    pub fn complex_part(self) -> Option<ElemType> {
        match self {
            ElemType::Complex64 => Some(ElemType::F32),
            ElemType::Complex128 => Some(ElemType::F64),
            _ => None,
        }
    }
}

impl fmt::Display for ElemType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElemType::I1 => f.write_str("i1"),
            ElemType::Int(b) => write!(f, "i{b}"),
            ElemType::UInt(b) => write!(f, "ui{b}"),
            ElemType::F16 => f.write_str("f16"),
            ElemType::BF16 => f.write_str("bf16"),
            ElemType::F32 => f.write_str("f32"),
            ElemType::F64 => f.write_str("f64"),
            ElemType::F8(k) => f.write_str(k.name()),
            ElemType::Complex64 => f.write_str("complex<f32>"),
            ElemType::Complex128 => f.write_str("complex<f64>"),
        }
    }
}

/// Index of an interned [`Type`] in its module's [`TypeInterner`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// A value type: a ranked static tensor, a tuple, a token, or a future.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Tensor(TensorType),
    Tuple(Box<[TypeId]>),
    Token,
    /// `!stablehlo.future<T, ...>`: the tensors an `async_start` will produce (each
    /// element is a tensor type).
    Future(Box<[TypeId]>),
}

/// A ranked tensor with static shape. Rank-0 tensors are scalars.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub elem: ElemType,
    pub shape: Box<[i64]>,
}

impl TensorType {
    pub fn new(elem: ElemType, shape: &[i64]) -> Self {
        TensorType {
            elem,
            shape: shape.into(),
        }
    }
    pub fn rank(&self) -> usize {
        self.shape.len()
    }
    /// Number of elements (1 for scalars). Shapes are bounded by [`MAX_ELEMENTS`].
    pub fn num_elements(&self) -> u64 {
        self.shape.iter().map(|&d| d as u64).product()
    }
    /// Bytes of the tensor's data.
    pub fn byte_size(&self) -> u64 {
        self.num_elements() * self.elem.byte_width() as u64
    }
}

/// Interns types so that equal types share one [`TypeId`]; ids are dense and stable.
#[derive(Clone, Debug, Default)]
pub struct TypeInterner {
    types: Vec<Type>,
    map: FxHashMap<Type, TypeId>,
}

impl TypeInterner {
    pub fn intern(&mut self, ty: Type) -> TypeId {
        if let Some(&id) = self.map.get(&ty) {
            return id;
        }
        let id = TypeId(self.types.len() as u32);
        self.types.push(ty.clone());
        self.map.insert(ty, id);
        id
    }
    pub fn tensor(&mut self, elem: ElemType, shape: &[i64]) -> TypeId {
        self.intern(Type::Tensor(TensorType::new(elem, shape)))
    }
    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id.0 as usize]
    }
    /// The tensor type behind `id`, or `None` for tuples and tokens.
    pub fn tensor_of(&self, id: TypeId) -> Option<&TensorType> {
        match self.get(id) {
            Type::Tensor(t) => Some(t),
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.types.len()
    }
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }
    /// Writes the MLIR spelling of a type (`tensor<2x3xf32>`, `tuple<...>`, `!stablehlo.token`,
    /// `!stablehlo.future<...>`).
    pub fn write(&self, id: TypeId, out: &mut String) {
        use std::fmt::Write;
        match self.get(id) {
            Type::Tensor(t) => {
                out.push_str("tensor<");
                for d in t.shape.iter() {
                    let _ = write!(out, "{d}x");
                }
                let _ = write!(out, "{}>", t.elem);
            }
            Type::Tuple(elems) => {
                out.push_str("tuple<");
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write(*e, out);
                }
                out.push('>');
            }
            Type::Token => out.push_str("!stablehlo.token"),
            Type::Future(elems) => {
                out.push_str("!stablehlo.future<");
                for (i, e) in elems.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    self.write(*e, out);
                }
                out.push('>');
            }
        }
    }
    /// The MLIR spelling of a type as a new string.
    pub fn display(&self, id: TypeId) -> String {
        let mut s = String::new();
        self.write(id, &mut s);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_round_trip() {
        for s in [
            "i1",
            "i2",
            "i4",
            "i8",
            "i16",
            "i32",
            "i64",
            "ui2",
            "ui8",
            "ui64",
            "f16",
            "bf16",
            "f32",
            "f64",
            "f8E4M3FN",
            "f8E5M2",
            "f4E2M1FN",
            "f8E8M0FNU",
        ] {
            let t = ElemType::from_keyword(s).unwrap();
            assert_eq!(t.to_string(), s);
        }
        assert_eq!(ElemType::from_keyword("i3"), None);
        assert_eq!(ElemType::from_keyword("si32"), Some(ElemType::Int(32)));
    }

    #[test]
    fn interner_dedups() {
        let mut t = TypeInterner::default();
        let a = t.tensor(ElemType::F32, &[2, 3]);
        let b = t.tensor(ElemType::F32, &[2, 3]);
        let c = t.tensor(ElemType::F32, &[3, 2]);
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(t.display(c), "tensor<3x2xf32>");
    }
}
