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
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum SecretSource {
    /// The operating system's random source, afresh for every round.
    Fresh,
    /// The federation seed and the round number (insecure: for tests and
    /// reproduction only).
    Derived { seed: u64 },
    /// A secret key the client keeps, with the round's session and number
    /// (`RemoteClient::with_round_key`): as fresh as the operating
    /// system's draw to anyone without the key, since no two rounds share
    /// a session, and the same on every replay of one round, so that a
    /// client run as a new process for every message rebuilds its half
    /// of the round from the round's messages.
    Keyed { key: [u8; 32] },
}

impl core::fmt::Debug for SecretSource {
    // A kept key is the client's secret: never printed.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Fresh => f.write_str("Fresh"),
            Self::Derived { seed } => f.debug_struct("Derived").field("seed", seed).finish(),
            Self::Keyed { .. } => f.write_str("Keyed(..)"),
        }
    }
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
        Self::of_session(source, &[0; 32], round)
    }

    /// The secrets of round `round` of session `session`: with a kept key
    /// ([`SecretSource::Keyed`]) the session enters the derivation, so that
    /// a server that announces a round number again, in another session,
    /// gets other secrets (and the client joins no session twice); the
    /// other sources as [`Self::new`].
    pub(crate) fn of_session(
        source: SecretSource,
        session: &[u8; 32],
        round: u64,
    ) -> MufcResult<Self> {
        match source {
            SecretSource::Keyed { key } => {
                use sha2::{Digest, Sha256};
                let mut h = Sha256::new();
                h.update(b"mufc/v1/kept-round-key/");
                h.update(key);
                h.update(session);
                h.update(round.to_le_bytes());
                Ok(Self {
                    key: h.finalize().into(),
                })
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept key's secrets are a function of the key, the session and
    /// the round, each of which changes them; the same three give the
    /// same secrets (a replay).
    #[test]
    fn kept_key_secrets_depend_on_key_session_and_round() {
        let of = |key: u8, session: u8, round: u64| {
            let source = SecretSource::Keyed { key: [key; 32] };
            RoundSecrets::of_session(source, &[session; 32], round)
                .unwrap()
                .secret("pairwise-key", 0)
        };
        assert_eq!(of(1, 2, 3), of(1, 2, 3));
        assert_ne!(of(1, 2, 3), of(9, 2, 3));
        assert_ne!(of(1, 2, 3), of(1, 9, 3));
        assert_ne!(of(1, 2, 3), of(1, 2, 9));
        // Not printed.
        let source = SecretSource::Keyed { key: [0xab; 32] };
        assert_eq!(format!("{source:?}"), "Keyed(..)");
    }
}
