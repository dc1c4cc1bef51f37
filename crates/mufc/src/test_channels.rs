//! The channels the unit tests run every mode on, by sketch and masking
//! (the command line's flat words are `mufc-cli`'s).

use std::fmt;

use crate::{Channel, Masking, Masks, RingMasks, Scma, SecAggOptions};

/// A sketch of an SCMA channel, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sketch {
    Auto,
    Field,
    Wide,
    Partitioned,
    Integer,
}

impl fmt::Display for Sketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// The SCMA channel of `sketch` under `masking` (the integer sketch takes
/// no SecAgg: a test never asks for it).
pub(crate) fn channel(sketch: Sketch, masking: Masking) -> Channel {
    let masks = match masking {
        Masking::Pairwise => Masks::Pairwise,
        Masking::SecAgg => Masks::SecAgg(SecAggOptions::new()),
        _ => Masks::Dealer,
    };
    Channel::Scma(match sketch {
        Sketch::Auto => Scma::auto(masks),
        Sketch::Field => Scma::field(masks),
        Sketch::Wide => Scma::wide(masks),
        Sketch::Partitioned => Scma::partitioned(masks),
        Sketch::Integer if masking == Masking::Pairwise => Scma::integer(RingMasks::Pairwise),
        Sketch::Integer => Scma::integer(RingMasks::Dealer),
    })
}
