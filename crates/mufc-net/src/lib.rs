//! The MUFC federation across processes (issue 15, first part): a
//! federation's certificates and TLS 1.3 with mutual authentication.
//!
//! - [`certs`]: one certificate authority per federation (rcgen), which
//!   issues the server's certificate and one per client; a client's
//!   identity is the DNS name `<name>.client.mufc` in its certificate.
//! - [`tls`]: the rustls configurations of the server (a client
//!   certificate of the federation's authority required) and of the
//!   clients (only the federation's server trusted), TLS 1.3 only, and
//!   [`tls::authenticate`], which ties a connection to the client it
//!   claims to be.
//!
//! The rounds over the network (the server and client processes, their
//! stores, deadlines) are not here yet: see the crate README.
//!
//! # Example
//!
//! ```
//! use mufc_net::certs::FederationCa;
//!
//! let ca = FederationCa::new("three-hospitals")?;
//! let server = ca.issue_server(&["127.0.0.1"])?;
//! let client = ca.issue_client("hospital-a")?;
//! let _server_config = mufc_net::tls::server_config(ca.cert_pem(), &server.cert_pem, &server.key_pem)?;
//! let _client_config = mufc_net::tls::client_config(ca.cert_pem(), &client.cert_pem, &client.key_pem)?;
//! # Ok::<(), mufc_net::NetError>(())
//! ```

pub mod certs;
mod error;
pub mod tls;

pub use error::NetError;
