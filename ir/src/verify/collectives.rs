//! Rules of the collectives and I/O ops: `all_gather`, `all_reduce`, `reduce_scatter`,
//! `all_to_all`, `collective_permute`, `collective_broadcast`, `collective_reduce`,
//! `cross-replica-sum`, `replica_id`, `partition_id`, `infeed`, `outfeed`, `send`, `recv`.
//!
//! Invariants: `replica_groups` is a 2-D integer attribute whose ids are unique and
//! non-negative (`-1` is padding), or mesh axes of a mesh symbol defined in the module;
//! the group size is its column count, and shape rules that depend on it are skipped when
//! the groups are empty or given by mesh axes (the size is then only known at run time).
//! `num_replicas`/`num_partitions` bounds are not checked (unknown here).

use super::cx::{opaque_field, tensor_str, OpV};
use super::reduction::{reducer_body, Acc};
use crate::attr::Attr;
use crate::ops::OpKind;
use crate::types::{ElemType, Type};

pub(super) fn check(v: &mut OpV) {
    use OpKind::*;
    let _ = match v.op.kind {
        AllGather => all_gather(v),
        AllReduce => all_reduce(v),
        ReduceScatter => reduce_scatter(v),
        AllToAll => all_to_all(v),
        CollectivePermute => collective_permute(v),
        CollectiveBroadcast => collective_broadcast(v),
        CollectiveReduce => collective_reduce(v),
        CrossReplicaSum => same_as_operand(v),
        ReplicaId | PartitionId => v.expect_result(0, ElemType::UInt(32), &[], "", "a scalar ui32"),
        Infeed | Recv => token_in(v),
        Outfeed | Send => token_out(v),
        _ => None,
    };
}

/// Checks `replica_groups`: ids unique (`c_unique`), in `[0, count)` and all present
/// (`c_range`; `-1` padding only where `padding_ok`); returns the group size (`None` when
/// there are no groups).
fn replica_groups(
    v: &mut OpV,
    c_unique: &str,
    c_range: &str,
    padding_ok: bool,
) -> Option<Option<i64>> {
    if let Some(Attr::Opaque(text)) = v.attr("replica_groups") {
        return mesh_axes_groups(v, text).then_some(None);
    }
    let Some((rows, cols, vals)) = v.opt_matrix("replica_groups")? else {
        return Some(None);
    };
    if (rows == 0 || cols == 0) && v.flag("use_global_device_ids") {
        v.err(
            c_range,
            "expects non-empty replica groups when use_global_device_ids is set",
        );
        return None;
    }
    let mut seen = rustc_hash::FxHashSet::default();
    for &x in &vals {
        if x == -1 && padding_ok {
            continue;
        }
        if x < 0 {
            v.err(
                c_range,
                format!("expects replica ids to be non-negative, but got {x}"),
            );
            return None;
        }
        if !seen.insert(x) {
            v.err(
                c_unique,
                format!("expects replica groups to be unique, but replica id {x} repeats"),
            );
            return None;
        }
    }
    let n = seen.len() as i64;
    if let Some(missing) = (0..n).find(|i| !seen.contains(i)) {
        v.err(
            c_range,
            format!(
                "expects replica groups to cover ids 0..{n}, but replica id {missing} is missing"
            ),
        );
        return None;
    }
    Some((rows > 0 && cols > 0).then_some(cols as i64))
}

/// `#stablehlo.replica_group_mesh_axes<mesh = @m, axes = [...]>`: groups defined by axes
/// of a mesh symbol, which must name a module item (their size is not known here).
fn mesh_axes_groups(v: &mut OpV, text: &str) -> bool {
    if !text.starts_with("#stablehlo.replica_group_mesh_axes<") {
        v.err(
            "",
            "expects attribute 'replica_groups' to be a 2-D integer elements attribute \
             or #stablehlo.replica_group_mesh_axes",
        );
        return false;
    }
    let mesh = opaque_field(text, "mesh").unwrap_or("");
    let name = mesh.strip_prefix('@').unwrap_or(mesh).trim_matches('"');
    if !v.g.funcs.contains_key(name) {
        v.err(
            "",
            format!("replica_groups: mesh symbol '{name}' not found"),
        );
        return false;
    }
    true
}

/// C: if `use_global_device_ids`, a positive channel id.
fn global_ids(v: &mut OpV, c: &str) {
    if !v.flag("use_global_device_ids") {
        return;
    }
    let handle = match v.attr("channel_handle") {
        Some(Attr::ChannelHandle { handle, .. }) => *handle,
        _ => 0,
    };
    if handle <= 0 {
        v.err(
            c,
            "expects a positive channel_id when use_global_device_ids is set",
        );
    }
}

fn dim_in(v: &mut OpV, name: &str, rank: usize, c: &str) -> Option<usize> {
    let d = v.req_int(name)?;
    if d < 0 || d as u64 >= rank as u64 {
        v.err(c, format!("expects {name} in [0, {rank}), but got {d}"));
        return None;
    }
    Some(d as usize)
}

fn all_gather(v: &mut OpV) -> Option<()> {
    let ins = v.operands()?;
    if v.op.results.len() != ins.len() {
        v.err(
            "C6",
            format!(
                "expects one result per operand, but got {} and {}",
                v.op.results.len(),
                ins.len()
            ),
        );
        return None;
    }
    let rank = ins[0].rank();
    let g = replica_groups(v, "C2", "C4", false)?;
    global_ids(v, "C5");
    let d = dim_in(v, "all_gather_dim", rank, "C1")?;
    for (i, t) in ins.iter().enumerate() {
        if t.rank() != rank {
            v.err(
                "C1",
                format!(
                    "expects all operands to have rank {rank}, but operand #{i} is {}",
                    tensor_str(t)
                ),
            );
            return None;
        }
        let r = v.result(i)?;
        if t.shape[d] == 0 {
            v.err(
                "C6",
                format!("expects a non-zero size of operand #{i} at all_gather_dim {d}"),
            );
            return None;
        }
        // The spec fixes the factor to the group size; StableHLO's verifier (and its
        // tests) only require a multiple, which is what is checked here.
        let mut want = t.shape.to_vec();
        if r.rank() == rank && r.shape[d] % t.shape[d] == 0 {
            want[d] = r.shape[d];
        } else if let Some(g) = g {
            want[d] = t.shape[d].checked_mul(g)?;
        }
        v.expect_result(
            i,
            t.elem,
            &want,
            "C6",
            "the operand with all_gather_dim multiplied by the group size",
        )?;
    }
    Some(())
}

fn all_reduce(v: &mut OpV) -> Option<()> {
    let ins = v.operands()?;
    if v.op.results.len() != ins.len() {
        v.err(
            "C6",
            format!(
                "expects one result per operand, but got {} and {}",
                v.op.results.len(),
                ins.len()
            ),
        );
        return None;
    }
    replica_groups(v, "C1", "C3", true)?;
    global_ids(v, "C4");
    let r = v.op.regions[0];
    let es = reducer_body(v, r, &[ins[0].elem], "C5", Acc::Scalar)?;
    for (i, t) in ins.iter().enumerate() {
        if !super::cx::is_promotable(t.elem, es[0]) {
            v.err("C5", format!("expects operand #{i} element type {} to be promotable to the computation type {}", t.elem, es[0]));
            return None;
        }
        v.expect_result(
            i,
            es[0],
            &t.shape,
            "C6",
            "the operand shape with the computation's element type",
        )?;
    }
    Some(())
}

fn reduce_scatter(v: &mut OpV) -> Option<()> {
    let a = v.operand(0)?;
    let g = replica_groups(v, "C3", "C5", false)?;
    global_ids(v, "C6");
    let d = dim_in(v, "scatter_dimension", a.rank(), "C2")?;
    let es = reducer_body(v, v.op.regions[0], &[a.elem], "C7", Acc::Scalar)?;
    let mut want = a.shape.to_vec();
    match g {
        Some(g) if a.shape[d] % g != 0 => {
            v.err(
                "C1",
                format!(
                    "expects dimension {d} ({}) to be divisible by the group size {g}",
                    a.shape[d]
                ),
            );
            return None;
        }
        Some(g) => want[d] = a.shape[d] / g,
        None => want[d] = v.result(0)?.shape.get(d).copied().unwrap_or(0),
    }
    v.expect_result(
        0,
        es[0],
        &want,
        "C8",
        "the operand with scatter_dimension divided by the group size",
    )
}

fn all_to_all(v: &mut OpV) -> Option<()> {
    let ins = v.operands()?;
    if v.op.results.len() != ins.len() {
        v.err(
            "C9",
            format!(
                "expects one result per operand, but got {} and {}",
                v.op.results.len(),
                ins.len()
            ),
        );
        return None;
    }
    let rank = ins[0].rank();
    let g = replica_groups(v, "C5", "C7", false)?;
    let sd = dim_in(v, "split_dimension", rank, "C1")?;
    let cd = dim_in(v, "concat_dimension", rank, "C3")?;
    let sc = v.req_int("split_count")?;
    if sc <= 0 {
        v.err(
            "C4",
            format!("expects a positive split_count, but got {sc}"),
        );
        return None;
    }
    match g {
        Some(g) if g != sc => v.err(
            "C8",
            format!("expects replica groups of size split_count ({sc}), but they have size {g}"),
        ),
        None if v.attr("replica_groups").is_some() => v.err(
            "C8",
            format!("expects replica groups of size split_count ({sc}), but there are none"),
        ),
        _ => {}
    }
    for (i, t) in ins.iter().enumerate() {
        if t.rank() != rank || t.shape[sd] % sc != 0 {
            v.err("C2", format!("expects operand #{i} ({}) to have rank {rank} and dimension {sd} divisible by split_count {sc}", tensor_str(t)));
            return None;
        }
        let mut want = t.shape.to_vec();
        want[sd] /= sc;
        want[cd] = want[cd].checked_mul(sc)?;
        v.expect_result(
            i,
            t.elem,
            &want,
            "C9",
            "split_dimension divided and concat_dimension multiplied by split_count",
        )?;
    }
    Some(())
}

fn collective_permute(v: &mut OpV) -> Option<()> {
    same_as_operand(v);
    let Some((rows, cols, vals)) = v.opt_matrix("source_target_pairs")? else {
        v.err("", "requires attribute 'source_target_pairs'");
        return None;
    };
    if rows > 0 && cols != 2 {
        v.err(
            "C1",
            format!("expects source_target_pairs of shape [N, 2], but got [{rows}, {cols}]"),
        );
        return None;
    }
    for (col, c) in [(0, "C2"), (1, "C3")] {
        let mut seen = rustc_hash::FxHashSet::default();
        for r in 0..rows {
            let x = vals[2 * r + col];
            if x < 0 {
                v.err(
                    "C4",
                    format!("expects non-negative ids in source_target_pairs, but got {x}"),
                );
                return None;
            }
            if !seen.insert(x) {
                let what = if col == 0 { "sources" } else { "targets" };
                v.err(
                    c,
                    format!("expects unique {what} in source_target_pairs, but {x} repeats"),
                );
                return None;
            }
        }
    }
    Some(())
}

/// `collective_reduce`: data operands (plus a trailing root operand when
/// `has_dynamic_root`), each reduced by a scalar `computation` into a same-shaped result.
fn collective_reduce(v: &mut OpV) -> Option<()> {
    replica_groups(v, "C1", "C2", true)?;
    global_ids(v, "");
    let dynamic_root = v.flag("has_dynamic_root");
    let n_ops = v.op.operands.len();
    if !dynamic_root && n_ops == 0 {
        v.err("C3", "requires at least one data operand");
        return None;
    }
    let n = if dynamic_root {
        if n_ops < 2 {
            v.err(
                "C3",
                "with has_dynamic_root requires at least two operands (data + root)",
            );
            return None;
        }
        dynamic_root_operand(v, n_ops - 1)?;
        n_ops - 1
    } else {
        n_ops
    };
    if v.op.results.len() != n {
        v.err(
            "C3",
            format!(
                "expects one result per data operand ({n}), but got {}",
                v.op.results.len()
            ),
        );
        return None;
    }
    let ins = v.tensors_of(0..n, true)?;
    for (i, t) in ins.iter().enumerate() {
        let es = reducer_body(v, v.op.regions[0], &[t.elem], "C4", Acc::Scalar)?;
        if !super::cx::is_promotable(t.elem, es[0]) {
            v.err("C4", format!("expects operand #{i} element type {} to be promotable to the computation type {}", t.elem, es[0]));
            return None;
        }
        v.expect_result(
            i,
            es[0],
            &t.shape,
            "C3",
            "the operand shape with the computation's element type",
        )?;
    }
    Some(())
}

/// The root operand of a `has_dynamic_root` collective: a rank-1 `i32` tensor with one
/// element per data operand (the operands before it).
fn dynamic_root_operand(v: &mut OpV, i: usize) -> Option<()> {
    let root = v.operand_ty(i).and_then(|t| v.tensor(t));
    let s = v.vs(v.op.operands[i]);
    match root {
        Some(t) if t.rank() == 1 && t.elem == ElemType::Int(32) => {
            if t.shape[0] != i as i64 {
                v.err("C3", format!("expects the dynamic root operand to have one element per data operand ({i}), but got {}", t.shape[0]));
                return None;
            }
            Some(())
        }
        _ => {
            v.err(
                "C3",
                format!("expects the dynamic root operand to be a rank-1 i32 tensor, but got {s}"),
            );
            None
        }
    }
}

/// Operands (plus one root operand when `has_dynamic_root`) and results pair up by type.
fn collective_broadcast(v: &mut OpV) -> Option<()> {
    let n = v.op.results.len();
    let extra = usize::from(v.flag("has_dynamic_root"));
    if v.op.operands.len() != n + extra {
        v.err(
            "",
            format!(
                "expects {} operands for {n} results, but got {}",
                n + extra,
                v.op.operands.len()
            ),
        );
        return None;
    }
    if extra == 1 {
        let root = v.operand_ty(n).and_then(|t| v.tensor(t));
        let ok = root.is_some_and(|t| {
            t.rank() == 1 && t.elem == ElemType::Int(32) && t.shape[0] == n as i64
        });
        if !ok {
            let s = v.vs(v.op.operands[n]);
            v.err(
                "C4",
                format!("expects the dynamic root operand to be a tensor<{n}xi32>, but got {s}"),
            );
        }
    }
    for i in 0..n {
        let (a, r) = (v.operand_ty(i)?, v.result_ty(i)?);
        if a != r {
            let (x, y) = (v.ts(a), v.ts(r));
            v.err("C5", format!("requires operand #{i} and result #{i} to have the same type, but got {x} and {y}"));
            return None;
        }
    }
    Some(())
}

fn same_as_operand(v: &mut OpV) -> Option<()> {
    let (a, r) = (v.operand_ty(0)?, v.result_ty(0)?);
    if a != r {
        let (x, y) = (v.ts(a), v.ts(r));
        v.err(
            "C5",
            format!("requires operand and result to have the same type, but got {x} and {y}"),
        );
    }
    Some(())
}

fn is_token(v: &OpV, t: Option<crate::TypeId>) -> bool {
    t.is_some_and(|t| matches!(v.m.ty(t), Type::Token))
}

/// `infeed` / `recv`: a token in; data results followed by a token.
fn token_in(v: &mut OpV) -> Option<()> {
    if !is_token(v, v.operand_ty(0)) {
        v.err("", "expects its operand to be a !stablehlo.token");
    }
    let n = v.op.results.len();
    if !is_token(v, v.result_ty(n.checked_sub(1)?)) {
        v.err("", "expects its last result to be a !stablehlo.token");
    }
    if let Some(i) = (0..n - 1).find(|&i| v.result_ty(i).and_then(|t| v.tensor(t)).is_none()) {
        let s = v.vs(v.op.results[i]);
        v.err(
            "C2",
            format!("expects every result but the last to be a tensor, but result #{i} is {s}"),
        );
    }
    if v.op.kind == OpKind::Infeed {
        infeed_layout(v, n - 1);
    } else {
        channel_type(v, 3);
    }
    Some(())
}

/// `outfeed` / `send`: data operands followed by a token; a token out.
fn token_out(v: &mut OpV) -> Option<()> {
    let n = v.op.operands.len();
    if !is_token(v, v.operand_ty(n.checked_sub(1)?)) {
        v.err("", "expects its last operand to be a !stablehlo.token");
    }
    if !is_token(v, v.result_ty(0)) {
        v.err("", "expects its result to be a !stablehlo.token");
    }
    if v.op.kind == OpKind::Send {
        channel_type(v, 2);
    }
    Some(())
}

/// `send`/`recv` channel type: DEVICE_TO_DEVICE (1) unless `is_host_transfer`, then
/// `host_type` (2 = DEVICE_TO_HOST for send, 3 = HOST_TO_DEVICE for recv).
fn channel_type(v: &mut OpV, host_type: i64) {
    let Some(Attr::ChannelHandle { ty, .. }) = v.attr("channel_handle") else {
        return;
    };
    let ty = *ty;
    let host = v.flag("is_host_transfer");
    let (want, name) = if host {
        (
            host_type,
            if host_type == 2 {
                "DEVICE_TO_HOST"
            } else {
                "HOST_TO_DEVICE"
            },
        )
    } else {
        (1, "DEVICE_TO_DEVICE")
    };
    if ty != want && ty != 0 {
        v.err("C1", format!("expects channel type {name} ({want}) when is_host_transfer is {host}, but got {ty}"));
    }
}

/// `infeed`'s optional `layout`: one array of integers per data result.
fn infeed_layout(v: &mut OpV, n_data: usize) {
    let Some(layout) = v.attr("layout") else {
        return;
    };
    let Attr::Array(items) = layout else {
        v.err("", "expects attribute 'layout' to be an array");
        return;
    };
    if items.len() != n_data {
        v.err(
            "",
            format!(
                "expects {n_data} layouts (one per data result), but got {}",
                items.len()
            ),
        );
        return;
    }
    fn leaf_ok(a: &Attr) -> bool {
        match a {
            Attr::Int(..) => true,
            Attr::Array(xs) => !xs.is_empty() && xs.iter().all(leaf_ok),
            _ => false,
        }
    }
    for it in items {
        let ok = matches!(it, Attr::Array(xs) if xs.iter().all(leaf_ok));
        if !ok {
            v.err("", "expects each layout to be an array of integers");
            return;
        }
    }
}
