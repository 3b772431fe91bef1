//! Two-way fork/join in which the calling thread does half the work, for the few places
//! (the printer, the NeuronCore planner, kernel sharing) that split a few milliseconds of
//! work in two.
//!
//! Owns [`join`]. `rayon::join` called from outside the pool hands both halves to pool
//! threads and blocks the caller; here the caller runs the first half itself while a pool
//! thread runs the second. The pool's threads persist between calls: on a loaded machine
//! a woken thread is scheduled promptly, while a thread spawned per call can wait a whole
//! scheduling period before it first runs (measured: a printer helper thread delayed
//! `print` from about 1 ms to about 7 ms in most runs).
//! Invariants: `a` always runs on the calling thread; `b` runs on a pool thread if one
//! starts it before the caller is done with `a`, else on the calling thread; results do
//! not depend on which thread ran `b`.

use std::sync::Mutex;

/// Runs `a` on this thread and `b` on a pool thread (or after `a` on this thread, if no
/// pool thread has started it by then); returns both results.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA,
    B: FnOnce() -> RB + Send,
    RB: Send,
{
    // Whoever takes `b` first runs it.
    let task = Mutex::new(Some(b));
    let take = || task.lock().unwrap_or_else(|e| e.into_inner()).take();
    let there = Mutex::new(None);
    let (ra, here) = rayon::in_place_scope(|s| {
        s.spawn(|_| {
            if let Some(b) = take() {
                let rb = b();
                *there.lock().unwrap_or_else(|e| e.into_inner()) = Some(rb);
            }
        });
        let ra = a();
        // Still untaken (no pool thread has started it): run it here.
        (ra, take().map(|b| b()))
    });
    let there = there.into_inner().unwrap_or_else(|e| e.into_inner());
    match here.or(there) {
        Some(rb) => (ra, rb),
        None => unreachable!("`b` is taken, and run, exactly once"),
    }
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn both_sides_run_once_and_results_come_back_in_order() {
        let data: Vec<u64> = (1..=1000).collect();
        let (a, b) = join(
            || data[..500].iter().sum::<u64>(),
            || data[500..].iter().sum::<u64>(),
        );
        assert_eq!((a, b), (125_250, 375_250));
        let (x, y) = join(|| "left", || String::from("right"));
        assert_eq!((x, y.as_str()), ("left", "right"));
    }
}
