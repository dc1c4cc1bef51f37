//! Client ids, and every seed and id the federation derives from its seed.
//!
//! Everything random in a federation is a function of the federation seed
//! and of *names* (client ids, bin indices), never of positions, so that
//! removing a client or a point leaves every other random choice where it
//! was (see the crate docs, "Exactness").

use core::fmt;
use std::borrow::Cow;

use num_bigint::BigUint;
use seeding::{PointId, derive_seed, mix64};

/// A client's stable name. Per-client seeds derive from it (and the
/// federation seed), never from the client's position, so that removing a
/// whole client is the same as never having had it.
///
/// # Example
///
/// ```
/// use mufc::ClientId;
///
/// assert_eq!(ClientId(3).to_string(), "3");
/// assert_eq!(ClientId::from(3u64), ClientId(3));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
// Always serializable: the parties' messages name clients.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ClientId(pub u64);

impl fmt::Display for ClientId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<u64> for ClientId {
    fn from(v: u64) -> Self {
        Self(v)
    }
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// Domain separators (ASCII tags), one per use of the federation seed.
const CLIENT: u64 = 0x6D75_6663_2F63_6C69; // "mufc/cli"
const SERVER: u64 = 0x6D75_6663_2F73_7276; // "mufc/srv"
const SAMPLE: u64 = 0x6D75_6663_2F73_6D70; // "mufc/smp"
const BIN: u64 = 0x6D75_6663_2F62_696E; // "mufc/bin"
const PLAIN: u64 = 0x6D75_6663_2F70_6C6E; // "mufc/pln"
const SHIFT: u64 = 0x6D75_6663_2F73_6866; // "mufc/shf"
const STAR: u64 = 0x6D75_6663_2F73_7472; // "mufc/str"

/// The seed of client `id`'s seeding (and of its K-means in full mode).
pub(crate) fn client_seed(seed: u64, id: ClientId) -> u64 {
    derive_seed(seed, CLIENT, id.0)
}

/// The seed of the server's K-means.
pub(crate) fn server_seed(seed: u64) -> u64 {
    derive_seed(seed, SERVER, 0)
}

/// The seed of the uniform samples in bins.
pub(crate) fn sample_seed(seed: u64) -> u64 {
    derive_seed(seed, SAMPLE, 0)
}

/// The seed of the quantizer's random shift.
pub(crate) fn shift_seed(seed: u64) -> u64 {
    derive_seed(seed, SHIFT, 0)
}

/// The seed of centralized run `i` of the phi_c* estimate.
pub(crate) fn star_seed(seed: u64, i: usize) -> u64 {
    derive_seed(seed, STAR, i as u64)
}

/// A 64-bit name of a bin index: the index itself when every index of the
/// grid fits in a `u64` (no collision possible), else a hash of its limbs.
pub(crate) fn bin_key(bin: &BigUint, small_grid: bool) -> u64 {
    let digits = bin.to_u64_digits();
    if small_grid {
        return digits.first().copied().unwrap_or(0);
    }
    let mut h = mix64(BIN ^ digits.len() as u64);
    for d in digits {
        h = mix64(h.wrapping_mul(GOLDEN) ^ d);
    }
    h
}

/// The server point of a bin centre.
pub(crate) fn center_point_id(bin_key: u64) -> PointId {
    PointId(bin_key)
}

/// The server point of sample `i` of a bin (collisions are detected when
/// the server's data set is built).
pub(crate) fn sample_point_id(bin_key: u64, i: u64) -> PointId {
    PointId(derive_seed(bin_key, SAMPLE, i))
}

/// The server point of local centroid `j` of a client (plain mode).
pub(crate) fn plain_point_id(client: ClientId, j: usize) -> PointId {
    PointId(derive_seed(client.0, PLAIN, j as u64))
}

/// The seed of sample `i` of the bin named `bin_key`.
pub(crate) fn sample_rng_seed(sample_seed: u64, bin_key: u64, i: u64) -> u64 {
    derive_seed(sample_seed, bin_key, i)
}

/// 32 bytes derived from the federation seed and a label (session ids,
/// hash keys, key-pair seeds of the simulated clients).
pub(crate) fn derive_bytes(seed: u64, label: &str, x: u64) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"mufc/v1/");
    h.update(label.as_bytes());
    h.update(seed.to_le_bytes());
    h.update(x.to_le_bytes());
    h.finalize().into()
}

/// Whether client `client` drops out of aggregation round `round`, and if
/// so the index (0 to 3) of the first protocol step it misses: a fixed
/// function of the federation seed, the round and the client, drawn with
/// probability `rate`, the step uniform.
pub(crate) fn dropout_draw(seed: u64, rate: f64, round: u64, client: ClientId) -> Option<usize> {
    let mut x = [0u8; 16];
    x[..8].copy_from_slice(&round.to_le_bytes());
    x[8..].copy_from_slice(&client.0.to_le_bytes());
    let b = derive_bytes_of(seed, "dropout", &x);
    let word = |i: usize| {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(w)
    };
    // A uniform double in [0, 1) from the top 53 bits.
    #[allow(clippy::cast_precision_loss)] // 53-bit integers are exact in f64
    let u = (word(0) >> 11) as f64 / (1u64 << 53) as f64;
    #[allow(clippy::cast_possible_truncation)] // a value below 4
    let step = (word(8) % 4) as usize;
    (u < rate).then_some(step)
}

fn derive_bytes_of(seed: u64, label: &str, x: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"mufc/v1/");
    h.update(label.as_bytes());
    h.update(seed.to_le_bytes());
    h.update(x);
    h.finalize().into()
}

/// `ids` in order, for binary searches: borrowed when the sender sent
/// them in order (as every party of this crate does), else sorted afresh
/// (the order is the sender's choice). A client checks the roster and the
/// ring every round: sorted slices cost it no allocation where sets of the
/// same ids cost one per node, a cost that grows with the square of the
/// federation when the parties run in one process.
pub(crate) fn in_order(ids: &[ClientId]) -> Cow<'_, [ClientId]> {
    if ids.is_sorted() {
        Cow::Borrowed(ids)
    } else {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        Cow::Owned(sorted)
    }
}

/// The first of the ordered `ids` that the ordered `all` lacks, in one
/// walk of both (a client runs it every round on lists as long as the
/// federation).
pub(crate) fn first_missing<'a>(
    ids: impl IntoIterator<Item = &'a ClientId>,
    all: &[ClientId],
) -> Option<&'a ClientId> {
    let mut all = all.iter().peekable();
    ids.into_iter().find(|c| {
        while all.next_if(|a| a < c).is_some() {}
        all.peek() != Some(c)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    proptest! {
        /// The ordered walk finds what a set would: the first of `ids`
        /// (in order) that `all` lacks, whatever order and repeats the
        /// lists come in.
        #[test]
        fn first_missing_is_a_set_difference(
            ids in proptest::collection::vec(0u64..40, 0..30),
            all in proptest::collection::vec(0u64..40, 0..30),
        ) {
            let ids: Vec<ClientId> = ids.into_iter().map(ClientId).collect();
            let all: Vec<ClientId> = all.into_iter().map(ClientId).collect();
            let set: BTreeSet<ClientId> = all.iter().copied().collect();
            let expected = (ids.iter().copied()).filter(|c| !set.contains(c)).min();
            let (ids, all) = (in_order(&ids), in_order(&all));
            prop_assert!(ids.is_sorted() && all.is_sorted());
            prop_assert_eq!(first_missing(&*ids, &all).copied(), expected);
        }
    }

    #[test]
    fn seeds_depend_on_names_not_positions() {
        // A client's seed is a function of the federation seed and its id.
        assert_eq!(client_seed(9, ClientId(4)), client_seed(9, ClientId(4)));
        assert_ne!(client_seed(9, ClientId(4)), client_seed(9, ClientId(5)));
        assert_ne!(client_seed(9, ClientId(4)), client_seed(10, ClientId(4)));
        // Different uses of one seed are separated.
        let uses = [
            server_seed(9),
            sample_seed(9),
            shift_seed(9),
            star_seed(9, 0),
            client_seed(9, ClientId(0)),
        ];
        for (i, a) in uses.iter().enumerate() {
            for b in &uses[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn dropouts_follow_the_rate_and_are_fixed_by_names() {
        let draws: Vec<Option<usize>> = (0..4000)
            .map(|c| dropout_draw(5, 0.2, 3, ClientId(c)))
            .collect();
        let dropped = draws.iter().flatten().count();
        // Binomial(4000, 0.2): mean 800, sd about 25.
        assert!((700..900).contains(&dropped), "{dropped} dropouts");
        for step in 0..4 {
            let n = draws.iter().flatten().filter(|&&s| s == step).count();
            assert!((130..270).contains(&n), "step {step}: {n}");
        }
        assert_eq!(draws[17], dropout_draw(5, 0.2, 3, ClientId(17)));
        // Another round or seed draws afresh; rate 0 never drops.
        let other: Vec<Option<usize>> = (0..4000)
            .map(|c| dropout_draw(5, 0.2, 4, ClientId(c)))
            .collect();
        assert_ne!(draws, other);
        assert!((0..100).all(|c| dropout_draw(5, 0.0, 0, ClientId(c)).is_none()));
    }

    #[test]
    fn bin_keys_are_the_index_on_small_grids() {
        let b = BigUint::from(123_456u32);
        assert_eq!(bin_key(&b, true), 123_456);
        let big = BigUint::from(1u8) << 100u32;
        let big2 = &big + 1u32;
        assert_ne!(bin_key(&big, false), bin_key(&big2, false));
        assert_ne!(sample_point_id(5, 0), sample_point_id(5, 1));
        assert_ne!(
            plain_point_id(ClientId(1), 0),
            plain_point_id(ClientId(0), 1)
        );
    }
}
