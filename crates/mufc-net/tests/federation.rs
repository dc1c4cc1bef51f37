//! The federation over loopback, every party a task of this process (the
//! process-level tests are `mufc-cli`'s): a server and five clients train
//! a model equal, bit for bit, to the in-process `Federation`; a removal
//! asked of one client's store is acknowledged once its round committed,
//! and the model is then that of retraining without the point. Every wait
//! is bounded: the test stops by itself.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used)]

use std::time::Duration;

use mufc::store::Store;
use mufc::{Channel, Federation, FederationConfig, Masks, SecAggOptions};
use mufc_net::certs::FederationCa;
use mufc_net::client::{ClientEvent, ClientHandle, ClientOptions, start_client};
use mufc_net::client_store::{ClientStore, RequestStatus};
use mufc_net::server::{ServerEvent, ServerHandle, ServerOptions, start_server};
use mufc_net::tls::{client_config, server_config};
use seeding::{Dataset, PointId};
use testkit::mufc::{Mixture, gaussian_clients};
use tokio::net::TcpListener;

/// Bounds every wait.
const LIMIT: Duration = Duration::from_secs(60);

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

fn data() -> Vec<Dataset> {
    gaussian_clients("mufc-net-federation", Mixture::net(NAMES.len()))
}

fn config() -> mufc::ValidConfig {
    FederationConfig::new(3)
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .seed(11)
        .validate()
        .unwrap()
}

async fn until_server(server: &mut ServerHandle, mut want: impl FnMut(&ServerEvent) -> bool) {
    tokio::time::timeout(LIMIT, async {
        loop {
            let ev = server.next_event().await.expect("the server stopped");
            if let ServerEvent::RoundFailed { reason, .. } = &ev {
                panic!("a round failed: {reason}");
            }
            if want(&ev) {
                return;
            }
        }
    })
    .await
    .expect("the server did not get there in time");
}

async fn until_client(client: &mut ClientHandle, mut want: impl FnMut(&ClientEvent) -> bool) {
    tokio::time::timeout(LIMIT, async {
        loop {
            let ev = client.next_event().await.expect("the client stopped");
            if want(&ev) {
                return;
            }
        }
    })
    .await
    .expect("the client did not get there in time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_clients_train_and_forget_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let ca = FederationCa::new("loopback").unwrap();
    let server_cert = ca.issue_server(&["127.0.0.1"]).unwrap();
    let tls = server_config(ca.cert_pem(), &server_cert.cert_pem, &server_cert.key_pem).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let store = dir.path().join("server.db");
    let mut options = ServerOptions::new(
        &store,
        config(),
        NAMES.iter().map(|n| n.to_string()).collect(),
    );
    options.step_timeout = Duration::from_secs(20);
    options.join_timeout = Duration::from_secs(5);
    let mut server = start_server(listener, tls, options).await.unwrap();
    let addr = server.addr().to_string();

    let data = data();
    let mut clients = Vec::new();
    for (name, d) in NAMES.iter().zip(&data) {
        let path = dir.path().join(format!("{name}.db"));
        ClientStore::create(&path, name, d).unwrap();
        let cert = ca.issue_client(name).unwrap();
        let tls = client_config(ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
        let mut options = ClientOptions::new(&addr, &path);
        options.poll = Duration::from_millis(50);
        clients.push((path, start_client(options, tls).unwrap()));
    }

    // Training: the model is the in-process federation's, bit for bit.
    until_server(
        &mut server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.training),
    )
    .await;
    let stored = Store::open(&store).unwrap();
    let resolved = stored.config().clone();
    let fed = Federation::new(data.clone(), &resolved).unwrap();
    assert_eq!(stored.federation().server().counts(), fed.server().counts());
    assert_eq!(
        stored.federation().server().centroids(),
        fed.server().centroids()
    );
    assert!(
        stored.federation().clients().is_empty(),
        "the server holds no point"
    );
    drop(stored);

    // Client b forgets a point: acknowledged once its round committed.
    let (b_path, b) = &mut clients[1];
    let request = ClientStore::open(&*b_path)
        .unwrap()
        .request(&[PointId(7)])
        .unwrap();
    until_client(b, |e| {
        matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
    assert!(matches!(
        ClientStore::open(&*b_path)
            .unwrap()
            .status(request)
            .unwrap(),
        Some(RequestStatus::Acknowledged { .. })
    ));
    assert_eq!(
        ClientStore::open(&*b_path).unwrap().data().unwrap().len(),
        39
    );
    let stored = Store::open(&store).unwrap();
    let mut rest = data.clone();
    rest[1] = rest[1].without(&[PointId(7)]).unwrap();
    let retrained = Federation::new(rest, &resolved).unwrap();
    assert_eq!(
        stored.federation().server().counts(),
        retrained.server().counts()
    );
    assert_eq!(
        stored.federation().server().centroids(),
        retrained.server().centroids()
    );

    for (_, c) in clients {
        c.stop().await.unwrap();
    }
    server.stop().await.unwrap();
}

/// The coordinator runs every round over every connected client, which
/// a federation with groups must not do: refused before it listens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configuration_with_groups_is_refused_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let ca = FederationCa::new("loopback").unwrap();
    let server_cert = ca.issue_server(&["127.0.0.1"]).unwrap();
    let tls = server_config(ca.cert_pem(), &server_cert.cert_pem, &server_cert.key_pem).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let groups = (config().into_builder())
        .topology(mufc::Topology::Groups { size: 3 })
        .validate()
        .unwrap();
    let names = NAMES.iter().map(|n| n.to_string()).collect();
    let options = ServerOptions::new(dir.path().join("server.db"), groups, names);
    let Err(err) = start_server(listener, tls, options).await else {
        panic!("a configuration with groups was served");
    };
    assert!(
        matches!(
            &err,
            mufc_net::NetError::Mufc(mufc::MufcError::TopologyUnsupported(_))
        ),
        "{err}"
    );
    assert!(!dir.path().join("server.db").exists());
}
