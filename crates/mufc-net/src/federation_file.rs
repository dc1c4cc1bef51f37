//! The federation file: what every party agreed on out of band, in a
//! small JSON file the authority writes beside its certificates
//! (`mufc certs` writes `federation.json`) and every party holds (issue
//! 28: clients pin what they agree to and refuse any announcement outside
//! it).
//!
//! ```json
//! {
//!   "federation": "hospitals",
//!   "roster": ["st-marys", "general", "childrens"],
//!   "dim": 2,
//!   "min_gamma": 0.0009765625,
//!   "max_client_points": 10000000,
//!   "bounds": [0.0, 200.0]
//! }
//! ```
//!
//! With dealt masks (`"policy": {"masking": "dealer", ...}`) it also pins
//! the parties' long-term public keys, `"mask_keys": {"dealer": HEX,
//! "clients": [HEX, ...]}`, in roster order.
//!
//! The server takes its roster from it and resolves no finer grid step
//! than `min_gamma`, refusing any client that claims more than
//! `max_client_points` points or another dimension; every client refuses
//! a round whose setup lies outside it ([`mufc::remote::Agreement`]).

use std::path::Path;

use mufc::ClientId;
use mufc::remote::{Agreement, DEFAULT_MAX_CLIENT_POINTS, DEFAULT_MIN_GAMMA};
use serde::{Deserialize, Serialize};
use syndrome_agg::masking::pairwise::MaskPublicKey;

use crate::NetError;

/// The largest federation file read: a roster of a hundred thousand
/// names fits.
const MAX_FILE: u64 = 16 << 20;

/// The federation file (see the module docs).
///
/// # Example
///
/// ```
/// use mufc_net::federation_file::FederationFile;
///
/// let file = FederationFile::new("hospitals", vec!["a".into(), "b".into(), "c".into()]);
/// let text = file.to_json()?;
/// let back = FederationFile::parse(&text)?;
/// assert_eq!(back, file);
/// assert_eq!(back.agreement().clients, 3);
/// assert!(FederationFile::parse("{\"roster\": []}").is_err());
/// # Ok::<(), mufc_net::NetError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FederationFile {
    /// The federation's name (its certificates').
    pub federation: String,
    /// The clients, in id order (their certificates' names).
    pub roster: Vec<String>,
    /// The dimension of the points, once agreed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dim: Option<usize>,
    /// The smallest grid step.
    #[serde(default = "default_min_gamma")]
    pub min_gamma: f64,
    /// The most points one client may claim.
    #[serde(default = "default_max_client_points")]
    pub max_client_points: u64,
    /// The bounds `[LO, HI]` of every coordinate in the clients' own
    /// units, once agreed: a client maps its records from them into the
    /// model's box (`mufc client --bounds` may only repeat them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<[f64; 2]>,
    /// The privacy policy, once agreed: the masking and floors on the
    /// smallest aggregate and the lone-update policy; a server may
    /// announce a stricter setup, never a weaker one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<mufc::remote::Policy>,
    /// The topology, once agreed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<mufc::Topology>,
    /// With dealt masks, the parties' long-term X25519 public keys: the
    /// dealer's, which every client pins, and each client's in roster
    /// order, which the dealer pins.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mask_keys: Option<MaskKeys>,
}

/// The long-term public keys of dealt masks (hex in the file, so that
/// people can compare them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskKeys {
    /// The dealer's.
    pub dealer: HexKey,
    /// Each client's, in roster order.
    pub clients: Vec<HexKey>,
}

/// An X25519 public key, written as 64 hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HexKey(pub MaskPublicKey);

impl Serialize for HexKey {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(self.0.0))
    }
}

impl<'de> Deserialize<'de> for HexKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        parse_key(&text)
            .map(|k| Self(MaskPublicKey(k)))
            .map_err(serde::de::Error::custom)
    }
}

/// 32 bytes from 64 hex digits (a key or a key file's text, surrounding
/// whitespace ignored).
///
/// # Errors
///
/// Why the text is not such a key.
pub fn parse_key(text: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text.trim()).map_err(|e| format!("not a hex key: {e}"))?;
    <[u8; 32]>::try_from(bytes.as_slice())
        .map_err(|_| format!("a key is 32 bytes (64 hex digits), not {}", bytes.len()))
}

fn default_min_gamma() -> f64 {
    DEFAULT_MIN_GAMMA
}

fn default_max_client_points() -> u64 {
    DEFAULT_MAX_CLIENT_POINTS
}

impl FederationFile {
    /// The file of `federation` with `roster` and the defaults.
    pub fn new(federation: &str, roster: Vec<String>) -> Self {
        Self {
            federation: federation.to_string(),
            roster,
            dim: None,
            min_gamma: DEFAULT_MIN_GAMMA,
            max_client_points: DEFAULT_MAX_CLIENT_POINTS,
            bounds: None,
            policy: None,
            topology: None,
            mask_keys: None,
        }
    }

    /// With dealt masks, each client's pinned public key by id (its place
    /// in the roster), for the dealer.
    pub fn client_mask_keys(&self) -> Option<std::collections::BTreeMap<ClientId, MaskPublicKey>> {
        let keys = self.mask_keys.as_ref()?;
        Some(
            (keys.clients.iter().enumerate())
                .map(|(i, k)| (ClientId(i as u64), k.0))
                .collect(),
        )
    }

    /// What the parties hold each other to.
    pub fn agreement(&self) -> Agreement {
        Agreement {
            clients: self.roster.len(),
            dim: self.dim,
            min_gamma: self.min_gamma,
            max_client_points: self.max_client_points,
            policy: self.policy,
            topology: self.topology,
            admitted: Vec::new(),
        }
    }

    /// Parses and checks the file's text.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] for text that is not such a file, a roster
    /// that is empty or names a client twice, or an agreement out of range.
    pub fn parse(text: &str) -> Result<Self, NetError> {
        let bad = |why: String| NetError::Protocol(format!("the federation file: {why}"));
        let file: Self = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        let mut names: Vec<&String> = file.roster.iter().collect();
        names.sort();
        if let Some(w) = names.windows(2).find(|w| w.first() == w.get(1)) {
            return Err(bad(format!("the roster names {:?} twice", w.first())));
        }
        for name in &file.roster {
            crate::certs::client_dns_name(name)?;
        }
        file.agreement()
            .validate()
            .map_err(|e| bad(e.to_string()))?;
        // Dealt masks need the keys every party pins; no other masking
        // has any.
        let dealt = (file.policy).is_some_and(|p| p.masking == mufc::Masking::Dealer);
        match &file.mask_keys {
            None if dealt => {
                return Err(bad(
                    "dealt masks need mask_keys: the dealer's public key and each client's \
                     (mufc certs --masking dealer writes them)"
                        .into(),
                ));
            }
            Some(_) if !dealt => {
                return Err(bad(
                    "mask_keys are for dealt masks, and the policy pins none".into(),
                ));
            }
            Some(k) if k.clients.len() != file.roster.len() => {
                return Err(bad(format!(
                    "mask_keys name {} clients, the roster {}",
                    k.clients.len(),
                    file.roster.len()
                )));
            }
            _ => {}
        }
        if let Some([lo, hi]) = file.bounds
            && !(lo.is_finite() && hi.is_finite() && lo < hi)
        {
            return Err(bad(format!(
                "the bounds [{lo}, {hi}] must be finite with LO < HI"
            )));
        }
        Ok(file)
    }

    /// Reads and checks the file at `path`.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the path, for a file that cannot be
    /// read, is too large, or does not parse ([`Self::parse`]).
    pub fn read(path: &Path) -> Result<Self, NetError> {
        let bad = |why: String| NetError::Protocol(format!("{}: {why}", path.display()));
        let len = std::fs::metadata(path)
            .map_err(|e| bad(e.to_string()))?
            .len();
        if len > MAX_FILE {
            return Err(bad(format!(
                "{len} bytes, more than a federation file holds"
            )));
        }
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        Self::parse(&text).map_err(|e| bad(e.to_string()))
    }

    /// The file's text (pretty JSON).
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] if it cannot be encoded (a step that is not
    /// a number).
    pub fn to_json(&self) -> Result<String, NetError> {
        serde_json::to_string_pretty(self)
            .map(|mut s| {
                s.push('\n');
                s
            })
            .map_err(|e| NetError::Protocol(format!("the federation file: {e}")))
    }
}
