//! A malicious server played by a test: it serves `mufc-net`'s protocol
//! on 127.0.0.1 with the federation's server certificate, so that real
//! `mufc client` processes connect to it, and runs rounds with
//! `mufc::remote::RemoteServer` step by step, where the test may lie at
//! any step (a forged key directory, a ring that leaves a client out).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use mufc::remote::{Announcement, Registration, RemoteServer, RemoteSetup, RoundStep, ServerRound};
use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::federation_server::Federation;
use mufc_net::proto::server_message::Body as Down;
use mufc_net::proto::{ClientMessage, Directory, Endorsed, RoundEnd, ServerMessage, Welcome};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::net::LIMIT;

/// A session as the handler hands it over: the client's name, its
/// certificate (DER), its Hello, its outbox and its inbound stream.
type Joined = (
    String,
    Vec<u8>,
    ClientMessage,
    mpsc::Sender<Result<ServerMessage, Status>>,
    Streaming<ClientMessage>,
);

struct Handler {
    joined: mpsc::Sender<Joined>,
}

#[tonic::async_trait]
impl Federation for Handler {
    type JoinStream = ReceiverStream<Result<ServerMessage, Status>>;
    type DealStream = ReceiverStream<Result<mufc_net::proto::DealRequest, Status>>;

    /// This server deals with no dealer (its tests mask with SecAgg).
    async fn deal(
        &self,
        _request: Request<Streaming<mufc_net::proto::DealerMessage>>,
    ) -> Result<Response<Self::DealStream>, Status> {
        Err(Status::unimplemented("no dealer here"))
    }

    async fn join(
        &self,
        request: Request<Streaming<ClientMessage>>,
    ) -> Result<Response<Self::JoinStream>, Status> {
        let cert = mufc_net::transport::peer_certificates(&request)
            .and_then(|c| c.first().map(|c| c.as_ref().to_vec()))
            .unwrap_or_default();
        let mut inbound = request.into_inner();
        let hello = inbound.message().await?.unwrap();
        let Some(Up::Hello(h)) = &hello.body else {
            return Err(Status::invalid_argument("no hello"));
        };
        let (tx, rx) = mpsc::channel(64);
        let _ = (self.joined)
            .send((h.name.clone(), cert, hello, tx, inbound))
            .await;
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// One client's session with the malicious server.
pub(crate) struct Session {
    tx: mpsc::Sender<Result<ServerMessage, Status>>,
    inbound: Streaming<ClientMessage>,
    /// Its certificate (DER).
    pub(crate) cert: Vec<u8>,
}

/// The malicious server, its clients connected and welcomed.
pub(crate) struct Evil {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) sessions: BTreeMap<ClientId, Session>,
    pub(crate) server: RemoteServer,
    _stop: tokio::sync::oneshot::Sender<()>,
}

fn pem(certs: &Path, file: &str) -> String {
    std::fs::read_to_string(certs.join(file)).unwrap()
}

impl Evil {
    /// Serves on `port` with the server certificate in `certs`, waits for
    /// every client of `roster` (ids in roster order), sets the
    /// federation up as an honest server would (SecAgg, K = 2) and
    /// welcomes them. The clients are started by the caller once this
    /// listens: `start` runs `spawn_clients` after binding.
    pub(crate) fn start(
        port: u16,
        certs: &Path,
        roster: &[&str],
        spawn_clients: impl FnOnce(),
    ) -> Self {
        let tls = mufc_net::tls::server_config(
            &pem(certs, "ca.pem"),
            &pem(certs, "server.pem"),
            &pem(certs, "server-key.pem"),
        )
        .unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let (joined_tx, mut joined) = mpsc::channel(8);
        let listener = rt
            .block_on(tokio::net::TcpListener::bind(("127.0.0.1", port)))
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        rt.spawn(mufc_net::transport::serve(
            listener,
            tls,
            Handler { joined: joined_tx },
            mufc_net::transport::Limits::default(),
            async {
                let _ = stopped.await;
            },
        ));
        spawn_clients();
        let (sessions, regs) = rt.block_on(async {
            let mut sessions = BTreeMap::new();
            let mut regs = Vec::new();
            while sessions.len() < roster.len() {
                let (name, cert, hello, tx, inbound) = tokio::time::timeout(LIMIT, joined.recv())
                    .await
                    .expect("the clients connect")
                    .unwrap();
                let Some(Up::Hello(h)) = hello.body else {
                    unreachable!()
                };
                let id = ClientId(roster.iter().position(|n| *n == name).unwrap() as u64);
                regs.push(Registration {
                    id,
                    points: h.points,
                    dim: usize::try_from(h.dim).unwrap(),
                    scale: h.scale.max(1),
                });
                sessions.insert(id, Session { tx, inbound, cert });
            }
            (sessions, regs)
        });
        let mut regs = regs;
        regs.sort_by_key(|r| r.id);
        let config = FederationConfig::new(2)
            .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
            .validate()
            .unwrap();
        let server = RemoteServer::new(RemoteSetup::new(&config, &regs).unwrap()).unwrap();
        let evil = Self {
            rt,
            sessions,
            server,
            _stop: stop,
        };
        for id in evil.ids() {
            evil.send(
                id,
                Down::Welcome(Welcome {
                    client_id: id.0,
                    rounds: 0,
                }),
            );
        }
        evil
    }

    /// Every client's id.
    pub(crate) fn ids(&self) -> Vec<ClientId> {
        self.sessions.keys().copied().collect()
    }

    /// Sends `body` to client `id`.
    pub(crate) fn send(&self, id: ClientId, body: Down) {
        let tx = self.sessions[&id].tx.clone();
        self.rt
            .block_on(tx.send(Ok(ServerMessage { body: Some(body) })))
            .unwrap();
    }

    /// Client `id`'s next message within `wait`, if any.
    pub(crate) fn next(&mut self, id: ClientId, wait: Duration) -> Option<Up> {
        let s = self.sessions.get_mut(&id).unwrap();
        self.rt
            .block_on(async { tokio::time::timeout(wait, s.inbound.message()).await })
            .ok()
            .and_then(Result::ok)
            .flatten()
            .and_then(|m| m.body)
    }

    /// Starts a round for `ring` and announces it to its connected
    /// clients.
    pub(crate) fn announce(&mut self, ring: &[ClientId]) -> (Announcement, ServerRound) {
        let (announcement, round) = self.server.start_round(ring).unwrap();
        let bytes = announcement.to_bytes().unwrap();
        for id in ring {
            self.send(*id, Down::Announcement(bytes.clone()));
        }
        (announcement, round)
    }

    /// The signed first message of each of `ring`, received by `round`,
    /// as the directory relays them; `Err` with what a client sent
    /// instead (a refusal, say).
    pub(crate) fn firsts(
        &mut self,
        ring: &[ClientId],
        round: &mut ServerRound,
    ) -> Result<BTreeMap<ClientId, Endorsed>, (ClientId, Option<Up>)> {
        let mut firsts = BTreeMap::new();
        for id in ring {
            match self.next(*id, LIMIT) {
                Some(Up::First(signed)) => {
                    round.receive(*id, &signed.message).unwrap();
                    let certificate = self.sessions[id].cert.clone();
                    firsts.insert(
                        *id,
                        Endorsed {
                            client_id: id.0,
                            signed: Some(signed),
                            certificate,
                        },
                    );
                }
                other => return Err((*id, other)),
            }
        }
        Ok(firsts)
    }

    /// Runs the round honestly to its commit, every client of `ring`
    /// answering; tells them it committed.
    pub(crate) fn run_honest(&mut self, ring: &[ClientId]) -> mufc::remote::RoundReport {
        let (_, mut round) = self.announce(ring);
        let number = round.spec().round;
        let mut firsts = Some(self.firsts(ring, &mut round).unwrap());
        loop {
            match round.advance().unwrap() {
                RoundStep::Finished => break,
                RoundStep::Deal(_) => panic!("the evil server runs no dealt rounds"),
                RoundStep::Send(msgs) => {
                    let to: Vec<ClientId> = msgs.iter().map(|(c, _)| *c).collect();
                    for (id, msg) in msgs {
                        let body = match &firsts {
                            Some(f) => Down::Directory(Directory {
                                secagg: msg,
                                firsts: f.values().cloned().collect(),
                            }),
                            None => Down::Secagg(msg),
                        };
                        self.send(id, body);
                    }
                    firsts = None;
                    for id in to {
                        match self.next(id, LIMIT) {
                            Some(Up::Secagg(bytes)) => round.receive(id, &bytes).unwrap(),
                            other => panic!("client {id} answered {other:?}"),
                        }
                    }
                }
            }
        }
        let report = self.server.finish_round(round).unwrap();
        self.end(ring, number, true, &report.included);
        report
    }

    /// Tells `ring` that round `number` ended.
    pub(crate) fn end(
        &self,
        ring: &[ClientId],
        number: u64,
        committed: bool,
        included: &[ClientId],
    ) {
        for id in ring {
            self.send(
                *id,
                Down::End(RoundEnd {
                    round: number,
                    committed,
                    included: included.iter().map(|c| c.0).collect(),
                    detail: String::new(),
                }),
            );
        }
    }
}
