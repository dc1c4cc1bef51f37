//! The mask PRG: the raw ChaCha20 keystream (RFC 8439), never a `rand` API.

use core::fmt;

use chacha20::ChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use zeroize::Zeroize;

use crate::error::{SumResult, invalid};

/// The raw ChaCha20 keystream of a 32-byte seed (RFC 8439: 96-bit nonce
/// of zeros, 32-bit block counter starting at 0), read sequentially.
///
/// Masks must be bit-identical on every client whatever its `rand` version,
/// so they never go through `rand`'s distributions or `StdRng`: the stream
/// is the cipher's keystream itself, pinned by the RFC 8439 vector and our
/// sampling known-answer test. Its `Debug` output is redacted.
///
/// # Example
///
/// ```
/// use masked_sum::masking::MaskStream;
///
/// // RFC 8439, appendix A.1, test vector 1 (all-zero key and nonce,
/// // block counter 0): the keystream starts 76 b8 e0 ad.
/// let mut s = MaskStream::new(&[0u8; 32]);
/// let mut first = [0u8; 4];
/// s.fill(&mut first)?;
/// assert_eq!(first, [0x76, 0xb8, 0xe0, 0xad]);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub struct MaskStream {
    cipher: ChaCha20,
    /// Keystream generated ahead; `pos` is the next unread byte. Each
    /// refill is twice the last, from two ChaCha blocks up to 4 KiB: a
    /// small mask (a change round's few syndromes) costs the blocks it
    /// reads and their wipe, a large one one call into the cipher per
    /// 4 KiB instead of one per candidate. Reading is byte-for-byte the
    /// same stream.
    buf: Vec<u8>,
    pos: usize,
}

/// The first refill: two ChaCha blocks.
const FIRST_REFILL: usize = 128;
/// The largest refill.
const BUF_LEN: usize = 4096;

impl MaskStream {
    /// The keystream of `seed`.
    pub fn new(seed: &[u8; 32]) -> Self {
        let nonce = [0u8; 12];
        Self {
            cipher: ChaCha20::new(&(*seed).into(), &nonce.into()),
            buf: Vec::new(),
            pos: 0,
        }
    }

    /// Overwrites `buf` with the next `buf.len()` keystream bytes.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams) if
    /// the keystream (2^32 blocks of 64 bytes) is exhausted.
    pub fn fill(&mut self, out: &mut [u8]) -> SumResult<()> {
        let mut done = 0;
        while done < out.len() {
            if self.pos == self.buf.len() {
                self.refill()?;
            }
            let n = (out.len() - done).min(self.buf.len() - self.pos);
            let (dst, src) = (&mut out[done..done + n], &self.buf[self.pos..self.pos + n]);
            dst.copy_from_slice(src);
            self.pos += n;
            done += n;
        }
        Ok(())
    }

    /// Generates the next refill of keystream, twice the last one's
    /// length (at most [`BUF_LEN`]), over zeros (the cipher adds its
    /// keystream to the buffer).
    fn refill(&mut self) -> SumResult<()> {
        let next = (2 * self.buf.len()).clamp(FIRST_REFILL, BUF_LEN);
        if next > self.buf.len() {
            // Growing may move the buffer: the read keystream is wiped
            // first, so that the old allocation keeps none.
            self.buf.zeroize();
            self.buf.resize(next, 0);
        } else {
            self.buf.fill(0);
        }
        self.cipher
            .try_apply_keystream(&mut self.buf[..])
            .map_err(|_| invalid("mask keystream exhausted"))?;
        self.pos = 0;
        Ok(())
    }
}

impl Drop for MaskStream {
    fn drop(&mut self) {
        // The buffered keystream is as secret as the seed.
        self.buf.zeroize();
    }
}

impl fmt::Debug for MaskStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaskStream").finish_non_exhaustive()
    }
}
