//! The rules of pending requests that every driver applies: which parts
//! of a request a round applied, and what a round that changes too few
//! clients tells the server (docs/threat-model.md U3).

use crate::{ClientId, PendingAddition, PendingRequest};

/// The pending requests `all` without their parts that a round of the
/// clients `applied` accepts applied (a request is gone once every part
/// is): the one rule of the federation in one process and of the
/// parties' driver.
pub(crate) fn still_pending(
    all: Vec<PendingRequest>,
    applied: impl Fn(ClientId) -> bool,
) -> Vec<PendingRequest> {
    all.into_iter()
        .filter_map(|p| {
            let rest = p.request.restricted(|c| !applied(c));
            (!rest.is_empty()).then_some(PendingRequest {
                number: p.number,
                request: rest,
            })
        })
        .collect()
}

/// The pending additions `all` without their parts that a round of the
/// clients `applied` accepts applied, as [`still_pending`] does removals.
pub(crate) fn still_added(
    all: Vec<PendingAddition>,
    applied: impl Fn(ClientId) -> bool,
) -> Vec<PendingAddition> {
    all.into_iter()
        .filter_map(|mut a| {
            a.points.retain(|(c, _)| !applied(*c));
            (!a.points.is_empty()).then_some(a)
        })
        .collect()
}

/// What the server learns from a round that changed the messages of
/// `updated` alone, beyond a policy of `needed` (docs/threat-model.md U3);
/// generic over how clients are named, so that a store names them as
/// its data does.
///
/// `None` when no client or at least `needed` clients updated.
///
/// # Example
///
/// ```
/// let w = mufc::privacy_warning(&["site-5"], 2).unwrap();
/// assert!(w.starts_with("only client site-5's message changed"));
/// assert_eq!(mufc::privacy_warning(&["a", "b"], 2), None);
/// ```
pub fn privacy_warning<C: std::fmt::Display>(updated: &[C], needed: usize) -> Option<String> {
    match updated {
        [] => None,
        [c] => Some(format!(
            "only client {c}'s message changed in this round: the difference of this aggregate \
             and the previous one tells the server how client {c}'s histogram changed (for a \
             removed point that is not a seed, the bin it counted in; for a removed client, its \
             whole histogram) (docs/threat-model.md U3)"
        )),
        v if v.len() < needed => Some(format!(
            "only {} clients' messages changed in this round, fewer than the policy's {needed}: \
             the difference of this aggregate and the previous one tells the server the sum of \
             their changes (docs/threat-model.md U3)",
            v.len()
        )),
        _ => None,
    }
}
