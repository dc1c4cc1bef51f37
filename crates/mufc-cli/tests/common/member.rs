//! A member of the roster played by a test, in its own process: its TLS
//! configuration, its Hello, and an honest member's answers to the
//! server, on which the attack tests build what the member does wrong.

use std::path::Path;
use std::sync::Arc;

use mufc::ClientId;
use mufc::remote::{Announcement, ClientRound, RemoteClient};
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use mufc_net::proto::{ClientMessage, Hello};
use seeding::Dataset;

/// Client `name`'s TLS configuration from the certificates in `certs`.
pub(crate) fn member_tls(certs: &Path, name: &str) -> Arc<rustls::ClientConfig> {
    let read = |f: &str| std::fs::read_to_string(certs.join(f)).unwrap();
    mufc_net::tls::client_config(
        &read("ca.pem"),
        &read(&format!("client-{name}.pem")),
        &read(&format!("client-{name}-key.pem")),
    )
    .unwrap()
}

/// A message of the member.
pub(crate) fn up(body: Up) -> ClientMessage {
    ClientMessage { body: Some(body) }
}

/// Client `name`'s Hello claiming `points` points in 2-D, from the store
/// identity `[store; 32]`.
pub(crate) fn hello(name: &str, points: u64, store: u8) -> ClientMessage {
    up(Up::Hello(Hello {
        protocol: 1,
        name: name.into(),
        points,
        dim: 2,
        scale: 1,
        store: vec![store; 32],
    }))
}

/// An honest member's part in the rounds: it answers the server's
/// messages as `mufc client` would, holding `data`.
pub(crate) struct Honest {
    data: Dataset,
    party: Option<RemoteClient>,
    half: Option<ClientRound>,
    endorser: mufc_net::endorse::Endorser,
}

impl Honest {
    /// Client `name` (its key in `certs`) holding `data`.
    pub(crate) fn new(data: Dataset, certs: &Path, name: &str) -> Self {
        let key = std::fs::read_to_string(certs.join(format!("client-{name}-key.pem"))).unwrap();
        Self {
            data,
            party: None,
            half: None,
            endorser: mufc_net::endorse::Endorser::from_key_pem(&key).unwrap(),
        }
    }

    /// Its answer to `msg`, if the protocol asks for one.
    pub(crate) fn answer(&mut self, msg: Down) -> Option<ClientMessage> {
        match msg {
            Down::Welcome(w) => {
                let id = ClientId(w.client_id);
                self.party = Some(RemoteClient::new(id, self.data.clone()).unwrap());
                None
            }
            Down::Announcement(bytes) => {
                let a = Announcement::from_bytes(&bytes).unwrap();
                let (half, first) = self.party.as_mut().unwrap().join(&a).unwrap();
                self.half = Some(half);
                // None in a dealt round: the member waits for its seed.
                Some(up(Up::First(self.endorser.sign(&first?).unwrap())))
            }
            Down::Secagg(bytes)
            | Down::Directory(mufc_net::proto::Directory { secagg: bytes, .. }) => {
                let reply = self.half.as_mut()?.handle(&bytes).unwrap();
                Some(up(Up::Secagg(reply)))
            }
            Down::End(end) => {
                let me = self.party.as_ref().map(|p| p.id().0);
                if end.committed && me.is_some_and(|m| end.included.contains(&m)) {
                    let half = self.half.take()?;
                    self.party.as_mut()?.commit(half);
                }
                None
            }
            // The member takes no setup that admits clients, and keeps
            // every client of its last sum in its rings.
            Down::Admission(_) | Down::Departures(_) | Down::Withdrawn(_) | Down::Served(_) => None,
        }
    }
}

/// Opens a session on `rpc` with its first message `first` (a Hello):
/// the sender of the member's next messages (`room` of them may wait)
/// and the server's stream.
pub(crate) async fn open_session(
    rpc: &mut mufc_net::proto::federation_client::FederationClient<tonic::transport::Channel>,
    first: ClientMessage,
    room: usize,
) -> (
    tokio::sync::mpsc::Sender<ClientMessage>,
    tonic::Streaming<mufc_net::proto::ServerMessage>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel(room);
    tx.send(first).await.unwrap();
    let inbound = rpc
        .join(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    (tx, inbound)
}
