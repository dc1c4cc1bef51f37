//! docs/threat-model.md O1: parsing a message allocates at most twice the
//! frame's size, whatever the frame says. One test in its own binary, so
//! that the counting allocator sees no other test's allocations.
#![allow(clippy::unwrap_used)]

use peak_alloc::PeakAlloc;
use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
use syndrome_agg::secagg::messages::{
    AdvertiseKeys, ClientBody, ClientEnvelope, EncryptedShare, KeyDirectory, MaskedInput,
    MaskingRequest, RevealedShare, ServerBody, ServerEnvelope, ShareKeys, UnmaskingRequest,
    UnmaskingResponse,
};

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

const FRAME: usize = 4 << 20;

/// A parser under test: whether it accepted the bytes.
type Parser<'a> = &'a dyn Fn(&[u8]) -> bool;

/// The peak allocation while `parse` runs over `bytes`, above what was
/// allocated before, and whether it accepted them.
fn peak_of(bytes: &[u8], parse: impl Fn(&[u8]) -> bool) -> (usize, bool) {
    let before = ALLOC.current_usage();
    ALLOC.reset_peak_usage();
    let ok = parse(bytes);
    (ALLOC.peak_usage().saturating_sub(before), ok)
}

fn ctx() -> RoundContext {
    RoundContext {
        session: SessionId([7; 32]),
        round: 3,
    }
}

/// Pads a frame's list until the encoding is just under `FRAME` bytes.
fn fill<T: Clone>(entry: T, per_entry_bytes: usize, overhead: usize) -> Vec<T> {
    vec![entry; (FRAME - overhead) / per_entry_bytes]
}

#[test]
fn parsing_allocates_at_most_twice_the_frame() {
    let c = ctx();
    let client = |b: &[u8]| ClientEnvelope::parse(b, FRAME).is_ok();
    let server = |b: &[u8]| ServerEnvelope::parse(b, FRAME).is_ok();
    let empty_share = EncryptedShare {
        peer: 1,
        ciphertext: Vec::new(),
    };
    let empty_reveal = RevealedShare {
        owner: 1,
        share: Vec::new().into(),
    };
    // (what, bytes, parser, whether an honest parser may accept it)
    let cases: Vec<(&str, Vec<u8>, Parser<'_>)> = vec![
        (
            // 2 bytes on the wire, 32 in memory each: 64 MiB unbounded.
            "share keys of empty ciphertexts",
            ClientEnvelope::new(
                &c,
                1,
                ClientBody::ShareKeys(ShareKeys {
                    shares: fill(empty_share.clone(), 2, 64),
                }),
            )
            .to_bytes()
            .unwrap(),
            &client,
        ),
        (
            "masking request of empty ciphertexts",
            ServerEnvelope::new(
                &c,
                1,
                ServerBody::MaskingRequest(MaskingRequest {
                    shares: fill(empty_share, 2, 64),
                }),
            )
            .to_bytes()
            .unwrap(),
            &server,
        ),
        (
            "unmasking response of empty shares",
            ClientEnvelope::new(
                &c,
                1,
                ClientBody::UnmaskingResponse(UnmaskingResponse {
                    seed_shares: fill(empty_reveal.clone(), 2, 64),
                    key_shares: vec![empty_reveal],
                }),
            )
            .to_bytes()
            .unwrap(),
            &client,
        ),
        (
            // 1 byte on the wire, 8 in memory each.
            "unmasking request of one-byte ids",
            ServerEnvelope::new(
                &c,
                1,
                ServerBody::UnmaskingRequest(UnmaskingRequest {
                    alive: fill(2, 1, 64),
                    dropped: Vec::new(),
                    attestations: Vec::new(),
                }),
            )
            .to_bytes()
            .unwrap(),
            &server,
        ),
        (
            "a full-size key directory (honest shape)",
            ServerEnvelope::new(
                &c,
                1,
                ServerBody::KeyDirectory(KeyDirectory {
                    entries: fill(
                        (
                            5,
                            AdvertiseKeys {
                                enc_key: [1; 32],
                                mask_key: [2; 32],
                                seed_commitment: [3; 32],
                            },
                        ),
                        97,
                        64,
                    ),
                }),
            )
            .to_bytes()
            .unwrap(),
            &server,
        ),
        (
            "a full-size masked input (honest shape)",
            ClientEnvelope::new(
                &c,
                1,
                ClientBody::MaskedInput(MaskedInput {
                    modulus: vec![0xff; 8],
                    elements: vec![9; FRAME - 128],
                }),
            )
            .to_bytes()
            .unwrap(),
            &client,
        ),
        (
            "honest-size revealed shares",
            ClientEnvelope::new(
                &c,
                1,
                ClientBody::UnmaskingResponse(UnmaskingResponse {
                    seed_shares: fill(
                        RevealedShare {
                            owner: 3,
                            share: vec![4; 56].into(),
                        },
                        58,
                        64,
                    ),
                    key_shares: Vec::new(),
                }),
            )
            .to_bytes()
            .unwrap(),
            &client,
        ),
    ];
    for (what, bytes, parse) in cases {
        assert!(bytes.len() <= FRAME, "{what}: {} bytes", bytes.len());
        assert!(bytes.len() > FRAME / 2, "{what}: {} bytes", bytes.len());
        let (peak, ok) = peak_of(&bytes, parse);
        println!(
            "{what}: {} bytes, peak {peak} bytes, accepted {ok}",
            bytes.len()
        );
        assert!(
            peak <= 2 * bytes.len(),
            "{what}: peak {peak} for a frame of {}",
            bytes.len()
        );
        let honest = what.contains("honest");
        assert_eq!(ok, honest, "{what}: accepted {ok}");
    }
}
