//! Exactness checkers of insertion, the counterpart of Algorithm 3: the
//! exact distribution of the seed list after points join a seeding equals,
//! as rationals, that of seeding all the points from scratch; a wrong
//! inserter such as [`keep_seeds_inserter`] must be caught. Weights must be
//! integers below 2^53, as for [`crate::seeding`].

use seeding::{Dataset, Enumerator, KMeansPlusPlus, Metric, PointId};

use crate::seeding::{
    Fitted, distribution_after, fit_distribution, fit_paths, on_small_sets, small_sets,
};

/// An inserter under test: from a fitted state, the points that arrive and
/// a sampler for its own random choices, the new ordered seed list.
pub trait Inserter<M: Metric> {
    /// Adds `added` to `fitted`.
    fn insert(&self, fitted: &Fitted<M>, added: &Dataset, sampler: &mut Enumerator)
    -> Vec<PointId>;
}

impl<M: Metric, F> Inserter<M> for F
where
    F: Fn(&Fitted<M>, &Dataset, &mut Enumerator) -> Vec<PointId>,
{
    fn insert(
        &self,
        fitted: &Fitted<M>,
        added: &Dataset,
        sampler: &mut Enumerator,
    ) -> Vec<PointId> {
        self(fitted, added, sampler)
    }
}

/// Insertion as implemented by [`seeding::Seeding::insert_with`].
pub fn insertion<M: Metric>(
    fitted: &Fitted<M>,
    added: &Dataset,
    sampler: &mut Enumerator,
) -> Vec<PointId> {
    let mut s = fitted.clone();
    s.insert_with(added, sampler).unwrap();
    s.seed_ids().to_vec()
}

/// A deliberately wrong inserter (the negative control): the seeds stay
/// whatever arrives; only a seeding that stopped early goes on. It is
/// right exactly when no newcomer could ever win a round.
pub fn keep_seeds_inserter<M: Metric>(
    fitted: &Fitted<M>,
    added: &Dataset,
    sampler: &mut Enumerator,
) -> Vec<PointId> {
    let mut s = fitted.clone();
    let seeds = s.seed_ids().to_vec();
    s.insert_with(added, sampler).unwrap();
    if seeds.len() == s.k() {
        seeds
    } else {
        s.seed_ids().to_vec()
    }
}

/// Compares the distribution of `inserter`, adding every set of 1 and 2
/// points of `data` to the seeding of the others, with that of seeding
/// `data` from scratch; returns the number of sets checked.
///
/// # Errors
///
/// A description of the first set where the distributions differ.
pub fn check_small_insertions<M: Metric, I: Inserter<M> + ?Sized>(
    kpp: &KMeansPlusPlus<M>,
    data: &Dataset,
    inserter: &I,
) -> Result<usize, String> {
    let retrained = fit_distribution(kpp, data);
    let sets = small_sets(data.ids());
    for set in &sets {
        let base = data.without(set).unwrap();
        let added = data.only(set).unwrap();
        let paths = fit_paths(kpp, &base);
        let inserted = distribution_after(&paths, |f, en| inserter.insert(f, &added, en));
        if retrained != inserted {
            return Err(format!(
                "adding {set:?}: retrain gives {retrained:?}, insertion gives {inserted:?}"
            ));
        }
    }
    Ok(sets.len())
}

/// The property: for random small point sets and k in 1..=3, insertion is
/// exact for every added set of size 1 and 2.
pub fn insertion_is_exact_on_small_sets<M: Metric + 'static>(metric: M, cases: u32) {
    on_small_sets(metric, cases, |kpp, data| {
        check_small_insertions(kpp, data, &insertion::<M>)
    });
}
