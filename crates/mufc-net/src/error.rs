//! The errors of the network layer.

/// What went wrong with certificates or TLS.
///
/// # Example
///
/// ```
/// let err = mufc_net::certs::client_dns_name("").unwrap_err();
/// assert!(matches!(err, mufc_net::NetError::BadName { .. }));
/// assert!(err.to_string().contains("name"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
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
}
