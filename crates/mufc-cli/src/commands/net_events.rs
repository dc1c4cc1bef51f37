//! The lines `mufc server` and `mufc client` print, one per event (a
//! JSON object and a line of text), and the level of each.

use std::time::Duration;

use mufc::ClientId;
use mufc::remote::RoundReport;
use mufc_net::client::ClientEvent;
use mufc_net::server::ServerEvent;
use serde_json::{Value, json};

use super::log_lines::Level;
use crate::output::count;

fn ids(v: &[ClientId]) -> String {
    numbers(&v.iter().map(|c| c.0).collect::<Vec<_>>())
}

/// Numbers comma-separated, `-` for none.
fn numbers(v: &[u64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    (v.iter().map(u64::to_string)).collect::<Vec<_>>().join(",")
}

/// ` of group G` with groups, nothing when flat.
fn of_group(group: Option<usize>) -> String {
    group.map(|g| format!(" of group {g}")).unwrap_or_default()
}

/// The level of a server's line: refusals and failed rounds are warnings.
pub(super) fn server_level(ev: &ServerEvent) -> Level {
    match ev {
        ServerEvent::Refused { .. }
        | ServerEvent::Disconnected { .. }
        | ServerEvent::Rejected { .. }
        | ServerEvent::RoundFailed { .. }
        | ServerEvent::Withdrawn(_) => Level::Warn,
        _ => Level::Info,
    }
}

/// The level of a client's line: refusals, errors and a lost session are
/// warnings.
pub(super) fn client_level(ev: &ClientEvent) -> Level {
    match ev {
        ClientEvent::RefusedRound { .. }
        | ClientEvent::RoundError { .. }
        | ClientEvent::RequestRefused { .. }
        | ClientEvent::Disconnected { .. }
        | ClientEvent::Withdrawn { .. } => Level::Warn,
        _ => Level::Info,
    }
}

pub(super) fn server_event(ev: &ServerEvent) -> (Value, String) {
    match ev {
        ServerEvent::Listening(addr) => (
            json!({ "event": "listening", "addr": addr.to_string() }),
            format!("listening on {addr}"),
        ),
        ServerEvent::Resumed { rounds } => (
            json!({ "event": "resumed", "rounds": rounds }),
            format!("resumed from the store after {}", count(*rounds, "round")),
        ),
        ServerEvent::SetupRestored => (
            json!({ "event": "setup_restored" }),
            "set up as before the restart: training goes on".to_string(),
        ),
        ServerEvent::Connected { id, name } => (
            json!({ "event": "connected", "client": id.0, "name": name }),
            format!("client {id} ({name}) connected"),
        ),
        ServerEvent::Disconnected { id, name } => (
            json!({ "event": "disconnected", "client": id.0, "name": name }),
            format!("client {id} ({name}) disconnected"),
        ),
        ServerEvent::DealerConnected => (
            json!({ "event": "dealer_connected" }),
            "the dealer connected".to_string(),
        ),
        ServerEvent::DealerDisconnected => (
            json!({ "event": "dealer_disconnected" }),
            "the dealer disconnected".to_string(),
        ),
        ServerEvent::Refused { reason } => (
            json!({ "event": "refused", "reason": reason }),
            format!("refused a session: {reason}"),
        ),
        ServerEvent::Deferred {
            id,
            clients,
            min,
            at_most,
        } => deferred(*id, *clients, *min, *at_most),
        ServerEvent::Rejected { id, reason } => (
            json!({ "event": "rejected", "client": id.0, "reason": reason }),
            format!("rejected a message of client {id}: {reason}"),
        ),
        ServerEvent::RoundStarted {
            round,
            group,
            clients,
            changes,
        } => round_started(*round, *group, clients, *changes),
        ServerEvent::Trained { rounds } => (
            json!({ "event": "trained", "rounds": rounds }),
            format!("model trained after {}", count(*rounds, "round")),
        ),
        ServerEvent::RoundCommitted(r) => round_committed(r),
        ServerEvent::RoundFailed {
            round,
            group,
            reason,
        } => round_failed(*round, *group, reason),
        other => membership(other).unwrap_or_else(|| {
            (
                json!({ "event": "other", "detail": format!("{other:?}") }),
                format!("{other:?}"),
            )
        }),
    }
}

/// The server's events of the federation's membership (issue 29): a
/// client admitted or left, the model withdrawn; `None` for another.
fn membership(ev: &ServerEvent) -> Option<(Value, String)> {
    Some(match ev {
        ServerEvent::Withdrawn(w) => (
            json!({ "event": "withdrawn", "request": w.request, "clients": w.clients, "min_clients": w.min_clients, "group": w.group }),
            format!("the model is withdrawn: {w}; no round runs again"),
        ),
        ServerEvent::Left { id, name } => (
            json!({ "event": "left", "client": id.0, "name": name }),
            format!(
                "client {id} ({name}) left the federation: its signed leave is kept, and no \
                 later round names it"
            ),
        ),
        ServerEvent::Admitted { id, name } => (
            json!({ "event": "admitted", "client": id.0, "name": name }),
            format!(
                "client {id} ({name}) admitted: it joins the federation, its first round waits \
                 for the lone-update policy"
            ),
        ),
        ServerEvent::Merged { from, into, moved } => (
            json!({ "event": "merged", "from": from, "into": into, "moved": moved.iter().map(|c| c.0).collect::<Vec<_>>() }),
            format!(
                "group {from} fell below the minimum aggregate: its clients {} move to group \
                 {into}, whose next round is whole; group {from} is emptied as it commits",
                ids(moved)
            ),
        ),
        ServerEvent::Split { group, into, moved } => (
            json!({ "event": "split", "group": group, "into": into, "moved": moved.iter().map(|c| c.0).collect::<Vec<_>>() }),
            format!(
                "group {group} grew full: its clients {} form group {into}; both run a whole \
                 round, stored together",
                ids(moved)
            ),
        ),
        _ => return None,
    })
}

/// A request deferred by the lone-update policy.
fn deferred(id: ClientId, clients: usize, min: usize, at_most: Duration) -> (Value, String) {
    (
        json!({ "event": "deferred", "client": id.0, "clients": clients, "min": min, "max_defer_secs": at_most.as_secs() }),
        format!(
            "request of client {id} deferred: the waiting requests name {clients} of the {min} \
             clients a removal round must change (lone-update policy); it waits at most {}",
            mufc_store::duration_words(at_most.as_secs())
        ),
    )
}

/// A round started, with its clients.
fn round_started(
    round: u64,
    group: Option<usize>,
    clients: &[ClientId],
    changes: bool,
) -> (Value, String) {
    (
        json!({ "event": "round_started", "round": round, "group": group, "clients": clients.iter().map(|c| c.0).collect::<Vec<_>>(), "changes": changes }),
        format!(
            "round {round}{} started with clients {}{}",
            of_group(group),
            ids(clients),
            if changes {
                " (a change round: each sends its change since the last round)"
            } else {
                ""
            }
        ),
    )
}

/// A round committed: whom it included and dropped, and its size.
fn round_committed(r: &RoundReport) -> (Value, String) {
    let dropped: Vec<ClientId> = r.dropped.iter().map(|(c, _)| *c).collect();
    (
        json!({
            "event": "round_committed",
            "round": r.round,
            "group": r.group,
            "training": r.training,
            "included": r.included.iter().map(|c| c.0).collect::<Vec<_>>(),
            "dropped": r.dropped.iter().map(|(c, s)| json!({ "client": c.0, "step": s.to_string() })).collect::<Vec<_>>(),
            "total_count": r.total_count,
            "nonzero_bins": r.nonzero_bins,
            "wall_s": r.wall.as_secs_f64(),
        }),
        format!(
            "round {}{} committed{}: included {}, dropped {}, {} in {}, {:.3} s",
            r.round,
            of_group(r.group),
            if r.training { " (training)" } else { "" },
            ids(&r.included),
            ids(&dropped),
            count(r.total_count, "point"),
            count(r.nonzero_bins as u64, "bin"),
            r.wall.as_secs_f64()
        ),
    )
}

/// A round that failed, or could not start.
fn round_failed(round: Option<u64>, group: Option<usize>, reason: &str) -> (Value, String) {
    (
        json!({ "event": "round_failed", "round": round, "group": group, "reason": reason }),
        match round {
            Some(n) => format!("round {n}{} failed: {reason}", of_group(group)),
            None => format!("a round{} could not start: {reason}", of_group(group)),
        },
    )
}

/// A change of the roster a client heard of (issue 29): `event`, the
/// clients `ids`, and what happened to them.
fn roster_change(event: &str, ids: &[ClientId], what: &str) -> (Value, String) {
    let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
    (
        json!({ "event": event, "clients": ids.iter().map(|c| c.0).collect::<Vec<_>>() }),
        format!("client(s) {} {what}", list.join(", ")),
    )
}

/// A round a client took part in ended: committed or failed, with it
/// or without it, and the requests it acknowledged.
fn round_ended(
    round: u64,
    committed: bool,
    included: bool,
    acknowledged: &[u64],
) -> (Value, String) {
    (
        json!({ "event": "round_ended", "round": round, "committed": committed, "included": included, "acknowledged": acknowledged }),
        format!(
            "round {round} {}{}{}",
            if committed { "committed" } else { "failed" },
            if included { "" } else { " without this client" },
            if acknowledged.is_empty() {
                String::new()
            } else {
                format!(", acknowledging requests {acknowledged:?}")
            }
        ),
    )
}

/// The server withdrew its model (P4): the client's requests it served.
fn withdrawn(reason: &str, acknowledged: &[u64]) -> (Value, String) {
    (
        json!({ "event": "withdrawn", "reason": reason, "acknowledged": acknowledged }),
        format!(
            "the server withdrew its model: {reason}; requests {} served, no round runs again",
            numbers(acknowledged)
        ),
    )
}

pub(super) fn client_event(ev: &ClientEvent) -> (Value, String) {
    match ev {
        ClientEvent::Connected { id } => (
            json!({ "event": "connected", "client": id.0 }),
            format!("connected as client {id}"),
        ),
        ClientEvent::Joined { round } => (
            json!({ "event": "joined", "round": round }),
            format!("joined round {round}"),
        ),
        ClientEvent::Departed { ids } => roster_change(
            "departed",
            ids,
            "left the federation (their signed leaves checked)",
        ),
        ClientEvent::Left => (
            json!({ "event": "left" }),
            "left the federation: the server took the leave; this client stops".to_string(),
        ),
        ClientEvent::Withdrawn {
            reason,
            acknowledged,
        } => withdrawn(reason, acknowledged),
        ClientEvent::Admitted { ids } => roster_change(
            "admitted",
            ids,
            "joined the federation (their certificates checked)",
        ),
        ClientEvent::RefusedRound { round, reason } => (
            json!({ "event": "refused_round", "round": round, "reason": reason }),
            format!("refused round {round}: {reason}"),
        ),
        ClientEvent::RoundError { round, reason } => (
            json!({ "event": "round_error", "round": round, "reason": reason }),
            format!("round {round}: {reason}"),
        ),
        ClientEvent::Applied { request, reseeded } => (
            json!({ "event": "applied", "request": request, "reseeded": reseeded }),
            format!(
                "request {request} applied{}",
                if *reseeded { " (reseeded)" } else { "" }
            ),
        ),
        ClientEvent::RequestRefused { request, reason } => (
            json!({ "event": "request_refused", "request": request, "reason": reason }),
            format!("request {request} refused: {reason}"),
        ),
        ClientEvent::RoundEnded {
            round,
            committed,
            included,
            acknowledged,
        } => round_ended(*round, *committed, *included, acknowledged),
        ClientEvent::Disconnected { reason } => (
            json!({ "event": "disconnected", "reason": reason }),
            format!("disconnected: {reason}"),
        ),
        other => (
            json!({ "event": "other", "detail": format!("{other:?}") }),
            format!("{other:?}"),
        ),
    }
}
