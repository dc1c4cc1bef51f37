//! The operator's requests (points to forget, records to add), applied to the client's state and
//! its store whether a session is open or not, and what the server hears
//! of them and of the client's refusals.

use mufc::remote::RemoteClient;
use tokio::sync::mpsc;

use super::holding::restore;
use super::options::ClientEvent;
use crate::NetError;
use crate::client_store::{Asked, ClientStore};
use crate::proto::Forget;
use crate::proto::client_message::Body as ClientBody;

/// Applies the operator's new requests to the client's state and its
/// store (the points leave the store in the request's transaction);
/// returns the requests applied. A client not loaded yet is restored from
/// its store first; one no server has welcomed has no party, and its
/// store applies the request to the points alone.
pub(super) async fn apply_requests(
    store: &ClientStore,
    report: &mpsc::UnboundedSender<ClientEvent>,
    party: &mut Option<RemoteClient>,
    dealer: Option<&crate::dealer::DealerPairing>,
) -> Result<Vec<u64>, NetError> {
    let pending = store.pending()?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    if party.is_none()
        && let Some(id) = store.id()?
    {
        *party = Some(paired(restore(store, id).await?, dealer)?);
    }
    let mut applied = Vec::new();
    for (request, asked) in pending {
        // The request's own fault (an id the client does not hold) refuses
        // it; the store's ends the client.
        let outcome = match party.as_mut() {
            Some(client) => {
                let changed = match &asked {
                    Asked::Forget(ids) => client.forget(ids),
                    Asked::Add(records) => client.learn(records),
                };
                if changed.is_ok() {
                    store.applied(request, client)?;
                }
                changed
            }
            None => match store.apply_unwelcomed(request, &asked) {
                Ok(()) => Ok(false),
                Err(NetError::Mufc(e)) => Err(e),
                Err(e) => return Err(e),
            },
        };
        match outcome {
            Ok(reseeded) => {
                let _ = report.send(ClientEvent::Applied { request, reseeded });
                applied.push(request);
            }
            Err(e) => {
                let reason = e.to_string();
                store.refuse(request, &reason)?;
                let _ = report.send(ClientEvent::RequestRefused { request, reason });
            }
        }
    }
    Ok(applied)
}

/// `client`, paired with the dealer when the masks are dealt.
pub(super) fn paired(
    client: RemoteClient,
    dealer: Option<&crate::dealer::DealerPairing>,
) -> Result<RemoteClient, NetError> {
    match dealer {
        Some(d) => d.pair(client),
        None => Ok(client),
    }
}

/// Why the client refuses a round, as the server hears it: a protocol
/// check's reason (about the round, never the client's data), or only
/// that the client failed. Its own error may hold a record's coordinate
/// (a point outside the box) or its counts; the operator sees it in the
/// client's events, the server never does (issue 28, item 10).
pub(super) fn told_the_server(e: &mufc::MufcError) -> String {
    match e {
        mufc::MufcError::RoundRefused { reason, .. } => reason.clone(),
        _ => "the client could not take part in the round (its own log says why)".into(),
    }
}

/// The message asking the server for a round for `request`, with when
/// it was asked (the lone-update deadline counts from then, across
/// server restarts), and whether the client holds no point now (the
/// server counts it out of the minimum aggregate, docs/threat-model.md
/// P4).
pub(super) fn forget_message(store: &ClientStore, request: u64) -> Result<ClientBody, NetError> {
    let asked_at = store.asked_at(request)?.unwrap_or(0);
    let empties = store.data()?.is_empty();
    Ok(ClientBody::Forget(Forget {
        request,
        asked_at,
        empties,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mufc::ClientId;

    /// The server hears a protocol check's reason, and nothing of a
    /// client's own failure: no coordinate, no point, no count.
    #[test]
    fn a_refusal_tells_the_server_nothing_of_the_data() {
        let outside = mufc::MufcError::OutsideBox {
            client: ClientId(3),
            id: seeding::PointId(17),
            axis: 1,
            value: 12.375,
        };
        let told = told_the_server(&outside);
        for secret in ["12.375", "17", "axis"] {
            assert!(!told.contains(secret), "{told}");
        }
        let refused = mufc::MufcError::RoundRefused {
            round: 4,
            reason: "the ring names client 9, outside the federation's roster".into(),
        };
        assert_eq!(
            told_the_server(&refused),
            "the ring names client 9, outside the federation's roster"
        );
    }
}
