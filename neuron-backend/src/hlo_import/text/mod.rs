//! Import of XLA's HLO text (what `HloModule::ToString` prints: jax's
//! `lowered.as_text(dialect="hlo")` and `compile().as_text()`, `--xla_dump_to` `*.txt`
//! dumps of jax and torch_xla, our own `model.hlo.txt`) by reading it into the same
//! `HloModuleProto` structures a `.pb` decodes to, then translating that with
//! [`super::module_to_stablehlo`], so both inputs share one translator.
//!
//! Owns: [`parse_hlo_text`], [`hlo_text_to_stablehlo`] and name resolution: computation
//! and instruction names become ids, instructions are ordered operands first (the text
//! may refer forward) in the order XLA's proto of the module would list them: text
//! order, except that a scheduled module (`is_scheduled=true`, printed in schedule
//! order) gets XLA's post order, which is what its proto holds; called computations are ordered as the proto
//! orders them (`while`: body, condition; `select-and-scatter`: select, scatter;
//! `conditional`: true, false or the branch list).
//! Reading is split into `lex` (cursor, tokens, positions), `parse` (the grammar),
//! `literal` (constants), `attrs` (instruction attributes) and `values` (their
//! structured values).
//! Invariants: every error is positioned ([`ImportError::Text`]: 1-based line and column
//! into the HLO text, with what was expected or what is unsupported); a translation
//! error about an instruction is located at that instruction; cycles (an instruction
//! using itself, a computation calling itself) are errors, never recursion; no input
//! panics. No crate reads HLO text, so the reader is hand-written.

mod attrs;
mod lex;
mod literal;
mod parse;
mod values;

use super::{module_to_stablehlo, ImportError};
use crate::hlo::proto::{HloComputationProto, HloInstructionProto, HloModuleProto};
use lex::located;
use parse::{RawComp, RawModule};
use rustc_hash::FxHashMap;

/// Reads HLO text into an `HloModuleProto` (ids assigned in order of appearance).
pub fn parse_hlo_text(text: &str) -> Result<HloModuleProto, ImportError> {
    let raw = parse::module(text)?;
    resolve(text, &raw)
}

/// Reads HLO text and translates it to StableHLO text.
pub fn hlo_text_to_stablehlo(text: &str) -> Result<String, ImportError> {
    let raw = parse::module(text)?;
    let m = resolve(text, &raw)?;
    module_to_stablehlo(&m).map_err(|e| locate(text, &raw, e))
}

/// A translation error about an instruction, located at that instruction's name.
fn locate(text: &str, raw: &RawModule<'_>, e: ImportError) -> ImportError {
    let ImportError::At {
        computation, name, ..
    } = &e
    else {
        return e;
    };
    let pos = raw
        .comps
        .iter()
        .filter(|c| c.name == computation)
        .flat_map(|c| &c.instrs)
        .find(|i| i.name == name)
        .map(|i| i.pos);
    match pos {
        Some(p) => located(text, p, e),
        None => e,
    }
}

/// "expected `expected`, found `found`" at byte `pos`.
fn expected(text: &str, pos: usize, expected: &str, found: &str) -> ImportError {
    let e = ImportError::Expected {
        expected: expected.to_string(),
        found: format!("`{found}`"),
    };
    located(text, pos, e)
}

/// Names → ids: the module proto of a read module.
fn resolve(text: &str, raw: &RawModule<'_>) -> Result<HloModuleProto, ImportError> {
    let mut comp_ids: FxHashMap<&str, i64> = FxHashMap::default();
    for (k, c) in raw.comps.iter().enumerate() {
        if comp_ids.insert(c.name, k as i64 + 1).is_some() {
            return Err(expected(
                text,
                c.pos,
                "a computation name not used before",
                c.name,
            ));
        }
    }
    let entries: Vec<&RawComp<'_>> = raw.comps.iter().filter(|c| c.entry).collect();
    let entry = match entries[..] {
        [] => raw.comps.last(),
        [e] => Some(e),
        [_, e, ..] => return Err(expected(text, e.pos, "one ENTRY computation", e.name)),
    }
    .ok_or_else(|| ImportError::malformed("no computations"))?;
    let mut next_id = 1i64;
    let mut comps = Vec::new();
    for (k, c) in raw.comps.iter().enumerate() {
        let id = k as i64 + 1;
        comps.push(computation(
            text,
            c,
            id,
            raw.scheduled,
            &comp_ids,
            &mut next_id,
        )?);
    }
    check_call_graph(text, raw, &comps)?;
    Ok(HloModuleProto {
        name: raw.name.to_string(),
        entry_computation_name: entry.name.to_string(),
        entry_computation_id: comp_ids.get(entry.name).copied().unwrap_or(0),
        computations: comps,
        ..Default::default()
    })
}

/// One computation's proto: instructions in definition-before-use order with ids.
fn computation(
    text: &str,
    c: &RawComp<'_>,
    id: i64,
    scheduled: bool,
    comp_ids: &FxHashMap<&str, i64>,
    next_id: &mut i64,
) -> Result<HloComputationProto, ImportError> {
    let mut local: FxHashMap<&str, usize> = FxHashMap::default();
    for (k, i) in c.instrs.iter().enumerate() {
        if local.insert(i.name, k).is_some() {
            return Err(expected(
                text,
                i.pos,
                "an instruction name not used before",
                i.name,
            ));
        }
    }
    let mut uses: Vec<Vec<usize>> = Vec::with_capacity(c.instrs.len());
    for i in &c.instrs {
        let mut u = Vec::new();
        for &(n, p) in &i.operands {
            let k = local.get(n).copied().ok_or_else(|| {
                expected(
                    text,
                    p,
                    &format!("an instruction of computation `{}`", c.name),
                    n,
                )
            })?;
            u.push(k);
        }
        uses.push(u);
    }
    let order = topological(text, c, &uses, scheduled)?;
    let ids: Vec<i64> = (0..c.instrs.len()).map(|k| *next_id + k as i64).collect();
    let root = root_of(text, c)?;
    let mut instructions = Vec::with_capacity(order.len());
    for &k in &order {
        let raw = &c.instrs[k];
        let mut i: HloInstructionProto = raw.proto.clone();
        i.id = ids[k];
        i.operand_ids = uses[k].iter().map(|&u| ids[u]).collect();
        i.called_computation_ids = called_ids(text, raw, comp_ids)?;
        if i.opcode == "bitcast" && (raw.tiled || uses[k].iter().any(|&u| c.instrs[u].tiled)) {
            return Err(located(
                text,
                raw.pos,
                ImportError::Unsupported("a bitcast of a tiled layout".into()),
            ));
        }
        instructions.push(i);
    }
    *next_id += c.instrs.len() as i64;
    Ok(HloComputationProto {
        name: c.name.to_string(),
        instructions,
        program_shape: None,
        id,
        root_id: ids.get(root).copied().unwrap_or(0),
    })
}

/// The index of the `ROOT` instruction (the last one when none is marked).
fn root_of(text: &str, c: &RawComp<'_>) -> Result<usize, ImportError> {
    let roots: Vec<usize> = (0..c.instrs.len()).filter(|&k| c.instrs[k].root).collect();
    match roots[..] {
        [] if c.instrs.is_empty() => Err(expected(
            text,
            c.pos,
            "a computation with instructions",
            c.name,
        )),
        [] => Ok(c.instrs.len() - 1),
        [r] => Ok(r),
        [_, r, ..] => Err(expected(
            text,
            c.instrs[r].pos,
            "one ROOT",
            c.instrs[r].name,
        )),
    }
}

/// Instruction indices with operands before their users: depth-first, operands in
/// order, starting from each instruction in text order (`post_order`: only from those
/// without users, which is XLA's post order, what `HloComputation::ToProto` writes for
/// a scheduled module). An instruction that reaches itself is an error there.
fn topological(
    text: &str,
    c: &RawComp<'_>,
    uses: &[Vec<usize>],
    post_order: bool,
) -> Result<Vec<usize>, ImportError> {
    let mut used = vec![false; uses.len()];
    if post_order {
        uses.iter().flatten().for_each(|&u| used[u] = true);
    }
    let unused = (0..uses.len()).filter(|&k| !used[k]);
    // The second pass only finds instructions on cycles unreachable from unused ones.
    dfs_post_order(uses, unused.chain(0..uses.len())).map_err(|u| {
        let i = &c.instrs[u];
        expected(
            text,
            i.pos,
            "instructions that do not depend on themselves",
            i.name,
        )
    })
}

/// Depth-first post order of the graph `succ` (node -> successors, visited in order),
/// starting from each of `starts` not yet visited; iterative, so deep graphs cannot
/// overflow the stack. `Err(u)`: node `u` reaches itself.
fn dfs_post_order(
    succ: &[Vec<usize>],
    starts: impl Iterator<Item = usize>,
) -> Result<Vec<usize>, usize> {
    // 0: unvisited, 1: on the stack, 2: done.
    let mut state = vec![0u8; succ.len()];
    let mut order = Vec::with_capacity(succ.len());
    for start in starts {
        if state[start] != 0 {
            continue;
        }
        let mut stack = vec![(start, 0usize)];
        state[start] = 1;
        while let Some(&mut (k, ref mut next)) = stack.last_mut() {
            if let Some(&u) = succ[k].get(*next) {
                *next += 1;
                match state[u] {
                    0 => {
                        state[u] = 1;
                        stack.push((u, 0));
                    }
                    1 => return Err(u),
                    _ => {}
                }
            } else {
                state[k] = 2;
                order.push(k);
                stack.pop();
            }
        }
    }
    Ok(order)
}

/// The called-computation ids of an instruction, in the proto's order for its opcode.
fn called_ids(
    text: &str,
    raw: &parse::RawInstr<'_>,
    comp_ids: &FxHashMap<&str, i64>,
) -> Result<Vec<i64>, ImportError> {
    let by_key = |key: &str| raw.called.iter().find(|c| c.key == key);
    let order: &[&str] = match raw.proto.opcode.as_str() {
        "while" => &["body", "condition"],
        "select-and-scatter" => &["select", "scatter"],
        "conditional" if by_key("branch_computations").is_none() => {
            &["true_computation", "false_computation"]
        }
        _ => &[],
    };
    let mut named = Vec::new();
    if order.is_empty() {
        named.extend(raw.called.iter());
    } else {
        for key in order {
            let c = by_key(key).ok_or_else(|| {
                expected(
                    text,
                    raw.pos,
                    &format!("`{key}=` on this instruction"),
                    raw.name,
                )
            })?;
            named.push(c);
        }
        if let Some(extra) = raw.called.iter().find(|c| !order.contains(&c.key)) {
            return Err(located(
                text,
                extra.pos,
                ImportError::Unsupported(format!(
                    "attribute `{}` on `{}`",
                    extra.key, raw.proto.opcode
                )),
            ));
        }
    }
    let mut ids = Vec::new();
    for c in named {
        for &(n, p) in &c.names {
            let id = comp_ids
                .get(n)
                .copied()
                .ok_or_else(|| expected(text, p, "the name of a computation", n))?;
            ids.push(id);
        }
    }
    Ok(ids)
}

/// Deepest chain of computations calling computations accepted (the translation
/// recurses once per level).
const MAX_CALL_DEPTH: usize = 256;

/// Refuses a computation that calls itself, directly or not, or calls nested deeper
/// than [`MAX_CALL_DEPTH`].
fn check_call_graph(
    text: &str,
    raw: &RawModule<'_>,
    comps: &[HloComputationProto],
) -> Result<(), ImportError> {
    let index: FxHashMap<i64, usize> = comps.iter().enumerate().map(|(k, c)| (c.id, k)).collect();
    let callees: Vec<Vec<usize>> = comps
        .iter()
        .map(|c| {
            let mut v: Vec<usize> = c
                .instructions
                .iter()
                .flat_map(|i| &i.called_computation_ids)
                .filter_map(|id| index.get(id).copied())
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        })
        .collect();
    let order = dfs_post_order(&callees, 0..comps.len()).map_err(|u| {
        let c = &raw.comps[u];
        expected(
            text,
            c.pos,
            "computations that do not call themselves",
            c.name,
        )
    })?;
    // Post order: a computation's callees have their depth already.
    let mut depth = vec![0usize; comps.len()];
    for k in order {
        depth[k] = 1 + callees[k].iter().map(|&u| depth[u]).max().unwrap_or(0);
        if depth[k] > MAX_CALL_DEPTH {
            let what = format!("calls nested deeper than {MAX_CALL_DEPTH}");
            let pos = raw.comps[k].pos;
            return Err(located(text, pos, ImportError::Unsupported(what)));
        }
    }
    Ok(())
}
