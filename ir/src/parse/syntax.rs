//! The table of op pretty syntaxes shared by the parser and the printer.
//!
//! Owns: [`syntax`], which maps every [`OpKind`] to its custom assembly format (as
//! StableHLO/CHLO/func/check/sdy define them), and the keyword-item descriptions ([`Kw`], [`V`])
//! of the common "operands, `kw = value`..., attr-dict, `:` types" shape.
//! Invariant: a keyword item names the generic attribute it stands for and the exact
//! attribute form it produces, so the parser and printer agree by construction.

use crate::attr::EnumKind;
use crate::ops::OpKind;

/// How a keyword item's value is written and which attribute form it maps to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum V {
    /// `[1, 2]` <-> `array<i64: 1, 2>`.
    Dims,
    /// `0` <-> `0 : i64`.
    I64,
    /// `true` <-> `true`.
    Bool,
    /// `CASE` <-> `#stablehlo<kind CASE>`.
    Enum(EnumKind),
    /// `"..."` <-> `"..."`.
    Str,
    /// `3` <-> `3 : ui64`.
    U64,
    /// `3` <-> `3 : ui32`.
    U32,
    /// `1.0e-4` <-> `1.0e-4 : f64`.
    F64,
    /// `e5m10` <-> `exponent_bits = 5 : i32, mantissa_bits = 10 : i32`.
    ExpMan,
    /// `[DEFAULT, HIGH]` <-> `[#stablehlo<precision DEFAULT>, ...]`.
    Precision,
}

/// One `, kw = value` item after the operands.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Kw {
    pub kw: &'static str,
    pub attr: &'static str,
    pub v: V,
    pub optional: bool,
}

const fn kw(kw: &'static str, attr: &'static str, v: V) -> Kw {
    Kw {
        kw,
        attr,
        v,
        optional: false,
    }
}
const fn opt(kw: &'static str, attr: &'static str, v: V) -> Kw {
    Kw {
        kw,
        attr,
        v,
        optional: true,
    }
}

/// The type part after `:`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Ty {
    /// One type if operands and result agree, else a function type.
    Same,
    /// `(operand types) -> result types`.
    Functional,
    /// CHLO unary: `t -> r`.
    Arrow,
    /// CHLO broadcasting: `(a, b) -> r`.
    ParenArrow,
    /// CHLO `next_after`/`zeta`/`polygamma`: `a, b -> r`.
    PairArrow,
    /// `check.expect_eq`-like: one type for all operands, no results.
    OperandType,
}

/// The pretty syntax of an op kind.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Syntax {
    /// No custom syntax: always the generic form.
    Generic,
    /// `operands (, kw = v)* attr-dict : types`.
    Simple(&'static [Kw], Ty),
    Constant,
    Iota,
    /// `attr-dict : type` (replica_id, partition_id).
    NoOperands,
    Compare,
    Slice,
    GetTupleElement,
    Tuple,
    OptimizationBarrier,
    Select,
    Complex,
    DotGeneral,
    Convolution,
    CustomCall,
    Composite,
    While,
    Reduce,
    Return,
    Call,
    TopK,
    ChloConstant,
    /// `check.expect_*_const %x, dense<...> : type (, tolerance = f)? attr-dict`.
    CheckConst,
    /// `%a, %b, max_ulp_difference = n (, min_ulp_difference = n)? : attr-dict t, t`.
    CheckClose,
    /// `sdy.sharding_constraint %x <@mesh, [...]> attr-dict : type` (also `sdy.reshard`):
    /// the `<...>` payload is the `sharding = #sdy.sharding<...>` attribute.
    ShardingAnnotation,
}

const NONE: &[Kw] = &[];

/// The syntax of `kind`.
pub(crate) fn syntax(kind: OpKind) -> Syntax {
    use OpKind::*;
    match kind {
        Abs | Cbrt | Ceil | CountLeadingZeros | Cosine | Exponential | ExponentialMinusOne
        | Floor | Imag | Log | LogPlusOne | Logistic | Negate | Not | Popcnt | Real
        | RoundNearestAfz | RoundNearestEven | Rsqrt | Sign | Sine | Sqrt | Tan | Tanh
        | Convert | UniformQuantize | UniformDequantize | Add | And | Atan2 | Divide | Maximum
        | Minimum | Multiply | Or | Power | Remainder | ShiftLeft | ShiftRightArithmetic
        | ShiftRightLogical | Subtract | Xor | Clamp | AfterAll | CreateToken => {
            Syntax::Simple(NONE, Ty::Same)
        }
        IsFinite | Reshape | BitcastConvert | DynamicUpdateSlice | DynamicReshape | DynamicPad
        | RealDynamicSlice => Syntax::Simple(NONE, Ty::Functional),
        Reverse => Syntax::Simple(const { &[kw("dims", "dimensions", V::Dims)] }, Ty::Same),
        Cholesky => Syntax::Simple(const { &[opt("lower", "lower", V::Bool)] }, Ty::Same),
        ReducePrecision => Syntax::Simple(
            const { &[kw("format", "exponent_bits", V::ExpMan)] },
            Ty::Same,
        ),
        BroadcastInDim | DynamicBroadcastInDim => Syntax::Simple(
            const { &[kw("dims", "broadcast_dimensions", V::Dims)] },
            Ty::Functional,
        ),
        Broadcast => Syntax::Simple(
            const { &[kw("sizes", "broadcast_sizes", V::Dims)] },
            Ty::Functional,
        ),
        Transpose => Syntax::Simple(
            const { &[kw("dims", "permutation", V::Dims)] },
            Ty::Functional,
        ),
        GetDimensionSize | SetDimensionSize => {
            Syntax::Simple(const { &[kw("dim", "dimension", V::I64)] }, Ty::Functional)
        }
        DynamicIota => Syntax::Simple(
            const { &[kw("dim", "iota_dimension", V::I64)] },
            Ty::Functional,
        ),
        Concatenate => Syntax::Simple(const { &[kw("dim", "dimension", V::I64)] }, Ty::Functional),
        DynamicSlice => Syntax::Simple(
            const { &[kw("sizes", "slice_sizes", V::Dims)] },
            Ty::Functional,
        ),
        Pad => Syntax::Simple(
            const {
                &[
                    kw("low", "edge_padding_low", V::Dims),
                    kw("high", "edge_padding_high", V::Dims),
                    kw("interior", "interior_padding", V::Dims),
                ]
            },
            Ty::Functional,
        ),
        Fft => Syntax::Simple(
            const {
                &[
                    kw("type", "fft_type", V::Enum(EnumKind::FftType)),
                    kw("length", "fft_length", V::Dims),
                ]
            },
            Ty::Functional,
        ),
        Rng => Syntax::Simple(
            const {
                &[kw(
                    "distribution",
                    "rng_distribution",
                    V::Enum(EnumKind::RngDistribution),
                )]
            },
            Ty::Functional,
        ),
        RngBitGenerator => Syntax::Simple(
            const {
                &[kw(
                    "algorithm",
                    "rng_algorithm",
                    V::Enum(EnumKind::RngAlgorithm),
                )]
            },
            Ty::Functional,
        ),
        Einsum | UnaryEinsum => Syntax::Simple(
            const { &[kw("config", "einsum_config", V::Str)] },
            Ty::Functional,
        ),
        Dot => Syntax::Simple(
            const { &[opt("precision", "precision_config", V::Precision)] },
            Ty::Functional,
        ),
        OpKind::Constant => Syntax::Constant,
        OpKind::Iota => Syntax::Iota,
        ReplicaId | PartitionId => Syntax::NoOperands,
        OpKind::Compare => Syntax::Compare,
        OpKind::Slice => Syntax::Slice,
        OpKind::GetTupleElement => Syntax::GetTupleElement,
        OpKind::Tuple => Syntax::Tuple,
        OpKind::OptimizationBarrier => Syntax::OptimizationBarrier,
        OpKind::Select => Syntax::Select,
        OpKind::Complex => Syntax::Complex,
        OpKind::DotGeneral => Syntax::DotGeneral,
        OpKind::Convolution => Syntax::Convolution,
        OpKind::CustomCall => Syntax::CustomCall,
        OpKind::Composite => Syntax::Composite,
        OpKind::While => Syntax::While,
        OpKind::Reduce => Syntax::Reduce,
        OpKind::Return | FuncReturn => Syntax::Return,
        OpKind::Call => Syntax::Call,
        ChloErf | ChloErfc | ChloErfInv | ChloSquare | ChloTan | ChloLgamma | ChloDigamma
        | ChloAcos | ChloAcosh | ChloAsin | ChloAsinh | ChloAtan | ChloAtanh | ChloCosh
        | ChloSinh | ChloBesselI1e | ChloIsInf | ChloIsNegInf | ChloIsPosInf | ChloConj => {
            Syntax::Simple(NONE, Ty::Arrow)
        }
        ChloNextAfter | ChloPolygamma | ChloZeta => Syntax::Simple(NONE, Ty::PairArrow),
        k if k.is_chlo_broadcast() => Syntax::Simple(NONE, Ty::ParenArrow),
        ChloTopK => Syntax::TopK,
        OpKind::ChloConstant => Syntax::ChloConstant,
        CheckExpectEq => Syntax::Simple(NONE, Ty::OperandType),
        CheckExpectEqConst | CheckExpectAlmostEqConst => Syntax::CheckConst,
        CheckExpectAlmostEq => Syntax::Simple(
            const { &[opt("tolerance", "tolerance", V::F64)] },
            Ty::OperandType,
        ),
        CheckExpectClose => Syntax::CheckClose,
        SdyShardingConstraint | SdyReshard => Syntax::ShardingAnnotation,
        CheckExpectSerializedEq => Syntax::Simple(
            const {
                &[
                    kw("probe_id", "probe_id", V::Str),
                    opt("iter", "iteration", V::U32),
                ]
            },
            Ty::OperandType,
        ),
        _ => Syntax::Generic,
    }
}
