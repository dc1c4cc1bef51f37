//! What a client is started with ([`ClientOptions`]) and what it reports
//! ([`ClientEvent`]).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mufc::ClientId;

use crate::client_store::FirstStart;

/// How the client runs.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The server's address, `host:port`.
    pub server: String,
    /// The client's store: an existing one, or, if there is none and
    /// [`Self::first_start`] is set, the one the client creates once a
    /// server welcomed it.
    pub store: PathBuf,
    /// The client's name and records when its store does not exist yet
    /// (issue 28, item 10): held in memory until a server admits the
    /// client, then written to its new store (mode 0600). Until then the
    /// only file is `<store>.identity`, the identity reserved for that
    /// store; a server refusing the client for good removes it. Ignored
    /// once the store exists (its records are the client's, whatever it
    /// forgot since); a store of another client is an error.
    pub first_start: Option<FirstStart>,
    /// How often the store is read for new removal requests.
    pub poll: Duration,
    /// How long to wait before connecting again after a lost session;
    /// the wait doubles with every failed attempt, up to
    /// [`Self::max_reconnect`], and starts again from this once a server
    /// welcomed the client.
    pub reconnect: Duration,
    /// The longest wait between two attempts to connect.
    pub max_reconnect: Duration,
    /// Where to count the bytes the client's connections carry (none
    /// counted if `None`).
    pub traffic: Option<Arc<crate::transport::Traffic>>,
    /// What the client agreed on out of band
    /// ([`crate::federation_file::FederationFile::agreement`]): it joins
    /// no round whose setup lies outside it (a finer grid step, more
    /// points, another number of clients or dimension). `None`: it
    /// trusts the server's setup.
    pub agreement: Option<mufc::remote::Agreement>,
    /// How often the client pings the server
    /// ([`crate::transport::KEEPALIVE`] by default): a server that stopped
    /// answering is taken for gone after
    /// [`crate::transport::keepalive_timeout`], and the client connects
    /// again. Zero: no pings.
    pub keepalive: Duration,
    /// The largest message the client accepts or sends
    /// ([`crate::transport::MAX_MESSAGE`] by default; the server's
    /// [`crate::transport::Limits::max_message`] must allow it too).
    pub max_message: usize,
    /// The federation's clients in id order (the federation file's):
    /// every signed key in a round's directory must be the named client's
    /// (issue 28, item 8). `None`: each must be a client certificate of
    /// the federation, a different one for every client.
    pub roster: Option<Vec<String>>,
    /// With dealt masks, the client's long-term key pair and the dealer's
    /// public key: without it the client refuses dealt rounds.
    pub dealer: Option<crate::dealer::DealerPairing>,
}

impl ClientOptions {
    /// Options with the defaults: the store read every 200 ms, a lost
    /// session retried after 1 s, then 2, 4, ... up to 30 s.
    pub fn new(server: impl Into<String>, store: impl Into<PathBuf>) -> Self {
        Self {
            server: server.into(),
            store: store.into(),
            first_start: None,
            poll: Duration::from_millis(200),
            reconnect: Duration::from_secs(1),
            max_reconnect: Duration::from_secs(30),
            traffic: None,
            max_message: crate::transport::MAX_MESSAGE,
            keepalive: crate::transport::KEEPALIVE,
            agreement: None,
            roster: None,
            dealer: None,
        }
    }
}

/// What the client reports as it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// The server said clients left, and their signed leaves checked
    /// (issue 29): the client runs rings without them.
    Departed {
        /// The clients new to this client's list of those gone.
        ids: Vec<ClientId>,
    },
    /// This client left the federation (`mufc client leave`): the server
    /// took its leave, and the client stops.
    Left,
    /// The server withdrew its model (docs/threat-model.md P4: too few
    /// clients with points were left): the requests the client made are
    /// served, no model counts their points, and no round runs again.
    Withdrawn {
        /// Why, as the server said it.
        reason: String,
        /// The requests this message served (applied, not yet
        /// acknowledged before).
        acknowledged: Vec<u64>,
    },
    /// The server said clients joined after training, and their
    /// certificates checked (issue 29): the client takes a setup that
    /// admits them.
    Admitted {
        /// The clients new to this client.
        ids: Vec<ClientId>,
    },
    /// The server welcomed the client.
    Connected {
        /// Its id in the federation.
        id: ClientId,
    },
    /// The client joined a round.
    Joined {
        /// The round.
        round: u64,
    },
    /// The client refused a round (its announcement broke a check).
    RefusedRound {
        /// The round.
        round: u64,
        /// Why.
        reason: String,
    },
    /// A protocol message of the round was refused or aborted the client.
    RoundError {
        /// The round.
        round: u64,
        /// Why.
        reason: String,
    },
    /// A removal request was applied to the client's state.
    Applied {
        /// The request.
        request: u64,
        /// Whether the client reseeded.
        reseeded: bool,
    },
    /// A removal request was refused (an id the client does not hold).
    RequestRefused {
        /// The request.
        request: u64,
        /// Why.
        reason: String,
    },
    /// A round ended.
    RoundEnded {
        /// The round.
        round: u64,
        /// Whether it committed.
        committed: bool,
        /// Whether its sum holds this client.
        included: bool,
        /// The requests it acknowledged.
        acknowledged: Vec<u64>,
    },
    /// The session ended; the client connects again.
    Disconnected {
        /// Why.
        reason: String,
    },
}
