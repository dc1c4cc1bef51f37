//! The server's state is a [`ServerSnapshot`]: a server resumes from its
//! own snapshot (a store's server row) and serves the next round exactly,
//! and refuses a snapshot that is not a server's.

use super::*;
use mufc::{RemovalRequest, ServerSnapshot};

/// A server resumed from its own snapshot, sent through postcard as a
/// store writes it, counts the same rounds and serves the next removal
/// as retraining.
#[test]
fn a_server_resumes_from_its_snapshot_and_serves_the_next_round_exactly() {
    let data = gaussian_clients("remote-snapshot", Mixture::SMALL);
    let config = config(2, 0.0, 2, 31);
    let (mut server, mut clients) = federation(&data, &config);
    let ids: Vec<ClientId> = (0..data.len() as u64).map(ClientId).collect();
    run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
    let bytes = postcard::to_allocvec(&server.snapshot().unwrap()).unwrap();
    let kept: ServerSnapshot = postcard::from_bytes(&bytes).unwrap();
    let mut resumed = RemoteServer::from_snapshot(kept, ids.clone()).unwrap();
    assert_eq!(resumed.rounds(), server.rounds());
    assert_eq!(resumed.server().counts(), server.server().counts());
    assert_eq!(
        centroid_bits(resumed.server()),
        centroid_bits(server.server())
    );
    // Taken back in memory (it carries the running server's state and is
    // not rebuilt), the snapshot gives the same server as the one rebuilt
    // from its bytes.
    let live = RemoteServer::from_snapshot(server.snapshot().unwrap(), ids).unwrap();
    assert_eq!(live.rounds(), resumed.rounds());
    assert_eq!(live.server().counts(), resumed.server().counts());
    assert_eq!(
        centroid_bits(live.server()),
        centroid_bits(resumed.server())
    );

    let mut now = with_ids(&data);
    for c in [0, 1] {
        let first = now[c].1.ids()[0];
        clients[c].forget(&[first]).unwrap();
        now[c].1 = now[c].1.without(&[first]).unwrap();
    }
    run_round(&mut resumed, &mut clients, &BTreeMap::new()).unwrap();
    assert_equals_retraining(&resumed, &now, "after resuming from the snapshot");
}

/// What is not a server's state is refused with a clear error, never
/// served: an empty roster, the snapshot of a plain-mode federation (no
/// aggregate), that of an in-process federation whose request waits for
/// its clients (the waiting points are the clients', which a server never
/// holds), and that of a withdrawn model.
#[test]
fn a_snapshot_that_is_no_servers_is_refused() {
    let data = gaussian_clients("remote-snapshot-refused", Mixture::SMALL);
    let config = config(2, 0.0, 2, 32);
    let ids: Vec<ClientId> = (0..data.len() as u64).map(ClientId).collect();
    let (mut server, mut clients) = federation(&data, &config);
    run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
    let err = RemoteServer::from_snapshot(server.snapshot().unwrap(), Vec::new()).unwrap_err();
    assert_eq!(err, MufcError::NoClients);

    let plain = FederationConfig::new(2)
        .channel(Channel::Plain)
        .validate()
        .unwrap();
    let fed = Federation::new(data.clone(), &plain).unwrap();
    let err = RemoteServer::from_snapshot(fed.server_snapshot(), ids.clone()).unwrap_err();
    assert!(matches!(err, MufcError::Remote(_)), "{err}");

    let mut fed = Federation::new(data.clone(), &config).unwrap();
    let lone = RemovalRequest::points(ClientId(0), vec![PointId(0)]);
    fed.remove(&lone).unwrap();
    assert!(!fed.pending().is_empty(), "a lone request waits");
    let err = RemoteServer::from_snapshot(fed.server_snapshot(), ids.clone()).unwrap_err();
    assert!(matches!(err, MufcError::Persistence(_)), "{err}");

    // Every client but one leaves: below the minimum aggregate, the
    // model is withdrawn.
    let mut fed = Federation::new(data, &config).unwrap();
    let report = fed
        .remove(&RemovalRequest::clients(ids[1..].to_vec()))
        .unwrap();
    assert!(report.outcome.is_withdrawn(), "{:?}", report.outcome);
    let err = RemoteServer::from_snapshot(fed.server_snapshot(), ids).unwrap_err();
    assert!(
        matches!(&err, MufcError::Remote(m) if m.contains("withdrawn")),
        "{err}"
    );
}
