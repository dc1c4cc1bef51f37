//! Maps over clients, in parallel with the `parallel` feature. Results come
//! back in input order, so the outcome does not depend on the feature.

/// `f` applied to every item, in order; in parallel when `parallel` is set
/// and the feature is on. The first error (in input order) is returned.
pub(crate) fn map<T, R, E, F>(parallel: bool, items: &[T], f: F) -> Result<Vec<R>, E>
where
    T: Sync,
    R: Send,
    E: Send,
    F: Fn(usize, &T) -> Result<R, E> + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if parallel && items.len() > 1 {
        use rayon::prelude::*;
        let out: Vec<Result<R, E>> = items.par_iter().enumerate().map(|(i, x)| f(i, x)).collect();
        return out.into_iter().collect();
    }
    #[cfg(not(feature = "parallel"))]
    let _ = parallel;
    items.iter().enumerate().map(|(i, x)| f(i, x)).collect()
}

/// `f` applied to every item, consumed (items may hold `&mut`s to
/// distinct values), in order; in parallel as [`map`]. The first error
/// (in input order) is returned.
pub(crate) fn map_owned<T, R, E, F>(parallel: bool, items: Vec<T>, f: F) -> Result<Vec<R>, E>
where
    T: Send,
    R: Send,
    E: Send,
    F: Fn(T) -> Result<R, E> + Sync + Send,
{
    #[cfg(feature = "parallel")]
    if parallel && items.len() > 1 {
        use rayon::prelude::*;
        let out: Vec<Result<R, E>> = items.into_par_iter().map(&f).collect();
        return out.into_iter().collect();
    }
    #[cfg(not(feature = "parallel"))]
    let _ = parallel;
    items.into_iter().map(f).collect()
}
