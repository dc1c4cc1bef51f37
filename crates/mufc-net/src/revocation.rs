//! The revocation list: certificates the authority withdrew before they
//! expire (issue 28, item 11: a stolen client key stayed good for the
//! certificate's whole life). `mufc certs --revoke NAME` adds the
//! certificate it issued to NAME; the server reads the list at every
//! Hello and before every round, so a revoked client is refused at its
//! next session and its open session is closed, without a restart.
//!
//! One line per certificate, `sha256:<hex of the DER> <name> <unix time>`;
//! lines starting with `#` are comments. A certificate is named by its
//! fingerprint, not its holder's name: a client issued a new certificate
//! after a revocation is admitted with it.

use std::path::Path;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};

use crate::NetError;

/// The largest list read.
const MAX_FILE: u64 = 16 << 20;

/// A certificate's SHA-256 fingerprint (of its DER bytes).
pub type Fingerprint = [u8; 32];

/// The fingerprint of a certificate's DER bytes.
pub fn fingerprint(der: &[u8]) -> Fingerprint {
    Sha256::digest(der).into()
}

/// The fingerprint of the (first) certificate of a PEM text.
///
/// # Errors
///
/// [`NetError::Pem`] for text with no certificate.
pub fn fingerprint_pem(pem: &str) -> Result<Fingerprint, NetError> {
    let der = CertificateDer::pem_slice_iter(pem.as_bytes())
        .next()
        .ok_or_else(|| NetError::Pem {
            what: "the certificate to revoke",
            reason: "no certificate in it".into(),
        })?
        .map_err(|e| NetError::Pem {
            what: "the certificate to revoke",
            reason: e.to_string(),
        })?;
    Ok(fingerprint(der.as_ref()))
}

/// One revoked certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revoked {
    /// Its fingerprint.
    pub fingerprint: Fingerprint,
    /// The client it was issued to.
    pub name: String,
    /// When it was revoked (Unix seconds).
    pub time: u64,
}

/// The revocation list (see the module docs).
///
/// # Example
///
/// ```
/// use mufc_net::revocation::{RevocationList, Revoked, fingerprint};
///
/// let mut list = RevocationList::default();
/// list.add(Revoked { fingerprint: fingerprint(b"a certificate"), name: "mallory".into(), time: 1 });
/// let text = list.to_text();
/// let back = RevocationList::parse(&text)?;
/// assert!(back.contains(&fingerprint(b"a certificate")));
/// assert!(!back.contains(&fingerprint(b"another")));
/// assert!(RevocationList::parse("sha256:00 mallory 1").is_err());
/// # Ok::<(), mufc_net::NetError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RevocationList {
    entries: Vec<Revoked>,
}

impl RevocationList {
    /// Parses the list's text.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the first line that is not an entry.
    pub fn parse(text: &str) -> Result<Self, NetError> {
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: &str| {
                NetError::Protocol(format!("the revocation list, line {}: {why}", n + 1))
            };
            let mut words = line.split_whitespace();
            let (Some(fp), Some(name), Some(time), None) =
                (words.next(), words.next(), words.next(), words.next())
            else {
                return Err(bad("not `sha256:<hex> <name> <unix time>`"));
            };
            let hex = fp
                .strip_prefix("sha256:")
                .ok_or_else(|| bad("the fingerprint must start with sha256:"))?;
            let fingerprint = parse_hex(hex).ok_or_else(|| bad("not 64 hexadecimal digits"))?;
            let time = time.parse().map_err(|_| bad("the time is not a number"))?;
            entries.push(Revoked {
                fingerprint,
                name: name.to_string(),
                time,
            });
        }
        Ok(Self { entries })
    }

    /// Reads the list at `path`; a missing file is an empty list.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the path for a file that cannot be
    /// read, is too large or does not parse.
    pub fn read(path: &Path) -> Result<Self, NetError> {
        let bad = |why: String| NetError::Protocol(format!("{}: {why}", path.display()));
        let len = match std::fs::metadata(path) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(bad(e.to_string())),
        };
        if len > MAX_FILE {
            return Err(bad(format!(
                "{len} bytes, more than a revocation list holds"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        Self::parse(&text).map_err(|e| bad(e.to_string()))
    }

    /// Adds an entry (a certificate already listed is not listed twice).
    pub fn add(&mut self, r: Revoked) {
        if !self.contains(&r.fingerprint) {
            self.entries.push(r);
        }
    }

    /// Whether the certificate of fingerprint `fp` is revoked.
    pub fn contains(&self, fp: &Fingerprint) -> bool {
        self.entries.iter().any(|e| e.fingerprint == *fp)
    }

    /// The entries, in the order they were added.
    pub fn entries(&self) -> &[Revoked] {
        &self.entries
    }

    /// The list's text.
    pub fn to_text(&self) -> String {
        let mut s =
            String::from("# MUFC revocation list: sha256:<certificate> <name> <unix time>\n");
        for e in &self.entries {
            let hex: String = e.fingerprint.iter().map(|b| format!("{b:02x}")).collect();
            s.push_str(&format!("sha256:{hex} {} {}\n", e.name, e.time));
        }
        s
    }
}

fn parse_hex(hex: &str) -> Option<Fingerprint> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

/// The list at a path, read again whenever the file changes (its length
/// or modification time): the server consults it at every Hello and
/// before every round.
#[derive(Debug)]
pub(crate) struct Watched {
    path: Option<std::path::PathBuf>,
    seen: Option<(u64, Option<std::time::SystemTime>)>,
    list: Result<RevocationList, NetError>,
}

impl Watched {
    pub(crate) fn new(path: Option<std::path::PathBuf>) -> Self {
        Self {
            path,
            seen: None,
            list: Ok(RevocationList::default()),
        }
    }

    /// The list as the file holds it now, or why it cannot be read (a
    /// list that does not parse refuses everyone: fail closed).
    pub(crate) fn current(&mut self) -> Result<&RevocationList, NetError> {
        if let Some(path) = &self.path {
            let now = std::fs::metadata(path)
                .ok()
                .map(|m| (m.len(), m.modified().ok()));
            if now != self.seen || now.is_none() {
                self.list = RevocationList::read(path);
                self.seen = now;
            }
        }
        self.list.as_ref().map_err(Clone::clone)
    }

    /// Whether `fp` is revoked ([`Self::current`]).
    pub(crate) fn check(&mut self, fp: &Fingerprint) -> Result<bool, NetError> {
        self.current().map(|l| l.contains(fp))
    }
}
