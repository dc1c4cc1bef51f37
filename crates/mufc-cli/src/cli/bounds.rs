//! `--bounds LO,HI`: the bounds of every coordinate in the data's own
//! units, which `mufc client`, `mufc predict` and `mufc certs` (the
//! federation file) take alike.

use std::str::FromStr;

use seeding::{BoxTransform, Dataset};

use crate::CliError;

/// The bounds `[lo, hi]` of every coordinate, mapped onto the model's box
/// `[-1/2, 1/2]`.
///
/// ```
/// use mufc_cli::cli::Bounds;
///
/// let b: Bounds = "0,200".parse().unwrap();
/// assert_eq!((b.lo, b.hi), (0.0, 200.0));
/// assert!("5".parse::<Bounds>().is_err());
/// assert!("3,1".parse::<Bounds>().is_err());
/// assert!("-1,inf".parse::<Bounds>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    /// The lowest value of a coordinate.
    pub lo: f64,
    /// The highest.
    pub hi: f64,
}

impl FromStr for Bounds {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?}: give two finite numbers LO,HI with LO < HI");
        let (lo, hi) = s.split_once(',').ok_or_else(bad)?;
        let (lo, hi): (f64, f64) = (
            lo.trim().parse().map_err(|_| bad())?,
            hi.trim().parse().map_err(|_| bad())?,
        );
        if lo.is_finite() && hi.is_finite() && lo < hi {
            Ok(Self { lo, hi })
        } else {
            Err(bad())
        }
    }
}

impl Bounds {
    /// `data` mapped from these bounds into the model's box.
    ///
    /// # Errors
    ///
    /// The map's errors (a point outside the bounds).
    pub fn map(self, data: &Dataset) -> Result<Dataset, CliError> {
        let d = data.dim();
        let t = BoxTransform::from_bounds(&vec![self.lo; d], &vec![self.hi; d])?;
        Ok(t.apply_dataset(data)?)
    }

    /// `[lo, hi]`, as the federation file keeps them.
    pub fn pair(self) -> [f64; 2] {
        [self.lo, self.hi]
    }
}
