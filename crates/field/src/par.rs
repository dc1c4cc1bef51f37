//! Work that splits, run on all cores with rayon under the `parallel`
//! feature and in order without it. The results are the same either way:
//! every task is a pure function of its input, and the outputs are put
//! back in input order.

/// Below this many coefficients of work a task runs inline: spawning
/// costs more than it saves.
#[cfg(feature = "parallel")]
const MIN_PARALLEL_WORK: usize = 1 << 12;

/// `items.iter().map(task)`, in parallel when the feature is on and the
/// total `work` is large enough to pay for it.
pub(crate) fn map<T, U, G>(items: &[T], work: usize, task: G) -> Vec<U>
where
    T: Sync,
    U: Send,
    G: Fn(&T) -> U + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if work >= MIN_PARALLEL_WORK && items.len() > 1 {
        use rayon::prelude::*;
        return items.par_iter().map(task).collect();
    }
    let _ = work;
    items.iter().map(task).collect()
}

/// `(a(), b())`, the two in parallel when the feature is on and `work` is
/// large enough.
pub(crate) fn join<A, B, RA, RB>(work: usize, a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    #[cfg(feature = "parallel")]
    if work >= MIN_PARALLEL_WORK {
        return rayon::join(a, b);
    }
    let _ = work;
    (a(), b())
}
