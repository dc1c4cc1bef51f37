//! `mufc certs`: a federation's certificate authority and the
//! certificates of its server and clients (`mufc_net::certs`), written as
//! PEM files into one directory.
//!
//! Files: `ca.pem` (the authority's certificate: every party trusts it),
//! `ca-key.pem` (its key: whoever holds it can make clients; keep it
//! offline), `server.pem` and `server-key.pem`, `client-<name>.pem` and
//! `client-<name>-key.pem`, and `federation.json` (the federation file:
//! the roster, the smallest grid step, the most points a client may
//! claim; `mufc_net::federation_file`), which every party holds. Keys are
//! written readable by their owner only.

use std::io::Write;
use std::path::{Path, PathBuf};

use mufc_net::certs::{FederationCa, Issued};
use mufc_net::federation_file::FederationFile;
use serde_json::json;

use crate::CliError;
use crate::cli::CertsArgs;
use crate::output::{Report, TextTable};

/// Writes `text` to `path`: never over an existing file unless `force`,
/// and readable by the owner only when `secret` (Unix).
fn write(path: &Path, text: &str, force: bool, secret: bool) -> Result<(), CliError> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true);
    if force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    #[cfg(unix)]
    if secret {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = o.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            CliError::Io {
                path: path.to_path_buf(),
                message: "exists: not overwritten (pass --force to replace certificates)".into(),
            }
        } else {
            CliError::io(path, &e)
        }
    })?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| CliError::io(path, &e))
}

/// Writes a certificate and its key as `<stem>.pem` and `<stem>-key.pem`.
fn write_pair(dir: &Path, stem: &str, c: &Issued, force: bool) -> Result<[PathBuf; 2], CliError> {
    let cert = dir.join(format!("{stem}.pem"));
    let key = dir.join(format!("{stem}-key.pem"));
    // Both checked before either is written, so that a refusal leaves no
    // certificate without its key.
    if !force {
        for p in [&cert, &key] {
            if p.exists() {
                return Err(CliError::Io {
                    path: p.clone(),
                    message: "exists: not overwritten (pass --force to replace certificates)"
                        .into(),
                });
            }
        }
    }
    write(&cert, &c.cert_pem, force, false)?;
    write(&key, &c.key_pem, force, true)?;
    Ok([cert, key])
}

/// Adds the certificates of `names` (their `client-NAME.pem` in `dir`),
/// and with `dealer` the dealer's (`dealer.pem`), to `dir/revoked.txt`,
/// written whole to a new file and renamed over the old one, so that a
/// server reading it never sees half a list.
fn revoke(dir: &Path, names: &[String], dealer: bool) -> Result<PathBuf, CliError> {
    use mufc_net::revocation::{RevocationList, Revoked, fingerprint_pem};
    let path = dir.join("revoked.txt");
    let mut list = RevocationList::read(&path)?;
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut certs = Vec::new();
    for name in names {
        mufc_net::certs::client_dns_name(name)?;
        certs.push((name.clone(), dir.join(format!("client-{name}.pem"))));
    }
    if dealer {
        certs.push(("dealer".into(), dir.join("dealer.pem")));
    }
    for (name, cert) in certs {
        let pem = std::fs::read_to_string(&cert).map_err(|e| CliError::io(&cert, &e))?;
        list.add(Revoked {
            fingerprint: fingerprint_pem(&pem)?,
            name,
            time,
        });
    }
    let tmp = dir.join("revoked.txt.new");
    write(&tmp, &list.to_text(), true, false)?;
    std::fs::rename(&tmp, &path).map_err(|e| CliError::io(&path, &e))?;
    Ok(path)
}

/// The long-term X25519 key pairs of dealt masks, fresh from the
/// operating system: the dealer's (`dealer-mask.key`) and each client's
/// (`client-<name>-mask.key`), secret files, each party's own to hold.
/// Returns the public keys the federation file pins.
fn dealt_keys(
    dir: &Path,
    clients: &[String],
    force: bool,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<mufc_net::federation_file::MaskKeys, CliError> {
    let dealer = fresh_mask_key(
        dir,
        (
            "dealer-mask.key".into(),
            "dealer's mask key (secret)".into(),
        ),
        force,
        written,
    )?;
    let clients = (clients.iter())
        .map(|c| client_mask_key(dir, c, force, written))
        .collect::<Result<_, _>>()?;
    Ok(mufc_net::federation_file::MaskKeys { dealer, clients })
}

/// Client `name`'s long-term X25519 key pair of dealt masks, fresh:
/// written to `client-<name>-mask.key` (secret); its public key returned
/// for the federation file to pin.
fn client_mask_key(
    dir: &Path,
    name: &str,
    force: bool,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<mufc_net::federation_file::HexKey, CliError> {
    let file = (
        format!("client-{name}-mask.key"),
        format!("client {name} mask key (secret)"),
    );
    fresh_mask_key(dir, file, force, written)
}

/// A key pair fresh from the operating system, its secret written to
/// `file` in `dir` (named `what` in the report): its public key.
fn fresh_mask_key(
    dir: &Path,
    (file, what): (String, String),
    force: bool,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<mufc_net::federation_file::HexKey, CliError> {
    let pair = mufc_net::dealer::MaskKeyPair::generate(&mut rand::rng());
    let text = zeroize::Zeroizing::new(format!("{}\n", hex::encode(*pair.secret_bytes())));
    let path = dir.join(file);
    write(&path, &text, force, true)?;
    written.push((what, path));
    Ok(mufc_net::federation_file::HexKey(pair.public_key()))
}

/// `mufc certs`.
///
/// # Errors
///
/// A name that is not one DNS label, a file that exists (without
/// `--force`), an authority key that does not parse, I/O errors.
pub(crate) fn certs(a: &CertsArgs) -> Result<Report, CliError> {
    let dir = &a.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| CliError::io(dir, &e))?;
    let mut written: Vec<(String, PathBuf)> = Vec::new();
    let validity = std::time::Duration::from_secs(u64::from(a.days) * 86_400);
    let ca = authority(a, &mut written)?.validity(validity)?;
    // Check every client name before writing any client.
    for c in &a.clients {
        mufc_net::certs::client_dns_name(c)?;
    }
    let has_server = dir.join("server.pem").exists();
    if !a.hosts.is_empty() || !has_server {
        server_pair(a, &ca, &mut written)?;
    }
    for c in &a.clients {
        let [cert, key] = write_pair(dir, &format!("client-{c}"), &ca.issue_client(c)?, a.force)?;
        written.push((format!("client {c} certificate"), cert));
        written.push((format!("client {c} key"), key));
    }
    // The federation file: what every party holds the others to. Written
    // with the first clients; a later run keeps it (pass --force to
    // write it again with this run's clients).
    let fed_path = dir.join("federation.json");
    let mut warnings = Vec::new();
    if a.join {
        join_roster(a, &fed_path, &mut written)?;
    } else if !a.clients.is_empty() && (a.force || !fed_path.exists()) {
        write_federation_file(a, &ca, fed_path, &mut written)?;
    } else if !a.clients.is_empty() {
        warnings.push(format!(
            "{} kept: its roster does not name the clients issued now (--force writes it again)",
            fed_path.display()
        ));
    }
    if !a.revoke.is_empty() || a.revoke_dealer {
        let mut names = a.revoke.clone();
        if a.revoke_dealer {
            names.push("the dealer".into());
        }
        written.push((
            format!("revoked: {}", names.join(", ")),
            revoke(dir, &a.revoke, a.revoke_dealer)?,
        ));
    }
    Ok(report(a, &written, warnings))
}

/// Appends the clients issued now to the roster of the federation file
/// at `fed_path` (`--join`): every other field stays.
fn join_roster(
    a: &CertsArgs,
    fed_path: &Path,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<(), CliError> {
    let invalid = |reason: &'static str| CliError::InvalidParameter {
        name: "join",
        value: a.clients.join(","),
        reason,
    };
    if a.clients.is_empty() {
        return Err(invalid("name the clients that join with --clients"));
    }
    let text = std::fs::read_to_string(fed_path).map_err(|e| CliError::io(fed_path, &e))?;
    let mut file = FederationFile::parse(&text)?;
    for c in &a.clients {
        if file.roster.contains(c) {
            return Err(invalid(
                "a client that joins needs a name not on the roster",
            ));
        }
    }
    // With dealt masks each new client gets its long-term key pair, and
    // the file pins its public key (the dealer reads the file again).
    if let Some(keys) = &mut file.mask_keys {
        for c in &a.clients {
            keys.clients
                .push(client_mask_key(&a.out_dir, c, a.force, written)?);
        }
    }
    file.roster.extend(a.clients.iter().cloned());
    let text = file.to_json()?;
    FederationFile::parse(&text)?;
    write(fed_path, &text, true, false)?;
    written.push((
        format!("federation file, {} joined", a.clients.join(", ")),
        fed_path.to_path_buf(),
    ));
    Ok(())
}

/// The federation's authority: read from `ca-key.pem`, or made and
/// written there (with `ca.pem`) on the first run.
fn authority(
    a: &CertsArgs,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<FederationCa, CliError> {
    let dir = &a.out_dir;
    let key_path = dir.join("ca-key.pem");
    if key_path.exists() {
        let key = std::fs::read_to_string(&key_path).map_err(|e| CliError::io(&key_path, &e))?;
        return Ok(FederationCa::from_key_pem(&a.federation, &key)?);
    }
    let ca = FederationCa::new(&a.federation)?;
    let cert = dir.join("ca.pem");
    // The key first: a directory with a certificate but no key could
    // never issue again.
    write(&key_path, &ca.key_pem(), false, true)?;
    write(&cert, ca.cert_pem(), a.force, false)?;
    written.push(("authority key".into(), key_path));
    written.push(("authority certificate".into(), cert));
    Ok(ca)
}

/// The server's certificate and key, for `--hosts` (by default the
/// local host's addresses).
fn server_pair(
    a: &CertsArgs,
    ca: &FederationCa,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<(), CliError> {
    let hosts: Vec<&str> = if a.hosts.is_empty() {
        vec!["127.0.0.1", "localhost"]
    } else {
        a.hosts.iter().map(String::as_str).collect()
    };
    let [cert, key] = write_pair(&a.out_dir, "server", &ca.issue_server(&hosts)?, a.force)?;
    written.push((format!("server certificate ({})", hosts.join(", ")), cert));
    written.push(("server key".into(), key));
    Ok(())
}

/// Writes the federation file to `fed_path`, with dealt masks the mask
/// keys and the dealer's certificate first.
fn write_federation_file(
    a: &CertsArgs,
    ca: &FederationCa,
    fed_path: PathBuf,
    written: &mut Vec<(String, PathBuf)>,
) -> Result<(), CliError> {
    let dir = &a.out_dir;
    let mut file = federation_file(a);
    if a.masking == Some(mufc::Masking::Dealer) {
        file.mask_keys = Some(dealt_keys(dir, &a.clients, a.force, written)?);
        let [cert, key] = write_pair(dir, "dealer", &ca.issue_dealer()?, a.force)?;
        written.push(("dealer certificate".into(), cert));
        written.push(("dealer key".into(), key));
    }
    let text = file.to_json()?;
    // Checked as every party will read it.
    FederationFile::parse(&text)?;
    write(&fed_path, &text, a.force, false)?;
    written.push((
        "federation file (roster, grid step, claims)".into(),
        fed_path,
    ));
    Ok(())
}

/// The federation file of the flags: the roster, the claims' bounds, and
/// the policy and topology if given.
fn federation_file(a: &CertsArgs) -> FederationFile {
    let mut file = FederationFile::new(&a.federation, a.clients.clone());
    file.min_gamma = a.min_gamma;
    file.max_client_points = a.max_client_points;
    file.dim = a.dim;
    file.bounds = a.bounds.map(crate::cli::Bounds::pair);
    if a.masking.is_some() || a.min_clients.is_some() || a.min_updating_clients.is_some() {
        file.policy = Some(mufc::remote::Policy {
            masking: a.masking.unwrap_or(mufc::Masking::SecAgg),
            min_clients: a.min_clients.unwrap_or(mufc::DEFAULT_MIN_CLIENTS),
            min_updating_clients: (a.min_updating_clients)
                .unwrap_or(mufc::DEFAULT_MIN_UPDATING_CLIENTS),
        });
    }
    file.topology = a.topology;
    file
}

/// The files written, as a table and as JSON.
fn report(a: &CertsArgs, written: &[(String, PathBuf)], warnings: Vec<String>) -> Report {
    let mut t = TextTable::new(&["file", "holds"]);
    for (what, p) in written {
        t.row([p.display().to_string(), what.clone()]);
    }
    let text = format!(
        "mufc certs: federation {} in {}\n\n{}\nKeep ca-key.pem offline: whoever holds it can make clients.\n",
        a.federation,
        a.out_dir.display(),
        t.render()
    );
    let json = json!({
        "command": "certs",
        "federation": a.federation,
        "dir": a.out_dir,
        "files": written.iter().map(|(w, p)| json!({"file": p, "holds": w})).collect::<Vec<_>>(),
    });
    Report {
        json,
        text,
        warnings,
        exit: 0,
    }
}
