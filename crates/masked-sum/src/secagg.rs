//! Secure aggregation that survives dropouts: the four-round protocol of
//! Bonawitz et al. 2017 ("Practical Secure Aggregation", CCS) with the
//! sparse neighbourhoods of SecAgg+ (Bell et al. 2020, CCS), and the
//! groups of clients of Liu et al. ("Guaranteeing Data Privacy in
//! Federated Unlearning with Dynamic User Participation").
//!
//! The server learns the sum of the input vectors of the clients that
//! finished the masked-input step (and which clients those are), or a
//! typed error and nothing else. Inputs are vectors over any
//! [`FiniteField`](field::FiniteField): dense vectors, or the syndromes of
//! `syndrome-agg`'s sketches.
//!
//! # The protocol
//!
//! 1. **AdvertiseKeys.** Client `u` draws two X25519 key pairs,
//!    `(c_pk, c_sk)` to encrypt shares and `(s_pk, s_sk)` to agree masks,
//!    and a 32-byte self-mask seed `b_u`; it sends `c_pk`, `s_pk` and the
//!    commitment `H(b_u)` (`seed_commitment`).
//! 2. **ShareKeys.** The server relays to each client the keys of its
//!    holders ([`graph`]). The client checks them (its own keys unaltered,
//!    no key twice, every id a holder, at least `t` entries, X25519
//!    contributory), Shamir-shares `s_sk` and `b_u` with threshold `t`
//!    (`shamir`, in `GF(2^127 - 1)`) and encrypts each holder's pair of
//!    shares with ChaCha20-Poly1305 under
//!    `HKDF-SHA256(X25519(c_sk_u, c_pk_v), info = "syndrome-agg/v1/share" ||
//!    session || round || min(u, v) || max(u, v))`, the associated data
//!    binding session, round, step, sender and receiver (`share_aad`).
//! 3. **MaskedInput.** The server forwards to each client the ciphertexts
//!    addressed to it; their senders are the peers it masks with. The
//!    client decrypts them all (any failure aborts it) and sends
//!    `y_u = x_u + PRG(b_u) + sum_v +-PRG(s_uv)`: the self-mask
//!    (`self_mask`) and the pairwise masks of
//!    [`crate::masking::pairwise`].
//! 4. **Unmasking.** The server tells each survivor which peers are alive
//!    and which dropped; the client refuses a request that names a peer in
//!    both lists, twice, itself, or one it did not mask with, and answers
//!    only once. It reveals `b_v` shares of live peers (and its own) and
//!    `s_sk_v` shares of dropped ones, never both for one peer. The server
//!    reconstructs, checks every `b_u` against its commitment and every
//!    `s_sk_v` against `s_pk_v` (correcting bad shares when it has more
//!    than `t`: docs/threat-model.md S4), removes the self-masks of survivors and the
//!    pairwise masks that dropped clients left behind.
//!
//! # What it does not protect against
//!
//! The model is a semi-honest server colluding with fewer than `t` clients
//! per neighbourhood (docs/threat-model.md §1). With [`params::ServerModel::SemiMalicious`]
//! the threshold also satisfies `2t > h + c`, so a server that tells some
//! holders of a client "alive" and others "dropped" cannot collect `t`
//! shares of both its secrets (docs/threat-model.md S1b). A server that lies
//! *consistently*, declaring a live client's peers dropped to everyone, can
//! still strip one client's pairwise masks; Bonawitz et al.'s actively
//! secure variant stops that with a consistency-check round and
//! signatures, which is not implemented. The server also draws the SecAgg+
//! ring; it must do so honestly (or from public randomness). Inputs are not
//! validated: a client can poison the sum (docs/threat-model.md §2.3).
//!
//! Client ([`client::Client`]) and server ([`server::Server`]) are pure
//! state machines: each takes one message and returns the next, with no
//! I/O. [`transport`] drives them in process, with fault injection;
//! [`run_secure_aggregation`] is the one-call entry point.

mod bounded;
pub mod client;
pub mod graph;
pub mod groups;
pub mod messages;
pub mod params;
pub mod server;
mod session;
// Shamir secret sharing of the mask secrets: `hazmat`.
#[cfg(feature = "hazmat")]
pub mod shamir;
#[cfg(not(feature = "hazmat"))]
mod shamir;
pub mod transport;

pub use crate::context::ClientId;
pub use crate::step::Step;
/// Key derivations and prefixes of the protocol (`hazmat`).
#[cfg(feature = "hazmat")]
pub use session::{
    ATTEST_INFO_PREFIX, COMMITMENT_PREFIX, SELF_MASK_INFO_PREFIX, SHARE_INFO_PREFIX, attest_key,
    attestation_tag, seed_commitment, self_mask, share_aad, share_key, share_nonce,
};
pub use session::{AggregationOutput, DEFAULT_MAX_MESSAGE, MAX_VECTOR_LEN, SessionConfig};
pub use transport::run_secure_aggregation;
