//! Work that splits across buckets or channels: on all cores with the
//! `parallel` feature, in order without it. The results are the same
//! either way (each task is a pure function of its item, and the outputs
//! keep the items' order).

/// `f` over every item, in order; on all cores with the `parallel`
/// feature.
pub(crate) fn map_all<T, R, M>(items: &[T], f: M) -> Vec<R>
where
    T: Sync,
    R: Send,
    M: Fn(usize, &T) -> R + Sync + Send,
{
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().enumerate().map(|(i, x)| f(i, x)).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().enumerate().map(|(i, x)| f(i, x)).collect()
    }
}
