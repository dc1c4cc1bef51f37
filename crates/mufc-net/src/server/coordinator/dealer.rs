//! The dealer's session, with dealt masks: the coordinator sends it a
//! round's deal request once the clients' keys are in, waits for its
//! answer up to the step deadline (serving the other events meanwhile),
//! and gives the answer to the round. A dealer that is not connected, is
//! stuck, refuses or does not answer in time fails the round, which
//! changes nothing; the next round is dealt once it is back.

use mufc::MufcError;
use mufc::remote::ServerRound;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tonic::Status;

use super::round::InRound;
use super::{Coordinator, Event, ServerEvent};
use crate::proto::deal_answer::Outcome;
use crate::proto::{DealAnswer, DealRequest};

/// The dealer's open session.
#[derive(Clone, Debug)]
pub(super) struct DealerSession {
    conn: u64,
    fingerprint: crate::revocation::Fingerprint,
    outbox: mpsc::Sender<Result<DealRequest, Status>>,
}

impl Coordinator {
    /// A dealer event outside a deal: a session opens (replacing an
    /// older one, which is closed) or ends; an answer nobody waits for
    /// (a round that already failed) is dropped.
    pub(super) fn dealer_event(&mut self, ev: Event) {
        match ev {
            Event::DealerConnected {
                conn,
                fingerprint,
                outbox,
            } => {
                let new = DealerSession {
                    conn,
                    fingerprint,
                    outbox,
                };
                if let Some(old) = self.dealer.replace(new) {
                    let _ = old
                        .outbox
                        .try_send(Err(Status::aborted("another session of the dealer opened")));
                }
                let _ = self.report.send(ServerEvent::DealerConnected);
            }
            Event::DealerGone { conn } if self.dealer.as_ref().is_some_and(|d| d.conn == conn) => {
                self.dealer = None;
                let _ = self.report.send(ServerEvent::DealerDisconnected);
            }
            _ => {}
        }
    }

    /// Closes the dealer's session if the revocation list names its
    /// certificate, or cannot be read (fail closed), as
    /// [`Self::close_revoked`] closes clients': a dealer revoked while
    /// connected deals no further round.
    pub(super) fn close_revoked_dealer(&mut self, list: Result<bool, String>) {
        let why = match list {
            Ok(false) => return,
            Ok(true) => "its certificate is revoked".to_string(),
            Err(e) => format!("the server cannot check revocations: {e}"),
        };
        if let Some(d) = self.dealer.take() {
            let _ =
                (d.outbox).try_send(Err(Status::permission_denied(format!("the dealer: {why}"))));
            let _ = self.report.send(ServerEvent::Refused {
                reason: format!("closed the session of the dealer: {why}"),
            });
            let _ = self.report.send(ServerEvent::DealerDisconnected);
        }
    }

    /// The dealer's certificate fingerprint, if it is connected.
    pub(super) fn dealer_fingerprint(&self) -> Option<crate::revocation::Fingerprint> {
        self.dealer.as_ref().map(|d| d.fingerprint)
    }

    /// Asks the dealer for the deal of `round` (announced as
    /// `announcement`'s bytes) with the server's `request`, waits for the
    /// answer up to the step deadline, and gives it to the round.
    ///
    /// # Errors
    ///
    /// [`MufcError::Remote`] when the dealer is not connected, is stuck,
    /// leaves, refuses or does not answer in time; the round's refusal
    /// of an answer that is not the round's.
    pub(super) async fn deal(
        &mut self,
        round: &mut ServerRound,
        state: &mut InRound,
        announcement: &[u8],
        request: Vec<u8>,
    ) -> Result<(), MufcError> {
        let number = round.spec().round;
        let failed = |why: &str| MufcError::Remote(format!("round {number}: {why}"));
        let dealer = (self.dealer.clone()).ok_or_else(|| failed("the dealer is not connected"))?;
        let asked = DealRequest {
            round: number,
            announcement: announcement.to_vec(),
            request,
        };
        if dealer.outbox.try_send(Ok(asked)).is_err() {
            self.dealer = None;
            let _ = self.report.send(ServerEvent::DealerDisconnected);
            return Err(failed("the dealer's session is stuck or closed"));
        }
        let deadline = Instant::now() + self.options.step_timeout;
        loop {
            tokio::select! {
                ev = self.events.recv() => match ev {
                    Some(Event::Dealt { conn, answer }) if conn == dealer.conn && answer.round == number => {
                        return answered(round, answer, &failed);
                    }
                    Some(ev @ (Event::DealerConnected { .. } | Event::Dealt { .. } | Event::DealerGone { .. })) => {
                        self.dealer_event(ev);
                        if self.dealer.as_ref().is_none_or(|d| d.conn != dealer.conn) {
                            return Err(failed("the dealer's session ended during the deal"));
                        }
                    }
                    Some(ev) => self.in_round(ev, round, state),
                    None => return Err(failed("the server is stopping")),
                },
                () = tokio::time::sleep_until(deadline) => {
                    return Err(failed("the dealer did not answer in time"));
                }
            }
        }
    }
}

/// Gives the dealer's `answer` to `round`.
fn answered(
    round: &mut ServerRound,
    answer: DealAnswer,
    failed: &dyn Fn(&str) -> MufcError,
) -> Result<(), MufcError> {
    match answer.outcome {
        Some(Outcome::Dealt(bytes)) => round.receive_deal(&bytes),
        Some(Outcome::Refusal(why)) => Err(failed(&format!("the dealer refused to deal: {why}"))),
        None => Err(failed(
            "the dealer's answer holds neither a deal nor a refusal",
        )),
    }
}
