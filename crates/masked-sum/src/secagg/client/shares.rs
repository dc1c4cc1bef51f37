//! The encrypted pairs of shares a client receives: their sizes and
//! [`open_share`], which authenticates and decrypts one. A leaf: the
//! client's masking step, the lying clients of the tests and the server's
//! size checks use it without the state machine.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use zeroize::Zeroizing;

use super::super::session::{share_aad, share_id, share_key, share_nonce};
use super::super::shamir::{SECRET_SHARE_BYTES, SecretShare};
use crate::context::{ClientId, RoundContext};
use crate::error::{ProtocolError, SumError, SumResult};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey};

/// The plaintext of one encrypted pair of shares: sender, receiver, the
/// share of the mask secret key, the share of the self-mask seed.
pub const SHARE_PLAINTEXT_BYTES: usize = 16 + 2 * SECRET_SHARE_BYTES;
/// The ciphertext of one pair of shares (plaintext plus 16-byte tag).
pub const SHARE_CIPHERTEXT_BYTES: usize = SHARE_PLAINTEXT_BYTES + 16;

/// The length of a [`RevealedShare`](crate::secagg::messages::RevealedShare)'s bytes.
pub const REVEALED_SHARE_BYTES: usize = SECRET_SHARE_BYTES;

/// Opens the pair of shares `from` encrypted for `me`: derives the pair's
/// key from `me`'s encryption key pair and `from`'s public key, checks the
/// tag against the associated data of (`share_aad`) this session, round,
/// sender and receiver, and checks the sender, receiver and share ids
/// inside. Returns (share of the mask secret key, share of the self-mask
/// seed).
///
/// # Errors
///
/// [`ProtocolError::AeadFailure`] for any failure (no plaintext is
/// returned or kept), [`SumError::NonCanonical`] for share values out of
/// range.
pub fn open_share(
    own_enc: &MaskKeyPair,
    me: ClientId,
    from: ClientId,
    from_enc: &MaskPublicKey,
    ctx: &RoundContext,
    ciphertext: &[u8],
) -> SumResult<(SecretShare, SecretShare)> {
    let failure = SumError::Protocol(ProtocolError::AeadFailure { from, to: me });
    let shared = own_enc.agree(from, from_enc).map_err(|_| failure.clone())?;
    let key = share_key(&shared, ctx, from, me);
    let cipher = ChaCha20Poly1305::new((&*key).into());
    let aad = share_aad(ctx, from, me);
    let plain = Zeroizing::new(
        cipher
            .decrypt(
                &share_nonce(from, me).into(),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| failure.clone())?,
    );
    if plain.len() != SHARE_PLAINTEXT_BYTES {
        return Err(failure);
    }
    let (ids, shares) = plain.split_at(16);
    let (src, dst) = ids.split_at(8);
    if src != from.to_le_bytes() || dst != me.to_le_bytes() {
        return Err(failure);
    }
    let (ks, ss) = shares.split_at(SECRET_SHARE_BYTES);
    let ks = SecretShare::from_bytes(ks)?;
    let ss = SecretShare::from_bytes(ss)?;
    if ks.id != share_id(me) || ss.id != share_id(me) {
        return Err(failure);
    }
    Ok((ks, ss))
}
