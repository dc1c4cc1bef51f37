//! Clients that leave (issue 29, `mufc client leave`): once its whole
//! removal's round committed, a client sends its signed leave; the server
//! checks the signature against the certificate the client authenticated
//! with, notes the leave ([`RemoteServer::leave`](mufc::remote::RemoteServer::leave)),
//! writes it to its store with the proof, closes the session, and sends
//! every announcement after it with the departures, so that each member
//! checks them before it runs a ring without the leaver. A leave heard
//! during a round is taken once the round ended (the round's sum may
//! still name the client).

use mufc::ClientId;
use mufc_store::DepartedClient;
use prost::Message;

use super::Coordinator;
use crate::proto::{Departed, Departures, Signed};
use crate::server::ServerEvent;

impl Coordinator {
    /// Client `id`'s leave `signed`, heard on its session `conn`: taken
    /// now, or refused (said as a rejection; the session stays open).
    pub(super) fn leaving(&mut self, id: ClientId, conn: u64, signed: &Signed) {
        let Some(session) = self.sessions.get(&id).filter(|s| s.conn == conn) else {
            return;
        };
        let certificate = session.certificate.clone();
        if let Err(reason) = self.note_leave(id, &certificate, signed) {
            let reason = format!("its leave is refused: {reason}");
            let _ = self.report.send(ServerEvent::Rejected { id, reason });
            return;
        }
        // Closing the outbox ends the session: the client knows it left.
        self.sessions.remove(&id);
        let name = self.name_of(id);
        let _ = self.report.send(ServerEvent::Left { id, name });
    }

    /// Checks client `id`'s leave against its `certificate`, and writes it
    /// to the store with the server's state once the server noted it.
    fn note_leave(
        &mut self,
        id: ClientId,
        certificate: &[u8],
        signed: &Signed,
    ) -> Result<(), String> {
        crate::departure::verify_leave(certificate, id, signed)?;
        if self.departed.iter().any(|d| d.id == id) {
            return Ok(());
        }
        // The client signs only after its whole removal's round committed:
        // its last input in the sum is empty (the server sees sums only,
        // and takes its word for it).
        let remote = self
            .remote
            .as_ref()
            .ok_or("the federation is not trained")?;
        let mut after = remote.clone();
        after.leave(&[id]).map_err(|e| e.to_string())?;
        let snapshot = after.snapshot().map_err(|e| e.to_string())?;
        let departed = DepartedClient {
            id,
            certificate: certificate.to_vec(),
            leave: signed.encode_to_vec(),
            time: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        let store = self.store.as_mut().ok_or("the server has no store yet")?;
        store
            .leave_serving(snapshot, departed.clone())
            .map_err(|e| e.to_string())?;
        self.remote = Some(after);
        self.departed.push(departed);
        Ok(())
    }

    /// The clients that left.
    pub(super) fn departed_ids(&self) -> Vec<ClientId> {
        self.departed.iter().map(|d| d.id).collect()
    }

    /// Every client that left with its signed leave and certificate, for
    /// the members to check before they run a ring without it.
    pub(super) fn departures(&self) -> Option<Departures> {
        (!self.departed.is_empty()).then(|| Departures {
            members: (self.departed.iter())
                .map(|d| Departed {
                    client_id: d.id.0,
                    leave: Signed::decode(d.leave.as_slice()).ok(),
                    certificate: d.certificate.clone(),
                })
                .collect(),
        })
    }

    /// Takes the leaves heard during the round that just ended.
    pub(super) fn take_deferred_leaves(&mut self) {
        for (id, conn, signed) in std::mem::take(&mut self.deferred_leaves) {
            self.leaving(id, conn, &signed);
        }
    }
}
