//! Regression tests for semantics the StableHLO testdata corpus (`stablehlo/testdata`,
//! run by `tools/stablehlo_testdata.py`) exercises. Expected values come from outside
//! the interpreter:
//! * check tolerances: StableHLO's `stablehlo-translate --interpret` runs
//!   `custom_call @check.expect_almost_eq` with absolute tolerance 1e-3, and the
//!   `check.expect_almost_eq` op defaults to 1e-4 (`CheckOps.td`);
//! * `reduce_window`, `chlo.sinh/cosh/atanh`: XLA:CPU's outputs (the programs below run
//!   through `tools/xla_run.py`);
//! * complex inverse trigonometric/hyperbolic functions: mpmath at 200 bits, rounded to
//!   f64 (principal branches as in C99 Annex G).

use neuronc_interp::{run_function, Data, InterpError, RunOptions, Tensor};

fn run(src: &str) -> Result<Vec<Tensor>, InterpError> {
    let m = neuronc_ir::parse_module(src).expect("test program parses");
    neuronc_ir::verify_module(&m).expect("test program verifies");
    run_function(&m, "main", Vec::new(), &RunOptions::default())
}

fn almost_eq_program(check: &str, expected: f32) -> String {
    format!(
        r#"func.func @main() -> tensor<f32> {{
  %a = stablehlo.constant dense<1.0> : tensor<f32>
  %b = stablehlo.constant dense<{expected:?}> : tensor<f32>
  {check}
  return %a : tensor<f32>
}}"#
    )
}

#[test]
fn custom_call_almost_eq_has_tolerance_1e_3() {
    let cc = "stablehlo.custom_call @check.expect_almost_eq(%a, %b) {has_side_effect = true} \
              : (tensor<f32>, tensor<f32>) -> ()";
    assert!(run(&almost_eq_program(cc, 1.0005)).is_ok());
    let err = run(&almost_eq_program(cc, 1.002)).unwrap_err();
    assert!(matches!(err, InterpError::CheckFailed { .. }), "{err}");
}

#[test]
fn check_op_almost_eq_defaults_to_1e_4() {
    let op = "check.expect_almost_eq %a, %b : tensor<f32>";
    assert!(run(&almost_eq_program(op, 1.00005)).is_ok());
    assert!(run(&almost_eq_program(op, 1.0005)).is_err());
    let wide = "check.expect_almost_eq %a, %b, tolerance = 1.0e-03 : tensor<f32>";
    assert!(run(&almost_eq_program(wide, 1.0005)).is_ok());
}

fn f32s(t: &Tensor) -> Vec<f32> {
    match t.data() {
        Data::F32(v) => v.clone(),
        other => panic!("expected f32-class storage, got {other:?}"),
    }
}

/// XLA:CPU folds each window in order in the element type: `(1e8 + 1) - 1e8 == 0` in
/// f32 (an f64 accumulator would give 1), and the bf16 sum below is 0.1328125 (0x3E08;
/// accumulating in f32 and rounding once gives 0.1171875).
#[test]
fn reduce_window_accumulates_in_order_in_the_element_type() {
    let src = r#"func.func @main() -> (tensor<2xf32>, tensor<1xbf16>) {
  %x = stablehlo.constant dense<[1.0e+08, 1.0, -1.0e+08, 3.0]> : tensor<4xf32>
  %y = stablehlo.constant dense<[-2.4375, 1.265625, -3.28125, 2.28125, 3.21875, -0.9296875]> : tensor<6xbf16>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %z) <{window_dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<f32>) -> tensor<2xf32>
  %zb = stablehlo.constant dense<0.0> : tensor<bf16>
  %rb = "stablehlo.reduce_window"(%y, %zb) <{window_dimensions = array<i64: 6>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %s = stablehlo.add %a, %b : tensor<bf16>
    stablehlo.return %s : tensor<bf16>
  }) : (tensor<6xbf16>, tensor<bf16>) -> tensor<1xbf16>
  return %r, %rb : tensor<2xf32>, tensor<1xbf16>
}"#;
    let out = run(src).unwrap();
    assert_eq!(f32s(&out[0]), vec![0.0, -1.0e8]);
    assert_eq!(f32s(&out[1]), vec![0.1328125]);
}

/// `chlo.sinh`/`cosh`/`atanh` follow their CHLO decompositions in f32; XLA:CPU's
/// outputs differ from the correctly rounded values (e.g. sinh(-8.744041) is
/// -3136.5986 correctly rounded, -3136.5972 through the decomposition).
#[test]
fn chlo_sinh_cosh_atanh_follow_their_decompositions() {
    let src = r#"func.func @main() -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %x = stablehlo.constant dense<[-8.744041, 9.164727, -3.5]> : tensor<3xf32>
  %s = chlo.sinh %x : tensor<3xf32> -> tensor<3xf32>
  %c = chlo.cosh %x : tensor<3xf32> -> tensor<3xf32>
  %h = stablehlo.constant dense<[-0.9230166, 0.5, 0.99]> : tensor<3xf32>
  %a = chlo.atanh %h : tensor<3xf32> -> tensor<3xf32>
  return %s, %c, %a : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}"#;
    let out = run(src).unwrap();
    let xla_sinh = [-3136.5972f32, 4777.0596, -16.542627];
    let xla_cosh = [3136.5972f32, 4777.0596, 16.572824];
    let xla_atanh = [-1.6090304f32, 0.54930615, 2.646653];
    assert_eq!(f32s(&out[0]), xla_sinh);
    assert_eq!(f32s(&out[1]), xla_cosh);
    assert_eq!(f32s(&out[2]), xla_atanh);
}

/// An f32 convolution accumulates in f32 with kernel positions outer and input features
/// inner (XLA:CPU's outputs): for `x = [[1e8, 1], [-1e8, 0.5]]` (features x positions)
/// and a kernel of ones that order gives `((1e8 + -1e8) + 1) + 0.5 = 1.5` (feature-major:
/// 0.5); for `[[1e8, -1e8], [3, 0.25]]` it gives `((1e8 + 3) + -1e8) + 0.25 = 0.25`
/// (feature-major and exact: 3.25).
#[test]
fn f32_convolution_accumulates_like_xla() {
    let src = r#"func.func @main() -> (tensor<1x1x1xf32>, tensor<1x1x1xf32>) {
  %x = stablehlo.constant dense<[[[1.0e+08, 1.0], [-1.0e+08, 0.5]]]> : tensor<1x2x2xf32>
  %y = stablehlo.constant dense<[[[1.0e+08, -1.0e+08], [3.0, 0.25]]]> : tensor<1x2x2xf32>
  %w = stablehlo.constant dense<1.0> : tensor<1x2x2xf32>
  %r = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x1x1xf32>
  %s = stablehlo.convolution(%y, %w) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x1x1xf32>
  return %r, %s : tensor<1x1x1xf32>, tensor<1x1x1xf32>
}"#;
    let out = run(src).unwrap();
    assert_eq!(f32s(&out[0]), vec![1.5]);
    assert_eq!(f32s(&out[1]), vec![0.25]);
}

const POINTS: [(f64, f64); 6] = [
    (0.3, 0.4),
    (-2.5, 1.5),
    (0.9, 0.1),
    (1.2, -0.01),
    (-0.2, -7.0),
    (3.0, 4.0),
];

/// mpmath (200-bit) values of each function at [`POINTS`], rounded to f64.
const MPMATH: [(&str, [(f64, f64); 6]); 6] = [
    (
        "asin",
        [
            (0.2806295622918058, 0.4051123371780309),
            (-1.0033627117332509, 1.750148761317515),
            (1.077135776793875, 0.20950023867359835),
            (1.5557257897007684, -0.6225679237417546),
            (-0.028276958312330153, -2.644516590456648),
            (0.6339838656391767, 2.305509031243477),
        ],
    ),
    (
        "acos",
        [
            (1.2901667645030908, -0.4051123371780309),
            (2.574159038528147, -1.750148761317515),
            (0.49366055000102177, -0.20950023867359835),
            (0.015070537094128237, 0.6225679237417546),
            (1.5990732851072267, 2.644516590456648),
            (0.9368124611557199, -2.305509031243477),
        ],
    ),
    (
        "asinh",
        [
            (0.3189624333048184, 0.3903162045220237),
            (-1.7776623775066447, 0.5155484357349067),
            (0.8107168418415915, 0.07430577624817485),
            (1.0159888764269558, -0.006401810303562233),
            (-2.6343365939866454, -1.541937078243506),
            (2.2999140408792695, 0.9176168533514787),
        ],
    ),
    (
        "acosh",
        [
            (0.4051123371780309, 1.2901667645030908),
            (1.750148761317515, 2.574159038528147),
            (0.20950023867359835, 0.49366055000102177),
            (0.6225679237417546, -0.015070537094128237),
            (2.644516590456648, -1.5990732851072267),
            (2.305509031243477, 0.9368124611557199),
        ],
    ),
    (
        "atan",
        [
            (0.3373704711117763, 0.37908687234202215),
            (-1.2767950250211129, 0.163481616851666),
            (0.7355638371518674, 0.05516784054220517),
            (0.8760782063212993, -0.0040982844739172),
            (-1.566633225665233, -0.1437196138470942),
            (1.4483069952314644, 0.15899719167999918),
        ],
    ),
    (
        "atanh",
        [
            (0.2614921387956719, 0.4088225229163511),
            (-0.29251781316256364, 1.380543138238714),
            (1.2996242578164565, 0.41899061250419506),
            (1.198328581585435, -1.5480898405544548),
            (-0.003996887690078088, -1.4290111862388735),
            (0.1175009073114339, 1.4099210495965755),
        ],
    ),
];

fn ulp_gap(a: f64, b: f64) -> u64 {
    let key = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            -(b & i64::MAX)
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

fn complex_program(func: &str, elem: &str) -> String {
    let lits: Vec<String> = POINTS
        .iter()
        .map(|(x, y)| format!("({x:?}, {y:?})"))
        .collect();
    format!(
        r#"func.func @main() -> tensor<6xcomplex<{elem}>> {{
  %z = stablehlo.constant dense<[{}]> : tensor<6xcomplex<{elem}>>
  %r = chlo.{func} %z : tensor<6xcomplex<{elem}>> -> tensor<6xcomplex<{elem}>>
  return %r : tensor<6xcomplex<{elem}>>
}}"#,
        lits.join(", ")
    )
}

/// complex128 results are within 2 ulp of mpmath in each part (the corpus checks 3).
#[test]
fn complex128_inverse_functions_match_mpmath() {
    for (func, expected) in MPMATH {
        let out = run(&complex_program(func, "f64")).unwrap();
        let Data::C128(got) = out[0].data() else {
            panic!("{func}: not complex128");
        };
        for ((g, e), p) in got.iter().zip(expected).zip(POINTS) {
            let gap = ulp_gap(g.re, e.0).max(ulp_gap(g.im, e.1));
            assert!(gap <= 2, "{func}{p:?}: got {g}, mpmath {e:?} ({gap} ulp)");
        }
    }
}

/// mpmath values at the f32-rounded [`POINTS`], rounded to f32.
const MPMATH_F32: [(&str, [(f32, f32); 6]); 6] = [
    (
        "asin",
        [
            (0.28062958, 0.40511236),
            (-1.0033627, 1.7501488),
            (1.0771357, 0.20950022),
            (1.5557258, -0.622568),
            (-0.02827696, -2.6445167),
            (0.63398385, 2.305509),
        ],
    ),
    (
        "acos",
        [
            (1.2901667, -0.40511236),
            (2.5741591, -1.7501488),
            (0.4936606, -0.20950022),
            (0.015070535, 0.622568),
            (1.5990733, 2.6445167),
            (0.93681246, -2.305509),
        ],
    ),
    (
        "asinh",
        [
            (0.31896245, 0.39031622),
            (-1.7776624, 0.5155484),
            (0.8107168, 0.07430578),
            (1.015989, -0.00640181),
            (-2.6343367, -1.5419371),
            (2.2999141, 0.91761684),
        ],
    ),
    (
        "acosh",
        [
            (0.40511236, 1.2901667),
            (1.7501488, 2.5741591),
            (0.20950022, 0.4936606),
            (0.622568, -0.015070535),
            (2.6445167, -1.5990733),
            (2.305509, 0.93681246),
        ],
    ),
    (
        "atan",
        [
            (0.33737049, 0.37908688),
            (-1.276795, 0.16348162),
            (0.7355638, 0.055167843),
            (0.87607825, -0.004098284),
            (-1.5666332, -0.14371961),
            (1.448307, 0.1589972),
        ],
    ),
    (
        "atanh",
        [
            (0.26149216, 0.40882254),
            (-0.2925178, 1.3805431),
            (1.2996242, 0.41899055),
            (1.1983285, -1.5480899),
            (-0.0039968877, -1.4290112),
            (0.11750091, 1.409921),
        ],
    ),
];

/// complex64 results (computed in f64, rounded once) are within 1 ulp of mpmath.
#[test]
fn complex64_inverse_functions_match_mpmath() {
    for (func, expected) in MPMATH_F32 {
        let out = run(&complex_program(func, "f32")).unwrap();
        let Data::C64(got) = out[0].data() else {
            panic!("{func}: not complex64");
        };
        for ((g, e), p) in got.iter().zip(expected).zip(POINTS) {
            let gap = ulp_gap(g.re as f64, e.0 as f64).max(ulp_gap(g.im as f64, e.1 as f64));
            // f32 values widened to f64 are 2^29 f64-ulp per f32-ulp apart.
            assert!(gap <= 1 << 29, "{func}{p:?}: got {g}, mpmath {e:?}");
        }
    }
}
