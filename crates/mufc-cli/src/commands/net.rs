//! `mufc server` and `mufc client`: the federation across processes
//! (`mufc_net`; the dealer is `dealer.rs`). Both run until interrupted (SIGINT, SIGTERM), printing
//! one line per event on stdout (one JSON object per line with
//! `--json`); `mufc client forget` records a request in a client's store
//! and waits for its acknowledgement. The lines each event prints are
//! made in `net_events.rs`.

use std::path::{Path, PathBuf};

use mufc::{Channel, FederationConfig, Masks, SecAggOptions};
use mufc_net::client::{ClientOptions, start_client};
use mufc_net::client_store::{ClientStore, FirstStart};
use mufc_net::federation_file::FederationFile;
use mufc_net::server::{ServerEvent, ServerHandle, ServerOptions, start_server};
use serde_json::json;

use super::log_lines::{Logger, follow};
use super::net_events::{client_event, client_level, server_event, server_level};
use super::net_files::{
    chosen_bounds, federation_file, mask_key, pems, ping_interval, runtime, seconds,
};
use crate::CliError;
use crate::cli::{ClientAction, ClientArgs, ServerArgs};
use crate::data::{LoadOptions, load};
use crate::output::Report;

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
    if let Some(n) = a.max_points {
        config = config.max_points(n);
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
    options.admit_new_clients = a.admit_new_clients;
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
    if let Some(b) = chosen_bounds(a.bounds, agreed)? {
        data = b.map(&data)?;
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
    match &a.action {
        Some(ClientAction::Forget(f)) => return super::net_requests::forget(f),
        Some(ClientAction::Add(f)) => return super::net_requests::add(f),
        Some(ClientAction::Leave(f)) => return super::net_requests::leave(f),
        None => {}
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

/// `n` MiB in bytes (clap bounds `n` to 4096: no overflow).
fn mib(n: u32) -> usize {
    (n as usize) << 20
}
