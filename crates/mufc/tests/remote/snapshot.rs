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
/// holds).
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

    let mut fed = Federation::new(data, &config).unwrap();
    let lone = RemovalRequest::points(ClientId(0), vec![PointId(0)]);
    fed.remove(&lone).unwrap();
    assert!(!fed.pending().is_empty(), "a lone request waits");
    let err = RemoteServer::from_snapshot(fed.server_snapshot(), ids).unwrap_err();
    assert!(matches!(err, MufcError::Persistence(_)), "{err}");
}

/// A server whose model was withdrawn (docs/threat-model.md P4) keeps it
/// withdrawn through its snapshot, as a store writes it: restarted, it
/// runs no round, keeps the withdrawal and its round counter, notes a
/// leave and snapshots again; the withdrawal is decided once. The
/// snapshot of a federation withdrawn in one process resumes as a
/// withdrawn server too.
#[test]
fn a_withdrawn_server_stays_withdrawn_through_its_snapshot() {
    let data = gaussian_clients("remote-snapshot-withdrawn", Mixture::SMALL);
    let config = config(2, 0.0, 2, 33);
    let ids: Vec<ClientId> = (0..data.len() as u64).map(ClientId).collect();
    let (mut server, mut clients) = federation(&data, &config);
    run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
    let rounds = server.rounds();
    // One client holding no point leaves enough; all but one do not.
    let one: BTreeSet<ClientId> = ids[1..2].iter().copied().collect();
    assert!(server.withdraw_if_too_few(&one, 3).is_none());
    let gone: BTreeSet<ClientId> = ids[1..].iter().copied().collect();
    let w = server.withdraw_if_too_few(&gone, 4).unwrap();
    assert_eq!((w.request, w.clients, w.min_clients), (4, 1, 2));
    assert!(server.server().counts().is_empty());
    assert!(server.withdraw_if_too_few(&gone, 5).is_none(), "once");
    assert_eq!(server.withdrawal(), Some(&w));

    let bytes = postcard::to_allocvec(&server.snapshot().unwrap()).unwrap();
    let kept: ServerSnapshot = postcard::from_bytes(&bytes).unwrap();
    let mut resumed = RemoteServer::from_snapshot(kept, ids.clone()).unwrap();
    assert_eq!(resumed.withdrawal(), Some(&w));
    assert_eq!(resumed.rounds(), rounds);
    let err = resumed.start_round(&ids).unwrap_err();
    assert!(err.to_string().contains("withdrawn"), "{err}");
    resumed.leave(&ids[1..2]).unwrap();
    let again = resumed.snapshot().unwrap();
    // A store checks a server's row as a federation with no client.
    let fed = Federation::from_snapshot(again.clone(), Vec::new()).unwrap();
    assert_eq!(fed.withdrawal(), Some(&w));
    let back = RemoteServer::from_snapshot(again, ids.clone()).unwrap();
    assert_eq!(back.withdrawal(), Some(&w));

    let mut fed = Federation::new(data, &config).unwrap();
    let report = fed
        .remove(&RemovalRequest::clients(ids[1..].to_vec()))
        .unwrap();
    assert!(report.outcome.is_withdrawn(), "{:?}", report.outcome);
    let mut resumed = RemoteServer::from_snapshot(fed.server_snapshot(), ids.clone()).unwrap();
    assert_eq!(resumed.withdrawal(), fed.withdrawal());
    assert!(resumed.start_round(&ids).is_err());
}

/// Across processes a group that clients holding no point leave below
/// the minimum merges into a group that meets it (no withdrawal); when
/// no group can take it in, the model is withdrawn.
#[test]
fn across_processes_a_group_below_the_minimum_merges_or_withdraws_the_model() {
    let mix = Mixture {
        clients: 6,
        ..Mixture::SMALL
    };
    let data = with_ids(&gaussian_clients("remote-withdraw-groups", mix));
    let config = FederationConfig::new(2)
        .topology(mufc::Topology::Tree {
            group_size: 3,
            fan_out: 2,
        })
        .min_clients(3)
        .seed(34)
        .validate()
        .unwrap();
    let parties = mufc::remote::InProcess::train(data, &config).unwrap();
    let server = parties.server();
    let groups = server.groups().to_vec();
    let gone: BTreeSet<ClientId> = groups[0][..1].iter().copied().collect();
    assert_eq!(server.withdrawal_for(&gone, 1), None);
    assert_eq!(server.merge_due(&gone), Some((0, 1)));
    // One client out of each group: neither can take the other in.
    let gone: BTreeSet<ClientId> = [groups[0][0], groups[1][0]].into();
    assert_eq!(server.merge_due(&gone), None);
    let w = server.withdrawal_for(&gone, 1).unwrap();
    assert_eq!((w.group, w.clients, w.min_clients), (Some(0), 2, 3));
}
