//! The state row of a client's store: what it keeps of the client
//! ([`RemoteClient`](mufc::remote::RemoteClient)'s points, setup, seeds,
//! sessions, last sum and last sent histogram), and the layouts older
//! stores wrote, read as the current one.

use mufc::ClientId;
use mufc::remote::{RemoteSetup, SentRound};
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

/// What the state row holds.
#[derive(Serialize, Deserialize)]
pub(super) struct State {
    pub(super) id: Option<ClientId>,
    pub(super) data: Dataset,
    pub(super) setup: Option<RemoteSetup>,
    pub(super) seeds: Vec<PointId>,
    pub(super) sessions: Vec<[u8; 32]>,
    /// The clients of the last sum the client took part in
    /// ([`RemoteClient::last_sum`]).
    pub(super) last_sum: Vec<ClientId>,
    /// What the client sent in the last committed round that included it
    /// ([`RemoteClient::sent`]): the base of its next change round.
    pub(super) sent: Option<SentRound>,
}

/// The state row of a store written before `sent`: read as a state
/// without one (the client's next change round is refused, and the
/// server runs a whole round).
#[derive(Deserialize)]
struct StateV2 {
    id: Option<ClientId>,
    data: Dataset,
    setup: Option<RemoteSetup>,
    seeds: Vec<PointId>,
    sessions: Vec<[u8; 32]>,
    last_sum: Vec<ClientId>,
}

impl From<StateV2> for State {
    fn from(s: StateV2) -> Self {
        Self {
            id: s.id,
            data: s.data,
            setup: s.setup,
            seeds: s.seeds,
            sessions: s.sessions,
            last_sum: s.last_sum,
            sent: None,
        }
    }
}

/// The state row of a store written before `last_sum` (postcard has no
/// optional trailing field): read as a state with an empty one.
#[derive(Deserialize)]
struct StateV1 {
    id: Option<ClientId>,
    data: Dataset,
    setup: Option<RemoteSetup>,
    seeds: Vec<PointId>,
    sessions: Vec<[u8; 32]>,
}

impl From<StateV1> for State {
    fn from(s: StateV1) -> Self {
        Self {
            id: s.id,
            data: s.data,
            setup: s.setup,
            seeds: s.seeds,
            sessions: s.sessions,
            last_sum: Vec::new(),
            sent: None,
        }
    }
}

/// Parses a state row of any layout.
///
/// # Errors
///
/// Postcard's error for the current layout, if no layout reads it.
pub(super) fn parse(blob: &[u8]) -> Result<State, postcard::Error> {
    // Newest first: postcard ignores trailing bytes, so an older
    // layout would read a newer row and drop its last fields.
    postcard::from_bytes::<State>(blob).or_else(|e| {
        postcard::from_bytes::<StateV2>(blob)
            .map(State::from)
            .or_else(|_| postcard::from_bytes::<StateV1>(blob).map(State::from))
            .map_err(|_| e)
    })
}
