//! The channel part of a configuration: how clients tell the server about
//! their clusters, and with which masks. Its types make the combinations
//! that cannot work unrepresentable: the plain mode has no sketch and no
//! masks, the integer ring of Appendix K takes only the masks that work in
//! a ring (not SecAgg, whose Shamir sharing needs a field), and dropout and
//! collusion rates exist only inside the SecAgg options.

use super::names::Masking;
use super::secagg::SecAggOptions;
use crate::MufcResult;

/// The default cap on the capacity `t` of the Appendix K integer decoder.
pub(crate) const DEFAULT_INTEGER_MAX_CAPACITY: usize = 16;

/// How clients tell the server about their clusters (Algorithm 1, line 3).
///
/// The default is SCMA with the fastest exact sketch ([`Scma::Auto`]), one
/// extra check syndrome and masks from an offline dealer.
///
/// # Example
///
/// ```
/// use mufc::{Channel, FederationConfig, Masks, Scma, SecAggGraph, SecAggOptions};
///
/// // SecAgg+ for a large federation, planned for 10% dropouts and 2%
/// // colluding clients.
/// let secagg = SecAggOptions::new().dropout(0.1).colluding(0.02).graph(SecAggGraph::Harary);
/// let config = FederationConfig::new(10)
///     .channel(Channel::Scma(Scma::auto(Masks::SecAgg(secagg))))
///     .validate()?;
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
    /// capacity cap of 16.
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
