//! The gRPC service: authenticates each session and turns its stream into
//! events for the coordinator, which alone holds the federation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mufc::ClientId;
use mufc::remote::Registration;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::stores::ClientStores;
use super::{Event, ServerEvent};
use crate::proto::client_message::Body as ClientBody;
use crate::proto::dealer_message::Body as DealerBody;
use crate::proto::federation_server::Federation;
use crate::proto::{ClientMessage, DealRequest, DealerMessage, ServerMessage};
use crate::revocation::{Fingerprint, Watched, fingerprint};
use crate::tls::{authenticate, authenticate_dealer};
use crate::transport::peer_certificates;

/// The protocol version of [`crate::proto::Hello`].
pub const PROTOCOL_VERSION: u32 = 1;

/// The messages waiting for one client before it counts as stuck (the
/// coordinator never waits for a slow reader).
pub(super) const OUTBOX: usize = 64;

/// The service.
pub(super) struct Handler {
    pub(super) roster: Arc<Vec<String>>,
    pub(super) events: mpsc::Sender<Event>,
    pub(super) report: mpsc::UnboundedSender<ServerEvent>,
    pub(super) next_conn: AtomicU64,
    pub(super) hello_timeout: Duration,
    /// The store each client spoke from (see `stores.rs`).
    pub(super) stores: Arc<std::sync::Mutex<ClientStores>>,
    /// The revocation list (shared with the coordinator).
    pub(super) revoked: Arc<std::sync::Mutex<Watched>>,
    /// Whether a name not on the roster may join
    /// ([`super::ServerOptions::admit_new_clients`]).
    pub(super) admit_new: bool,
}

/// The most coordinates a point may have across processes: far beyond
/// any data set clustered here, and small enough that no bound derived
/// from it overflows.
pub const MAX_DIM: u64 = 1 << 20;

/// Checks what a Hello says about itself, before anything is looked up:
/// the protocol version, a client name, a dimension in `1..=`[`MAX_DIM`],
/// a store identity of 32 bytes. The server runs it on every session's
/// first message; the fuzz target `net_client_message` runs it on any
/// bytes.
///
/// # Errors
///
/// The status the session is refused with.
///
/// # Example
///
/// ```
/// use mufc_net::proto::Hello;
/// use mufc_net::server::check_hello;
///
/// let hello = Hello { protocol: 1, name: "a".into(), points: 10, dim: 2, scale: 1, store: vec![0; 32] };
/// assert!(check_hello(&hello).is_ok());
/// assert!(check_hello(&Hello { dim: 0, ..hello.clone() }).is_err());
/// assert!(check_hello(&Hello { store: vec![], ..hello }).is_err());
/// ```
pub fn check_hello(hello: &crate::proto::Hello) -> Result<(), Status> {
    if hello.protocol != PROTOCOL_VERSION {
        return Err(Status::failed_precondition(format!(
            "protocol version {} (this server speaks {PROTOCOL_VERSION})",
            hello.protocol
        )));
    }
    crate::certs::client_dns_name(&hello.name)
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    if !(1..=MAX_DIM).contains(&hello.dim) {
        return Err(Status::invalid_argument(format!(
            "dimension {} out of range (1 to {MAX_DIM})",
            hello.dim
        )));
    }
    if hello.store.len() != 32 {
        return Err(Status::failed_precondition(format!(
            "client {} sent no store identity ({} bytes); a client of this version sends \
             the 32 bytes of its store's",
            hello.name,
            hello.store.len()
        )));
    }
    Ok(())
}

impl Handler {
    /// The fingerprint of a session's end-entity certificate (party
    /// `who`), unless the revocation list names it (or cannot be read:
    /// fail closed).
    fn not_revoked(
        &self,
        certs: Option<&[rustls::pki_types::CertificateDer<'static>]>,
        who: &str,
    ) -> Result<Fingerprint, Status> {
        let fp = fingerprint(certs.and_then(<[_]>::first).map_or(&[][..], |c| c.as_ref()));
        let revoked = self
            .revoked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .check(&fp)
            .map_err(|e| {
                Status::unavailable(format!("the server cannot check revocations: {e}"))
            })?;
        if revoked {
            return Err(Status::permission_denied(format!(
                "the certificate of {who} is revoked"
            )));
        }
        Ok(fp)
    }

    /// The client a session's Hello and certificates name, or why not;
    /// with its name when it is not on the roster the server started with
    /// (with [`super::ServerOptions::admit_new_clients`]).
    fn identify(
        &self,
        certs: Option<&[rustls::pki_types::CertificateDer<'static>]>,
        first: Option<ClientMessage>,
    ) -> Result<(Registration, Fingerprint, Vec<u8>, Option<String>), Status> {
        let Some(ClientMessage {
            body: Some(ClientBody::Hello(hello)),
        }) = first
        else {
            return Err(Status::invalid_argument("the first message must be Hello"));
        };
        check_hello(&hello)?;
        let name =
            authenticate(certs, &hello.name).map_err(|e| Status::unauthenticated(e.to_string()))?;
        // `authenticate` found the end-entity certificate.
        let fp = self.not_revoked(certs, &name)?;
        // A name not on the roster the server started with may be one
        // admitted since, or one asking to join: the coordinator decides.
        let pos = self.roster.iter().position(|n| *n == name);
        if pos.is_none() && !self.admit_new {
            return Err(Status::permission_denied(format!(
                "{name} is not in the roster"
            )));
        }
        // A new store under an old name would bring forgotten records
        // back. The file is written under the lock: a first session is
        // kept before it is welcomed.
        // `check_hello` took only 32 bytes.
        let identity = (hello.store.as_slice().try_into())
            .map_err(|_| Status::invalid_argument("a store identity is 32 bytes"))?;
        self.stores
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .admit(&name, identity)
            .map_err(Status::failed_precondition)?;
        let registration = Registration {
            // Named by the coordinator for a name not on the roster.
            id: ClientId(pos.map_or(u64::MAX, |p| p as u64)),
            points: hello.points,
            dim: usize::try_from(hello.dim).unwrap_or(usize::MAX),
            scale: hello.scale.max(1),
        };
        let certificate = certs
            .and_then(<[_]>::first)
            .map_or_else(Vec::new, |c| c.as_ref().to_vec());
        let joining = pos.is_none().then_some(name);
        Ok((registration, fp, certificate, joining))
    }

    /// The id the coordinator gives client `name`, not on the roster the
    /// server started with: its own if it was admitted since, a new one if
    /// it joins now, or why not (its store's record is released then:
    /// nothing of it is in a model).
    async fn admitted(
        &self,
        name: String,
        registration: Registration,
        certificate: Vec<u8>,
    ) -> Result<ClientId, Status> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let asked = Event::Joining {
            name: name.clone(),
            registration,
            certificate,
            reply,
        };
        let stopping = || Status::unavailable("the server is stopping");
        self.events.send(asked).await.map_err(|_| stopping())?;
        let answer = answer.await.map_err(|_| stopping())?;
        // Refused for good, not only until the round running ends.
        if answer
            .as_ref()
            .is_err_and(|s| s.code() != tonic::Code::Unavailable)
        {
            let _ = self
                .stores
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .release(&name);
        }
        answer
    }
}

impl Handler {
    /// Checks the dealer's session: a certificate naming the dealer, not
    /// revoked, and a DealerHello of this protocol first.
    async fn admit_dealer(
        &self,
        certs: Option<&[rustls::pki_types::CertificateDer<'static>]>,
        inbound: &mut Streaming<DealerMessage>,
    ) -> Result<Fingerprint, Status> {
        authenticate_dealer(certs).map_err(|e| Status::unauthenticated(e.to_string()))?;
        let fp = self.not_revoked(certs, "the dealer")?;
        let first = match tokio::time::timeout(self.hello_timeout, inbound.message()).await {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(Status::deadline_exceeded("no DealerHello in time")),
        };
        match first.and_then(|m| m.body) {
            Some(DealerBody::Hello(h)) if h.protocol == PROTOCOL_VERSION => Ok(fp),
            Some(DealerBody::Hello(h)) => Err(Status::failed_precondition(format!(
                "protocol version {} (this server speaks {PROTOCOL_VERSION})",
                h.protocol
            ))),
            _ => Err(Status::invalid_argument(
                "the dealer's first message must be DealerHello",
            )),
        }
    }
}

#[tonic::async_trait]
impl Federation for Handler {
    type JoinStream = ReceiverStream<Result<ServerMessage, Status>>;
    type DealStream = ReceiverStream<Result<DealRequest, Status>>;

    /// The dealer's session (dealt masks): authenticated as the dealer,
    /// then every answer it sends goes to the coordinator, which sends
    /// it the deal requests.
    async fn deal(
        &self,
        request: Request<Streaming<DealerMessage>>,
    ) -> Result<Response<Self::DealStream>, Status> {
        let certs = peer_certificates(&request);
        let mut inbound = request.into_inner();
        let fingerprint = match self
            .admit_dealer(certs.as_deref().map(Vec::as_slice), &mut inbound)
            .await
        {
            Ok(fp) => fp,
            Err(status) => {
                let _ = self.report.send(ServerEvent::Refused {
                    reason: format!("the dealer: {}", status.message()),
                });
                return Err(status);
            }
        };
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(OUTBOX);
        self.events
            .send(Event::DealerConnected {
                conn,
                fingerprint,
                outbox: tx,
            })
            .await
            .map_err(|_| Status::unavailable("the server is stopping"))?;
        let events = self.events.clone();
        tokio::spawn(async move {
            while let Ok(Some(msg)) = inbound.message().await {
                if let Some(DealerBody::Answer(answer)) = msg.body
                    && events.send(Event::Dealt { conn, answer }).await.is_err()
                {
                    return;
                }
            }
            let _ = events.send(Event::DealerGone { conn }).await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn join(
        &self,
        request: Request<Streaming<ClientMessage>>,
    ) -> Result<Response<Self::JoinStream>, Status> {
        let certs = peer_certificates(&request);
        let mut inbound = request.into_inner();
        let first = match tokio::time::timeout(self.hello_timeout, inbound.message()).await {
            Ok(Ok(m)) => m,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(Status::deadline_exceeded("no Hello in time")),
        };
        let identified = match self.identify(certs.as_deref().map(Vec::as_slice), first) {
            Ok((mut registration, fp, certificate, Some(name))) => self
                .admitted(name, registration, certificate.clone())
                .await
                .map(|id| {
                    registration.id = id;
                    (registration, fp, certificate)
                }),
            Ok((registration, fp, certificate, None)) => Ok((registration, fp, certificate)),
            Err(status) => Err(status),
        };
        let (registration, fingerprint, certificate) = match identified {
            Ok(r) => r,
            Err(status) => {
                let _ = self.report.send(ServerEvent::Refused {
                    reason: status.message().to_string(),
                });
                return Err(status);
            }
        };
        let id = registration.id;
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(OUTBOX);
        self.events
            .send(Event::Connected {
                conn,
                fingerprint,
                certificate,
                registration,
                outbox: tx,
            })
            .await
            .map_err(|_| Status::unavailable("the server is stopping"))?;
        let events = self.events.clone();
        tokio::spawn(async move {
            // A stream error (garbage frames, a reset) ends the session
            // like a clean close: the coordinator sees the client gone.
            while let Ok(Some(msg)) = inbound.message().await {
                let Some(body) = msg.body else { continue };
                if events
                    .send(Event::Message { id, conn, body })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = events.send(Event::Gone { id, conn }).await;
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
