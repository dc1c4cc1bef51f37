//! The steps of the secure-aggregation protocol: a leaf module, so that
//! errors can name a step without importing the protocol.

use core::fmt;

use serde::{Deserialize, Serialize};

/// The five steps of the protocol (Bonawitz et al. 2017, rounds 0-4 of the
/// actively secure variant, whose consistency round we run with pairwise
/// MACs in place of signatures).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Step {
    /// Round 0: each client publishes two X25519 public keys (share
    /// encryption, mask agreement) and a commitment to its self-mask seed.
    AdvertiseKeys,
    /// Round 1: each client Shamir-shares its mask secret key and its
    /// self-mask seed to its holders, encrypted.
    ShareKeys,
    /// Round 2: each client sends its input plus self-mask plus pairwise
    /// masks.
    MaskedInput,
    /// Round 3 (of the actively secure variant): each survivor attests,
    /// to each alive peer, the one alive set the server sent it
    /// (docs/threat-model.md S7).
    ConsistencyCheck,
    /// Round 4: each survivor reveals, per peer, the self-mask seed share
    /// (peer alive) or the mask-key share (peer dropped), never both.
    Unmasking,
}

impl Step {
    /// All steps in order.
    pub const ALL: [Self; 5] = [
        Self::AdvertiseKeys,
        Self::ShareKeys,
        Self::MaskedInput,
        Self::ConsistencyCheck,
        Self::Unmasking,
    ];

    /// The step's number, 0 to 4.
    pub fn index(self) -> u8 {
        match self {
            Self::AdvertiseKeys => 0,
            Self::ShareKeys => 1,
            Self::MaskedInput => 2,
            Self::ConsistencyCheck => 3,
            Self::Unmasking => 4,
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::AdvertiseKeys => "advertise-keys",
            Self::ShareKeys => "share-keys",
            Self::MaskedInput => "masked-input",
            Self::ConsistencyCheck => "consistency-check",
            Self::Unmasking => "unmasking",
        })
    }
}
