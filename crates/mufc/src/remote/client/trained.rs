//! A trained client's state: its points and clustering (or none once it
//! forgot every point), the federation it trained in, its aggregation's
//! state; and the training of its first round.

use seeding::{Dataset, PointId, Quantizer};

use crate::aggregation::{Aggregation, RoundSpec};
use crate::remote::RemoteSetup;
use crate::state::setup::check_data;
use crate::{Client, ClientId, MufcError, MufcResult};

#[derive(Clone, Debug)]
pub(crate) struct Trained {
    pub(crate) setup: RemoteSetup,
    pub(crate) quantizer: Option<Quantizer>,
    /// The masked sums' state; `None` in the plain mode.
    pub(crate) aggregation: Option<Aggregation>,
    pub(crate) local: Local,
}

/// A client's points and clustering after forgetting some, staged
/// ([`RemoteClient::forgetting`](crate::remote::RemoteClient::forgetting)).
#[derive(Debug)]
pub(crate) enum Staged {
    Waiting(Dataset),
    Trained(Local),
}

impl Staged {
    /// The points left.
    pub(crate) fn data(&self) -> &Dataset {
        match self {
            Self::Waiting(d) | Self::Trained(Local::Empty(d)) => d,
            Self::Trained(Local::Active(c)) => c.data(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Local {
    /// The client's clustering (it holds the points).
    Active(Box<Client>),
    /// Every point forgotten: the client sends an empty histogram.
    Empty(Dataset),
}

impl Trained {
    pub(crate) fn data(&self) -> &Dataset {
        match &self.local {
            Local::Active(c) => c.data(),
            Local::Empty(d) => d,
        }
    }

    pub(crate) fn seeds(&self) -> &[PointId] {
        match &self.local {
            Local::Active(c) => c.seed_ids(),
            Local::Empty(_) => &[],
        }
    }
}

/// Trains client `id` on `data` in the federation of `setup`, exactly as
/// [`Federation::new`](crate::Federation::new) trains it (the same seed,
/// grid and parameters). With `first`, the round that asks for it is
/// checked before any training (a refused round costs no training).
pub(crate) fn train(
    id: ClientId,
    data: Dataset,
    setup: RemoteSetup,
    first: Option<&RoundSpec>,
) -> MufcResult<Trained> {
    if data.dim() != setup.dim {
        return Err(MufcError::DimensionMismatch {
            client: id,
            expected: setup.dim,
            found: data.dim(),
        });
    }
    let mut parts = setup.parts()?;
    let aggregation = setup.aggregation(&parts)?;
    if let (Some(spec), Some(a)) = (first, &aggregation) {
        a.check_round(spec, id)?;
    }
    if data.is_empty() {
        return Ok(Trained {
            setup,
            quantizer: parts.quantizer,
            aggregation,
            local: Local::Empty(data),
        });
    }
    parts.clients = vec![(id, data)];
    check_data(
        parts.clients.iter().map(|(c, d)| (*c, d)),
        &parts.config,
        parts.quantizer.as_ref(),
    )?;
    let client = parts
        .fit_clients()?
        .into_iter()
        .next()
        .map(|(c, _)| c)
        .ok_or(MufcError::NoClients)?;
    Ok(Trained {
        setup,
        quantizer: parts.quantizer,
        aggregation,
        local: Local::Active(Box::new(client)),
    })
}
