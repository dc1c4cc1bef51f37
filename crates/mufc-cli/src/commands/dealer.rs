//! `mufc dealer`: the dealer of a federation with dealt masks
//! (`mufc_net::dealer`). It reads the federation file (every client's
//! pinned public key and the agreement), its certificate and its secret
//! key, connects to the server and deals every round until interrupted,
//! printing one line per event (one JSON object per line with `--json`).
//! A client that joins (`mufc certs --join` pins its key in the file) is
//! dealt for once the file names it: the dealer reads the file again
//! when a round's roster names a client it does not know.

use serde_json::{Value, json};

use super::log_lines::{Level, Logger, follow};
use super::net_files::{federation_file, federation_path, mask_key, pems, ping_interval, runtime};
use crate::CliError;
use crate::cli::DealerArgs;
use crate::output::Report;
use mufc_net::dealer::{DealerEvent, DealerOptions, KeySource, start_dealer};
use mufc_net::federation_file::FederationFile;

fn dealer_event(ev: &DealerEvent) -> (Value, String) {
    match ev {
        DealerEvent::Connected => (
            json!({ "event": "connected" }),
            "connected to the server".to_string(),
        ),
        DealerEvent::Dealt { round } => (
            json!({ "event": "dealt", "round": round }),
            format!("dealt round {round}"),
        ),
        DealerEvent::Refused { round, reason } => (
            json!({ "event": "refused", "round": round, "reason": reason }),
            format!("refused to deal round {round}: {reason}"),
        ),
        DealerEvent::Disconnected { reason } => (
            json!({ "event": "disconnected", "reason": reason }),
            format!("disconnected: {reason}"),
        ),
        other => (
            json!({ "event": "other", "detail": format!("{other:?}") }),
            format!("{other:?}"),
        ),
    }
}

fn dealer_level(ev: &DealerEvent) -> Level {
    match ev {
        DealerEvent::Refused { .. } | DealerEvent::Disconnected { .. } => Level::Warn,
        _ => Level::Info,
    }
}

/// `mufc dealer`.
///
/// # Errors
///
/// No federation file, or one without dealt masks' keys; certificates or
/// a key file that cannot be read; a low-order client key; the dealer's
/// fatal errors (its certificate refused).
pub fn dealer(a: &DealerArgs) -> Result<Report, CliError> {
    let log = Logger::from_env(a.out.json)?;
    let keepalive = ping_interval(a.keepalive.secs)?;
    let file = federation_file(&a.tls)?.ok_or(CliError::InvalidParameter {
        name: "federation-file",
        value: String::new(),
        reason: "the dealer deals only for the clients the federation file pins: \
                 --federation-file JSON, or --certs DIR holding federation.json",
    })?;
    let clients = file.client_mask_keys().ok_or(CliError::InvalidParameter {
        name: "federation-file",
        value: String::new(),
        reason: "the federation file pins no dealt masks (mufc certs --masking dealer)",
    })?;
    let [ca, cert, key] = pems(&a.tls, "dealer")?;
    let tls = mufc_net::tls::client_config(&ca, &cert, &key)?;
    let own = mask_key(&a.mask_key, &a.tls, "dealer-mask.key")?;
    if file.mask_keys.as_ref().map(|k| k.dealer.0) != Some(own.public_key()) {
        return Err(CliError::InvalidParameter {
            name: "mask-key",
            value: String::new(),
            reason: "this key's public key is not the dealer's the federation file pins",
        });
    }
    runtime()?.block_on(async {
        let mut options = DealerOptions::new(&a.server, clients);
        options.agreement = Some(file.agreement());
        options.keepalive = keepalive;
        // Clients that join after the dealer started: `mufc certs --join`
        // pins their keys in the same file, read again when a round names
        // a client the dealer does not know (issue 29).
        if let Some(path) = federation_path(&a.tls) {
            options.later_keys = Some(KeySource::new(move || {
                let file = FederationFile::read(&path).map_err(|e| e.to_string())?;
                (file.client_mask_keys()).ok_or_else(|| "it pins no dealt masks".to_string())
            }));
        }
        let mut handle = start_dealer(options, &own, tls)?;
        let mut dealt = 0u64;
        follow(
            async || handle.next_event().await,
            log,
            |ev| {
                if matches!(ev, DealerEvent::Dealt { .. }) {
                    dealt += 1;
                }
                dealer_event(ev)
            },
            dealer_level,
        )
        .await;
        handle.stop().await?;
        Ok(Report {
            json: json!({ "command": "dealer", "rounds_dealt": dealt }),
            text: format!("dealer stopped after dealing {dealt} rounds"),
            warnings: Vec::new(),
            exit: 0,
        })
    })
}
