//! A client that leaves the federation (issue 29, `mufc client leave`):
//! once the round that took its whole removal committed (its last message
//! was an empty histogram), it signs a leave statement with its
//! certificate's key. The server keeps it and relays it to every member
//! with each announcement; a member takes the leaver off the clients its
//! later rings must name ([`mufc::remote::RemoteClient::accept_leave`])
//! only once the statement checks against the leaver's certificate from
//! the federation's authority.
//!
//! Why signed: a ring must name every client of the last sum a member
//! took part in (issue 28, item 5), or the server could difference two
//! sums and read the client left out. A server that could drop a member
//! from the rings at will could do just that; with the statement it can
//! drop only a client that left, whose last input was empty.

use mufc::ClientId;
use rustls::pki_types::{CertificateDer, UnixTime};

use crate::NetError;
use crate::endorse::{Endorser, FirstMessages, algorithms, client_cert, verify_in};
use crate::proto::Signed;

/// What every leave statement's signature covers before the statement: a
/// domain of its own, so that no signature made for another purpose (a
/// round's first message) is a leave.
pub const LEAVE_CONTEXT: &[u8] = b"mufc-net/v1 a client leaves the federation\0";

/// The statement client `id` signs when it leaves: its id, 8 bytes
/// little-endian.
fn statement(id: ClientId) -> Vec<u8> {
    id.0.to_le_bytes().to_vec()
}

impl Endorser {
    /// Client `id`'s signed leave statement.
    ///
    /// # Errors
    ///
    /// As [`Endorser::sign`].
    pub fn sign_leave(&self, id: ClientId) -> Result<Signed, NetError> {
        self.sign_in(LEAVE_CONTEXT, &statement(id))
    }
}

/// Checks only that `signed` is client `id`'s leave statement signed with
/// the key of `cert` (DER): what the server checks, whose TLS handshake
/// already checked the certificate against the authority (a member checks
/// that too: [`check_departures`]).
///
/// # Errors
///
/// The reason, as text.
///
/// # Example
///
/// ```
/// use mufc::ClientId;
/// use mufc_net::certs::FederationCa;
/// use mufc_net::departure::verify_leave;
/// use mufc_net::endorse::Endorser;
/// use rustls::pki_types::pem::PemObject;
///
/// let ca = FederationCa::new("test")?;
/// let a = ca.issue_client("a")?;
/// let cert = rustls::pki_types::CertificateDer::from_pem_slice(a.cert_pem.as_bytes()).unwrap().to_vec();
/// let signer = Endorser::from_key_pem(&a.key_pem)?;
/// let leave = signer.sign_leave(ClientId(0))?;
/// assert!(verify_leave(&cert, ClientId(0), &leave).is_ok());
/// // Not another client's leave; a first message of a round is no leave.
/// assert!(verify_leave(&cert, ClientId(1), &leave).is_err());
/// let first = signer.sign(&0u64.to_le_bytes())?;
/// assert!(verify_leave(&cert, ClientId(0), &first).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify_leave(cert: &[u8], id: ClientId, signed: &Signed) -> Result<(), String> {
    let der = CertificateDer::from(cert);
    let ee = webpki::EndEntityCert::try_from(&der)
        .map_err(|e| format!("its certificate does not parse: {e}"))?;
    leave_of(&ee, id, signed)
}

/// Checks that `signed` is client `id`'s leave statement, signed with the
/// key of `ee` under the leave's context.
fn leave_of(ee: &webpki::EndEntityCert<'_>, id: ClientId, signed: &Signed) -> Result<(), String> {
    if signed.message != statement(id) {
        return Err(format!("the statement is not client {id}'s"));
    }
    verify_in(ee, signed, LEAVE_CONTEXT)
}

/// Checks every departure the server relays (`(id, signed leave,
/// certificate)`): each certificate a client's of the authority `firsts`
/// holds, naming the roster's client of that id when `firsts` has a
/// roster, and each leave that client's, signed with that certificate's
/// key. Returns the ids, in order.
///
/// # Errors
///
/// [`NetError::Protocol`] naming the first departure that fails.
pub fn check_departures(
    firsts: &FirstMessages,
    members: &[(ClientId, Option<Signed>, Vec<u8>)],
) -> Result<Vec<ClientId>, NetError> {
    let anchor = firsts.anchor()?;
    let algs = algorithms();
    let now = UnixTime::now();
    let mut ids = Vec::with_capacity(members.len());
    for (id, signed, cert) in members {
        let refuse =
            |why: String| NetError::Protocol(format!("the leave of client {id} is refused: {why}"));
        let der = CertificateDer::from(cert.as_slice());
        let ee = webpki::EndEntityCert::try_from(&der)
            .map_err(|e| refuse(format!("its certificate does not parse: {e}")))?;
        client_cert(&ee, &anchor, (&algs, now), firsts.name_of(*id)).map_err(refuse)?;
        let signed = signed
            .as_ref()
            .ok_or_else(|| refuse("no signature".into()))?;
        leave_of(&ee, *id, signed).map_err(refuse)?;
        ids.push(*id);
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use rustls::pki_types::pem::PemObject;

    use super::*;
    use crate::certs::FederationCa;

    /// A server that relays departures tries to drop a member from the
    /// rings: it names another client with a real leave, names a client
    /// with no signature, or with a first message of a round signed by
    /// it. Each is refused; the real leave passes.
    #[test]
    fn a_forged_departure_is_refused() {
        let ca = FederationCa::new("test").unwrap();
        let roster: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let check = FirstMessages::new(ca.cert_pem(), Some(roster)).unwrap();
        let issued = |n: &str| ca.issue_client(n).unwrap();
        let der = |pem: &str| {
            CertificateDer::from_pem_slice(pem.as_bytes())
                .unwrap()
                .to_vec()
        };
        let (b, c) = (issued("b"), issued("c"));
        let leave_b = Endorser::from_key_pem(&b.key_pem)
            .unwrap()
            .sign_leave(ClientId(1))
            .unwrap();
        let first_c = Endorser::from_key_pem(&c.key_pem)
            .unwrap()
            .sign(&statement(ClientId(2)))
            .unwrap();
        let real = (ClientId(1), Some(leave_b.clone()), der(&b.cert_pem));
        assert_eq!(
            check_departures(&check, std::slice::from_ref(&real)).unwrap(),
            [ClientId(1)]
        );
        let forged = [
            // b's leave, said to be c's (with b's certificate, or c's).
            (ClientId(2), Some(leave_b.clone()), der(&b.cert_pem)),
            (ClientId(2), Some(leave_b), der(&c.cert_pem)),
            // No signature.
            (ClientId(2), None, der(&c.cert_pem)),
            // A round's first message of c, not a leave.
            (ClientId(2), Some(first_c), der(&c.cert_pem)),
        ];
        for f in forged {
            assert!(
                check_departures(&check, &[real.clone(), f.clone()]).is_err(),
                "{f:?}"
            );
        }
    }
}
