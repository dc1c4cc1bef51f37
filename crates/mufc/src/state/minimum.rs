//! The policy's minimum aggregate against what a removal leaves
//! (docs/threat-model.md P4): the check and the withdrawal it calls for,
//! which the federation in one process and the parties' driver apply
//! alike. A module of its own, under both the requests' staging and the
//! withdrawal that serves them.

use std::collections::BTreeSet;

use crate::{ClientId, Layout, MufcError, MufcResult, Withdrawal};

/// Refuses a removal that leaves fewer clients with points than the
/// policy's minimum aggregate, but some (docs/threat-model.md P4): in a
/// group of `layout` that cannot merge into another
/// (`Layout::check_mergeable`: a group that can, merges before its round
/// runs), or among the `remaining` clients. `gone`: every client that
/// left, with this removal's. The federation in one process and the
/// parties' drivers, in one process or across, check alike.
pub(crate) fn check_remaining(
    layout: Option<&Layout>,
    min_clients: usize,
    gone: &BTreeSet<ClientId>,
    remaining: usize,
) -> MufcResult<()> {
    if let Some(l) = layout {
        l.check_mergeable(min_clients, gone)?;
    }
    if remaining > 0 && remaining < min_clients {
        return Err(MufcError::TooFewClients {
            clients: remaining,
            min_clients,
        });
    }
    Ok(())
}

/// The withdrawal a refusal of [`check_remaining`] calls for, by request
/// `request` after `rounds` rounds: `None` for any other error.
pub(crate) fn withdrawal_after(
    refusal: &MufcError,
    request: u64,
    rounds: u64,
) -> Option<Withdrawal> {
    let (clients, min_clients, group) = match *refusal {
        MufcError::TooFewClients {
            clients,
            min_clients,
        } => (clients, min_clients, None),
        MufcError::GroupTooSmall {
            group,
            clients,
            min_clients,
        } => (clients, min_clients, Some(group)),
        _ => return None,
    };
    Some(Withdrawal {
        request,
        clients,
        min_clients,
        group,
        rounds,
    })
}
