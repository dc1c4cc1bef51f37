//! Configuration, linfa's guard simplified (STYLE B2): a plain builder
//! ([`KMeansParams`], [`SeedingParams`]) whose `validate()` returns a
//! `Valid*` value that the algorithms take. A `Valid*` value cannot be
//! built any other way (deserializing one validates too), so an algorithm
//! never sees an invalid configuration.

use crate::SeedingError;

/// The label that marks "no cluster" in per-point label arrays: `k` must
/// stay below it.
const NO_LABEL: usize = u32::MAX as usize;

fn check_k(k: usize) -> Result<(), SeedingError> {
    if k == 0 {
        return Err(SeedingError::ZeroClusters);
    }
    // Labels are `u32`, and `u32::MAX` is reserved.
    if k >= NO_LABEL {
        return Err(SeedingError::InvalidParameter {
            name: "k",
            value: k as f64,
        });
    }
    Ok(())
}

/// Parameters of K-means (K-means++ seeding then Lloyd's iterations), the
/// same for the float [`crate::KMeans`] and the exact
/// [`crate::ExactKMeans`]. The defaults are linfa's (and scikit-learn's):
/// tolerance `1e-4`, at most 300 iterations; and one run.
///
/// # Example
///
/// ```
/// use seeding::{ExactKMeans, KMeans, KMeansParams};
///
/// let p = KMeansParams::new(4).tolerance(1e-6).max_iterations(50).restarts(3).validate()?;
/// assert_eq!((p.k(), p.max_iterations(), p.restarts()), (4, 50, 3));
/// let (float, exact) = (KMeans::new(p.clone()), ExactKMeans::new(p));
/// assert_eq!(float.k(), exact.k());
/// assert!(KMeansParams::new(0).validate().is_err());
/// assert!(KMeansParams::new(2).tolerance(-1.0).validate().is_err());
/// assert!(KMeansParams::new(2).restarts(0).validate().is_err());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KMeansParams {
    k: usize,
    tolerance: f64,
    max_iterations: usize,
    /// Defaulted on loading, so that a [`crate::KMeans`] saved before
    /// restarts were a parameter loads as one run.
    #[cfg_attr(feature = "serde", serde(default = "one"))]
    restarts: usize,
}

#[cfg(feature = "serde")]
fn one() -> usize {
    1
}

impl KMeansParams {
    /// `k` clusters, tolerance `1e-4`, at most 300 iterations, one run.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            tolerance: 1e-4,
            max_iterations: 300,
            restarts: 1,
        }
    }

    /// The relative tolerance: iterations stop once no cluster was
    /// re-seeded and the total squared shift of the centres is at most
    /// `tolerance` times the mean per-axis (weighted) variance of the data,
    /// as in scikit-learn. 0 runs to a fixed point.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The most Lloyd iterations (assignment steps) run, at least 1.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// The number of independent runs, at least 1; a fit keeps the one of
    /// least objective (the first on ties). Run `r` is seeded from the
    /// fit's seed and `r` ([`crate::restart_seed`] by default).
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.restarts = restarts;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroClusters`]; [`SeedingError::InvalidParameter`]
    /// for `k >= u32::MAX`, a tolerance that is negative or not finite, or
    /// an iteration cap or restart count of 0.
    pub fn validate(self) -> Result<ValidKMeansParams, SeedingError> {
        check_k(self.k)?;
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(SeedingError::InvalidParameter {
                name: "tolerance",
                value: self.tolerance,
            });
        }
        for (name, v) in [
            ("max_iterations", self.max_iterations),
            ("restarts", self.restarts),
        ] {
            if v == 0 {
                return Err(SeedingError::InvalidParameter { name, value: 0.0 });
            }
        }
        Ok(ValidKMeansParams(self))
    }
}

/// [`KMeansParams`] that passed [`KMeansParams::validate`]: what
/// [`crate::KMeans::new`] and [`crate::ExactKMeans::new`] take.
///
/// # Example
///
/// ```
/// use seeding::KMeansParams;
///
/// let p = KMeansParams::new(3).validate()?;
/// assert_eq!((p.k(), p.tolerance(), p.max_iterations(), p.restarts()), (3, 1e-4, 300, 1));
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "KMeansParams", into = "KMeansParams")
)]
pub struct ValidKMeansParams(KMeansParams);

impl ValidKMeansParams {
    /// The number of clusters.
    pub fn k(&self) -> usize {
        self.0.k
    }

    /// The relative tolerance.
    pub fn tolerance(&self) -> f64 {
        self.0.tolerance
    }

    /// The iteration cap (at least 1).
    pub fn max_iterations(&self) -> usize {
        self.0.max_iterations
    }

    /// The number of runs (at least 1).
    pub fn restarts(&self) -> usize {
        self.0.restarts
    }
}

impl TryFrom<KMeansParams> for ValidKMeansParams {
    type Error = SeedingError;

    fn try_from(p: KMeansParams) -> Result<Self, SeedingError> {
        p.validate()
    }
}

impl From<ValidKMeansParams> for KMeansParams {
    fn from(p: ValidKMeansParams) -> Self {
        p.0
    }
}

/// Parameters of K-means++ seeding ([`crate::KMeansPlusPlus`]): the number
/// of seeds.
///
/// # Example
///
/// ```
/// use seeding::{KMeansPlusPlus, SeedingParams};
///
/// let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate()?);
/// assert_eq!(kpp.k(), 3);
/// assert!(SeedingParams::new(0).validate().is_err());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SeedingParams {
    k: usize,
}

impl SeedingParams {
    /// `k` seeds.
    pub fn new(k: usize) -> Self {
        Self { k }
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroClusters`] for `k == 0`;
    /// [`SeedingError::InvalidParameter`] for `k >= u32::MAX`.
    pub fn validate(self) -> Result<ValidSeedingParams, SeedingError> {
        check_k(self.k)?;
        Ok(ValidSeedingParams(self))
    }
}

/// [`SeedingParams`] that passed [`SeedingParams::validate`]: what
/// [`crate::KMeansPlusPlus::new`] takes.
///
/// # Example
///
/// ```
/// use seeding::SeedingParams;
///
/// assert_eq!(SeedingParams::new(5).validate()?.k(), 5);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "SeedingParams", into = "SeedingParams")
)]
pub struct ValidSeedingParams(SeedingParams);

impl ValidSeedingParams {
    /// The number of seeds.
    pub fn k(&self) -> usize {
        self.0.k
    }
}

impl TryFrom<SeedingParams> for ValidSeedingParams {
    type Error = SeedingError;

    fn try_from(p: SeedingParams) -> Result<Self, SeedingError> {
        p.validate()
    }
}

impl From<ValidSeedingParams> for SeedingParams {
    fn from(p: ValidSeedingParams) -> Self {
        p.0
    }
}

/// The index of the least objective, the first on ties (`total_cmp`, so a
/// NaN never wins over a number); `None` for none. The one selection rule
/// of every best-of-R fit.
pub(crate) fn least(objectives: impl IntoIterator<Item = f64>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, phi) in objectives.into_iter().enumerate() {
        if best.is_none_or(|(_, b)| phi.total_cmp(&b).is_lt()) {
            best = Some((i, phi));
        }
    }
    best.map(|(i, _)| i)
}

/// Runs `run(r)` for every restart `r` in `0..restarts` and keeps the
/// result of least `objective` (by [`least`]'s rule), holding one result
/// besides the best at a time. `None` for no restarts.
pub(crate) fn best_of<T, E>(
    restarts: usize,
    mut run: impl FnMut(usize) -> Result<T, E>,
    objective: impl Fn(&T) -> f64,
) -> Result<Option<T>, E> {
    let mut best: Option<T> = None;
    for r in 0..restarts {
        let candidate = run(r)?;
        let better = match &best {
            None => true,
            Some(b) => least([objective(b), objective(&candidate)]) == Some(1),
        };
        if better {
            best = Some(candidate);
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_takes_the_first_minimum() {
        assert_eq!(least([3.0, 1.0, 2.0, 1.0]), Some(1));
        assert_eq!(least([f64::NAN, 1.0]), Some(1));
        assert_eq!(least(std::iter::empty()), None);
        let r: Result<_, ()> = best_of(4, |r| Ok([2.0, 1.0, 1.0, 3.0][r]), |&x| x);
        assert_eq!(r, Ok(Some(1.0)));
        let tagged: Result<_, ()> = best_of(3, |r| Ok((r, 5.0)), |&(_, x)| x);
        assert_eq!(tagged, Ok(Some((0, 5.0))));
    }
}
