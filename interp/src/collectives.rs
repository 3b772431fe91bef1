//! Collectives over simulated processes (replicas × partitions), one thread each.
//!
//! Owns: [`Comm`], a generation-counted all-to-all exchange every collective is built on
//! (each process deposits its operands, waits for all, and computes its own result from
//! everyone's), process grouping (`replica_groups` in cross-replica, cross-replica-and-
//! partition and flattened-id modes; `source_target_pairs`), and the ops `all_reduce`,
//! `all_gather`, `reduce_scatter`, `all_to_all`, `collective_permute`,
//! `collective_broadcast`, `cross-replica-sum`.
//! Invariants: process `p = replica * partitions + partition`; every process executes
//! the same sequence of collectives (SPMD), so exchange generations line up; an error in
//! one process poisons the exchange so the others fail instead of waiting forever.

use crate::dispatch::Ctx;
use crate::error::InterpError;
use crate::eval::{Interp, Res, Val};
use crate::region::{classify, Body};
use crate::shape::{concatenate, slice};
use crate::tensor::Tensor;
use neuronc_ir::{Attr, Module, OpKind, TensorType};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Default)]
struct Exchange {
    gen: u64,
    slots: Vec<Option<Vec<Tensor>>>,
    arrived: usize,
    published: Option<Arc<Vec<Vec<Tensor>>>>,
    poisoned: bool,
}

/// Shared state of the simulated processes of one run.
pub struct Comm {
    replicas: usize,
    partitions: usize,
    x: Mutex<Exchange>,
    cv: Condvar,
}

fn poisoned() -> InterpError {
    InterpError::Op {
        op: "(collective)".into(),
        msg: "another simulated process failed".into(),
    }
}

impl Comm {
    fn new(replicas: usize, partitions: usize) -> Comm {
        let n = replicas * partitions;
        Comm {
            replicas,
            partitions,
            x: Mutex::new(Exchange {
                slots: vec![None; n],
                ..Exchange::default()
            }),
            cv: Condvar::new(),
        }
    }

    fn n(&self) -> usize {
        self.replicas * self.partitions
    }

    /// Deposits `data` for process `me` and returns every process's data.
    fn exchange(&self, me: usize, data: Vec<Tensor>) -> Res<Arc<Vec<Vec<Tensor>>>> {
        let mut g = self.x.lock().map_err(|_| poisoned())?;
        if g.poisoned {
            return Err(poisoned());
        }
        let gen = g.gen;
        g.slots[me] = Some(data);
        g.arrived += 1;
        if g.arrived == self.n() {
            let all: Vec<Vec<Tensor>> = g
                .slots
                .iter_mut()
                .map(|s| s.take().unwrap_or_default())
                .collect();
            let all = Arc::new(all);
            g.published = Some(all.clone());
            g.arrived = 0;
            g.gen += 1;
            self.cv.notify_all();
            return Ok(all);
        }
        while g.gen == gen && !g.poisoned {
            g = self.cv.wait(g).map_err(|_| poisoned())?;
        }
        if g.poisoned {
            return Err(poisoned());
        }
        g.published.clone().ok_or_else(poisoned)
    }

    fn poison(&self) {
        if let Ok(mut g) = self.x.lock() {
            g.poisoned = true;
        }
        self.cv.notify_all();
    }
}

/// Runs all simulated processes, one thread each; results indexed by process.
pub(crate) fn run_spmd(
    m: &Module,
    f: &str,
    inputs: Vec<Tensor>,
    opts: &crate::RunOptions,
) -> Res<Vec<Vec<Tensor>>> {
    let (r, p) = (
        opts.replicas.max(1) as usize,
        opts.partitions.max(1) as usize,
    );
    let comm = Arc::new(Comm::new(r, p));
    let results: Vec<Res<Vec<Tensor>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..r * p)
            .map(|i| {
                let (comm, inputs) = (comm.clone(), inputs.clone());
                s.spawn(move || {
                    let mut it = Interp::new(m);
                    it.replica = (i / p) as u32;
                    it.partition = (i % p) as u32;
                    it.comm = Some(comm.clone());
                    let out = it.call(f, inputs.into_iter().map(Val::T).collect());
                    if out.is_err() {
                        comm.poison();
                    }
                    out.map(crate::flatten_vals)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(poisoned())))
            .collect()
    });
    // Report the first real error (not the "another process failed" echoes).
    let first_err = results
        .iter()
        .find_map(|r| r.as_ref().err().filter(|e| **e != poisoned()).cloned());
    if let Some(e) = first_err {
        return Err(e);
    }
    results.into_iter().collect()
}

/// The groups of processes an op communicates within (each a list of process ids).
fn groups(
    it: &Interp<'_>,
    cx: &Ctx<'_>,
    attr: &str,
    cross_partition_default: bool,
) -> Res<Vec<Vec<usize>>> {
    let (nr, np) = it
        .comm
        .as_ref()
        .map_or((1, 1), |c| (c.replicas, c.partitions));
    let channel = match cx.attrs().get("channel_handle") {
        Some(Attr::ChannelHandle { handle, .. }) => *handle,
        _ => 0,
    };
    let global = cx.attrs().contains("use_global_device_ids");
    let raw: Vec<Vec<usize>> = match cx.attrs().get(attr) {
        Some(Attr::Elements(d)) => {
            let shape =
                it.m.types
                    .tensor_of(d.ty)
                    .map(|t| t.shape.to_vec())
                    .unwrap_or_default();
            let flat = Attr::Elements(d.clone()).as_i64_array().unwrap_or_default();
            let w = shape.get(1).copied().unwrap_or(flat.len() as i64).max(1) as usize;
            flat.chunks(w)
                .map(|c| c.iter().filter(|&&x| x >= 0).map(|&x| x as usize).collect())
                .collect()
        }
        _ => Vec::new(),
    };
    let raw: Vec<Vec<usize>> = raw.into_iter().filter(|g| !g.is_empty()).collect();
    let cross_partition = cross_partition_default && channel > 0;
    let (per, count) = if cross_partition { (np, nr) } else { (nr, np) };
    let raw = if raw.is_empty() {
        vec![(0..if global { nr * np } else { per }).collect()]
    } else {
        raw
    };
    if global {
        return Ok(raw);
    }
    let mut out = Vec::new();
    for g in &raw {
        if cross_partition {
            for r in 0..count {
                out.push(g.iter().map(|&p| r * np + p).collect());
            }
        } else if channel > 0 {
            // cross_replica_and_partition: replicas of the group, every partition.
            out.push(
                g.iter()
                    .flat_map(|&r| (0..np).map(move |p| r * np + p))
                    .collect(),
            );
        } else {
            for p in 0..count {
                out.push(g.iter().map(|&r| r * np + p).collect());
            }
        }
    }
    Ok(out)
}

fn me(it: &Interp<'_>) -> usize {
    let np = it.comm.as_ref().map_or(1, |c| c.partitions);
    it.replica as usize * np + it.partition as usize
}

fn exchange(it: &Interp<'_>, data: Vec<Tensor>) -> Res<Arc<Vec<Vec<Tensor>>>> {
    match &it.comm {
        Some(c) => c.exchange(me(it), data),
        None => Ok(Arc::new(vec![data])),
    }
}

pub(crate) fn exec(it: &mut Interp<'_>, cx: &Ctx<'_>) -> Res<Vec<Val>> {
    let ins: Vec<Tensor> = cx
        .op
        .operands
        .iter()
        .map(|&v| it.tensor(v).cloned())
        .collect::<Res<_>>()?;
    let all = exchange(it, ins.clone())?;
    let me = me(it);
    let k = cx.op.kind;
    let group = |attr: &str| -> Res<Vec<usize>> {
        let gs = groups(it, cx, attr, false)?;
        Ok(gs
            .into_iter()
            .find(|g| g.contains(&me))
            .unwrap_or_else(|| vec![me]))
    };
    let outs: Vec<TensorType> = (0..cx.op.results.len())
        .map(|i| cx.out(i).cloned())
        .collect::<Res<_>>()?;
    let res: Vec<Tensor> = match k {
        OpKind::AllReduce | OpKind::CrossReplicaSum => {
            let g = group("replica_groups")?;
            (0..ins.len())
                .map(|i| {
                    reduce_over(
                        it,
                        cx,
                        &g.iter().map(|&p| all[p][i].clone()).collect::<Vec<_>>(),
                    )
                })
                .collect::<Res<_>>()?
        }
        OpKind::AllGather => {
            let g = group("replica_groups")?;
            let dim = cx.int("all_gather_dim")? as usize;
            (0..ins.len())
                .map(|i| {
                    let parts: Vec<&Tensor> = g.iter().map(|&p| &all[p][i]).collect();
                    cx.wrap(concatenate(&parts, dim, &outs[i]))
                })
                .collect::<Res<_>>()?
        }
        OpKind::ReduceScatter => {
            let g = group("replica_groups")?;
            let dim = cx.int("scatter_dimension")? as usize;
            let pos = g.iter().position(|&p| p == me).unwrap_or(0);
            let full = reduce_over(
                it,
                cx,
                &g.iter().map(|&p| all[p][0].clone()).collect::<Vec<_>>(),
            )?;
            vec![cx.wrap(chunk(&full, dim, pos, &outs[0]))?]
        }
        OpKind::AllToAll => {
            let g = group("replica_groups")?;
            let (sd, cd) = (
                cx.int("split_dimension")? as usize,
                cx.int("concat_dimension")? as usize,
            );
            let pos = g.iter().position(|&p| p == me).unwrap_or(0);
            (0..ins.len())
                .map(|i| {
                    let n = g.len() as i64;
                    let mut piece_shape = ins[i].shape().to_vec();
                    piece_shape[sd] /= n.max(1);
                    let pty = TensorType::new(ins[i].elem(), &piece_shape);
                    let parts: Vec<Tensor> = g
                        .iter()
                        .map(|&p| chunk(&all[p][i], sd, pos, &pty))
                        .collect::<Result<_, _>>()
                        .map_err(|e| cx.err(e))?;
                    let refs: Vec<&Tensor> = parts.iter().collect();
                    cx.wrap(concatenate(&refs, cd, &outs[i]))
                })
                .collect::<Res<_>>()?
        }
        OpKind::CollectivePermute => {
            let gs = groups(it, cx, "source_target_pairs", true)?;
            let src = gs
                .iter()
                .find(|pair| pair.len() == 2 && pair[1] == me)
                .map(|pair| pair[0]);
            // Pairs are in the op's id space; map through the same grouping as processes.
            vec![match src {
                Some(s) => all[s][0].clone(),
                None => cx.wrap(Tensor::new(
                    outs[0].clone(),
                    crate::tensor::Data::zeros(outs[0].elem, outs[0].num_elements() as usize),
                ))?,
            }]
        }
        OpKind::CollectiveBroadcast => {
            let g = group("replica_groups")?;
            vec![all[*g.first().unwrap_or(&me)][0].clone()]
        }
        _ => return Err(InterpError::UnsupportedOp(k.name().to_string())),
    };
    Ok(res.into_iter().map(Val::T).collect())
}

/// Piece `pos` of `t` split evenly along `dim` (shape `ty`).
fn chunk(t: &Tensor, dim: usize, pos: usize, ty: &TensorType) -> Result<Tensor, String> {
    let size = ty.shape.get(dim).copied().ok_or("bad dimension")?;
    let mut start = vec![0i64; t.rank()];
    start[dim] = pos as i64 * size;
    slice(t, &start, &vec![1; t.rank()], ty)
}

/// Reduces same-shape tensors elementwise with the op's region, in group order.
fn reduce_over(it: &mut Interp<'_>, cx: &Ctx<'_>, xs: &[Tensor]) -> Res<Tensor> {
    let first = xs.first().ok_or_else(|| cx.err("empty group"))?;
    if cx.op.kind == OpKind::CrossReplicaSum {
        let mut acc = first.clone();
        for x in &xs[1..] {
            acc = cx.wrap(crate::elementwise::binary(OpKind::Add, &acc, x, first.ty()))?;
        }
        return Ok(acc);
    }
    let region = *cx
        .op
        .regions
        .first()
        .ok_or_else(|| cx.err("missing region"))?;
    if let Body::Bin(k) = classify(it.m, region) {
        let mut acc = first.clone();
        for x in &xs[1..] {
            acc = cx.wrap(crate::elementwise::binary(k, &acc, x, first.ty()))?;
        }
        return Ok(acc);
    }
    let n = first.len();
    let mut data = first.data().empty_like(n);
    for i in 0..n {
        let mut acc = crate::region::scalar_at(first, i);
        for x in &xs[1..] {
            acc = it
                .run_region_t(region, vec![acc, crate::region::scalar_at(x, i)])?
                .remove(0);
        }
        data.push_from(acc.data(), 0);
    }
    Tensor::new(first.ty().clone(), data).map_err(|e| cx.err(e))
}
