//! Round latency and bytes on the wire of the federation across
//! processes, over loopback: a server and L clients (10, 100, 1000), flat
//! with the complete graph and the Harary graph of SecAgg+, in groups
//! of 10 (complete graph inside each), and with pairwise masks (two steps,
//! no dropout tolerated); training and a removal round.
//! Every party is a task of this one process (a thousand
//! processes would measure the operating system's scheduler on two cores),
//! each with its own TLS connection, gRPC session and SQLite store, as in
//! a deployment. Printed as a table measured in one run:
//!
//! ```text
//! cargo bench -p mufc-net --bench network                  # 10, 100, 1000 clients
//! MUFC_NET_BENCH_SIZES=10,100 cargo bench -p mufc-net --bench network
//! MUFC_NET_BENCH_CASES=flat-harary,groups cargo bench -p mufc-net --bench network
//! ```
//!
//! Bytes are counted on each client's TCP stream (TLS records and HTTP/2
//! frames included), both directions: training's per client, a removal's
//! per client involved (the clients of its round: all L when flat, the
//! requester's group with groups). Training runs from the first round's
//! start to the model trained (one round, or one per group). The removal
//! latency runs from the request written to the client's store to the
//! server's commit (it includes the client's 20 ms poll of its store).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
#![allow(missing_docs)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mufc::{Channel, FederationConfig, Masks, SecAggGraph, SecAggOptions, Topology};
use mufc_net::certs::FederationCa;
use mufc_net::client::{ClientOptions, start_client};
use mufc_net::client_store::ClientStore;
use mufc_net::server::{ServerEvent, ServerHandle, ServerOptions, start_server};
use mufc_net::tls::{client_credentials, server_config};
use mufc_net::transport::Traffic;
use seeding::PointId;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

/// One federation measured: flat or in groups, and the SecAgg graph
/// (`None`: pairwise masks, two steps and no dropout tolerated).
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    topology: Topology,
    graph: Option<SecAggGraph>,
}

const CASES: [Case; 4] = [
    Case {
        name: "flat-complete",
        topology: Topology::Flat,
        graph: Some(SecAggGraph::Complete),
    },
    Case {
        name: "flat-harary",
        topology: Topology::Flat,
        graph: Some(SecAggGraph::Harary),
    },
    Case {
        name: "groups",
        topology: Topology::Groups { size: GROUP },
        graph: Some(SecAggGraph::Complete),
    },
    Case {
        name: "flat-pairwise",
        topology: Topology::Flat,
        graph: None,
    },
];

/// The group size of the `groups` case.
const GROUP: usize = 10;

struct Row {
    clients: usize,
    case: &'static str,
    train: Duration,
    train_bytes: f64,
    removal: Duration,
    removal_round: Duration,
    involved: usize,
    removal_bytes: f64,
}

fn bytes(t: &Traffic) -> u64 {
    t.sent() + t.received()
}

/// The next removal round committed (training is [`trained`]).
async fn committed(server: &mut ServerHandle) -> mufc::remote::RoundReport {
    let mut rejected = 0usize;
    loop {
        match server.next_event().await.expect("the server stopped") {
            ServerEvent::RoundCommitted(r) if !r.training => {
                // A measurement with a dropped client or a refused
                // message is not the round it claims to be: say so.
                if !r.dropped.is_empty() || rejected > 0 {
                    eprintln!(
                        "round {}: {} dropped, {rejected} messages rejected",
                        r.round,
                        r.dropped.len()
                    );
                }
                return r;
            }
            ServerEvent::RoundFailed { reason, .. } => panic!("a round failed: {reason}"),
            ServerEvent::Rejected { id, reason } => {
                if rejected < 3 {
                    eprintln!("rejected a message of client {id}: {reason}");
                }
                rejected += 1;
            }
            _ => {}
        }
    }
}

async fn started(server: &mut ServerHandle) {
    loop {
        if let ServerEvent::RoundStarted { .. } = server.next_event().await.expect("stopped") {
            return;
        }
    }
}

/// Waits for the model trained (every group's training round committed).
async fn trained(server: &mut ServerHandle) {
    loop {
        match server.next_event().await.expect("the server stopped") {
            ServerEvent::Trained { .. } => return,
            ServerEvent::RoundFailed { reason, .. } => panic!("a round failed: {reason}"),
            ServerEvent::RoundCommitted(r) if !r.dropped.is_empty() => {
                eprintln!("training round {}: {} dropped", r.round, r.dropped.len());
            }
            _ => {}
        }
    }
}

async fn run(l: usize, case: Case) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let ca = FederationCa::new("bench").unwrap();
    let cert = ca.issue_server(&["127.0.0.1"]).unwrap();
    let tls = server_config(ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let names: Vec<String> = (0..l).map(|i| format!("c{i}")).collect();
    let masks = match case.graph {
        Some(graph) => Masks::SecAgg(SecAggOptions::new().dropout(0.1).graph(graph)),
        None => Masks::Pairwise,
    };
    let config = FederationConfig::new(3)
        .channel(Channel::scma(masks))
        .topology(case.topology)
        // One client's removal at a time (the lone-update policy is
        // tested across processes in mufc-cli).
        .min_updating_clients(1)
        .seed(5)
        .validate()
        .unwrap();
    let mut options = ServerOptions::new(dir.path().join("server.db"), config, names.clone());
    options.step_timeout = Duration::from_secs(600);
    let mut server = start_server(listener, tls, options).await.unwrap();
    let addr = server.addr().to_string();
    let data = gaussian_clients(
        "network-bench",
        Mixture {
            per_client: 20,
            ..Mixture::net(l)
        },
    );
    let traffic = Arc::new(Traffic::default());
    let mut clients = Vec::new();
    for (name, d) in names.iter().zip(&data) {
        let path = dir.path().join(format!("{name}.db"));
        ClientStore::create(&path, name, d).unwrap();
        let c = ca.issue_client(name).unwrap();
        let tls = client_credentials(ca.cert_pem(), &c.cert_pem, &c.key_pem).unwrap();
        let mut o = ClientOptions::new(&addr, &path);
        // Only c0 is asked to forget: the others read their stores
        // rarely, so that a thousand clients polling SQLite on two cores
        // do not weigh on the rounds measured.
        o.poll = Duration::from_millis(if name == "c0" { 20 } else { 10_000 });
        o.traffic = Some(traffic.clone());
        clients.push(start_client(o, tls).unwrap());
    }
    started(&mut server).await;
    let (before, from) = (bytes(&traffic), Instant::now());
    trained(&mut server).await;
    let train = from.elapsed();
    let train_bytes = (bytes(&traffic) - before) as f64 / l as f64;

    // Let the last RoundEnd messages land before counting again.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = bytes(&traffic);
    let asked = Instant::now();
    ClientStore::open(dir.path().join("c0.db"))
        .unwrap()
        .request(&[PointId(1)])
        .unwrap();
    let removal_round = committed(&mut server).await;
    let removal = asked.elapsed();
    let involved = removal_round.included.len() + removal_round.dropped.len();
    let removal_bytes = (bytes(&traffic) - before) as f64 / involved as f64;
    for c in clients {
        c.stop().await.unwrap();
    }
    server.stop().await.unwrap();
    Row {
        clients: l,
        case: case.name,
        train,
        train_bytes,
        removal,
        removal_round: removal_round.wall,
        involved,
        removal_bytes,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` runs nothing.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let sizes: Vec<usize> = std::env::var("MUFC_NET_BENCH_SIZES")
        .unwrap_or_else(|_| "10,100,1000".into())
        .split(',')
        .map(|s| s.trim().parse().expect("sizes are numbers"))
        .collect();
    let cases: Vec<Case> = match std::env::var("MUFC_NET_BENCH_CASES") {
        Ok(v) => v
            .split(',')
            .map(|n| {
                *CASES
                    .iter()
                    .find(|c| c.name == n.trim())
                    .expect("cases: flat-complete, flat-harary, groups, flat-pairwise")
            })
            .collect(),
        Err(_) => CASES.to_vec(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{:>7}  {:>13}  {:>10}  {:>12}  {:>12}  {:>12}  {:>9}  {:>14}",
        "clients",
        "case",
        "train (s)",
        "train KB/cl",
        "removal (s)",
        "round (s)",
        "involved",
        "remove KB/inv"
    );
    for &l in &sizes {
        let mut flat = None;
        for &case in &cases {
            let r = rt.block_on(run(l, case));
            println!(
                "{:>7}  {:>13}  {:>10.3}  {:>12.1}  {:>12.3}  {:>12.3}  {:>9}  {:>14.1}",
                r.clients,
                r.case,
                r.train.as_secs_f64(),
                r.train_bytes / 1024.0,
                r.removal.as_secs_f64(),
                r.removal_round.as_secs_f64(),
                r.involved,
                r.removal_bytes / 1024.0,
            );
            match flat {
                None => flat = Some(r.removal),
                Some(f) => println!(
                    "{:>7}  {:>13}  removal {:.1}x faster than {}",
                    "",
                    "",
                    f.as_secs_f64() / r.removal.as_secs_f64(),
                    cases[0].name
                ),
            }
        }
    }
}
