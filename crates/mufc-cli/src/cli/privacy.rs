//! The `--privacy` word: how clients tell the server about their
//! clusters, as one flat choice of the command line. The library's
//! vocabulary is the typed [`Channel`] tree (the plain mode, or SCMA with
//! its sketch and masks); the flat words, and the one place where they
//! meet the masking and the SecAgg options ([`channel`]), live here.

use std::fmt;
use std::str::FromStr;

use mufc::{Channel, Masking, Masks, RingMasks, Scma, SecAggOptions};

use crate::CliError;

/// How clients tell the server about their clusters (`--privacy`).
///
/// # Example
///
/// ```
/// use mufc_cli::cli::Privacy;
///
/// assert_eq!("scma-wide".parse::<Privacy>()?, Privacy::ScmaWide);
/// assert_eq!(Privacy::Plain.to_string(), "plain");
/// assert!("scma2".parse::<Privacy>().is_err());
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Privacy {
    /// SCMA with the fastest exact sketch for the parameters
    /// ([`Scma::Auto`]). The default.
    #[default]
    Scma,
    /// SCMA over the cheapest finite field ([`Scma::Field`]).
    ScmaField,
    /// SCMA with the integer decoder of Appendix K ([`Scma::Integer`]).
    ScmaInteger,
    /// SCMA with wide keys ([`Scma::Wide`]).
    ScmaWide,
    /// SCMA with partitioned sketches ([`Scma::Partitioned`]).
    ScmaPartitioned,
    /// Centroids and sizes in the clear (Algorithm 5, [`Channel::Plain`]).
    Plain,
}

impl Privacy {
    /// Every value, in the order `--help` lists them.
    pub const ALL: &'static [Self] = &[
        Self::Scma,
        Self::ScmaField,
        Self::ScmaInteger,
        Self::ScmaWide,
        Self::ScmaPartitioned,
        Self::Plain,
    ];

    /// The word on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Scma => "scma",
            Self::ScmaField => "scma-field",
            Self::ScmaInteger => "scma-integer",
            Self::ScmaWide => "scma-wide",
            Self::ScmaPartitioned => "scma-partitioned",
            Self::Plain => "plain",
        }
    }

    /// One line on what the value means, for `--help`.
    pub fn help(self) -> &'static str {
        match self {
            Self::Scma => {
                "SCMA with the fastest exact sketch by a measured cost model (field keys if B^d \
                 fits a word, partitioned for t > 2000, else wide keys)"
            }
            Self::ScmaField => "SCMA over the cheapest finite field for max(n, B^d)",
            Self::ScmaInteger => "SCMA with the deterministic integer decoder of Appendix K",
            Self::ScmaWide => "SCMA with wide (hashed) keys, for large d",
            Self::ScmaPartitioned => {
                "SCMA with partitioned sketches (buckets of about 2000 keys), for large t"
            }
            Self::Plain => "Centroids and sizes in the clear (Algorithm 5)",
        }
    }

    /// The word of a library channel.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Channel, Masks, Scma};
    /// use mufc_cli::cli::Privacy;
    ///
    /// assert_eq!(Privacy::of(&Channel::Plain), Privacy::Plain);
    /// assert_eq!(Privacy::of(&Channel::Scma(Scma::wide(Masks::Dealer))), Privacy::ScmaWide);
    /// ```
    pub fn of(channel: &Channel) -> Self {
        match channel.as_scma() {
            None => Self::Plain,
            Some(Scma::Field { .. }) => Self::ScmaField,
            Some(Scma::Wide { .. }) => Self::ScmaWide,
            Some(Scma::Partitioned { .. }) => Self::ScmaPartitioned,
            Some(Scma::Integer { .. }) => Self::ScmaInteger,
            Some(_) => Self::Scma,
        }
    }
}

impl fmt::Display for Privacy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Privacy {
    type Err = CliError;

    fn from_str(s: &str) -> Result<Self, CliError> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name() == s)
            .ok_or_else(|| CliError::InvalidParameter {
                name: "privacy",
                value: s.to_string(),
                reason: "is not one of scma, scma-field, scma-integer, scma-wide, \
                         scma-partitioned, plain",
            })
    }
}

/// The channel the flat choices name: a privacy word, a masking and the
/// SecAgg options (used only with [`Masking::SecAgg`]).
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for [`Masking::SecAgg`] with the integer
/// scheme or the plain mode (`masking`), and for a positive dropout rate
/// without [`Masking::SecAgg`] (`dropout`).
///
/// # Example
///
/// ```
/// use mufc::{Masking, SecAggOptions};
/// use mufc_cli::cli::{Privacy, channel};
///
/// let c = channel(Privacy::ScmaWide, Masking::Pairwise, SecAggOptions::new())?;
/// let masking = c.as_scma().map(|s| s.masks().masking());
/// assert_eq!((Privacy::of(&c), masking), (Privacy::ScmaWide, Some(Masking::Pairwise)));
/// assert!(channel(Privacy::ScmaInteger, Masking::SecAgg, SecAggOptions::new()).is_err());
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn channel(
    privacy: Privacy,
    masking: Masking,
    secagg: SecAggOptions,
) -> Result<Channel, CliError> {
    if secagg.dropout_rate() > 0.0 && masking != Masking::SecAgg {
        return Err(CliError::InvalidParameter {
            name: "dropout",
            value: secagg.dropout_rate().to_string(),
            reason: "needs the secagg masking: only it survives dropouts",
        });
    }
    let (masks, ring) = match masking {
        Masking::Dealer => (Masks::Dealer, Some(RingMasks::Dealer)),
        Masking::Pairwise => (Masks::Pairwise, Some(RingMasks::Pairwise)),
        Masking::SecAgg => (Masks::SecAgg(secagg), None),
        // `Masking` is the library's, and may grow: a masking this command
        // line does not know is refused, not taken for another.
        _ => {
            return Err(CliError::InvalidParameter {
                name: "masking",
                value: masking.to_string(),
                reason: "is not one this command line knows",
            });
        }
    };
    let refused = |reason| CliError::InvalidParameter {
        name: "masking",
        value: masking.to_string(),
        reason,
    };
    Ok(match (privacy, ring) {
        (Privacy::Plain, Some(_)) => Channel::Plain,
        (Privacy::Plain, None) => {
            return Err(refused(
                "does not apply to the plain mode, which sends centroids in the clear: there \
                 is nothing to aggregate securely",
            ));
        }
        (Privacy::ScmaInteger, Some(ring)) => Channel::Scma(Scma::integer(ring)),
        (Privacy::ScmaInteger, None) => {
            return Err(refused(
                "needs a field, and the integer scheme (Appendix K) works in the ring Z/2^k: \
                 use scma or scma-wide, or the dealer or pairwise masking",
            ));
        }
        (Privacy::ScmaWide, _) => Channel::Scma(Scma::wide(masks)),
        (Privacy::ScmaPartitioned, _) => Channel::Scma(Scma::partitioned(masks)),
        (Privacy::ScmaField, _) => Channel::Scma(Scma::field(masks)),
        (Privacy::Scma, _) => Channel::Scma(Scma::auto(masks)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pair of words makes a channel that says the same words back,
    /// but for SecAgg with the integer scheme or the plain mode.
    #[test]
    fn every_choice_makes_the_channel_it_names() {
        for &p in Privacy::ALL {
            for m in [Masking::Dealer, Masking::Pairwise, Masking::SecAgg] {
                let c = channel(p, m, SecAggOptions::new());
                let refused =
                    m == Masking::SecAgg && matches!(p, Privacy::Plain | Privacy::ScmaInteger);
                assert_eq!(c.is_err(), refused, "{p} {m}");
                if let Ok(c) = c {
                    assert_eq!(Privacy::of(&c), p);
                    let masking = c.as_scma().map(|s| s.masks().masking());
                    assert_eq!(masking, (p != Privacy::Plain).then_some(m));
                }
            }
            assert_eq!(p.name().parse::<Privacy>().ok(), Some(p));
        }
        let dropout = SecAggOptions::new().dropout(0.1);
        assert!(channel(Privacy::Scma, Masking::Dealer, dropout).is_err());
        assert!(channel(Privacy::Scma, Masking::SecAgg, dropout).is_ok());
    }
}
