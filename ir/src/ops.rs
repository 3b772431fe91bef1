//! The one op enum, [`OpKind`], with its MLIR names and static traits.
//!
//! Owns: the list of every operation the IR can hold — all ops of the StableHLO
//! specification (plus the deprecated ones StableHLO still prints), `func.call` /
//! `func.return`, the CHLO ops that jax leaves in its output, the Shardy (`sdy`) value
//! ops jax prints with shardings, and the `check` dialect used by StableHLO's
//! self-checking tests. `func.func` is not an op here: functions are
//! [`crate::Func`] items of the module.
//! Invariants: `OpKind::from_name(k.name()) == Some(k)` for every kind; traits are static
//! facts about the kind, never about one op instance (those live in side tables).

/// Static properties of an op kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Traits(u16);

impl Traits {
    /// Applies independently to each element: result\[i\] depends only on operands\[i\].
    pub const ELEMENTWISE: Traits = Traits(1);
    /// Binary op whose two operands can be swapped.
    pub const COMMUTATIVE: Traits = Traits(1 << 1);
    /// Costly per element (transcendentals) or per output (contractions); never duplicated.
    pub const EXPENSIVE: Traits = Traits(1 << 2);
    /// Ends a region (`stablehlo.return`, `func.return`).
    pub const TERMINATOR: Traits = Traits(1 << 3);
    /// Observable effects beyond its results (I/O, collectives, RNG state, custom calls):
    /// may not be removed, duplicated or reordered with other such ops.
    pub const SIDE_EFFECT: Traits = Traits(1 << 4);
    /// Operands and results all have the same type.
    pub const SAME_TYPE: Traits = Traits(1 << 5);
    /// Cross-replica / cross-partition communication.
    pub const COLLECTIVE: Traits = Traits(1 << 6);
    pub const NONE: Traits = Traits(0);

    pub const fn union(self, o: Traits) -> Traits {
        Traits(self.0 | o.0)
    }
    pub const fn contains(self, o: Traits) -> bool {
        self.0 & o.0 == o.0
    }
}

impl std::ops::BitOr for Traits {
    type Output = Traits;
    fn bitor(self, o: Traits) -> Traits {
        self.union(o)
    }
}

const EW: Traits = Traits::ELEMENTWISE.union(Traits::SAME_TYPE);
const EWX: Traits = EW.union(Traits::EXPENSIVE);
const EWC: Traits = EW.union(Traits::COMMUTATIVE);
const NO: Traits = Traits::NONE;
const SE: Traits = Traits::SIDE_EFFECT;
const COLL: Traits = Traits::SIDE_EFFECT.union(Traits::COLLECTIVE);
const TERM: Traits = Traits::TERMINATOR;
const X: Traits = Traits::EXPENSIVE;

macro_rules! op_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $traits:expr; )*) => {
        /// Every operation kind of the IR. Variant docs give the op's meaning in one line;
        /// the StableHLO specification is normative.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind {
            $( $(#[$doc])* $variant, )*
        }

        impl OpKind {
            /// All kinds, in declaration order.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$variant,)*];

            /// Fully qualified MLIR name, e.g. `stablehlo.add`.
            pub fn name(self) -> &'static str {
                match self { $(OpKind::$variant => $name,)* }
            }

            /// Static traits of the kind.
            pub fn traits(self) -> Traits {
                match self { $(OpKind::$variant => $traits,)* }
            }

            /// Looks a kind up by its fully qualified MLIR name.
            pub fn from_name(name: &str) -> Option<OpKind> {
                match name { $($name => Some(OpKind::$variant),)* _ => None }
            }
        }
    };
}

op_kinds! {
    // ---- StableHLO: elementwise unary ----
    /// |x|; for complex, the modulus.
    Abs = "stablehlo.abs", EW;
    /// Cube root.
    Cbrt = "stablehlo.cbrt", EWX;
    Ceil = "stablehlo.ceil", EW;
    /// Leading zero bits.
    CountLeadingZeros = "stablehlo.count_leading_zeros", EW;
    Cosine = "stablehlo.cosine", EWX;
    Exponential = "stablehlo.exponential", EWX;
    /// e^x - 1.
    ExponentialMinusOne = "stablehlo.exponential_minus_one", EWX;
    Floor = "stablehlo.floor", EW;
    /// Imaginary part (real types: zero).
    Imag = "stablehlo.imag", Traits::ELEMENTWISE;
    IsFinite = "stablehlo.is_finite", Traits::ELEMENTWISE;
    Log = "stablehlo.log", EWX;
    /// log(1 + x).
    LogPlusOne = "stablehlo.log_plus_one", EWX;
    /// 1 / (1 + e^-x).
    Logistic = "stablehlo.logistic", EWX;
    Negate = "stablehlo.negate", EW;
    /// Logical or bitwise not.
    Not = "stablehlo.not", EW;
    /// Population count.
    Popcnt = "stablehlo.popcnt", EW;
    Real = "stablehlo.real", Traits::ELEMENTWISE;
    /// Rounds to nearest, ties away from zero.
    RoundNearestAfz = "stablehlo.round_nearest_afz", EW;
    /// Rounds to nearest, ties to even.
    RoundNearestEven = "stablehlo.round_nearest_even", EW;
    Rsqrt = "stablehlo.rsqrt", EWX;
    Sign = "stablehlo.sign", EW;
    Sine = "stablehlo.sine", EWX;
    Sqrt = "stablehlo.sqrt", EWX;
    Tan = "stablehlo.tan", EWX;
    Tanh = "stablehlo.tanh", EWX;
    /// Rounds floats to fewer exponent/mantissa bits, keeping the type.
    ReducePrecision = "stablehlo.reduce_precision", EW;
    /// Converts element type (value conversion).
    Convert = "stablehlo.convert", Traits::ELEMENTWISE;
    /// Reinterprets bits as another element type (shape may change with bit width).
    BitcastConvert = "stablehlo.bitcast_convert", NO;
    // ---- StableHLO: elementwise binary / ternary ----
    Add = "stablehlo.add", EWC;
    And = "stablehlo.and", EWC;
    Atan2 = "stablehlo.atan2", EWX;
    /// Builds complex numbers from real and imaginary parts.
    Complex = "stablehlo.complex", Traits::ELEMENTWISE;
    Divide = "stablehlo.divide", EW;
    Maximum = "stablehlo.maximum", EWC;
    Minimum = "stablehlo.minimum", EWC;
    Multiply = "stablehlo.multiply", EWC;
    Or = "stablehlo.or", EWC;
    Power = "stablehlo.power", EWX;
    Remainder = "stablehlo.remainder", EW;
    ShiftLeft = "stablehlo.shift_left", EW;
    ShiftRightArithmetic = "stablehlo.shift_right_arithmetic", EW;
    ShiftRightLogical = "stablehlo.shift_right_logical", EW;
    Subtract = "stablehlo.subtract", EW;
    Xor = "stablehlo.xor", EWC;
    /// Elementwise comparison producing `i1`.
    Compare = "stablehlo.compare", Traits::ELEMENTWISE;
    /// clamp(min, x, max); min/max may be scalars.
    Clamp = "stablehlo.clamp", Traits::ELEMENTWISE;
    /// select(pred, on_true, on_false); pred may be a scalar.
    Select = "stablehlo.select", Traits::ELEMENTWISE;
    // ---- StableHLO: constants and shape ops ----
    Constant = "stablehlo.constant", NO;
    Iota = "stablehlo.iota", NO;
    BroadcastInDim = "stablehlo.broadcast_in_dim", NO;
    /// Deprecated prefix broadcast.
    Broadcast = "stablehlo.broadcast", NO;
    Reshape = "stablehlo.reshape", NO;
    Transpose = "stablehlo.transpose", NO;
    Reverse = "stablehlo.reverse", NO;
    Slice = "stablehlo.slice", NO;
    DynamicSlice = "stablehlo.dynamic_slice", NO;
    DynamicUpdateSlice = "stablehlo.dynamic_update_slice", NO;
    Concatenate = "stablehlo.concatenate", NO;
    Pad = "stablehlo.pad", NO;
    Gather = "stablehlo.gather", NO;
    Scatter = "stablehlo.scatter", NO;
    /// Deprecated gather along one dimension.
    TorchIndexSelect = "stablehlo.torch_index_select", NO;
    GetDimensionSize = "stablehlo.get_dimension_size", NO;
    /// XLA bounded dynamism: `operand` whose dimension `dimension` has the runtime size
    /// `size` (at most its static extent). Parsed only: the parser lowers it into static
    /// ops (`parse/bounded.rs`), so a parsed module never holds one.
    SetDimensionSize = "stablehlo.set_dimension_size", NO;
    // ---- StableHLO: contractions and linear algebra ----
    DotGeneral = "stablehlo.dot_general", X;
    /// Deprecated plain dot.
    Dot = "stablehlo.dot", X;
    Convolution = "stablehlo.convolution", X;
    /// Deprecated einsum.
    Einsum = "stablehlo.einsum", X;
    UnaryEinsum = "stablehlo.unary_einsum", X;
    Cholesky = "stablehlo.cholesky", X;
    TriangularSolve = "stablehlo.triangular_solve", X;
    Fft = "stablehlo.fft", X;
    // ---- StableHLO: reductions and regions ----
    Reduce = "stablehlo.reduce", NO;
    ReduceWindow = "stablehlo.reduce_window", NO;
    SelectAndScatter = "stablehlo.select_and_scatter", NO;
    Sort = "stablehlo.sort", X;
    Map = "stablehlo.map", NO;
    BatchNormInference = "stablehlo.batch_norm_inference", NO;
    BatchNormTraining = "stablehlo.batch_norm_training", NO;
    BatchNormGrad = "stablehlo.batch_norm_grad", NO;
    // ---- StableHLO: control flow ----
    While = "stablehlo.while", NO;
    If = "stablehlo.if", NO;
    Case = "stablehlo.case", NO;
    /// Region terminator of StableHLO ops.
    Return = "stablehlo.return", TERM;
    OptimizationBarrier = "stablehlo.optimization_barrier", NO;
    // ---- StableHLO: tuples, tokens, misc ----
    Tuple = "stablehlo.tuple", NO;
    GetTupleElement = "stablehlo.get_tuple_element", NO;
    AfterAll = "stablehlo.after_all", NO;
    CreateToken = "stablehlo.create_token", NO;
    CustomCall = "stablehlo.custom_call", SE;
    Composite = "stablehlo.composite", NO;
    Rng = "stablehlo.rng", NO;
    RngBitGenerator = "stablehlo.rng_bit_generator", NO;
    UniformQuantize = "stablehlo.uniform_quantize", NO;
    UniformDequantize = "stablehlo.uniform_dequantize", NO;
    // ---- StableHLO: I/O and collectives ----
    Infeed = "stablehlo.infeed", SE;
    Outfeed = "stablehlo.outfeed", SE;
    Send = "stablehlo.send", SE;
    Recv = "stablehlo.recv", SE;
    ReplicaId = "stablehlo.replica_id", NO;
    PartitionId = "stablehlo.partition_id", NO;
    AllGather = "stablehlo.all_gather", COLL;
    AllReduce = "stablehlo.all_reduce", COLL;
    ReduceScatter = "stablehlo.reduce_scatter", COLL;
    AllToAll = "stablehlo.all_to_all", COLL;
    CollectivePermute = "stablehlo.collective_permute", COLL;
    CollectiveBroadcast = "stablehlo.collective_broadcast", COLL;
    /// Reduces operands over each process group; the result lands on the group's root.
    CollectiveReduce = "stablehlo.collective_reduce", COLL;
    CrossReplicaSum = "stablehlo.cross-replica-sum", COLL;
    /// Starts its body's single collective or slice op asynchronously: a future.
    AsyncStart = "stablehlo.async_start", COLL;
    /// Waits for an `async_start` future and returns its tensor.
    AsyncDone = "stablehlo.async_done", SE;
    // ---- StableHLO: dynamic-shape ops (parsed; static shapes only) ----
    DynamicBroadcastInDim = "stablehlo.dynamic_broadcast_in_dim", NO;
    DynamicConv = "stablehlo.dynamic_conv", X;
    DynamicGather = "stablehlo.dynamic_gather", NO;
    DynamicIota = "stablehlo.dynamic_iota", NO;
    DynamicPad = "stablehlo.dynamic_pad", NO;
    DynamicReshape = "stablehlo.dynamic_reshape", NO;
    RealDynamicSlice = "stablehlo.real_dynamic_slice", NO;
    // ---- func dialect ----
    Call = "func.call", NO;
    FuncReturn = "func.return", TERM;
    // ---- CHLO ops that jax leaves in StableHLO text ----
    ChloErf = "chlo.erf", EWX;
    ChloErfc = "chlo.erfc", EWX;
    ChloErfInv = "chlo.erf_inv", EWX;
    ChloSquare = "chlo.square", EW;
    ChloTan = "chlo.tan", EWX;
    ChloLgamma = "chlo.lgamma", EWX;
    ChloDigamma = "chlo.digamma", EWX;
    ChloPolygamma = "chlo.polygamma", EWX;
    ChloZeta = "chlo.zeta", EWX;
    ChloAcos = "chlo.acos", EWX;
    ChloAcosh = "chlo.acosh", EWX;
    ChloAsin = "chlo.asin", EWX;
    ChloAsinh = "chlo.asinh", EWX;
    ChloAtan = "chlo.atan", EWX;
    ChloAtanh = "chlo.atanh", EWX;
    ChloCosh = "chlo.cosh", EWX;
    ChloSinh = "chlo.sinh", EWX;
    ChloBesselI1e = "chlo.bessel_i1e", EWX;
    ChloIsInf = "chlo.is_inf", Traits::ELEMENTWISE;
    ChloIsNegInf = "chlo.is_neg_inf", Traits::ELEMENTWISE;
    ChloIsPosInf = "chlo.is_pos_inf", Traits::ELEMENTWISE;
    ChloNextAfter = "chlo.next_after", EW;
    ChloConj = "chlo.conj", EW;
    ChloTopK = "chlo.top_k", X;
    ChloConstantLike = "chlo.constant_like", NO;
    ChloConstant = "chlo.constant", NO;
    ChloBroadcastAdd = "chlo.broadcast_add", Traits::COMMUTATIVE;
    ChloBroadcastAnd = "chlo.broadcast_and", Traits::COMMUTATIVE;
    ChloBroadcastAtan2 = "chlo.broadcast_atan2", X;
    ChloBroadcastCompare = "chlo.broadcast_compare", NO;
    ChloBroadcastComplex = "chlo.broadcast_complex", NO;
    ChloBroadcastDivide = "chlo.broadcast_divide", NO;
    ChloBroadcastMaximum = "chlo.broadcast_maximum", Traits::COMMUTATIVE;
    ChloBroadcastMinimum = "chlo.broadcast_minimum", Traits::COMMUTATIVE;
    ChloBroadcastMultiply = "chlo.broadcast_multiply", Traits::COMMUTATIVE;
    ChloBroadcastNextAfter = "chlo.broadcast_next_after", NO;
    ChloBroadcastOr = "chlo.broadcast_or", Traits::COMMUTATIVE;
    ChloBroadcastPolygamma = "chlo.broadcast_polygamma", X;
    ChloBroadcastPower = "chlo.broadcast_power", X;
    ChloBroadcastRemainder = "chlo.broadcast_remainder", NO;
    ChloBroadcastSelect = "chlo.broadcast_select", NO;
    ChloBroadcastShiftLeft = "chlo.broadcast_shift_left", NO;
    ChloBroadcastShiftRightArithmetic = "chlo.broadcast_shift_right_arithmetic", NO;
    ChloBroadcastShiftRightLogical = "chlo.broadcast_shift_right_logical", NO;
    ChloBroadcastSubtract = "chlo.broadcast_subtract", NO;
    ChloBroadcastXor = "chlo.broadcast_xor", Traits::COMMUTATIVE;
    ChloBroadcastZeta = "chlo.broadcast_zeta", X;
    // ---- Shardy (`sdy`): sharding annotations jax prints with shardings ----
    // Both are identities on values (one operand, one result of the same type, inherent
    // `sharding = #sdy.sharding<...>`): they only instruct an SPMD partitioner, so they
    // are pure (no SIDE_EFFECT: an unused one may be removed, equal ones merged) and not
    // ELEMENTWISE (no pass should fuse or rewrite through them as arithmetic).
    /// Constrains the sharding of a value (`jax.lax.with_sharding_constraint`).
    SdyShardingConstraint = "sdy.sharding_constraint", Traits::SAME_TYPE;
    /// Reshards a value to a new sharding (communication on a real mesh).
    SdyReshard = "sdy.reshard", Traits::SAME_TYPE;
    // ---- check dialect (StableHLO interpreter tests) ----
    CheckExpectEq = "check.expect_eq", SE;
    CheckExpectEqConst = "check.expect_eq_const", SE;
    CheckExpectAlmostEq = "check.expect_almost_eq", SE;
    CheckExpectAlmostEqConst = "check.expect_almost_eq_const", SE;
    CheckExpectClose = "check.expect_close", SE;
    CheckExpectSerializedEq = "check.expect_serialized_eq", SE;
}

impl OpKind {
    /// The dialect prefix (`stablehlo`, `chlo`, `func`, `sdy`, `check`).
    pub fn dialect(self) -> &'static str {
        let n = self.name();
        &n[..n.find('.').unwrap_or(n.len())]
    }
    /// The name without the dialect prefix.
    pub fn short_name(self) -> &'static str {
        let n = self.name();
        &n[n.find('.').map_or(0, |i| i + 1)..]
    }
    /// The CHLO ops with implicit (numpy-style) broadcasting: `chlo.broadcast_*`.
    pub fn is_chlo_broadcast(self) -> bool {
        self.name().starts_with("chlo.broadcast_")
    }
    pub fn is_elementwise(self) -> bool {
        self.traits().contains(Traits::ELEMENTWISE)
    }
    pub fn is_commutative(self) -> bool {
        self.traits().contains(Traits::COMMUTATIVE)
    }
    pub fn is_expensive(self) -> bool {
        self.traits().contains(Traits::EXPENSIVE)
    }
    pub fn is_terminator(self) -> bool {
        self.traits().contains(Traits::TERMINATOR)
    }
    pub fn has_side_effect(self) -> bool {
        self.traits().contains(Traits::SIDE_EFFECT)
    }
    /// The Shardy sharding annotations (`sdy.sharding_constraint`, `sdy.reshard`): value
    /// identities whose `sharding` attribute only matters to an SPMD partitioner.
    pub fn is_sharding_annotation(self) -> bool {
        matches!(self, OpKind::SdyShardingConstraint | OpKind::SdyReshard)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &k in OpKind::ALL {
            assert!(seen.insert(k.name()), "duplicate {}", k.name());
            assert_eq!(OpKind::from_name(k.name()), Some(k));
        }
        assert_eq!(OpKind::Add.short_name(), "add");
        assert_eq!(OpKind::ChloErf.dialect(), "chlo");
        assert!(OpKind::Add.is_commutative() && OpKind::Add.is_elementwise());
        assert!(!OpKind::Subtract.is_commutative());
        let broadcast: Vec<_> = OpKind::ALL
            .iter()
            .filter(|k| k.is_chlo_broadcast())
            .collect();
        assert_eq!(broadcast.len(), 21);
        assert!(
            !OpKind::ChloErf.is_chlo_broadcast() && !OpKind::BroadcastInDim.is_chlo_broadcast()
        );
    }
}
