//! The errors of the network layer.

use std::path::PathBuf;

/// What went wrong with certificates, TLS, the connection, a store or a
/// round.
///
/// # Example
///
/// ```
/// let err = mufc_net::certs::client_dns_name("").unwrap_err();
/// assert!(matches!(err, mufc_net::NetError::BadName { .. }));
/// assert!(err.to_string().contains("name"));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum NetError {
    /// A federation, client or host name that cannot be used.
    #[error("{name:?} cannot be used as a name: {reason}")]
    BadName {
        /// The name given.
        name: String,
        /// Why not.
        reason: &'static str,
    },
    /// Generating or signing a certificate failed.
    #[error("{what}: {reason}")]
    Certificate {
        /// What was being done.
        what: &'static str,
        /// rcgen's message.
        reason: String,
    },
    /// PEM text that does not parse or holds nothing usable.
    #[error("{what} is not usable PEM: {reason}")]
    Pem {
        /// What the text was meant to be.
        what: &'static str,
        /// Why not.
        reason: String,
    },
    /// rustls refused a configuration.
    #[error("TLS, {what}: {reason}")]
    Tls {
        /// What was being configured.
        what: &'static str,
        /// rustls's message.
        reason: String,
    },
    /// A connection's certificate does not name the client it claims to
    /// be (or there is none).
    #[error("client {claimed:?} not authenticated: {reason}")]
    NotAuthenticated {
        /// The client named.
        claimed: String,
        /// Why not.
        reason: String,
    },
    /// The connection failed or broke (the server is down, a timeout,
    /// ...): retrying may help.
    #[error("transport: {0}")]
    Transport(String),
    /// The TLS handshake failed for good: the peer's certificate is not
    /// of the federation's authority, or the peer refused ours (another
    /// federation's, expired, not a client's). Retrying cannot help, so a
    /// client stops with this rather than retry for ever.
    #[error("the TLS handshake with {peer} failed: {reason}; check the certificates")]
    HandshakeRefused {
        /// The peer's address.
        peer: String,
        /// rustls's reason.
        reason: String,
    },
    /// The peer broke the protocol or refused us (a message out of order,
    /// an unknown client, a refused registration).
    #[error("protocol: {0}")]
    Protocol(String),
    /// An error of the federation (configuration, training, a round).
    #[error(transparent)]
    Mufc(#[from] mufc::MufcError),
    /// An error of the server's store (its message: a store error holds
    /// I/O errors, which cannot be cloned).
    #[error("server store: {0}")]
    Store(String),
    /// An error of a client's store.
    #[error("client store {path}: {reason}")]
    ClientStore {
        /// The store's file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl From<mufc_store::StoreError> for NetError {
    fn from(e: mufc_store::StoreError) -> Self {
        match e {
            mufc_store::StoreError::Mufc(m) => Self::Mufc(m),
            other => Self::Store(other.to_string()),
        }
    }
}
