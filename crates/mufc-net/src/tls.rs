//! TLS 1.3 with mutual authentication (rustls, `ring` provider): the
//! server accepts only clients whose certificate its federation's
//! authority issued, the clients only a server the authority issued, and
//! [`authenticate`] ties a connection to the client it claims to be.
//!
//! TLS 1.2 is not offered: every party is ours, and 1.3 alone removes the
//! renegotiation and cipher-suite choices 1.2 brings.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::server::WebPkiClientVerifier;
use rustls::{ClientConfig, RootCertStore, ServerConfig};

use crate::NetError;
use crate::certs::client_dns_name;

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn tls(what: &'static str) -> impl FnOnce(rustls::Error) -> NetError {
    move |e| NetError::Tls {
        what,
        reason: e.to_string(),
    }
}

/// The certificates of a PEM text (at least one).
fn certs(pem: &str, what: &'static str) -> Result<Vec<CertificateDer<'static>>, NetError> {
    let v = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| NetError::Pem {
            what,
            reason: e.to_string(),
        })?;
    if v.is_empty() {
        return Err(NetError::Pem {
            what,
            reason: "no certificate in it".into(),
        });
    }
    Ok(v)
}

fn key(pem: &str) -> Result<PrivateKeyDer<'static>, NetError> {
    PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| NetError::Pem {
        what: "the private key",
        reason: e.to_string(),
    })
}

fn roots(ca_pem: &str) -> Result<Arc<RootCertStore>, NetError> {
    let mut roots = RootCertStore::empty();
    for c in certs(ca_pem, "the authority's certificate")? {
        roots.add(c).map_err(tls("trusting the authority"))?;
    }
    Ok(Arc::new(roots))
}

/// The server's TLS configuration: TLS 1.3 only, its certificate and key,
/// and a client certificate issued by the authority `ca_pem` required
/// from every client (a client without one gets nothing).
///
/// # Errors
///
/// [`NetError::Pem`] for PEM text that does not parse, [`NetError::Tls`]
/// for a key that does not match its certificate or an unusable
/// authority.
///
/// # Example
///
/// ```
/// use mufc_net::certs::FederationCa;
///
/// let ca = FederationCa::new("test")?;
/// let s = ca.issue_server(&["127.0.0.1"])?;
/// let config = mufc_net::tls::server_config(ca.cert_pem(), &s.cert_pem, &s.key_pem)?;
/// assert_eq!(config.alpn_protocols.len(), 0);
/// assert!(mufc_net::tls::server_config(ca.cert_pem(), &s.cert_pem, "no key").is_err());
/// # Ok::<(), mufc_net::NetError>(())
/// ```
pub fn server_config(
    ca_pem: &str,
    cert_pem: &str,
    key_pem: &str,
) -> Result<Arc<ServerConfig>, NetError> {
    let verifier = WebPkiClientVerifier::builder_with_provider(roots(ca_pem)?, provider())
        .build()
        .map_err(|e| NetError::Tls {
            what: "the client verifier",
            reason: e.to_string(),
        })?;
    let config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls("choosing TLS 1.3"))?
        .with_client_cert_verifier(verifier)
        .with_single_cert(certs(cert_pem, "the server's certificate")?, key(key_pem)?)
        .map_err(tls("the server's certificate and key"))?;
    Ok(Arc::new(config))
}

/// A client's TLS configuration: TLS 1.3 only, trusting only the
/// authority `ca_pem`, presenting the client's certificate and key.
///
/// # Errors
///
/// As [`server_config`].
pub fn client_config(
    ca_pem: &str,
    cert_pem: &str,
    key_pem: &str,
) -> Result<Arc<ClientConfig>, NetError> {
    let config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls("choosing TLS 1.3"))?
        .with_root_certificates(roots(ca_pem)?)
        .with_client_auth_cert(certs(cert_pem, "the client's certificate")?, key(key_pem)?)
        .map_err(tls("the client's certificate and key"))?;
    Ok(Arc::new(config))
}

/// What a client connects and signs with: its TLS configuration
/// ([`client_config`]), its certificate's key to sign its first message
/// of every round ([`crate::endorse`]) and the federation's authority to
/// check its peers' signed messages.
#[derive(Clone, Debug)]
pub struct ClientCredentials {
    /// The TLS configuration.
    pub config: Arc<ClientConfig>,
    /// The client's signing key.
    pub endorser: crate::endorse::Endorser,
    /// The authority's certificate, PEM.
    pub ca_pem: String,
}

/// A client's credentials: [`client_config`] with the same certificate
/// and key, and the key as the client's signer.
///
/// # Errors
///
/// As [`client_config`].
///
/// # Example
///
/// ```
/// use mufc_net::certs::FederationCa;
///
/// let ca = FederationCa::new("test")?;
/// let c = ca.issue_client("site-a")?;
/// let creds = mufc_net::tls::client_credentials(ca.cert_pem(), &c.cert_pem, &c.key_pem)?;
/// assert!(creds.endorser.sign(b"keys").is_ok());
/// # Ok::<(), mufc_net::NetError>(())
/// ```
pub fn client_credentials(
    ca_pem: &str,
    cert_pem: &str,
    key_pem: &str,
) -> Result<ClientCredentials, NetError> {
    Ok(ClientCredentials {
        config: client_config(ca_pem, cert_pem, key_pem)?,
        endorser: crate::endorse::Endorser::from_key_pem(key_pem)?,
        ca_pem: ca_pem.to_string(),
    })
}

/// Checks that `peer` (the certificates a client presented on a
/// connection the server's configuration accepted, end entity first, as
/// `rustls::ServerConnection::peer_certificates` gives them) names client
/// `claimed`, and returns the name.
///
/// The handshake already checked that the authority issued the
/// certificate for client authentication; this ties it to one client, so
/// that a client cannot speak for another.
///
/// # Errors
///
/// [`NetError::NotAuthenticated`] with no certificate, or one that does
/// not name `claimed`; [`NetError::BadName`] for a claimed name that is
/// no client name.
pub fn authenticate(
    peer: Option<&[CertificateDer<'_>]>,
    claimed: &str,
) -> Result<String, NetError> {
    let dns = client_dns_name(claimed)?;
    names(peer, claimed, &dns)?;
    Ok(claimed.to_string())
}

/// Checks that the certificate of a session (as for [`authenticate`])
/// names the federation's dealer ([`crate::certs::DEALER_DNS_NAME`]): no
/// client can deal, nor see the server's deal requests.
///
/// # Errors
///
/// [`NetError::NotAuthenticated`] with no certificate, or one that does
/// not name the dealer.
pub fn authenticate_dealer(peer: Option<&[CertificateDer<'_>]>) -> Result<(), NetError> {
    names(peer, "the dealer", crate::certs::DEALER_DNS_NAME)
}

/// Checks that the end-entity certificate of `peer` is valid for the DNS
/// name `dns` (the party `claimed`).
fn names(peer: Option<&[CertificateDer<'_>]>, claimed: &str, dns: &str) -> Result<(), NetError> {
    let refused = |reason: &str| NetError::NotAuthenticated {
        claimed: claimed.to_string(),
        reason: reason.to_string(),
    };
    let cert = peer
        .and_then(<[CertificateDer<'_>]>::first)
        .ok_or_else(|| refused("no client certificate"))?;
    let ee = webpki::EndEntityCert::try_from(cert)
        .map_err(|e| refused(&format!("the certificate does not parse: {e}")))?;
    let name = ServerName::try_from(dns).map_err(|_| refused("not a DNS name"))?;
    ee.verify_is_valid_for_subject_name(&name)
        .map_err(|_| refused("the certificate names another party"))?;
    Ok(())
}
