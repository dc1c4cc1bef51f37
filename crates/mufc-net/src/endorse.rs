//! Signed key directories (issue 28, item 8): every client signs its
//! first message of a round (the keys it advertises) with its
//! certificate's key, the server relays the signed messages with the key
//! directory, and every client checks, before it uses a key, that the
//! directory gives each peer the keys that peer signed for this session
//! and round ([`mufc::remote::ClientRound::check_directory`]).
//!
//! Without it the directory is as honest as the server: a server that
//! substitutes its own keys for every peer's shares a pairwise mask and
//! the share encryption keys with the client, and so plays every peer of
//! the client inside SecAgg (it learns the client's input alone). With
//! it, the server needs a member's private key to put a key in that
//! member's name.
//!
//! The signature is the TLS 1.3 kind (`rustls`' signing keys, `webpki`'s
//! verification): the certificate keys are the ones the handshake
//! already uses, whatever their algorithm. What is signed is
//! [`CONTEXT`] then the message; the message names the protocol's
//! session, round and client, which the check compares with the round's.
//! A client keeps every session it joined and joins none twice, so an
//! old signed message is refused in a new round.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mufc::ClientId;
use rustls::SignatureScheme;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::SigningKey;

use crate::NetError;
use crate::certs::client_dns_name;
use crate::proto::{Endorsed, Signed};

/// What every signature covers before the message: a domain separation,
/// so that no signature made for this purpose is valid for another.
pub const CONTEXT: &[u8] = b"mufc-net/v1 first message of a round\0";

/// The schemes a client signs with, in its order of preference (those
/// of the keys `mufc certs` and common authorities issue).
const SCHEMES: [SignatureScheme; 5] = [
    SignatureScheme::ED25519,
    SignatureScheme::ECDSA_NISTP256_SHA256,
    SignatureScheme::ECDSA_NISTP384_SHA384,
    SignatureScheme::RSA_PSS_SHA256,
    SignatureScheme::RSA_PSS_SHA384,
];

fn algorithms() -> WebPkiSupportedAlgorithms {
    rustls::crypto::ring::default_provider().signature_verification_algorithms
}

/// A client's signing key: its certificate's.
///
/// # Example
///
/// ```
/// use mufc_net::certs::FederationCa;
/// use mufc_net::endorse::{Endorser, FirstMessages};
///
/// let ca = FederationCa::new("test")?;
/// let a = ca.issue_client("site-a")?;
/// let signed = Endorser::from_key_pem(&a.key_pem)?.sign(b"keys")?;
/// let roster = vec!["site-a".to_string()];
/// let check = FirstMessages::new(ca.cert_pem(), Some(roster))?;
/// let cert = rustls::pki_types::pem::PemObject::from_pem_slice(a.cert_pem.as_bytes()).unwrap();
/// let endorsed = mufc_net::proto::Endorsed {
///     client_id: 0,
///     signed: Some(signed),
///     certificate: rustls::pki_types::CertificateDer::as_ref(&cert).to_vec(),
/// };
/// let firsts = check.check(&[endorsed.clone()])?;
/// assert_eq!(firsts[&mufc::ClientId(0)], b"keys");
/// // The same signature in another client's name is refused.
/// let mut other = endorsed;
/// other.client_id = 1;
/// assert!(check.check(&[other]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Endorser {
    key: Arc<dyn SigningKey>,
}

impl std::fmt::Debug for Endorser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Endorser")
            .field("algorithm", &self.key.algorithm())
            .finish_non_exhaustive()
    }
}

impl Endorser {
    /// The signer of the private key `key_pem` (PKCS #8, SEC1 or PKCS #1
    /// PEM).
    ///
    /// # Errors
    ///
    /// [`NetError::Pem`] for text that holds no private key,
    /// [`NetError::Tls`] for a key of an algorithm rustls cannot sign
    /// with.
    pub fn from_key_pem(key_pem: &str) -> Result<Self, NetError> {
        let der = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|e| NetError::Pem {
            what: "the private key",
            reason: e.to_string(),
        })?;
        let key =
            rustls::crypto::ring::sign::any_supported_type(&der).map_err(|e| NetError::Tls {
                what: "the signing key",
                reason: e.to_string(),
            })?;
        Ok(Self { key })
    }

    /// `message` signed: over [`CONTEXT`] then `message`.
    ///
    /// # Errors
    ///
    /// [`NetError::Tls`] if the key offers none of the schemes, or the
    /// signature fails.
    pub fn sign(&self, message: &[u8]) -> Result<Signed, NetError> {
        let signer = self.key.choose_scheme(&SCHEMES).ok_or(NetError::Tls {
            what: "the signing key",
            reason: "it signs with none of Ed25519, ECDSA P-256/P-384, RSA-PSS".into(),
        })?;
        let signature = signer
            .sign(&[CONTEXT, message].concat())
            .map_err(|e| NetError::Tls {
                what: "signing a first message",
                reason: e.to_string(),
            })?;
        Ok(Signed {
            message: message.to_vec(),
            scheme: u32::from(u16::from(signer.scheme())),
            signature,
        })
    }
}

/// Checks `signed` against the certificate `cert` (DER): the signature
/// is valid for the certificate's key under its scheme.
///
/// # Errors
///
/// The reason, as text.
pub fn verify(cert: &[u8], signed: &Signed) -> Result<(), String> {
    let der = CertificateDer::from(cert);
    let ee = webpki::EndEntityCert::try_from(&der)
        .map_err(|e| format!("its certificate does not parse: {e}"))?;
    verify_with(&ee, signed)
}

/// [`verify`] with the certificate parsed.
fn verify_with(ee: &webpki::EndEntityCert<'_>, signed: &Signed) -> Result<(), String> {
    let scheme = u16::try_from(signed.scheme)
        .map(SignatureScheme::from)
        .map_err(|_| "an unknown signature scheme".to_string())?;
    if !SCHEMES.contains(&scheme) {
        return Err(format!("the signature scheme {scheme:?} is not accepted"));
    }
    let algs = algorithms();
    let candidates = (algs.mapping.iter())
        .find(|(s, _)| *s == scheme)
        .map_or(&[][..], |(_, a)| *a);
    let msg = [CONTEXT, &signed.message].concat();
    if candidates
        .iter()
        .any(|alg| ee.verify_signature(*alg, &msg, &signed.signature).is_ok())
    {
        Ok(())
    } else {
        Err("the signature does not verify with its certificate's key".into())
    }
}

/// A client's check of the signed first messages the server relays with
/// a key directory: each certificate issued by the federation's
/// authority for client authentication and valid now; each naming the
/// roster's client of its id (without a roster: a different certificate
/// for every id, so that one member cannot speak for two); each
/// signature valid. See the [module docs](self).
#[derive(Debug)]
pub struct FirstMessages {
    ca: CertificateDer<'static>,
    roster: Option<Vec<String>>,
}

impl FirstMessages {
    /// The check for the federation of the authority `ca_pem`, whose
    /// clients, in id order, are `roster` (the federation file's).
    ///
    /// # Errors
    ///
    /// [`NetError::Pem`] for an authority that does not parse.
    pub fn new(ca_pem: &str, roster: Option<Vec<String>>) -> Result<Self, NetError> {
        let ca = CertificateDer::pem_slice_iter(ca_pem.as_bytes())
            .next()
            .ok_or_else(|| NetError::Pem {
                what: "the authority's certificate",
                reason: "no certificate in it".into(),
            })?
            .map_err(|e| NetError::Pem {
                what: "the authority's certificate",
                reason: e.to_string(),
            })?;
        // Checked once here: a bad authority fails at start, not in a
        // round.
        webpki::anchor_from_trusted_cert(&ca).map_err(|e| NetError::Pem {
            what: "the authority's certificate",
            reason: e.to_string(),
        })?;
        Ok(Self { ca, roster })
    }

    /// Checks every endorsement and returns the first messages by client.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the first endorsement that fails a
    /// check, or a client endorsed twice.
    pub fn check(&self, endorsed: &[Endorsed]) -> Result<BTreeMap<ClientId, Vec<u8>>, NetError> {
        let anchor = webpki::anchor_from_trusted_cert(&self.ca).map_err(|e| NetError::Pem {
            what: "the authority's certificate",
            reason: e.to_string(),
        })?;
        let algs = algorithms();
        let now = UnixTime::now();
        let mut firsts = BTreeMap::new();
        let mut certs = BTreeSet::new();
        for e in endorsed {
            let id = ClientId(e.client_id);
            let refuse = |why: String| {
                NetError::Protocol(format!(
                    "the key directory's message of client {id} is refused: {why}"
                ))
            };
            let der = CertificateDer::from(e.certificate.as_slice());
            let ee = webpki::EndEntityCert::try_from(&der)
                .map_err(|err| refuse(format!("its certificate does not parse: {err}")))?;
            ee.verify_for_usage(
                algs.all,
                std::slice::from_ref(&anchor),
                &[],
                now,
                webpki::KeyUsage::client_auth(),
                None,
                None,
            )
            .map_err(|err| {
                refuse(format!(
                    "its certificate is not a client's of the federation: {err}"
                ))
            })?;
            match &self.roster {
                Some(roster) => {
                    let name = (usize::try_from(id.0).ok())
                        .and_then(|i| roster.get(i))
                        .ok_or_else(|| refuse("the roster has no such client".into()))?;
                    let dns = client_dns_name(name)?;
                    let server_name = ServerName::try_from(dns.as_str())
                        .map_err(|_| refuse("not a DNS name".into()))?;
                    ee.verify_is_valid_for_subject_name(&server_name)
                        .map_err(|_| refuse(format!("its certificate is not {name}'s")))?;
                }
                None => {
                    if !certs.insert(crate::revocation::fingerprint(&e.certificate)) {
                        return Err(refuse("its certificate endorses another client too".into()));
                    }
                }
            }
            let signed = e
                .signed
                .as_ref()
                .ok_or_else(|| refuse("no signature".into()))?;
            verify_with(&ee, signed).map_err(refuse)?;
            if firsts.insert(id, signed.message.clone()).is_some() {
                return Err(refuse("it is endorsed twice".into()));
            }
        }
        Ok(firsts)
    }
}
