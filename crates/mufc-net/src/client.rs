//! The client process: holds its own points and seeding state in its
//! store ([`ClientStore`](crate::client_store::ClientStore)), joins the rounds the server announces
//! ([`mufc::remote::RemoteClient`]), and serves its operator's removal
//! requests: it applies each at once, connected or not (the points leave
//! its store in the same transaction), asks the server for a round, and
//! acknowledges the request once a round that included it committed. A
//! lost connection is retried; nothing the client stored is lost with it.
//! Every Hello carries the identity of the client's store, so that a
//! server admits the client only from the store it first spoke from (a
//! store imported again would bring forgotten records back). On its
//! first start the client has no store: it holds its records in memory
//! and writes its store once a server welcomed it
//! ([`ClientOptions::first_start`]).
//!
//! The parts: what the client starts with and reports (`options.rs`),
//! its operator's requests (`requests.rs`), one session with the server
//! (`session.rs`), and its store before and after the welcome
//! (`holding.rs`); this file runs the sessions one after another.

mod holding;
mod options;
mod requests;
mod session;

use mufc::remote::RemoteClient;
use tokio::sync::{mpsc, oneshot};

use crate::NetError;
use crate::running::Running;
use holding::Holding;
use requests::apply_requests;
use session::session;

pub use options::{ClientEvent, ClientOptions};

/// A running client.
#[derive(Debug)]
pub struct ClientHandle {
    events: mpsc::UnboundedReceiver<ClientEvent>,
    running: Running,
}

impl ClientHandle {
    /// The next event (`None` once the client stopped).
    pub async fn next_event(&mut self) -> Option<ClientEvent> {
        self.events.recv().await
    }

    /// Stops the client and waits for it.
    ///
    /// # Errors
    ///
    /// The error the client stopped on, if any.
    pub async fn stop(self) -> Result<(), NetError> {
        self.running.stop().await
    }
}

/// Starts the client with its credentials `creds`
/// ([`crate::tls::client_credentials`]).
///
/// # Errors
///
/// [`NetError::ClientStore`] if the store does not open or is another
/// client's, if there is none and no first start, or if the first
/// start's points lie outside the model's box.
pub fn start_client(
    options: ClientOptions,
    creds: crate::tls::ClientCredentials,
) -> Result<ClientHandle, NetError> {
    let store = Holding::open(&options.store, options.first_start.as_ref())?;
    if let Some(s) = store.store()
        && s.left()?
    {
        return Err(NetError::ClientStore {
            path: options.store,
            reason: "this client left the federation (mufc client leave): it holds no point \
                     and takes part in no round again"
                .into(),
        });
    }
    let mut firsts = crate::endorse::FirstMessages::new(&creds.ca_pem, options.roster.clone())?;
    // The clients admitted since training that this client checked: its
    // federation file's roster may not name them (issue 29).
    if let Some(stored) = store.store() {
        firsts.admit(&stored.admitted()?)?;
    }
    let (report, events) = mpsc::unbounded_channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel();
    let task = tokio::spawn(run(options, creds, firsts, store, report, shutdown_rx));
    Ok(ClientHandle {
        events,
        running: Running::new("client", shutdown_tx, task),
    })
}

async fn run(
    options: ClientOptions,
    creds: crate::tls::ClientCredentials,
    mut firsts: crate::endorse::FirstMessages,
    mut store: Holding,
    report: mpsc::UnboundedSender<ClientEvent>,
    mut shutdown: oneshot::Receiver<()>,
) -> Result<(), NetError> {
    // The client's state outlives its sessions: loaded (and retrained)
    // from the store once, kept in step with it by every change.
    let mut party: Option<RemoteClient> = None;
    // Exponential backoff (issue 28, item 11): a server that is down for
    // long is not asked once a second for ever.
    let mut wait = options.reconnect;
    loop {
        let mut welcomed = false;
        let outcome = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = session(&options, &creds, &mut firsts, &mut store, &report, &mut party, &mut welcomed) => r,
        };
        if welcomed {
            wait = options.reconnect;
        }
        if store.store().is_some_and(|s| s.left().unwrap_or(false)) {
            let _ = report.send(ClientEvent::Left);
            return Ok(());
        }
        let reason = match outcome {
            Ok(()) => "the server closed the session".to_string(),
            Err(e) if crate::transport::fatal(&e) => {
                // A leaving client whose leave the server took before the
                // client could note it (it stopped in between) is refused
                // as one that left: it notes it now.
                if let Some(s) = store.store()
                    && s.leaving()?
                    && e.to_string().contains(crate::server::LEFT_REFUSAL)
                {
                    s.set_left()?;
                    let _ = report.send(ClientEvent::Left);
                    return Ok(());
                }
                // Refused before any welcome: a first start leaves no file.
                store.refused();
                return Err(e);
            }
            Err(e) => e.to_string(),
        };
        let _ = report.send(ClientEvent::Disconnected { reason });
        // Erasure does not wait for the server (issue 28, item 3): while
        // the client is between sessions, the operator's requests are
        // still applied at once, and the server hears of them at the next
        // welcome, as of every request not yet acknowledged.
        let reconnect = tokio::time::sleep(wait);
        wait = wait
            .saturating_mul(2)
            .min(options.max_reconnect.max(options.reconnect));
        tokio::pin!(reconnect);
        let mut poll = tokio::time::interval(options.poll);
        loop {
            tokio::select! {
                _ = &mut shutdown => return Ok(()),
                () = &mut reconnect => break,
                _ = poll.tick() => {
                    if let Some(store) = store.store() {
                        apply_requests(store, &report, &mut party, options.dealer.as_ref()).await?;
                    }
                }
            }
        }
    }
}
