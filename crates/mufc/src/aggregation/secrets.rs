//! Where the secrets of a round come from: every mask, key pair and
//! protocol seed of a round derives from one secret of that round alone
//! (see "Masks are never reused" in the parent module).

use rand::rngs::SysRng;
use rand::{SeedableRng, TryRng};
use rand_chacha::ChaCha20Rng;
use syndrome_agg::masking::pairwise::SessionId;

use crate::ids::derive_bytes;
use crate::{MufcError, MufcResult};

/// Where the secrets of the rounds come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SecretSource {
    /// The operating system's random source, afresh for every round.
    Fresh,
    /// The federation seed and the round number (insecure: for tests and
    /// reproduction only).
    Derived { seed: u64 },
}

/// The secrets of one round (one protocol session): every secret of the
/// round is `secret(label, x)` for a label naming its use.
pub(crate) enum RoundSecrets {
    /// 256 bits from the operating system, for this round only.
    Fresh([u8; 32]),
    /// Derived from the federation seed (the round enters through `x`).
    Derived { seed: u64 },
}

impl core::fmt::Debug for RoundSecrets {
    // The fresh key is the round's secret: never printed.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Fresh(_) => f.write_str("RoundSecrets::Fresh(..)"),
            Self::Derived { seed } => write!(f, "RoundSecrets::Derived {{ seed: {seed} }}"),
        }
    }
}

impl RoundSecrets {
    pub(crate) fn new(source: SecretSource) -> MufcResult<Self> {
        match source {
            SecretSource::Derived { seed } => Ok(Self::Derived { seed }),
            SecretSource::Fresh => {
                let mut key = [0u8; 32];
                SysRng.try_fill_bytes(&mut key).map_err(|e| {
                    MufcError::Randomness(format!(
                        "the operating system's random source failed: {e}"
                    ))
                })?;
                Ok(Self::Fresh(key))
            }
        }
    }

    /// The 32-byte secret of one use (`label`, `x`) in this round. Derived
    /// secrets are those of earlier versions: `derive_bytes(seed, label,
    /// x)`.
    pub(crate) fn secret(&self, label: &str, x: u64) -> [u8; 32] {
        match self {
            Self::Derived { seed } => derive_bytes(*seed, label, x),
            Self::Fresh(key) => {
                use sha2::{Digest, Sha256};
                let mut h = Sha256::new();
                h.update(b"mufc/v1/round-secret/");
                h.update(key);
                h.update(label.as_bytes());
                h.update([0u8]);
                h.update(x.to_le_bytes());
                h.finalize().into()
            }
        }
    }

    /// The session id of the round: fresh with the round, so that it binds
    /// every key advertised in it.
    pub(crate) fn session(&self) -> SessionId {
        SessionId(self.secret("session", 0))
    }

    /// A generator for one use of the round.
    pub(crate) fn rng(&self, label: &str, x: u64) -> ChaCha20Rng {
        ChaCha20Rng::from_seed(self.secret(label, x))
    }
}
