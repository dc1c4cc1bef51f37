//! `mufc server` and `mufc client`: the federation across processes
//! (`mufc_net`; the dealer is `dealer.rs`). Both run until interrupted (SIGINT, SIGTERM), printing
//! one line per event on stdout (one JSON object per line with
//! `--json`); `mufc client forget` records a request in a client's store
//! and waits for its acknowledgement.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mufc::remote::RoundReport;
use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};
use mufc_net::client::{ClientEvent, ClientOptions, start_client};
use mufc_net::client_store::{ClientStore, FirstStart, RequestStatus};
use mufc_net::federation_file::FederationFile;
use mufc_net::server::{ServerEvent, ServerHandle, ServerOptions, start_server};
use seeding::PointId;
use serde_json::{Value, json};

use super::log_lines::{Level, Logger, follow};
use super::net_files::{federation_file, mask_key, pems, ping_interval, runtime, seconds};
use crate::CliError;
use crate::cli::{ClientAction, ClientArgs, ClientForgetArgs, ServerArgs};
use crate::data::{LoadOptions, load};
use crate::output::Report;
use crate::output::count;

fn ids(v: &[ClientId]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.iter()
        .map(|c| c.0.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// ` of group G` with groups, nothing when flat.
fn of_group(group: Option<usize>) -> String {
    group.map(|g| format!(" of group {g}")).unwrap_or_default()
}

/// The level of a server's line: refusals and failed rounds are warnings.
fn server_level(ev: &ServerEvent) -> Level {
    match ev {
        ServerEvent::Refused { .. }
        | ServerEvent::Disconnected { .. }
        | ServerEvent::Rejected { .. }
        | ServerEvent::RoundFailed { .. } => Level::Warn,
        _ => Level::Info,
    }
}

/// The level of a client's line: refusals, errors and a lost session are
/// warnings.
fn client_level(ev: &ClientEvent) -> Level {
    match ev {
        ClientEvent::RefusedRound { .. }
        | ClientEvent::RoundError { .. }
        | ClientEvent::RequestRefused { .. }
        | ClientEvent::Disconnected { .. } => Level::Warn,
        _ => Level::Info,
    }
}

fn server_event(ev: &ServerEvent) -> (Value, String) {
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
        other => (
            json!({ "event": "other", "detail": format!("{other:?}") }),
            format!("{other:?}"),
        ),
    }
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

/// `mufc server`.
///
/// # Errors
///
/// Bad options or certificates, a store that does not open or contradicts
/// the options, an address that cannot be bound, a federation that cannot
/// be set up once the clients registered.
pub fn server(a: &ServerArgs) -> Result<Report, CliError> {
    let log = Logger::from_env(a.out.json)?;
    let masks = masks(a)?;
    let [ca, cert, key] = pems(&a.tls, "server")?;
    let tls = mufc_net::tls::server_config(&ca, &cert, &key)?;
    let agreed = federation_file(&a.tls)?;
    let roster = roster(a, agreed.as_ref())?;
    let config = federation_config(a, masks, roster.len())?;
    let mut options = ServerOptions::new(&a.store, config.validate()?, roster);
    options.agreement = agreed.map(|f| f.agreement());
    set_limits(&mut options, a)?;
    runtime()?.block_on(async {
        let listener = tokio::net::TcpListener::bind(&a.listen)
            .await
            .map_err(|e| CliError::Io {
                path: PathBuf::from(&a.listen),
                message: format!("cannot listen: {e}"),
            })?;
        let handle = start_server(listener, tls, options).await?;
        serve(handle, log).await
    })
}

/// The masks of `--masking`: those across processes, and only secagg's
/// with `--dropout`.
fn masks(a: &ServerArgs) -> Result<Masks, CliError> {
    Ok(match a.masking {
        mufc::Masking::SecAgg => Masks::SecAgg(
            SecAggOptions::new()
                .dropout(a.dropout)
                .graph(a.secagg_graph),
        ),
        m @ (mufc::Masking::Pairwise | mufc::Masking::Dealer) if a.dropout > 0.0 => {
            return Err(CliError::InvalidParameter {
                name: "dropout",
                value: a.dropout.to_string(),
                reason: if m == mufc::Masking::Pairwise {
                    "pairwise masks tolerate no dropout: a client missing fails the round \
                     (use --masking secagg to survive dropouts)"
                } else {
                    "dealt masks tolerate no dropout: a client missing fails the round \
                     (use --masking secagg to survive dropouts)"
                },
            });
        }
        mufc::Masking::Pairwise => Masks::Pairwise,
        mufc::Masking::Dealer => Masks::Dealer,
        _ => {
            return Err(CliError::InvalidParameter {
                name: "masking",
                value: a.masking.to_string(),
                reason: "a federation across processes masks: secagg, pairwise or dealer",
            });
        }
    })
}

/// The clients' names: the federation file's roster (which `--clients`,
/// if given, must repeat), or `--clients`.
fn roster(a: &ServerArgs, agreed: Option<&FederationFile>) -> Result<Vec<String>, CliError> {
    Ok(match agreed {
        Some(f) if a.clients.is_empty() || a.clients == f.roster => f.roster.clone(),
        Some(f) => {
            return Err(CliError::InvalidParameter {
                name: "clients",
                value: a.clients.join(","),
                reason: if f.roster.len() == a.clients.len() {
                    "the federation file's roster names these clients in another order or others"
                } else {
                    "the federation file's roster names other clients (leave out --clients to take it)"
                },
            });
        }
        None => a.clients.clone(),
    })
}

/// The federation's configuration, from the flags.
fn federation_config(
    a: &ServerArgs,
    masks: Masks,
    clients: usize,
) -> Result<FederationConfig, CliError> {
    // The library's defaults (the clients' k adapted to the counts they
    // register), as `run` and `fit` use them.
    let mut config = FederationConfig::new(a.k)
        .channel(Channel::scma(masks))
        .min_clients(a.min_clients)
        .min_updating_clients(a.min_updating_clients)
        .topology(a.layout.topology(clients, a.dropout)?)
        .seed(a.seed);
    if let Some(g) = a.gamma {
        config = config.gamma(g);
    }
    if let Some(k) = a.client_k {
        config = config.client_k(k);
    }
    Ok(config)
}

/// The server's revocation list, timeouts and limits, from the flags.
fn set_limits(options: &mut ServerOptions, a: &ServerArgs) -> Result<(), CliError> {
    options.revoked =
        (a.revocation_list.clone()).or_else(|| a.tls.certs.as_ref().map(|d| d.join("revoked.txt")));
    if let Some(p) = &options.revoked {
        // A list that does not parse is refused now, not at the first
        // Hello.
        mufc_net::revocation::RevocationList::read(p)?;
    }
    options.step_timeout = seconds("step timeout", a.step_timeout)?;
    options.join_timeout = seconds("join timeout", a.join_timeout)?;
    options.max_defer = seconds("max defer", a.max_defer)?;
    if options.max_defer > mufc_store::MAX_DEFER {
        return Err(CliError::InvalidParameter {
            name: "max-defer",
            value: a.max_defer.to_string(),
            reason: "a request may wait at most 30 days (the month the GDPR gives to act on it)",
        });
    }
    options.limits = mufc_net::transport::Limits {
        max_message: mib(a.max_message_mib),
        max_connections: a.max_connections as usize,
        max_handshakes: a.max_handshakes as usize,
        keepalive: ping_interval(a.keepalive.secs)?,
        ..mufc_net::transport::Limits::default()
    };
    Ok(())
}

/// Runs the server until interrupted, a line per event.
async fn serve(mut handle: ServerHandle, log: Logger) -> Result<Report, CliError> {
    let mut committed = 0u64;
    follow(
        async || handle.next_event().await,
        log,
        |ev| {
            if matches!(ev, ServerEvent::RoundCommitted(_)) {
                committed += 1;
            }
            server_event(ev)
        },
        server_level,
    )
    .await;
    handle.stop().await?;
    Ok(Report {
        json: json!({ "command": "server", "rounds_committed": committed }),
        text: format!("server stopped after {committed} committed rounds"),
        warnings: Vec::new(),
        exit: 0,
    })
}

fn client_event(ev: &ClientEvent) -> (Value, String) {
    match ev {
        ClientEvent::Connected { id } => (
            json!({ "event": "connected", "client": id.0 }),
            format!("connected as client {id}"),
        ),
        ClientEvent::Joined { round } => (
            json!({ "event": "joined", "round": round }),
            format!("joined round {round}"),
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
        } => (
            json!({ "event": "round_ended", "round": round, "committed": committed, "included": included, "acknowledged": acknowledged }),
            format!(
                "round {round} {}{}{}",
                if *committed { "committed" } else { "failed" },
                if *included {
                    ""
                } else {
                    " without this client"
                },
                if acknowledged.is_empty() {
                    String::new()
                } else {
                    format!(", acknowledging requests {acknowledged:?}")
                }
            ),
        ),
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

fn required<'a, T>(v: &'a Option<T>, name: &'static str) -> Result<&'a T, CliError> {
    v.as_ref().ok_or(CliError::InvalidParameter {
        name,
        value: String::new(),
        reason: "is required to run a client",
    })
}

/// The client's first start when it has no store yet: its records read
/// from its data file, mapped from the bounds `--bounds` gives or the
/// federation file `agreed` pins (both only if they agree). The store is
/// written only once a server admits the client (issue 28, item 10).
fn first_start(
    a: &ClientArgs,
    store: &Path,
    name: &str,
    agreed: Option<[f64; 2]>,
) -> Result<Option<FirstStart>, CliError> {
    if store.exists() {
        let stored = ClientStore::open(store)?.name()?;
        if stored != name {
            return Err(CliError::Store(format!(
                "{} is the store of client {stored}, not {name}",
                store.display()
            )));
        }
        return Ok(None);
    }
    let path = required(&a.data, "data")?;
    let mut data = load(path, &LoadOptions::default())?.dataset()?;
    let given = a.bounds.map(crate::cli::Bounds::pair);
    // The same numbers, bit for bit: both are parsed from text.
    if let (Some(g), Some(f)) = (given, agreed)
        && g.map(f64::to_bits) != f.map(f64::to_bits)
    {
        return Err(CliError::InvalidParameter {
            name: "bounds",
            value: format!("{},{}", g[0], g[1]),
            reason: "the federation file pins other bounds (leave out --bounds to take them)",
        });
    }
    if let Some([lo, hi]) = given.or(agreed) {
        data = crate::cli::Bounds { lo, hi }.map(&data)?;
    }
    Ok(Some(FirstStart::new(name, data)))
}

/// `mufc client` (and `mufc client forget`).
///
/// # Errors
///
/// Missing options, bad data or certificates, a store of another client,
/// a server that refuses the client (not in its roster, another
/// federation's certificate).
pub fn client(a: &ClientArgs) -> Result<Report, CliError> {
    if let Some(ClientAction::Forget(f)) = &a.action {
        return forget(f);
    }
    let log = Logger::from_env(a.out.json)?;
    let keepalive = ping_interval(a.keepalive.secs)?;
    let name = required(&a.id, "id")?;
    let store = required(&a.store, "store")?;
    let server = required(&a.server, "server")?;
    let [ca, cert, key] = pems(&a.tls, &format!("client-{name}"))?;
    let creds = mufc_net::tls::client_credentials(&ca, &cert, &key)?;
    let agreed = federation_file(&a.tls)?;
    if let Some(f) = &agreed
        && !f.roster.iter().any(|n| n == name)
    {
        return Err(CliError::InvalidParameter {
            name: "id",
            value: name.to_string(),
            reason: "the federation file's roster does not name this client",
        });
    }
    let first = first_start(a, store, name, agreed.as_ref().and_then(|f| f.bounds))?;
    // Dealt masks: the client's key, and the dealer's the file pins.
    let dealer = match agreed.as_ref().and_then(|f| f.mask_keys.as_ref()) {
        Some(keys) => Some(mufc_net::dealer::DealerPairing {
            own: std::sync::Arc::new(mask_key(
                &a.mask_key,
                &a.tls,
                &format!("client-{name}-mask.key"),
            )?),
            dealer: keys.dealer.0,
        }),
        None => None,
    };
    runtime()?.block_on(async {
        let mut options = ClientOptions::new(server, store);
        options.dealer = dealer;
        options.first_start = first;
        options.max_message = mib(a.max_message_mib);
        options.keepalive = keepalive;
        options.roster = agreed.as_ref().map(|f| f.roster.clone());
        options.agreement = agreed.map(|f| f.agreement());
        let mut handle = start_client(options, creds)?;
        follow(
            async || handle.next_event().await,
            log,
            client_event,
            client_level,
        )
        .await;
        handle.stop().await?;
        Ok(Report {
            json: json!({ "command": "client", "stopped": true }),
            text: "client stopped".into(),
            warnings: Vec::new(),
            exit: 0,
        })
    })
}

/// `mufc client forget`.
fn forget(f: &ClientForgetArgs) -> Result<Report, CliError> {
    if !f.store.exists() {
        return Err(CliError::Store(format!(
            "there is no store at {}: a client's store is written once a server \
             first admits it, and until then its records are only in its data file \
             (remove them there), or the path is wrong",
            f.store.display()
        )));
    }
    let store = ClientStore::open(&f.store)?;
    let ids: Vec<PointId> = f.ids.iter().copied().map(PointId).collect();
    let request = store.request(&ids)?;
    let wait = seconds("wait", f.wait)?;
    let start = std::time::Instant::now();
    let status = loop {
        let status = store.status(request)?;
        let done = matches!(
            status,
            Some(RequestStatus::Acknowledged { .. } | RequestStatus::Refused { .. })
        );
        if done || start.elapsed() >= wait {
            break status;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    match status {
        Some(RequestStatus::Acknowledged { round }) => Ok(Report {
            json: json!({ "command": "client forget", "request": request, "acknowledged": true, "round": round }),
            text: format!(
                "request {request}: {} forgotten, acknowledged in round {round}",
                count(ids.len() as u64, "point")
            ),
            warnings: Vec::new(),
            exit: 0,
        }),
        Some(RequestStatus::Refused { reason }) => Err(CliError::Store(format!(
            "request {request} refused: {reason}"
        ))),
        other => {
            let state = match other {
                Some(RequestStatus::Applied) => {
                    "applied by the client, its round not yet committed"
                }
                _ => "not yet applied: is the client running?",
            };
            Ok(Report {
                json: json!({ "command": "client forget", "request": request, "acknowledged": false, "state": state }),
                text: format!(
                    "request {request} recorded, {state}; it is served when a round commits \
                     (`mufc client forget` waited {:.0} s)",
                    wait.as_secs_f64()
                ),
                warnings: Vec::new(),
                exit: 0,
            })
        }
    }
}

/// `n` MiB in bytes (clap bounds `n` to 4096: no overflow).
fn mib(n: u32) -> usize {
    (n as usize) << 20
}
