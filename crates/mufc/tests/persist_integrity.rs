//! Saved federations cannot be silently corrupted (issue 11, part 4): the
//! version 4 format (magic, version, body length, body, SHA-256 of all of
//! it) refuses every flipped bit, every truncation and every extension
//! with a typed error, and older versions with an error that names them.
#![allow(clippy::unwrap_used)]

use mufc::{
    AdditionRequest, ClientId, Federation, FederationConfig, MufcError, PersistError,
    RemovalRequest,
};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use sha2::{Digest, Sha256};

/// A small saved federation (3 clients, 30 points each, 2-D) with one
/// removal round in its history, one removal request and one addition
/// pending.
fn saved() -> Vec<u8> {
    let data = gaussian_clients("persist-integrity", Mixture::TINY);
    let config = (FederationConfig::new(2).gamma(0.1).max_points(100))
        .validate()
        .unwrap();
    let mut fed = Federation::new(data, &config).unwrap();
    let id = |fed: &Federation, c: usize| vec![fed.clients()[c].data().id(4)];
    let both =
        RemovalRequest::points(ClientId(0), id(&fed, 0)).with_points(ClientId(1), id(&fed, 1));
    assert!(!fed.remove(&both).unwrap().outcome.is_deferred());
    let lone = RemovalRequest::points(ClientId(2), id(&fed, 2));
    assert!(fed.remove(&lone).unwrap().outcome.is_deferred());
    assert_eq!(fed.pending().len(), 1);
    let data = fed.clients()[2].data();
    let again = data.only(&[data.id(0)]).unwrap();
    let moved = seeding::Dataset::with_ids(again.points().clone(), vec![seeding::PointId(1000)]);
    let add = AdditionRequest::records(ClientId(2), moved.unwrap());
    assert!(fed.add(&add).unwrap().outcome.is_deferred());
    assert_eq!(fed.pending_additions().len(), 1);
    fed.to_bytes().unwrap()
}

#[test]
fn the_format_is_magic_version_length_body_checksum() {
    let bytes = saved();
    assert_eq!(&bytes[..8], b"MUFCFED\x0c");
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[8..16]);
    let len = usize::try_from(u64::from_le_bytes(len)).unwrap();
    assert_eq!(bytes.len(), 16 + len + 32);
    let sum = Sha256::digest(&bytes[..16 + len]);
    assert_eq!(&bytes[16 + len..], sum.as_slice());
    // It round-trips.
    let back = Federation::from_bytes(&bytes).unwrap();
    assert_eq!(back.to_bytes().unwrap(), bytes);
}

#[test]
fn every_flipped_bit_is_refused() {
    let bytes = saved();
    let mut loaded = 0;
    for i in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[i / 8] ^= 1 << (i % 8);
        match Federation::from_bytes(&b) {
            Ok(_) => loaded += 1,
            // The magic: not a saved federation.
            Err(MufcError::Persistence(_)) => assert!(i < 7 * 8, "bit {i}"),
            // The version byte.
            Err(MufcError::Persist(PersistError::UnsupportedVersion { found, .. })) => {
                assert_eq!((i / 8, found), (7, 12 ^ (1 << (i % 8))), "bit {i}");
            }
            // The length field: too long is truncated, too short leaves
            // trailing bytes.
            Err(MufcError::Persist(PersistError::Truncated { .. })) => {
                assert!((8..16).contains(&(i / 8)), "bit {i}");
            }
            Err(MufcError::Persist(PersistError::Corrupt { .. })) => {}
            Err(other) => panic!("bit {i}: unexpected error {other:?}"),
        }
    }
    assert_eq!(loaded, 0, "of {} bit flips", bytes.len() * 8);
}

#[test]
fn every_truncation_and_extension_is_refused() {
    let bytes = saved();
    for n in 0..bytes.len() {
        let err = Federation::from_bytes(&bytes[..n]).unwrap_err();
        assert!(
            matches!(
                err,
                MufcError::Persist(PersistError::Truncated { found, .. }) if found == n as u64
            ),
            "length {n}: {err:?}"
        );
    }
    for extra in 1..=8usize {
        for fill in [0u8, 0xff] {
            let mut b = bytes.clone();
            b.extend(std::iter::repeat_n(fill, extra));
            let err = Federation::from_bytes(&b).unwrap_err();
            assert!(
                matches!(err, MufcError::Persist(PersistError::Corrupt { .. })),
                "{extra} extra bytes: {err:?}"
            );
        }
    }
}

#[test]
fn older_and_newer_versions_are_refused_by_name() {
    let bytes = saved();
    for version in [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 0xff] {
        let mut b = bytes.clone();
        b[7] = version;
        let err = Federation::from_bytes(&b).unwrap_err();
        assert_eq!(
            err,
            MufcError::Persist(PersistError::UnsupportedVersion {
                found: version,
                supported: 12
            })
        );
        let msg = err.to_string();
        assert!(msg.contains(&format!("version {version}")), "{msg}");
        if version < 3 {
            assert!(msg.contains("no checksum"), "{msg}");
        }
    }
    // A version 2 file as that version wrote it: the magic, then postcard.
    let mut v2 = b"MUFCFED\x02".to_vec();
    v2.extend_from_slice(&bytes[16..bytes.len() - 32]);
    assert!(matches!(
        Federation::from_bytes(&v2),
        Err(MufcError::Persist(PersistError::UnsupportedVersion {
            found: 2,
            ..
        }))
    ));
    // Not a saved federation at all.
    assert!(matches!(
        Federation::from_bytes(b"PNG\r\n\x1a\n and more"),
        Err(MufcError::Persistence(_))
    ));
}

#[test]
fn a_corrupt_file_on_disk_is_refused() {
    let bytes = saved();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fed.mufc");
    let mut b = bytes.clone();
    b[bytes.len() / 2] ^= 0x10;
    std::fs::write(&path, &b).unwrap();
    assert!(matches!(
        Federation::load(&path),
        Err(MufcError::Persist(PersistError::Corrupt { .. }))
    ));
    std::fs::write(&path, &bytes).unwrap();
    assert_eq!(Federation::load(&path).unwrap().to_bytes().unwrap(), bytes);
}
