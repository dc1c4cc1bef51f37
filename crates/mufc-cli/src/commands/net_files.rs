//! What the commands of the federation across processes (`mufc server`,
//! `client` and `dealer`) read alike: their certificates, the federation
//! file, key files, durations, and the async runtime they run on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use mufc_net::dealer::MaskKeyPair;

use crate::CliError;
use crate::cli::TlsArgs;

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Store(format!("cannot start the async runtime: {e}")))
}

pub(super) fn seconds(name: &'static str, secs: f64) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(secs).map_err(|_| CliError::InvalidParameter {
        name,
        value: secs.to_string(),
        reason: "must be a non-negative number of seconds",
    })
}

/// [`seconds`], more than zero: the interval between two pings.
pub(super) fn ping_interval(secs: f64) -> Result<Duration, CliError> {
    match seconds("keepalive", secs)? {
        d if d.is_zero() => Err(CliError::InvalidParameter {
            name: "keepalive",
            value: secs.to_string(),
            reason: "must be more than zero seconds",
        }),
        d => Ok(d),
    }
}

fn read(path: &Path) -> Result<String, CliError> {
    std::fs::read_to_string(path).map_err(|e| CliError::io(path, &e))
}

/// The PEM files of a party: named, or in the `--certs` directory under
/// the names `mufc certs` gives them (`stem` is `server` or
/// `client-<name>`).
pub(super) fn pems(tls: &TlsArgs, stem: &str) -> Result<[String; 3], CliError> {
    let pick = |given: &Option<PathBuf>, file: String| -> Result<PathBuf, CliError> {
        given
            .clone()
            .or_else(|| tls.certs.as_ref().map(|d| d.join(&file)))
            .ok_or(CliError::InvalidParameter {
                name: "certs",
                value: String::new(),
                reason: "name the certificates: --certs DIR, or --ca, --cert and --key",
            })
    };
    let ca = pick(&tls.ca, "ca.pem".into())?;
    let cert = pick(&tls.cert, format!("{stem}.pem"))?;
    let key = pick(&tls.key, format!("{stem}-key.pem"))?;
    Ok([read(&ca)?, read(&cert)?, read(&key)?])
}

/// The federation file the options name: `--federation-file`, else
/// `federation.json` in the certificates' directory when it exists.
pub(super) fn federation_file(
    tls: &TlsArgs,
) -> Result<Option<mufc_net::federation_file::FederationFile>, CliError> {
    Ok(federation_path(tls)
        .map(|p| mufc_net::federation_file::FederationFile::read(&p))
        .transpose()?)
}

/// Where the federation file is: `--federation-file`, or `federation.json`
/// in the `--certs` directory when it exists.
pub(super) fn federation_path(tls: &TlsArgs) -> Option<PathBuf> {
    tls.federation_file.clone().or_else(|| {
        let p = tls.certs.as_ref()?.join("federation.json");
        p.exists().then_some(p)
    })
}

/// A party's long-term X25519 key pair for dealt masks, from its secret
/// key file: `given`, or `file` in the `--certs` directory (`mufc certs
/// --masking dealer` writes them).
///
/// # Errors
///
/// No file named, a file that cannot be read, or text that is not 64
/// hex digits.
pub(super) fn mask_key(
    given: &Option<PathBuf>,
    tls: &TlsArgs,
    file: &str,
) -> Result<MaskKeyPair, CliError> {
    let path = (given.clone())
        .or_else(|| tls.certs.as_ref().map(|d| d.join(file)))
        .ok_or(CliError::InvalidParameter {
            name: "mask-key",
            value: String::new(),
            reason: "dealt masks need this party's key: --mask-key FILE, or --certs DIR",
        })?;
    let text = zeroize::Zeroizing::new(read(&path)?);
    let secret = mufc_net::federation_file::parse_key(&text).map_err(|why| CliError::Io {
        path: path.clone(),
        message: why,
    })?;
    Ok(MaskKeyPair::from_secret_bytes(secret))
}

/// The bounds a client's records are mapped from: those `given`, or those
/// the federation file pins (`agreed`); both must then be the same.
pub(super) fn chosen_bounds(
    given: Option<crate::cli::Bounds>,
    agreed: Option<[f64; 2]>,
) -> Result<Option<crate::cli::Bounds>, CliError> {
    let given = given.map(crate::cli::Bounds::pair);
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
    Ok(given
        .or(agreed)
        .map(|[lo, hi]| crate::cli::Bounds { lo, hi }))
}
