//! `mufc client forget`, `mufc client add` and `mufc client leave`: a
//! request recorded in the client's store, which the running client
//! applies, then waited for until a round that included the client
//! committed at the server (for a leave, until the server took it).

use std::path::Path;
use std::time::Duration;

use mufc_net::client_store::{ClientStore, RequestStatus};
use seeding::{Dataset, PointId};
use serde_json::json;

use super::net_files::{chosen_bounds, federation_file, seconds};
use crate::CliError;
use crate::cli::{ClientAddArgs, ClientForgetArgs, ClientLeaveArgs};
use crate::data::{LoadOptions, load};
use crate::output::{Report, count};

/// The client's store at `path`, which must exist; `instead`: what to do
/// before a server admitted the client (its records are only in its data
/// file then).
fn existing(path: &Path, instead: &str) -> Result<ClientStore, CliError> {
    if !path.exists() {
        return Err(CliError::Store(format!(
            "there is no store at {}: a client's store is written once a server \
             first admits it, and until then its records are only in its data file \
             ({instead}), or the path is wrong",
            path.display()
        )));
    }
    Ok(ClientStore::open(path)?)
}

/// `mufc client forget`.
pub(super) fn forget(f: &ClientForgetArgs) -> Result<Report, CliError> {
    let store = existing(&f.store, "remove them there")?;
    let ids: Vec<PointId> = f.ids.iter().copied().map(PointId).collect();
    let request = store.request(&ids)?;
    let done = format!("{} forgotten", count(ids.len() as u64, "point"));
    served(&store, request, f.wait, "client forget", &done)
}

/// `mufc client add` (issue 29): the records of `--data`, mapped into the
/// model's box as the client's data was, with their ids.
pub(super) fn add(f: &ClientAddArgs) -> Result<Report, CliError> {
    let store = existing(&f.store, "add them there")?;
    let agreed = federation_file(&f.tls)?.and_then(|file| file.bounds);
    let options = LoadOptions {
        id_column: f.id_column,
        ..LoadOptions::default()
    };
    let table = load(&f.data, &options)?;
    let mut records = table.dataset()?;
    if let Some(b) = chosen_bounds(f.bounds, agreed)? {
        records = b.map(&records)?;
    }
    // Refused now rather than by the running client: the records must
    // lie where the client's points do.
    records.check_in_box().map_err(|e| {
        CliError::Store(format!(
            "{e}: map the records as the client's data was (--bounds, or the federation \
             file's), or they are outside what it was trained on"
        ))
    })?;
    let request = match table.ids() {
        Some(written) => {
            let ids = written
                .iter()
                .map(|id| {
                    id.parse::<u64>()
                        .map(PointId)
                        .map_err(|_| CliError::InvalidParameter {
                            name: "id-column",
                            value: id.clone(),
                            reason: "a record's id must be a non-negative integer",
                        })
                })
                .collect::<Result<Vec<_>, _>>()?;
            store.request_records(&Dataset::with_ids(records.points().clone(), ids)?)?
        }
        // Numbered in the request's own write: two `mufc client add` at
        // once get distinct ids.
        None => store.request_new_records(&records)?.0,
    };
    let done = format!("{} added", count(records.len() as u64, "record"));
    served(&store, request, f.wait, "client add", &done)
}

/// `mufc client leave` (issue 29): the whole removal and the leave
/// recorded at once, then waited for until the server took the leave.
pub(super) fn leave(f: &ClientLeaveArgs) -> Result<Report, CliError> {
    let store = existing(&f.store, "its records are in no model yet")?;
    let request = store.request_leave()?;
    let wait = seconds("wait", f.wait)?;
    let start = std::time::Instant::now();
    while !store.left()? && start.elapsed() < wait {
        if let Some(RequestStatus::Refused { reason }) =
            request.map(|r| store.status(r)).transpose()?.flatten()
        {
            return Err(CliError::Store(format!(
                "the leave's removal was refused: {reason}"
            )));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = store.left()?;
    // Served by the model's withdrawal (docs/threat-model.md P4): said,
    // with the exit code of a withdrawn model.
    if let Some(RequestStatus::Withdrawn { reason }) =
        request.map(|r| store.status(r)).transpose()?.flatten()
    {
        return Ok(Report {
            json: json!({ "command": "client leave", "request": request, "left": left, "withdrawn": reason }),
            text: format!(
                "{}; the server withdrew its model: {reason}",
                if left {
                    "left the federation"
                } else {
                    "leave recorded, not yet taken"
                }
            ),
            warnings: Vec::new(),
            exit: crate::exit::WITHDRAWN,
        });
    }
    let text = match left {
        true => "left the federation: every point forgotten, the model counts none of them, \
                 and the members run their rounds without this client"
            .to_string(),
        false => format!(
            "leave recorded; the running client leaves once its removal's round committed \
             (`mufc client leave` waited {:.0} s: is the client running?)",
            wait.as_secs_f64()
        ),
    };
    Ok(Report {
        json: json!({ "command": "client leave", "request": request, "left": left }),
        text,
        warnings: Vec::new(),
        exit: 0,
    })
}

/// Waits up to `wait` seconds for `request` to be acknowledged or
/// refused, and reports where it stands (`done`: what it did, once
/// acknowledged).
fn served(
    store: &ClientStore,
    request: u64,
    wait: f64,
    command: &str,
    done: &str,
) -> Result<Report, CliError> {
    let wait = seconds("wait", wait)?;
    let start = std::time::Instant::now();
    let status = loop {
        let status = store.status(request)?;
        let over = matches!(
            status,
            Some(
                RequestStatus::Acknowledged { .. }
                    | RequestStatus::Refused { .. }
                    | RequestStatus::Withdrawn { .. }
            )
        );
        if over || start.elapsed() >= wait {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    match status {
        Some(RequestStatus::Acknowledged { round }) => Ok(Report {
            json: json!({ "command": command, "request": request, "acknowledged": true, "round": round }),
            text: format!("request {request}: {done}, acknowledged in round {round}"),
            warnings: Vec::new(),
            exit: 0,
        }),
        Some(RequestStatus::Refused { reason }) => Err(CliError::Store(format!(
            "request {request} refused: {reason}"
        ))),
        // Served: no model counts the points, and none will.
        Some(RequestStatus::Withdrawn { reason }) => Ok(Report {
            json: json!({ "command": command, "request": request, "acknowledged": true, "withdrawn": reason }),
            text: format!("request {request}: {done}; the server withdrew its model: {reason}"),
            warnings: Vec::new(),
            exit: crate::exit::WITHDRAWN,
        }),
        other => {
            let state = match other {
                Some(RequestStatus::Applied) => {
                    "applied by the client, its round not yet committed"
                }
                _ => "not yet applied: is the client running?",
            };
            Ok(Report {
                json: json!({ "command": command, "request": request, "acknowledged": false, "state": state }),
                text: format!(
                    "request {request} recorded, {state}; it is served when a round commits \
                     (`mufc {command}` waited {:.0} s)",
                    wait.as_secs_f64()
                ),
                warnings: Vec::new(),
                exit: 0,
            })
        }
    }
}
