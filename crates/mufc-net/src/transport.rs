//! gRPC over our own rustls connections: the server accepts TCP, runs the
//! TLS 1.3 handshake with [`tls::server_config`](crate::tls::server_config)
//! (a client certificate of the federation required) and only then serves
//! the connection (tonic's service, over hyper's HTTP/2); a client dials with
//! [`tls::client_config`](crate::tls::client_config), trusting only the
//! federation's server. A peer without a valid certificate never reaches
//! the service: it gets a failed handshake and nothing else.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};
use tonic::transport::{Channel, Endpoint, Uri};

use crate::NetError;
use crate::certs::SERVER_DNS_NAME;
use crate::proto::federation_client::FederationClient;
use crate::proto::federation_server::{Federation, FederationServer};

/// The longest a TLS handshake may take before the connection is dropped
/// (a peer that opens connections and says nothing holds no resource
/// longer).
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How often each side pings its connection by default (HTTP/2 PING;
/// [`Limits::keepalive`], [`crate::client::ClientOptions::keepalive`]).
/// A link that went down says nothing to TCP: without the pings, a server
/// would keep a cut-off client's session open for as long as it sends
/// nothing on it, and take the client for connected. The party's CPU
/// work runs off the runtime, so a busy party still answers.
pub const KEEPALIVE: Duration = Duration::from_secs(30);
/// How long a ping may go unanswered before the connection is closed,
/// by default: [`keepalive_timeout`] of [`KEEPALIVE`].
pub const KEEPALIVE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a ping sent every `every` may go unanswered before the
/// connection is closed: four intervals (a loaded machine or a slow link
/// is not a dead one).
///
/// ```
/// use mufc_net::transport::{KEEPALIVE, KEEPALIVE_TIMEOUT, keepalive_timeout};
/// assert_eq!(keepalive_timeout(KEEPALIVE), KEEPALIVE_TIMEOUT);
/// ```
pub fn keepalive_timeout(every: Duration) -> Duration {
    every.saturating_mul(4)
}

/// The largest gRPC message either side accepts by default: 16 MiB. A
/// round's largest message is a masked sketch, 2 elements of at most 16
/// bytes per bin of the aggregate: a federation of a thousand clients
/// that each send a hundred centroids needs at most 3.2 MB by this count (an estimate, not a measurement). A larger one
/// raises [`Limits::max_message`] on both sides.
pub const MAX_MESSAGE: usize = 16 << 20;

/// What the server accepts from outside before it holds anything for a
/// peer (issue 28, item 9: 400 idle connections exhausted the server's
/// descriptors and its commits failed; one member's streams of 256 MiB
/// messages took 1.5 GB). Every bound holds before a byte of the
/// protocol is parsed.
///
/// ```
/// let limits = mufc_net::transport::Limits::default();
/// assert_eq!(limits.max_message, 16 << 20);
/// assert!(limits.max_handshakes < limits.max_connections);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest gRPC message accepted ([`MAX_MESSAGE`]).
    pub max_message: usize,
    /// Connections in their TLS handshake at once: a connection beyond
    /// it is closed as soon as it is accepted (each handshake is also
    /// bounded by [`HANDSHAKE_TIMEOUT`]).
    pub max_handshakes: usize,
    /// Connections open at once, handshakes included: beyond it a new
    /// connection is closed as soon as it is accepted.
    pub max_connections: usize,
    /// HTTP/2 streams one connection may open at once (a client needs
    /// one: its session).
    pub max_streams: u32,
    /// How often the server pings each connection ([`KEEPALIVE`]); one
    /// whose ping goes unanswered for [`keepalive_timeout`] is closed, and
    /// its client's session with it. Zero: no pings.
    pub keepalive: Duration,
}

impl Default for Limits {
    /// 16 MiB messages, 32 handshakes, 256 connections, 4 streams per
    /// connection, a ping every 30 s.
    fn default() -> Self {
        Self {
            max_message: MAX_MESSAGE,
            max_handshakes: 32,
            max_connections: 256,
            max_streams: 4,
            keepalive: KEEPALIVE,
        }
    }
}

/// The certificates a client presented on its connection, as the server
/// puts them in the extensions of each of its requests.
#[derive(Clone, Debug)]
pub struct PeerCertificates(pub Arc<Vec<CertificateDer<'static>>>);

/// The certificates the client presented on the connection of `request`.
pub fn peer_certificates<T>(
    request: &tonic::Request<T>,
) -> Option<Arc<Vec<CertificateDer<'static>>>> {
    request
        .extensions()
        .get::<PeerCertificates>()
        .map(|p| p.0.clone())
}

/// Serves `service` on `listener` until `shutdown` completes: every
/// connection is a TLS 1.3 connection of `tls` (handshakes run
/// concurrently, each bounded by [`HANDSHAKE_TIMEOUT`]), served with
/// HTTP/2 by hyper; the client's certificates go with each request
/// ([`peer_certificates`]). Connections beyond `limits` are closed as
/// soon as they are accepted. Open connections are closed at shutdown. A
/// failed accept (out of descriptors) is retried: serving stops only at
/// shutdown.
pub async fn serve<S: Federation>(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    service: S,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send,
) {
    let acceptor = TlsAcceptor::from(tls);
    let svc = FederationServer::new(service)
        .max_decoding_message_size(limits.max_message)
        .max_encoding_message_size(limits.max_message);
    let handshakes = Arc::new(tokio::sync::Semaphore::new(limits.max_handshakes));
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            a = listener.accept() => a,
            // Reap finished connections as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
        };
        let Ok((tcp, _)) = accepted else {
            // Out of descriptors or similar: back off, keep serving.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // Over a bound, the connection closes at once (dropped): a peer
        // that opens many and says nothing holds at most the bounds.
        let Ok(handshake) = handshakes.clone().try_acquire_owned() else {
            continue;
        };
        if connections.len() >= limits.max_connections {
            continue;
        }
        let acceptor = acceptor.clone();
        let svc = svc.clone();
        connections.spawn(async move {
            let handshaken = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await;
            drop(handshake);
            let Ok(Ok(stream)) = handshaken else {
                // No valid certificate (or no handshake in time): the peer
                // gets nothing.
                return;
            };
            let certs = stream.get_ref().1.peer_certificates().map(|c| {
                PeerCertificates(Arc::new(c.iter().map(|c| c.clone().into_owned()).collect()))
            });
            let svc = tower::ServiceExt::map_request(
                svc,
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    if let Some(c) = &certs {
                        req.extensions_mut().insert(c.clone());
                    }
                    req
                },
            );
            let mut http =
                hyper_util::server::conn::auto::Builder::new(TokioExecutor::new()).http2_only();
            http.http2()
                .max_concurrent_streams(limits.max_streams)
                // Headers are a method, a path and a few metadata: 16
                // KiB is plenty, and the default (16 MiB) is not a bound.
                .max_header_list_size(16 << 10)
                .max_pending_accept_reset_streams(Some(limits.max_streams as usize))
                .timer(TokioTimer::new())
                // Zero: no pings (a zero interval would ping without end).
                .keep_alive_interval(Some(limits.keepalive).filter(|d| !d.is_zero()))
                .keep_alive_timeout(keepalive_timeout(limits.keepalive));
            let _ = http
                .serve_connection(TokioIo::new(stream), TowerToHyperService::new(svc))
                .await;
        });
    }
    connections.abort_all();
}

/// The bytes connections carried, counted on their TCP streams: TLS
/// records and HTTP/2 frames included, what a network sees.
#[derive(Debug, Default)]
pub struct Traffic {
    sent: AtomicU64,
    received: AtomicU64,
}

impl Traffic {
    /// Bytes sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    /// Bytes received so far.
    pub fn received(&self) -> u64 {
        self.received.load(Ordering::Relaxed)
    }
}

/// A stream that adds what it carries to a [`Traffic`].
struct Counted<T> {
    inner: T,
    traffic: Arc<Traffic>,
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        let n = buf.filled().len().saturating_sub(before);
        self.traffic.received.fetch_add(n as u64, Ordering::Relaxed);
        r
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &r {
            self.traffic.sent.fetch_add(*n as u64, Ordering::Relaxed);
        }
        r
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Connects to the federation's server at `addr` (`host:port`) over TLS
/// 1.3 with `tls`, checking that the server's certificate names
/// [`SERVER_DNS_NAME`] under the federation's authority.
///
/// # Errors
///
/// [`NetError::Transport`] when the connection or the handshake fails.
pub async fn connect(
    addr: &str,
    tls: Arc<rustls::ClientConfig>,
) -> Result<FederationClient<Channel>, NetError> {
    connect_counted(
        addr,
        tls,
        Arc::new(Traffic::default()),
        MAX_MESSAGE,
        KEEPALIVE,
    )
    .await
}

/// [`connect`], adding the connection's bytes to `traffic`, accepting
/// and sending messages of at most `max_message` bytes, pinging the
/// server every `keepalive` (the connection closed if a ping goes
/// unanswered for [`keepalive_timeout`]).
///
/// # Errors
///
/// As [`connect`].
pub async fn connect_counted(
    addr: &str,
    tls: Arc<rustls::ClientConfig>,
    traffic: Arc<Traffic>,
    max_message: usize,
    keepalive: Duration,
) -> Result<FederationClient<Channel>, NetError> {
    let connector = TlsConnector::from(tls);
    let target = addr.to_string();
    let mut endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .map_err(|e| NetError::Transport(format!("{addr}: {e}")))?
        .connect_timeout(HANDSHAKE_TIMEOUT);
    // Zero: no pings (a zero interval would ping without end).
    if !keepalive.is_zero() {
        endpoint = endpoint
            .http2_keep_alive_interval(keepalive)
            .keep_alive_timeout(keepalive_timeout(keepalive));
    }
    let channel = endpoint
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let connector = connector.clone();
            let target = target.clone();
            let traffic = traffic.clone();
            async move {
                let tcp = TcpStream::connect(&target).await?;
                tcp.set_nodelay(true)?;
                let tcp = Counted {
                    inner: tcp,
                    traffic,
                };
                let name = ServerName::try_from(SERVER_DNS_NAME)
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                let stream = connector.connect(name, tcp).await?;
                Ok::<_, std::io::Error>(TokioIo::new(stream))
            }
        }))
        .await
        .map_err(|e| match permanent_tls_failure(&e) {
            Some(reason) => NetError::HandshakeRefused {
                peer: addr.to_string(),
                reason,
            },
            None => NetError::Transport(format!("connecting to {addr}: {e}")),
        })?;
    Ok(FederationClient::new(channel)
        .max_decoding_message_size(max_message)
        .max_encoding_message_size(max_message))
}

/// The alerts of [`permanent_tls_failure`], as rustls names them.
const PERMANENT_ALERTS: [&str; 10] = [
    "BadCertificate",
    "UnsupportedCertificate",
    "CertificateRevoked",
    "CertificateExpired",
    "CertificateUnknown",
    "UnknownCA",
    "AccessDenied",
    "CertificateRequired",
    "HandshakeFailure",
    "ProtocolVersion",
];

/// Why a TLS handshake failed for good, if `e` or anything that caused it
/// is such a failure: the peer's certificate did not verify, or the peer
/// refused ours with a certificate alert. A broken or slow connection is
/// not one (retrying may help).
pub(crate) fn permanent_tls_failure(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut cause = Some(e);
    while let Some(err) = cause {
        // An I/O error reports its inner error's source, not the inner
        // error itself: look inside.
        let tls = err.downcast_ref::<rustls::Error>().or_else(|| {
            err.downcast_ref::<std::io::Error>()
                .and_then(std::io::Error::get_ref)
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        });
        let permanent = tls.filter(|t| {
            matches!(
                t,
                rustls::Error::InvalidCertificate(_)
                    | rustls::Error::NoCertificatesPresented
                    | rustls::Error::PeerIncompatible(_)
            ) || matches!(t, rustls::Error::AlertReceived(a)
                if PERMANENT_ALERTS.contains(&format!("{a:?}").as_str()))
        });
        if let Some(t) = permanent {
            return Some(t.to_string());
        }
        // HTTP/2 (h2) keeps of an I/O error only its kind and message: a
        // refusal that arrives on the stream (TLS 1.3 tells a client its
        // certificate was refused on its first read) is rustls's text.
        if let Some(io) = err.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::InvalidData
        {
            let text = io.to_string();
            if let Some(alert) = text.strip_prefix("received fatal alert: ")
                && PERMANENT_ALERTS.contains(&alert)
            {
                return Some(text);
            }
        }
        cause = err.source();
    }
    None
}

/// Whether a session's error ends a client or the dealer (retrying
/// cannot help).
pub(crate) fn fatal(e: &NetError) -> bool {
    !matches!(e, NetError::Transport(_))
}

pub(crate) fn status_error(s: &tonic::Status) -> NetError {
    // TLS 1.3: a party learns that the server refused its certificate
    // only on its first read, as a broken stream.
    if let Some(reason) = permanent_tls_failure(s) {
        return NetError::HandshakeRefused {
            peer: "the server".into(),
            reason,
        };
    }
    match s.code() {
        tonic::Code::Unavailable
        | tonic::Code::Unknown
        | tonic::Code::Cancelled
        | tonic::Code::DeadlineExceeded => NetError::Transport(s.message().to_string()),
        _ => NetError::Protocol(format!("the server refused the session: {}", s.message())),
    }
}
