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
/// round is `secret(label, x)` for a label naming its use, derived from
/// one 256-bit key of this round alone.
pub(crate) struct RoundSecrets {
    key: [u8; 32],
}

impl core::fmt::Debug for RoundSecrets {
    // The key is the round's secret: never printed.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RoundSecrets(..)")
    }
}

impl RoundSecrets {
    /// The secrets of round `round`: a key drawn from the operating
    /// system, or derived from the federation seed and the round number
    /// (so that even then, a round number consumed by a failed round is
    /// never masked with again, and two rounds never share a secret).
    pub(crate) fn new(source: SecretSource, round: u64) -> MufcResult<Self> {
        match source {
            SecretSource::Derived { seed } => Ok(Self {
                key: derive_bytes(seed, "round-secrets", round),
            }),
            SecretSource::Fresh => {
                let mut key = [0u8; 32];
                SysRng.try_fill_bytes(&mut key).map_err(|e| {
                    MufcError::Randomness(format!(
                        "the operating system's random source failed: {e}"
                    ))
                })?;
                Ok(Self { key })
            }
        }
    }

    /// The 32-byte secret of one use (`label`, `x`) in this round.
    pub(crate) fn secret(&self, label: &str, x: u64) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"mufc/v1/round-secret/");
        h.update(self.key);
        h.update(label.as_bytes());
        h.update([0u8]);
        h.update(x.to_le_bytes());
        h.finalize().into()
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
