//! The channel part of a configuration: how clients tell the server about
//! their clusters, and with which masks. Its types make the combinations
//! that cannot work unrepresentable: the plain mode has no sketch and no
//! masks, the integer ring of Appendix K takes only the masks that work in
//! a ring (not SecAgg, whose Shamir sharing needs a field), and dropout and
//! collusion rates exist only inside the SecAgg options.

use super::names::{Masking, Privacy};
use super::secagg::SecAggOptions;
use crate::MufcResult;
use crate::error::config_error;

/// The default cap on the capacity `t` of the Appendix K integer decoder.
pub const DEFAULT_INTEGER_MAX_CAPACITY: usize = 16;

/// How clients tell the server about their clusters (Algorithm 1, line 3).
///
/// The default is SCMA with the fastest exact sketch ([`Scma::Auto`]), one
/// extra check syndrome and masks from an offline dealer.
///
/// # Example
///
/// ```
/// use mufc::{Channel, FederationConfig, Masks, Privacy, Scma, SecAggGraph, SecAggOptions};
///
/// // SecAgg+ for a large federation, planned for 10% dropouts and 2%
/// // colluding clients.
/// let secagg = SecAggOptions::new().dropout(0.1).colluding(0.02).graph(SecAggGraph::Harary);
/// let config = FederationConfig::new(10)
///     .channel(Channel::Scma(Scma::auto(Masks::SecAgg(secagg))))
///     .validate()?;
/// assert_eq!(config.channel().privacy(), Privacy::Scma);
/// assert_eq!(config.channel().as_scma().map(Scma::masks), Some(Masks::SecAgg(secagg)));
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Channel {
    /// The simplified scheme of Algorithm 5 (Appendix I): each client
    /// sends its exact local centroids and cluster sizes in the clear; no
    /// quantization (no grid), no sketch, no masks.
    Plain,
    /// Secure compressed multiset aggregation (Algorithm 2).
    Scma(Scma),
}

impl Default for Channel {
    fn default() -> Self {
        Self::Scma(Scma::default())
    }
}

/// The sketch and masks of an SCMA channel (Algorithm 2).
///
/// # Example
///
/// ```
/// use mufc::{Masks, RingMasks, Scma};
///
/// let wide = Scma::wide(Masks::Pairwise).with_extra(2);
/// assert_eq!(wide.extra(), 2);
/// // The integer ring takes dealer or pairwise masks only: SecAgg is not a
/// // `RingMasks`, so that combination cannot be written.
/// let integer = Scma::integer(RingMasks::Dealer).with_max_capacity(8);
/// assert_eq!(integer.masks(), Masks::Dealer);
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Scma {
    /// The fastest exact sketch for the parameters, chosen when the
    /// federation is built by `syndrome-agg`'s measured cost model
    /// ([`syndrome_agg::fastest_scheme`]) among field keys, wide keys and
    /// partitioned sketches: in practice bin indices as keys in
    /// GF(27 * 2^59 + 1) when `max(B^d, 2n)` fits in it and `t <= 2000`, a
    /// partitioned sketch in that field for larger `t`, and wide keys in
    /// that field when the bound needs more than one word (a field of more
    /// than one word is 35 to 500 times slower on the built-in and
    /// scikit-learn data, docs/benchmarks.md). The default; the fit report
    /// names the choice ([`SketchInfo::scheme`](crate::SketchInfo)).
    Auto {
        /// Where the masks come from.
        masks: Masks,
        /// `r`, the extra check syndromes.
        extra: usize,
    },
    /// Bin indices as keys, over the cheapest finite field with
    /// `p > max(B^d, 2n)` (the factor 2 leaves room for the signed
    /// differences that unlearning decodes).
    Field {
        /// Where the masks come from.
        masks: Masks,
        /// `r`, the extra check syndromes.
        extra: usize,
    },
    /// Wide keys (`syndrome_agg::wide`): the bytes of a bin index travel as
    /// the key, decoded in GF(2^61 - 1) whatever the size of `B^d` (beyond
    /// the paper; for large d).
    Wide {
        /// Where the masks come from.
        masks: Masks,
        /// `r`, the extra check syndromes.
        extra: usize,
    },
    /// Partitioned sketches (`syndrome_agg::partitioned`): bin indices
    /// hashed into `ceil(t / 2000)` buckets, each a field sketch in
    /// GF(27 * 2^59 + 1), decoded side by side (beyond the paper; for
    /// large `t`). Needs `max(B^d, 2n)` to fit that field.
    Partitioned {
        /// Where the masks come from.
        masks: Masks,
        /// `r`, the extra check syndromes (per bucket).
        extra: usize,
    },
    /// The deterministic integer decoder of Appendix K: exact integers
    /// under a power-of-two modulus, decoded over the rationals. Only
    /// feasible for a tiny capacity `t`: a federation needing more than
    /// `max_capacity` is refused
    /// ([`MufcError::IntegerDecoderTooLarge`](crate::MufcError::IntegerDecoderTooLarge)).
    Integer {
        /// Where the masks come from (a ring: no SecAgg).
        masks: RingMasks,
        /// `r`, the extra check syndromes.
        extra: usize,
        /// The largest capacity `t` accepted.
        max_capacity: usize,
    },
}

impl Default for Scma {
    fn default() -> Self {
        Self::auto(Masks::Dealer)
    }
}

impl Scma {
    /// The fastest exact sketch ([`Scma::Auto`]) with `masks` and the
    /// default `r`.
    pub fn auto(masks: Masks) -> Self {
        Self::Auto {
            masks,
            extra: syndrome_agg::DEFAULT_EXTRA,
        }
    }

    /// Field keys with `masks` and the default `r`.
    pub fn field(masks: Masks) -> Self {
        Self::Field {
            masks,
            extra: syndrome_agg::DEFAULT_EXTRA,
        }
    }

    /// Wide keys with `masks` and the default `r`.
    pub fn wide(masks: Masks) -> Self {
        Self::Wide {
            masks,
            extra: syndrome_agg::DEFAULT_EXTRA,
        }
    }

    /// Partitioned sketches with `masks` and the default `r`.
    pub fn partitioned(masks: Masks) -> Self {
        Self::Partitioned {
            masks,
            extra: syndrome_agg::DEFAULT_EXTRA,
        }
    }

    /// The integer decoder with `masks`, the default `r` and the default
    /// capacity cap [`DEFAULT_INTEGER_MAX_CAPACITY`].
    pub fn integer(masks: RingMasks) -> Self {
        Self::Integer {
            masks,
            extra: syndrome_agg::DEFAULT_EXTRA,
            max_capacity: DEFAULT_INTEGER_MAX_CAPACITY,
        }
    }

    /// This channel with `r` extra check syndromes: with `r >= 1` every
    /// sum with slightly more nonzeros than the capacity is rejected
    /// rather than decoded wrongly.
    #[must_use]
    pub fn with_extra(mut self, r: usize) -> Self {
        match &mut self {
            Self::Auto { extra, .. }
            | Self::Field { extra, .. }
            | Self::Wide { extra, .. }
            | Self::Partitioned { extra, .. }
            | Self::Integer { extra, .. } => {
                *extra = r;
            }
        }
        self
    }

    /// This channel with the integer decoder's capacity cap `t` (no effect
    /// on the field and wide sketches).
    #[must_use]
    pub fn with_max_capacity(mut self, t: usize) -> Self {
        if let Self::Integer { max_capacity, .. } = &mut self {
            *max_capacity = t;
        }
        self
    }

    /// `r`, the extra check syndromes.
    pub fn extra(&self) -> usize {
        match self {
            Self::Auto { extra, .. }
            | Self::Field { extra, .. }
            | Self::Wide { extra, .. }
            | Self::Partitioned { extra, .. }
            | Self::Integer { extra, .. } => *extra,
        }
    }

    /// The masks.
    pub fn masks(&self) -> Masks {
        match self {
            Self::Auto { masks, .. }
            | Self::Field { masks, .. }
            | Self::Wide { masks, .. }
            | Self::Partitioned { masks, .. } => *masks,
            Self::Integer { masks, .. } => (*masks).into(),
        }
    }

    /// The sketch's name ([`Privacy::Scma`], [`Privacy::ScmaField`],
    /// [`Privacy::ScmaWide`], [`Privacy::ScmaPartitioned`] or
    /// [`Privacy::ScmaInteger`]).
    pub fn privacy(&self) -> Privacy {
        match self {
            Self::Auto { .. } => Privacy::Scma,
            Self::Field { .. } => Privacy::ScmaField,
            Self::Wide { .. } => Privacy::ScmaWide,
            Self::Partitioned { .. } => Privacy::ScmaPartitioned,
            Self::Integer { .. } => Privacy::ScmaInteger,
        }
    }
}

/// Where the masks of a secure aggregation round come from.
///
/// Each hides a client's sketch behind a uniformly random vector that
/// cancels in the sum over the clients of the round, so the decoded
/// aggregate does not depend on the masking: with no dropouts all three
/// give the same counts, bit for bit.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Masks {
    /// An offline dealer deals zero-sum masks for every round (Algorithm 2,
    /// line 2: "generated offline"). The default; the dealing is timed
    /// apart, as offline work.
    #[default]
    Dealer,
    /// Pairwise masks: every pair of clients agrees on a seed by X25519 and
    /// HKDF-SHA256 and expands it with ChaCha20 (no dropouts). Each client
    /// pays one agreement per peer and round.
    Pairwise,
    /// The dropout-tolerant protocol of Bonawitz et al. 2017 (and SecAgg+,
    /// Bell et al. 2020, with [`SecAggGraph::Harary`](crate::SecAggGraph::Harary)); see [`Masking::SecAgg`]
    /// for what a round does and [`SecAggOptions`] for its settings.
    SecAgg(SecAggOptions),
}

impl Masks {
    /// The masking's name.
    pub fn masking(&self) -> Masking {
        match self {
            Self::Dealer => Masking::Dealer,
            Self::Pairwise => Masking::Pairwise,
            Self::SecAgg(_) => Masking::SecAgg,
        }
    }
}

/// The masks that work in the integer ring of Appendix K: every mask
/// source but SecAgg, whose Shamir sharing needs a field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum RingMasks {
    /// As [`Masks::Dealer`].
    #[default]
    Dealer,
    /// As [`Masks::Pairwise`].
    Pairwise,
}

impl From<RingMasks> for Masks {
    fn from(m: RingMasks) -> Self {
        match m {
            RingMasks::Dealer => Self::Dealer,
            RingMasks::Pairwise => Self::Pairwise,
        }
    }
}

impl Channel {
    /// SCMA with the fastest exact sketch ([`Scma::Auto`]), `masks` and
    /// the default `r`: `Channel::Scma(Scma::auto(masks))`.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Channel, Masks};
    ///
    /// assert_eq!(Channel::scma(Masks::Dealer), Channel::default());
    /// ```
    pub fn scma(masks: Masks) -> Self {
        Self::Scma(Scma::auto(masks))
    }

    /// The channel that flat choices name, as on a command line: a privacy
    /// mode, a masking, and the SecAgg options (used only with
    /// [`Masking::SecAgg`]). This is the one place where these choices
    /// meet at run time; a program builds a [`Channel`] directly.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) for
    /// [`Masking::SecAgg`] with [`Privacy::ScmaInteger`] or
    /// [`Privacy::Plain`] ([`ConfigParam::Masking`](crate::ConfigParam::Masking)), and for a positive dropout rate
    /// without [`Masking::SecAgg`] ([`ConfigParam::Dropout`](crate::ConfigParam::Dropout)).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Channel, Masking, Privacy, SecAggOptions};
    ///
    /// let c = Channel::from_choices(Privacy::ScmaWide, Masking::Pairwise, SecAggOptions::new())?;
    /// let masking = c.as_scma().map(|s| s.masks().masking());
    /// assert_eq!((c.privacy(), masking), (Privacy::ScmaWide, Some(Masking::Pairwise)));
    /// assert!(Channel::from_choices(Privacy::ScmaInteger, Masking::SecAgg, SecAggOptions::new()).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn from_choices(
        privacy: Privacy,
        masking: Masking,
        secagg: SecAggOptions,
    ) -> MufcResult<Self> {
        if secagg.dropout_rate() > 0.0 && masking != Masking::SecAgg {
            return Err(config_error(
                crate::ConfigParam::Dropout,
                format!("only the secagg masking survives dropouts (masking is {masking})"),
            ));
        }
        let (masks, ring) = match masking {
            Masking::Dealer => (Masks::Dealer, Some(RingMasks::Dealer)),
            Masking::Pairwise => (Masks::Pairwise, Some(RingMasks::Pairwise)),
            Masking::SecAgg => (Masks::SecAgg(secagg), None),
        };
        Ok(match (privacy, ring) {
            (Privacy::Plain, Some(_)) => Self::Plain,
            (Privacy::Plain, None) => {
                return Err(config_error(
                    crate::ConfigParam::Masking,
                    "the plain mode sends centroids in the clear: there is nothing to \
                     aggregate securely",
                ));
            }
            (Privacy::ScmaInteger, Some(ring)) => Self::Scma(Scma::integer(ring)),
            (Privacy::ScmaInteger, None) => {
                return Err(config_error(
                    crate::ConfigParam::Masking,
                    "secagg needs a field, and the integer scheme (Appendix K) works in the \
                     ring Z/2^k: use scma or scma-wide, or the dealer or pairwise masking",
                ));
            }
            (Privacy::ScmaWide, _) => Self::Scma(Scma::wide(masks)),
            (Privacy::ScmaPartitioned, _) => Self::Scma(Scma::partitioned(masks)),
            (Privacy::ScmaField, _) => Self::Scma(Scma::field(masks)),
            (Privacy::Scma, _) => Self::Scma(Scma::auto(masks)),
        })
    }

    /// The privacy mode's name.
    pub fn privacy(&self) -> Privacy {
        match self {
            Self::Plain => Privacy::Plain,
            Self::Scma(s) => s.privacy(),
        }
    }

    /// The SCMA part, its sketch and masks; `None` for the plain mode,
    /// which has neither.
    pub fn as_scma(&self) -> Option<&Scma> {
        match self {
            Self::Plain => None,
            Self::Scma(s) => Some(s),
        }
    }

    pub(super) fn validate(&self) -> MufcResult<()> {
        match self.as_scma().map(Scma::masks) {
            Some(Masks::SecAgg(o)) => o.validate(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_give_the_channel_they_name_or_the_old_errors() {
        for &p in Privacy::ALL {
            for &m in Masking::ALL {
                let c = Channel::from_choices(p, m, SecAggOptions::new());
                let refused =
                    m == Masking::SecAgg && matches!(p, Privacy::Plain | Privacy::ScmaInteger);
                assert_eq!(c.is_err(), refused, "{p} {m}");
                if let Ok(c) = c {
                    assert_eq!(c.privacy(), p);
                    let masking = c.as_scma().map(|s| s.masks().masking());
                    assert_eq!(masking, (p != Privacy::Plain).then_some(m));
                }
            }
        }
        let dropout = SecAggOptions::new().dropout(0.1);
        let err = Channel::from_choices(Privacy::Scma, Masking::Dealer, dropout).unwrap_err();
        assert!(err.to_string().contains("dropout"));
        let c = Channel::from_choices(Privacy::Scma, Masking::SecAgg, dropout).unwrap();
        let Some(Masks::SecAgg(o)) = c.as_scma().map(Scma::masks) else {
            panic!("expected SecAgg masks, got {c:?}");
        };
        assert_eq!(o.dropout_rate().to_bits(), 0.1f64.to_bits());
    }
}
