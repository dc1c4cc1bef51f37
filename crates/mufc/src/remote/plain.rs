//! The plain mode as parties (Algorithm 5, Appendix I): a client sends
//! its exact local centroids and cluster sizes in the clear, in one
//! message, and the server takes each client's change of points from its
//! own data (the points it built from that client's last message). No
//! grid, no sketch, no mask: a client runs it only when its operator
//! allowed it ([`RemoteClient::allowing_plain`](super::RemoteClient::allowing_plain)),
//! so that a server cannot make a client send its centroids in the clear
//! by announcing the plain mode.

use std::collections::{BTreeMap, BTreeSet};

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};
use syndrome_agg::secagg::Step;

use crate::aggregation::{ClientHalf, RoundSpec};
use crate::ids::plain_point_id;
use crate::server::PlainCentroids;
use crate::{ClientId, MufcError, MufcResult, Server};

/// One client's message in a plain round: its centroids (column-major,
/// `dim` rows) and cluster sizes, bound to the round's session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct PlainMessage {
    session: [u8; 32],
    round: u64,
    client: ClientId,
    dim: usize,
    centroids: Vec<f64>,
    sizes: Vec<u64>,
}

/// A client's half of a plain round: its one message is sent at join.
pub(crate) struct PlainClient;

impl PlainClient {
    /// The client's half of the plain round of `spec`, and its message:
    /// `centroids` (one column a centroid) and their cluster sizes.
    pub(crate) fn join(
        spec: &RoundSpec,
        client: ClientId,
        centroids: &DMatrix<f64>,
        sizes: &[u64],
    ) -> MufcResult<(Box<dyn ClientHalf>, Vec<u8>)> {
        let message = PlainMessage {
            session: spec.session,
            round: spec.round,
            client,
            dim: centroids.nrows(),
            centroids: centroids.as_slice().to_vec(),
            sizes: sizes.to_vec(),
        };
        let bytes = postcard::to_allocvec(&message)
            .map_err(|e| MufcError::Remote(format!("a plain message: {e}")))?;
        Ok((Box::new(Self), bytes))
    }
}

impl ClientHalf for PlainClient {
    fn handle(&mut self, _bytes: &[u8]) -> MufcResult<Vec<u8>> {
        Err(MufcError::Remote(
            "a plain round has one message, sent at join".into(),
        ))
    }

    fn is_done(&self) -> bool {
        true
    }

    fn steps(&self) -> &'static [Step] {
        &[]
    }

    fn check_directory(&self, _: &[u8], _: &BTreeMap<ClientId, Vec<u8>>) -> MufcResult<()> {
        Ok(())
    }

    fn summed(&self) -> Option<std::borrow::Cow<'_, [ClientId]>> {
        // No sum: the server sees every message.
        None
    }
}

/// The server's half of a plain round: the messages of the ring's
/// clients, each checked against the round and the setup.
#[derive(Debug)]
pub(crate) struct PlainServer {
    spec: RoundSpec,
    dim: usize,
    /// The most centroids a client may send (its `k`).
    most: usize,
    received: BTreeMap<ClientId, PlainCentroids>,
}

impl PlainServer {
    pub(crate) fn new(spec: RoundSpec, dim: usize, most: usize) -> Self {
        Self {
            spec,
            dim,
            most,
            received: BTreeMap::new(),
        }
    }

    pub(crate) fn expected(&self) -> BTreeSet<ClientId> {
        (self.spec.ring.iter())
            .filter(|c| !self.received.contains_key(c))
            .copied()
            .collect()
    }

    pub(crate) fn answered(&self) -> BTreeSet<ClientId> {
        self.received.keys().copied().collect()
    }

    /// Client `from`'s message: refused when it is not of this round, in
    /// another client's name, a second one, or not centroids of the
    /// federation's dimension with at most `k` sizes and finite
    /// coordinates.
    pub(crate) fn receive(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()> {
        let refuse = |why: String| MufcError::Remote(format!("client {from}: {why}"));
        let m: PlainMessage =
            postcard::from_bytes(bytes).map_err(|e| refuse(format!("not a plain message: {e}")))?;
        if m.session != self.spec.session || m.round != self.spec.round {
            return Err(refuse("a message of another round".into()));
        }
        if m.client != from || !self.spec.ring.contains(&from) {
            return Err(refuse(format!("a message in client {}'s name", m.client)));
        }
        if self.received.contains_key(&from) {
            return Err(refuse("a second message".into()));
        }
        let columns = m.sizes.len();
        if m.dim != self.dim
            || columns > self.most
            || Some(m.centroids.len()) != columns.checked_mul(self.dim)
            || m.centroids.iter().any(|x| !x.is_finite())
        {
            return Err(refuse(format!(
                "not at most {} centroids of dimension {} with their sizes",
                self.most, self.dim
            )));
        }
        let centroids = DMatrix::from_vec(self.dim, columns, m.centroids);
        self.received.insert(
            from,
            PlainCentroids {
                client: from,
                centroids,
                sizes: m.sizes,
            },
        );
        Ok(())
    }

    /// Every answering client's centroids before the round (those the
    /// server built from its last message: its points in `server`'s data)
    /// and after, in id order.
    pub(crate) fn changes(self, server: &Server) -> Vec<(PlainCentroids, PlainCentroids)> {
        self.received
            .into_values()
            .map(|after| (before(server, after.client, self.most), after))
            .collect()
    }
}

/// Client `client`'s centroids as `server` holds them: its first `most`
/// plain points, with their weights (a size of 0 for a point the server
/// does not hold: an empty cluster stands for no point).
fn before(server: &Server, client: ClientId, most: usize) -> PlainCentroids {
    let data = server.data();
    let mut centroids = DMatrix::zeros(data.dim(), most);
    let mut sizes = vec![0; most];
    for (j, size) in sizes.iter_mut().enumerate() {
        if let Some(pos) = data.position(plain_point_id(client, j)) {
            centroids.column_mut(j).copy_from_slice(data.point(pos));
            *size = data.weight(pos);
        }
    }
    PlainCentroids {
        client,
        centroids,
        sizes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RoundSpec {
        RoundSpec {
            round: 4,
            session: [7; 32],
            ring: vec![ClientId(1), ClientId(2)],
            protocol: crate::aggregation::RoundProtocol::Plain,
            sends: crate::aggregation::Sends::Histograms,
        }
    }

    fn message(client: ClientId, dim: usize, centroids: Vec<f64>, sizes: Vec<u64>) -> Vec<u8> {
        let m = PlainMessage {
            session: [7; 32],
            round: 4,
            client,
            dim,
            centroids,
            sizes,
        };
        postcard::to_allocvec(&m).unwrap()
    }

    /// Whatever a client sends, the server refuses what is not one
    /// message of this round, in the sender's name, of at most `k`
    /// finite centroids of the federation's dimension; a refused message
    /// changes nothing, and the client may still send a good one.
    #[test]
    fn the_server_refuses_a_message_it_must_not_take() {
        let good = message(ClientId(1), 2, vec![0.1, 0.2], vec![3]);
        let mut other_round = PlainMessage {
            session: [7; 32],
            round: 5,
            client: ClientId(1),
            dim: 2,
            centroids: vec![0.1, 0.2],
            sizes: vec![3],
        };
        let later = postcard::to_allocvec(&other_round).unwrap();
        other_round.round = 4;
        other_round.session = [8; 32];
        let other_session = postcard::to_allocvec(&other_round).unwrap();
        let bad: Vec<(ClientId, Vec<u8>, &str)> = vec![
            (ClientId(1), vec![], "no bytes"),
            (ClientId(1), good[..good.len() - 1].to_vec(), "truncated"),
            (ClientId(1), later, "another round"),
            (ClientId(1), other_session, "another session"),
            (ClientId(2), good.clone(), "another client's name"),
            (
                ClientId(3),
                message(ClientId(3), 2, vec![0.1, 0.2], vec![3]),
                "outside the ring",
            ),
            (
                ClientId(1),
                message(ClientId(1), 3, vec![0.1, 0.2, 0.3], vec![3]),
                "another dimension",
            ),
            (
                ClientId(1),
                message(ClientId(1), 2, vec![0.1; 6], vec![1, 1, 1]),
                "more than k",
            ),
            (
                ClientId(1),
                message(ClientId(1), 2, vec![0.1], vec![3]),
                "sizes and centroids disagree",
            ),
            (
                ClientId(1),
                message(ClientId(1), 2, vec![f64::NAN, 0.2], vec![3]),
                "not finite",
            ),
        ];
        let mut server = PlainServer::new(spec(), 2, 2);
        for (from, bytes, what) in bad {
            assert!(server.receive(from, &bytes).is_err(), "{what}");
            assert!(server.answered().is_empty(), "{what}");
        }
        server.receive(ClientId(1), &good).unwrap();
        assert!(
            server.receive(ClientId(1), &good).is_err(),
            "a second message"
        );
        assert_eq!(server.answered(), BTreeSet::from([ClientId(1)]));
        assert_eq!(server.expected(), BTreeSet::from([ClientId(2)]));
    }
}
