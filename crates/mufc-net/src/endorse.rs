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

pub(crate) fn algorithms() -> WebPkiSupportedAlgorithms {
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
        self.sign_in(CONTEXT, message)
    }

    /// `message` signed over `context` then `message`: each purpose has a
    /// context of its own ([`CONTEXT`], a leave's).
    pub(crate) fn sign_in(&self, context: &[u8], message: &[u8]) -> Result<Signed, NetError> {
        let signer = self.key.choose_scheme(&SCHEMES).ok_or(NetError::Tls {
            what: "the signing key",
            reason: "it signs with none of Ed25519, ECDSA P-256/P-384, RSA-PSS".into(),
        })?;
        let signature = signer
            .sign(&[context, message].concat())
            .map_err(|e| NetError::Tls {
                what: "signing a message",
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
    verify_in(ee, signed, CONTEXT)
}

/// Checks `signed`, made over `context` then its message, against the
/// key of `ee`.
pub(crate) fn verify_in(
    ee: &webpki::EndEntityCert<'_>,
    signed: &Signed,
    context: &[u8],
) -> Result<(), String> {
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
    let msg = [context, &signed.message].concat();
    if candidates
        .iter()
        .any(|alg| ee.verify_signature(*alg, &msg, &signed.signature).is_ok())
    {
        Ok(())
    } else {
        Err("the signature does not verify with its certificate's key".into())
    }
}

/// Checks that `ee` is a client's certificate of the authority `anchor`,
/// valid now, and with `name` that it names that client.
pub(crate) fn client_cert(
    ee: &webpki::EndEntityCert<'_>,
    anchor: &rustls::pki_types::TrustAnchor<'_>,
    (algs, now): (&WebPkiSupportedAlgorithms, UnixTime),
    name: Option<&str>,
) -> Result<(), String> {
    ee.verify_for_usage(
        algs.all,
        std::slice::from_ref(anchor),
        &[],
        now,
        webpki::KeyUsage::client_auth(),
        None,
        None,
    )
    .map_err(|err| format!("its certificate is not a client's of the federation: {err}"))?;
    let Some(name) = name else { return Ok(()) };
    let dns = client_dns_name(name).map_err(|e| e.to_string())?;
    let server_name =
        ServerName::try_from(dns.as_str()).map_err(|_| "not a DNS name".to_string())?;
    ee.verify_is_valid_for_subject_name(&server_name)
        .map_err(|_| format!("its certificate is not {name}'s"))
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
    /// The clients admitted after training that passed [`Self::admit`]
    /// (what tells them without a roster).
    admitted: BTreeSet<ClientId>,
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
        Ok(Self {
            ca,
            roster,
            admitted: BTreeSet::new(),
        })
    }

    /// Admits `members`, the clients the server says joined after
    /// training (issue 29), as `(id, name, certificate DER)` in the order
    /// they joined: a member the roster names already must be named there
    /// as given; each new one must come next (its id the roster's length),
    /// carry a name the roster does not hold, and a certificate of the
    /// federation's authority for client authentication that names it.
    /// Its name then goes on the roster, so that its signed messages check.
    /// Returns the ids the roster gained. Without a roster (no federation
    /// file) each certificate is checked alone.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the first member that fails a check
    /// (the roster is unchanged then).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientId;
    /// use mufc_net::certs::FederationCa;
    /// use mufc_net::endorse::FirstMessages;
    /// use rustls::pki_types::pem::PemObject;
    ///
    /// let ca = FederationCa::new("test")?;
    /// let der = |pem: &str| rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap().to_vec();
    /// let north = der(&ca.issue_client("north")?.cert_pem);
    /// let mut check = FirstMessages::new(ca.cert_pem(), Some(vec!["a".into(), "b".into()]))?;
    /// // Not next on the roster, another name's certificate, another
    /// // authority's certificate, a name on the roster: refused.
    /// assert!(check.admit(&[(ClientId(3), "north".into(), north.clone())]).is_err());
    /// assert!(check.admit(&[(ClientId(2), "south".into(), north.clone())]).is_err());
    /// let forged = der(&FederationCa::new("test")?.issue_client("north")?.cert_pem);
    /// assert!(check.admit(&[(ClientId(2), "north".into(), forged)]).is_err());
    /// let a_again = der(&ca.issue_client("a")?.cert_pem);
    /// assert!(check.admit(&[(ClientId(2), "a".into(), a_again)]).is_err());
    /// assert_eq!(check.roster_len(), Some(2));
    /// assert_eq!(check.admit(&[(ClientId(2), "north".into(), north.clone())])?, [ClientId(2)]);
    /// // Heard again: nothing new.
    /// assert!(check.admit(&[(ClientId(2), "north".into(), north)])?.is_empty());
    /// assert_eq!(check.roster_len(), Some(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn admit(
        &mut self,
        members: &[(ClientId, String, Vec<u8>)],
    ) -> Result<Vec<ClientId>, NetError> {
        let anchor = self.anchor()?;
        let algs = algorithms();
        let now = UnixTime::now();
        let mut roster = self.roster.clone();
        let mut gained = Vec::new();
        for (id, name, cert) in members {
            let refuse = |why: String| {
                NetError::Protocol(format!(
                    "the admission of client {id} ({name}) is refused: {why}"
                ))
            };
            // A client checked before is not checked again (the server
            // sends every admission with every announcement).
            let at = usize::try_from(id.0).unwrap_or(usize::MAX);
            match roster.as_ref().map(|r| r.get(at)) {
                Some(Some(known)) if known == name => continue,
                Some(Some(known)) => return Err(refuse(format!("the roster names {known} there"))),
                Some(None) if roster.as_ref().is_some_and(|r| r.contains(name)) => {
                    return Err(refuse("the roster names it already".into()));
                }
                None if self.admitted.contains(id) => continue,
                _ => {}
            }
            let next = roster.as_ref().map_or(at, Vec::len);
            if at != next {
                return Err(refuse(format!("the next client joins as {next}")));
            }
            let der = CertificateDer::from(cert.as_slice());
            let ee = webpki::EndEntityCert::try_from(&der)
                .map_err(|err| refuse(format!("its certificate does not parse: {err}")))?;
            client_cert(&ee, &anchor, (&algs, now), Some(name)).map_err(refuse)?;
            if let Some(r) = &mut roster {
                r.push(name.clone());
            }
            gained.push(*id);
        }
        self.roster = roster;
        self.admitted.extend(members.iter().map(|(id, _, _)| *id));
        Ok(gained)
    }

    /// Whether client `id` was admitted after training and passed
    /// [`Self::admit`].
    pub fn admitted(&self, id: ClientId) -> bool {
        self.admitted.contains(&id)
    }

    /// The clients admitted after training that passed [`Self::admit`],
    /// in id order.
    pub fn admitted_ids(&self) -> Vec<ClientId> {
        self.admitted.iter().copied().collect()
    }

    /// The authority's certificate as the trust anchor of the checks.
    pub(crate) fn anchor(&self) -> Result<rustls::pki_types::TrustAnchor<'_>, NetError> {
        webpki::anchor_from_trusted_cert(&self.ca).map_err(|e| NetError::Pem {
            what: "the authority's certificate",
            reason: e.to_string(),
        })
    }

    /// The roster's name of client `id` (`None` without a roster, or for
    /// an id beyond it).
    pub(crate) fn name_of(&self, id: ClientId) -> Option<&str> {
        let at = usize::try_from(id.0).ok()?;
        self.roster.as_ref()?.get(at).map(String::as_str)
    }

    /// The number of clients on the roster, the admitted ones included
    /// (`None` without a roster).
    pub fn roster_len(&self) -> Option<usize> {
        self.roster.as_ref().map(Vec::len)
    }

    /// Checks every endorsement and returns the first messages by client.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] naming the first endorsement that fails a
    /// check, or a client endorsed twice.
    pub fn check(&self, endorsed: &[Endorsed]) -> Result<BTreeMap<ClientId, Vec<u8>>, NetError> {
        let anchor = self.anchor()?;
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
            client_cert(&ee, &anchor, (&algs, now), None).map_err(refuse)?;
            match &self.roster {
                Some(roster) => {
                    let name = (usize::try_from(id.0).ok())
                        .and_then(|i| roster.get(i))
                        .ok_or_else(|| refuse("the roster has no such client".into()))?;
                    client_cert(&ee, &anchor, (&algs, now), Some(name)).map_err(refuse)?;
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
