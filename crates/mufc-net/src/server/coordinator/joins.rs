//! Clients that join the trained federation (issue 29, with
//! [`ServerOptions::admit_new_clients`](crate::server::ServerOptions)):
//! a name not on the roster, authenticated by a certificate of the
//! federation's authority, is admitted at the end of the roster (with
//! groups, into the group with the fewest clients holding points); the
//! admission is in the store before the client is welcomed, and every
//! announcement after it carries the admitted clients' certificates, which
//! each member checks before it takes the setup that admits them.

use std::collections::BTreeSet;

use mufc::ClientId;
use mufc::remote::Registration;
use mufc_store::AdmittedClient;
use tokio::time::Instant;
use tonic::Status;

use super::{Coordinator, Queued};
use crate::proto::{Admission, Member};
use crate::server::ServerEvent;

impl Coordinator {
    /// The id of client `name`, not on the roster the server started
    /// with: its own if it was admitted before (a session again), else a
    /// new one at the end of the roster once every check passed and the
    /// store holds it. Its first round then waits as a request does (the
    /// lone-update policy: that round would show the server its whole
    /// histogram).
    ///
    /// # Errors
    ///
    /// The status the session is refused with: unavailable while a round
    /// runs (the client comes back), failed precondition for a federation
    /// not trained, for a registration outside
    /// the agreement, of another dimension, of no point or past the bound
    /// on points; internal if the store cannot write it.
    pub(super) fn joining(
        &mut self,
        name: &str,
        registration: &Registration,
        certificate: Vec<u8>,
    ) -> Result<ClientId, Status> {
        if let Some(pos) = self.roster.iter().position(|n| n == name) {
            return Ok(ClientId(pos as u64));
        }
        let refuse =
            |why: String| Status::failed_precondition(format!("{name} cannot join: {why}"));
        let id = ClientId(self.roster.len() as u64);
        let remote = self
            .remote
            .as_ref()
            .filter(|r| r.is_trained())
            .ok_or_else(|| {
                Status::unavailable(format!(
                    "{name} is not on the roster, and a client joins only a trained federation"
                ))
            })?;
        if let Some(w) = remote.withdrawal() {
            return Err(refuse(format!("the model is withdrawn ({w})")));
        }
        self.check_joining(remote, registration).map_err(refuse)?;
        // With groups the new client goes to the group with the fewest
        // clients that hold points (groups do not split across
        // processes: the group grows).
        let mut admitted = remote.clone();
        (admitted.admit_placed(&[id], &self.out_of_sums())).map_err(|e| refuse(e.to_string()))?;
        let snapshot = admitted.snapshot().map_err(|e| refuse(e.to_string()))?;
        let client = AdmittedClient {
            id,
            name: name.to_string(),
            certificate,
            time: unix_now(),
        };
        let store = self
            .store
            .as_mut()
            .ok_or_else(|| refuse("the server has no store yet".into()))?;
        store
            .admit_serving(snapshot, client.clone())
            .map_err(|e| Status::internal(format!("{name} cannot join: {e}")))?;
        self.remote = Some(admitted);
        self.roster.push(name.to_string());
        self.admitted.push(client);
        if let Some(a) = &mut self.options.agreement {
            a.clients = self.roster.len();
            a.admitted.push(id);
        }
        let _ = self.report.send(ServerEvent::Admitted {
            id,
            name: name.to_string(),
        });
        self.queue_request(Queued {
            client: id,
            request: 0,
            since: Instant::now(),
        });
        Ok(id)
    }

    /// Why `registration` may not join the federation of `remote`, if
    /// so: no point, another
    /// dimension, a claim beyond the agreement, past the bound on points.
    fn check_joining(
        &self,
        remote: &mufc::remote::RemoteServer,
        registration: &Registration,
    ) -> Result<(), String> {
        let setup = remote.setup();
        if registration.points == 0 {
            return Err("it registered no point".into());
        }
        if registration.dim != setup.dim() {
            return Err(format!(
                "it registered points of dimension {}, the federation's are of {}",
                registration.dim,
                setup.dim()
            ));
        }
        if let Some(Err(why)) = self
            .options
            .agreement
            .as_ref()
            .map(|a| a.check_registration(registration))
        {
            return Err(why);
        }
        let max = setup.config().max_points().unwrap_or(u64::MAX);
        let after = remote
            .server()
            .total_count()
            .saturating_add(registration.points);
        if after > max {
            return Err(format!(
                "the federation would hold {after} points, beyond the bound {max} it was trained \
                 with (train it with a larger max_points to leave room)"
            ));
        }
        Ok(())
    }

    /// The clients admitted after training whose first round has not
    /// committed: their round waits as a request does, never as a
    /// catch-up (which would run it alone).
    pub(super) fn joining_members(&self) -> Vec<ClientId> {
        let Some(remote) = &self.remote else {
            return Vec::new();
        };
        let groups = remote.groups();
        let included: BTreeSet<ClientId> =
            (0..groups.len()).flat_map(|g| remote.included(g)).collect();
        (self.admitted.iter())
            .map(|a| a.id)
            .filter(|c| !included.contains(c))
            .collect()
    }

    /// Every client admitted after training with its certificate, for the
    /// members to check before they take a setup that admits them.
    pub(super) fn admission(&self) -> Option<Admission> {
        (!self.admitted.is_empty()).then(|| Admission {
            members: (self.admitted.iter())
                .map(|a| Member {
                    client_id: a.id.0,
                    name: a.name.clone(),
                    certificate: a.certificate.clone(),
                })
                .collect(),
        })
    }

    /// After a restart: the admitted clients whose first round has not
    /// committed wait again, from when they joined.
    pub(super) fn requeue_joining(&mut self) {
        let now_unix = unix_now();
        for id in self.joining_members() {
            let joined = (self.admitted.iter())
                .find(|a| a.id == id)
                .map_or(now_unix, |a| a.time);
            let waited = std::time::Duration::from_secs(now_unix.saturating_sub(joined))
                .min(self.options.max_defer);
            let now = Instant::now();
            self.queue_request(Queued {
                client: id,
                request: 0,
                since: now.checked_sub(waited).unwrap_or(now),
            });
        }
    }
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
