//! The secrets a client draws at the start of a round (two X25519 key
//! pairs and the self-mask seed), in their own type so that a test can
//! draw them as [`Client::new`](super::Client::new) does and play a
//! colluding client.

use core::fmt;

use rand::CryptoRng;
use zeroize::Zeroizing;

use crate::masking::pairwise::MaskKeyPair;

/// The secrets a client draws at the start: exposed so that a test can
/// play a colluding client whose state the adversary knows (draw them
/// from the same seeded RNG).
pub struct ClientSecrets {
    /// The share-encryption key pair.
    pub enc: MaskKeyPair,
    /// The mask-agreement key pair.
    pub mask: MaskKeyPair,
    /// The self-mask seed.
    pub seed: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for ClientSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSecrets")
            .field("enc", &self.enc)
            .field("mask", &self.mask)
            .finish_non_exhaustive()
    }
}

impl ClientSecrets {
    /// Draws the secrets (the first draws [`Client::new`](super::Client::new) makes).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let enc = MaskKeyPair::generate(rng);
        let mask = MaskKeyPair::generate(rng);
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        Self { enc, mask, seed }
    }
}
