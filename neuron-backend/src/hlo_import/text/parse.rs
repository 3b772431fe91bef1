//! Recursive-descent reader of the HLO text grammar: module header, the stack-frame
//! tables of optimized dumps, computations, instructions, operands and shapes.
//!
//! Owns: [`module`] (text → [`RawModule`]) and [`shape`]. Names are kept as written
//! (without `%`) with their byte positions; [`super::resolve`] turns them into ids.
//! Invariants: every syntax error names the position and what was expected; values
//! that do not change what the module computes (`metadata`, the header's layouts and
//! options, the stack-frame tables, computation signatures) are read and dropped;
//! nesting depth is bounded, so no input can exhaust the stack.

use super::super::ImportError;
use super::attrs;
use super::lex::{Cursor, PResult};
use super::literal;
use crate::hlo::proto::{HloInstructionProto, LayoutProto, PrimitiveType, ShapeProto};

/// Deepest tuple nesting and highest rank accepted in a shape (literals nest by rank).
const MAX_DEPTH: usize = 64;

/// A module as written: its name and computations, names not yet resolved.
pub(super) struct RawModule<'a> {
    pub name: &'a str,
    /// `is_scheduled=true`: instructions are printed in schedule order.
    pub scheduled: bool,
    pub comps: Vec<RawComp<'a>>,
}

/// A computation as written.
pub(super) struct RawComp<'a> {
    pub name: &'a str,
    pub pos: usize,
    pub entry: bool,
    pub instrs: Vec<RawInstr<'a>>,
}

/// Computations an instruction names under one attribute (`to_apply=`, `body=`, …).
pub(super) struct Called<'a> {
    pub key: &'a str,
    pub pos: usize,
    pub names: Vec<(&'a str, usize)>,
}

/// An instruction as written: its proto without ids, and the names it refers to.
pub(super) struct RawInstr<'a> {
    pub name: &'a str,
    pub pos: usize,
    pub root: bool,
    pub proto: HloInstructionProto,
    pub operands: Vec<(&'a str, usize)>,
    pub called: Vec<Called<'a>>,
    /// Whether the shape has a tiled layout (`{1,0:T(8,128)}`).
    pub tiled: bool,
}

/// Tables XLA prints between the header and the computations of optimized modules.
const SECTIONS: &[&str] = &["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// Reads a whole module.
pub(super) fn module(src: &str) -> PResult<RawModule<'_>> {
    let mut c = Cursor::new(src);
    let (kw, at) = c.expect_name("`HloModule`")?;
    if kw != "HloModule" {
        c.pos = at;
        return Err(c.expected("`HloModule`"));
    }
    let (name, _) = c.expect_name("a module name")?;
    let mut scheduled = false;
    while c.eat(",") {
        let (key, _) = c.expect_name("a module attribute")?;
        c.expect("=")?;
        let value = c.skip_value()?;
        scheduled |= key == "is_scheduled" && value == "true";
    }
    let mut comps = Vec::new();
    loop {
        c.ws();
        if c.peek().is_none() {
            break;
        }
        if !section(&mut c)? {
            comps.push(computation(&mut c)?);
        }
    }
    if comps.is_empty() {
        return Err(c.expected("a computation"));
    }
    Ok(RawModule {
        name,
        scheduled,
        comps,
    })
}

/// Skips one stack-frame table (`FileNames` followed by `1 "file.py"` lines); false if
/// the cursor is not at one.
fn section(c: &mut Cursor<'_>) -> PResult<bool> {
    let save = c.pos;
    match c.name() {
        Some(n) if SECTIONS.contains(&n) && !c.at("{") && !c.at("(") => {}
        _ => {
            c.pos = save;
            return Ok(false);
        }
    }
    loop {
        c.ws();
        if !c.peek().is_some_and(|d| d.is_ascii_digit()) {
            return Ok(true);
        }
        c.int()?;
        c.skip_value()?;
    }
}

/// Consumes keyword `kw` if it is the next word and is followed by another name.
fn keyword(c: &mut Cursor<'_>, kw: &str) -> bool {
    let save = c.pos;
    if c.name() == Some(kw) {
        let after = c.pos;
        if c.name().is_some() {
            c.pos = after;
            return true;
        }
    }
    c.pos = save;
    false
}

/// `[ENTRY] name [(p: shape, …) -> shape] { instruction* } [, execution_thread="…"]`.
fn computation<'a>(c: &mut Cursor<'a>) -> PResult<RawComp<'a>> {
    let entry = keyword(c, "ENTRY");
    let (name, pos) = c.expect_name("a computation name")?;
    if c.eat("(") {
        if !c.at(")") {
            loop {
                c.expect_name("a parameter name")?;
                c.expect(":")?;
                shape(c)?;
                if !c.eat(",") {
                    break;
                }
            }
        }
        c.expect(")")?;
        c.expect("->")?;
        shape(c)?;
    }
    c.expect("{")?;
    let mut instrs = Vec::new();
    while !c.eat("}") {
        if c.rest().trim_start().is_empty() {
            return Err(c.expected("`}` or an instruction"));
        }
        instrs.push(instruction(c)?);
    }
    let save = c.pos;
    if c.eat(",") {
        if c.name() == Some("execution_thread") && c.eat("=") {
            c.string()?;
        } else {
            c.pos = save;
            return Err(c.expected("a computation"));
        }
    }
    Ok(RawComp {
        name,
        pos,
        entry,
        instrs,
    })
}

/// `[ROOT] name = shape opcode(operands) [, attribute=value]*`.
fn instruction<'a>(c: &mut Cursor<'a>) -> PResult<RawInstr<'a>> {
    let root = keyword(c, "ROOT");
    let (name, pos) = c.expect_name("an instruction name")?;
    c.expect("=")?;
    let (ty, tiled) = shape(c)?;
    let (opcode, _) = c.expect_name("an opcode")?;
    let mut proto = HloInstructionProto {
        name: name.to_string(),
        opcode: opcode.to_string(),
        ..Default::default()
    };
    c.expect("(")?;
    let mut operands = Vec::new();
    match opcode {
        "parameter" => proto.parameter_number = c.int()?,
        "constant" => {
            if !c.at("(") && looks_like_shape(c) {
                shape(c)?;
            }
            proto.literal = Some(literal::literal(c, &ty)?);
        }
        _ => operands = operand_list(c)?,
    }
    c.expect(")")?;
    proto.shape = Some(ty);
    let mut raw = RawInstr {
        name,
        pos,
        root,
        proto,
        operands,
        called: Vec::new(),
        tiled,
    };
    while c.eat(",") {
        attrs::attribute(c, &mut raw)?;
    }
    attrs::defaults(&mut raw.proto);
    Ok(raw)
}

/// Operands, each a name optionally preceded by its shape (`f32[4]{0} %x`).
fn operand_list<'a>(c: &mut Cursor<'a>) -> PResult<Vec<(&'a str, usize)>> {
    let mut out = Vec::new();
    if c.at(")") {
        return Ok(out);
    }
    loop {
        if looks_like_shape(c) {
            shape(c)?;
        }
        out.push(c.expect_name("an operand name")?);
        if !c.eat(",") {
            return Ok(out);
        }
    }
}

/// Whether a shape starts at the cursor (`(` or an element type followed by `[`).
pub(super) fn looks_like_shape(c: &mut Cursor<'_>) -> bool {
    if c.at("(") {
        return true;
    }
    let save = c.pos;
    let is = c.name().is_some_and(|n| prim(n).is_some()) && c.peek() == Some('[');
    c.pos = save;
    is
}

/// The primitive type named `n` in HLO text.
pub(super) fn prim(n: &str) -> Option<PrimitiveType> {
    use PrimitiveType as P;
    Some(match n {
        "pred" => P::Pred,
        "s2" => P::S2,
        "s4" => P::S4,
        "s8" => P::S8,
        "s16" => P::S16,
        "s32" => P::S32,
        "s64" => P::S64,
        "u2" => P::U2,
        "u4" => P::U4,
        "u8" => P::U8,
        "u16" => P::U16,
        "u32" => P::U32,
        "u64" => P::U64,
        "f16" => P::F16,
        "f32" => P::F32,
        "bf16" => P::Bf16,
        "f64" => P::F64,
        "f8e5m2" => P::F8e5m2,
        "f8e4m3" => P::F8e4m3,
        "f8e4m3fn" => P::F8e4m3fn,
        "f8e4m3b11fnuz" => P::F8e4m3b11fnuz,
        "f8e3m4" => P::F8e3m4,
        "f8e5m2fnuz" => P::F8e5m2fnuz,
        "f8e4m3fnuz" => P::F8e4m3fnuz,
        "f4e2m1fn" => P::F4e2m1fn,
        "f8e8m0fnu" => P::F8e8m0fnu,
        "c64" => P::C64,
        "c128" => P::C128,
        "token" => P::Token,
        "opaque" => P::OpaqueType,
        _ => return None,
    })
}

/// A shape and whether any of its layouts is tiled.
pub(super) fn shape(c: &mut Cursor<'_>) -> PResult<(ShapeProto, bool)> {
    shape_at(c, 0)
}

fn shape_at(c: &mut Cursor<'_>, depth: usize) -> PResult<(ShapeProto, bool)> {
    if c.at("(") {
        if depth >= MAX_DEPTH {
            return Err(c.unsupported(c.pos, format!("tuples nested deeper than {MAX_DEPTH}")));
        }
        c.expect("(")?;
        let mut elems = Vec::new();
        let mut tiled = false;
        if !c.at(")") {
            loop {
                let (s, t) = shape_at(c, depth + 1)?;
                elems.push(s);
                tiled |= t;
                if !c.eat(",") {
                    break;
                }
            }
        }
        c.expect(")")?;
        let s = ShapeProto {
            element_type: PrimitiveType::Tuple as i32,
            tuple_shapes: elems,
            ..Default::default()
        };
        return Ok((s, tiled));
    }
    let (n, at) = c.expect_name("a shape")?;
    let Some(p) = prim(n) else {
        c.pos = at;
        return Err(c.expected("an element type (`f32`, `s32`, `pred`, …) or `(`"));
    };
    let mut s = ShapeProto {
        element_type: p as i32,
        ..Default::default()
    };
    if c.peek() != Some('[') {
        return Err(c.expected("`[` directly after the element type"));
    }
    dims(c, &mut s)?;
    let mut tiled = false;
    if c.peek() == Some('{') {
        tiled = layout(c, &mut s)?;
    }
    Ok((s, tiled))
}

/// `[4,<=3,?]`: sizes, with `<=` (bounded) and `?` marking dynamic dimensions.
fn dims(c: &mut Cursor<'_>, s: &mut ShapeProto) -> PResult<()> {
    c.expect("[")?;
    if c.eat("]") {
        return Ok(());
    }
    loop {
        c.ws();
        let at = c.pos;
        let dynamic = c.eat("<=") || c.at("?");
        let d = if c.eat("?") { 0 } else { c.int()? };
        if d < 0 {
            return Err(c.expected("a non-negative dimension size"));
        }
        if s.dimensions.len() == MAX_DEPTH {
            return Err(c.unsupported(at, format!("arrays of rank above {MAX_DEPTH}")));
        }
        s.dimensions.push(d);
        s.is_dynamic_dimension.push(dynamic);
        if !c.eat(",") {
            break;
        }
    }
    if s.is_dynamic_dimension.iter().all(|&d| !d) {
        s.is_dynamic_dimension.clear();
    }
    c.expect("]")
}

/// `{1,0}` or `{1,0:T(8,128)S(1)}`: the minor-to-major order (checked to be a
/// permutation of the dimensions); tiles, element sizes and memory spaces are read and
/// dropped. Returns whether the layout has tiles.
fn layout(c: &mut Cursor<'_>, s: &mut ShapeProto) -> PResult<bool> {
    let at = c.pos;
    c.expect("{")?;
    let mut mtm = Vec::new();
    while !c.at("}") && !c.at(":") {
        mtm.push(c.int()?);
        if !c.eat(",") {
            break;
        }
    }
    let mut tiled = false;
    if c.eat(":") {
        let extra = c.skip_value()?;
        tiled = extra.contains('T');
    }
    c.expect("}")?;
    let rank = s.dimensions.len();
    let mut seen = vec![false; rank];
    let ok = mtm.is_empty()
        || (mtm.len() == rank
            && mtm.iter().all(|&d| {
                usize::try_from(d)
                    .ok()
                    .and_then(|d| seen.get_mut(d))
                    .is_some_and(|v| !std::mem::replace(v, true))
            }));
    if !ok {
        return Err(c.error_at(
            at,
            ImportError::Expected {
                expected: format!("a layout that orders each of the {rank} dimensions once"),
                found: format!("`{{{}}}`", joined(&mtm)),
            },
        ));
    }
    if rank > 0 && !mtm.is_empty() {
        s.layout = Some(LayoutProto {
            minor_to_major: mtm,
        });
    }
    Ok(tiled)
}

/// `1,0` (a layout as written).
fn joined(v: &[i64]) -> String {
    let items: Vec<String> = v.iter().map(i64::to_string).collect();
    items.join(",")
}
