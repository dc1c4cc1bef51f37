//! A federation's certificates: one certificate authority per federation,
//! which issues the server's certificate and one per client (rcgen).
//!
//! A client's identity is a DNS name in its certificate,
//! `<name>.client.mufc` ([`client_dns_name`]): the server checks that the
//! certificate a client authenticated with names the client it claims to
//! be ([`crate::tls::authenticate`]). The authority is what separates
//! federations: a certificate of another federation's authority does not
//! verify, whatever its names.
//!
//! The authority's certificate parameters follow from the federation's
//! name alone, so an authority read back from its key and name
//! ([`FederationCa::from_key_pem`]) issues certificates that verify
//! against the certificate written when it was created (the handshake
//! test checks it).

use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};

use crate::NetError;

/// A certificate and its private key, PEM encoded.
#[derive(Clone)]
pub struct Issued {
    /// The certificate (`-----BEGIN CERTIFICATE-----`).
    pub cert_pem: String,
    /// Its private key (PKCS #8, `-----BEGIN PRIVATE KEY-----`): secret.
    pub key_pem: String,
}

impl std::fmt::Debug for Issued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Issued")
            .field("cert_pem", &self.cert_pem)
            .finish_non_exhaustive()
    }
}

/// The DNS name a client's certificate carries: `<name>.client.mufc`.
///
/// # Errors
///
/// [`NetError::BadName`] unless `name` is 1 to 63 ASCII letters, digits
/// and hyphens, not starting or ending with a hyphen (one DNS label).
///
/// # Example
///
/// ```
/// assert_eq!(mufc_net::certs::client_dns_name("hospital-a")?, "hospital-a.client.mufc");
/// assert!(mufc_net::certs::client_dns_name("a.b").is_err());
/// # Ok::<(), mufc_net::NetError>(())
/// ```
pub fn client_dns_name(name: &str) -> Result<String, NetError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(format!("{name}.client.mufc"))
    } else {
        Err(NetError::BadName {
            name: name.to_string(),
            reason: "a name is 1 to 63 ASCII letters, digits and hyphens, not starting or \
                     ending with a hyphen",
        })
    }
}

/// The DNS name every server certificate carries besides its hosts.
pub const SERVER_DNS_NAME: &str = "server.mufc";

/// The DNS name of the dealer's certificate, with dealt masks (no client
/// certificate can carry it: a client's name ends in `.client.mufc`).
pub const DEALER_DNS_NAME: &str = "dealer.mufc";

/// A federation's certificate authority.
///
/// # Example
///
/// ```
/// use mufc_net::certs::FederationCa;
///
/// let ca = FederationCa::new("three-hospitals")?;
/// let server = ca.issue_server(&["127.0.0.1", "localhost"])?;
/// let client = ca.issue_client("hospital-a")?;
/// assert!(client.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
/// // The authority comes back from its key and name, and still issues
/// // (its certificate is signed again: the same name and key, another
/// // ECDSA signature).
/// let again = FederationCa::from_key_pem("three-hospitals", &ca.key_pem())?;
/// again.issue_client("hospital-b")?;
/// # let _ = server;
/// # Ok::<(), mufc_net::NetError>(())
/// ```
pub struct FederationCa {
    federation: String,
    key: KeyPair,
    cert_pem: String,
    /// How long the certificates it issues are valid for.
    validity: Duration,
}

/// How long an issued certificate is valid by default: a year. (rcgen's
/// own default ran to the year 4096: a stolen client key would have been
/// good for ever.)
pub const DEFAULT_VALIDITY: Duration = Duration::from_secs(365 * 24 * 3600);

/// The longest validity [`FederationCa::validity`] accepts: ten years.
pub const MAX_VALIDITY: Duration = Duration::from_secs(10 * 366 * 24 * 3600);

/// How far back an issued certificate's validity starts: parties whose
/// clocks run behind the authority's still accept it at once.
const CLOCK_SKEW: Duration = Duration::from_secs(3600);

impl std::fmt::Debug for FederationCa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FederationCa")
            .field("federation", &self.federation)
            .finish_non_exhaustive()
    }
}

fn rc(what: &'static str) -> impl FnOnce(rcgen::Error) -> NetError {
    move |e| NetError::Certificate {
        what,
        reason: e.to_string(),
    }
}

/// The authority's parameters: they follow from the federation's name.
fn ca_params(federation: &str) -> CertificateParams {
    let mut p = CertificateParams::default();
    let mut dn = DistinguishedName::new();
    dn.push(
        DnType::CommonName,
        format!("{federation} MUFC federation CA"),
    );
    dn.push(DnType::OrganizationName, federation);
    p.distinguished_name = dn;
    p.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    p
}

impl FederationCa {
    /// A new authority for federation `federation`, with a new key.
    ///
    /// # Errors
    ///
    /// [`NetError::BadName`] for a name that is not one DNS label (see
    /// [`client_dns_name`]), [`NetError::Certificate`] if generating fails.
    pub fn new(federation: &str) -> Result<Self, NetError> {
        let key = KeyPair::generate().map_err(rc("generating the authority's key"))?;
        Self::with_key(federation, key)
    }

    /// The authority of federation `federation` from its key (PEM, as
    /// [`Self::key_pem`] wrote it): its certificate is made again from
    /// the name and the key.
    ///
    /// # Errors
    ///
    /// As [`Self::new`]; [`NetError::Certificate`] for a key that does not
    /// parse.
    pub fn from_key_pem(federation: &str, key_pem: &str) -> Result<Self, NetError> {
        let key = KeyPair::from_pem(key_pem).map_err(rc("reading the authority's key"))?;
        Self::with_key(federation, key)
    }

    fn with_key(federation: &str, key: KeyPair) -> Result<Self, NetError> {
        client_dns_name(federation)?;
        let cert = ca_params(federation)
            .self_signed(&key)
            .map_err(rc("signing the authority's certificate"))?;
        Ok(Self {
            federation: federation.to_string(),
            key,
            cert_pem: cert.pem(),
            validity: DEFAULT_VALIDITY,
        })
    }

    /// The authority, issuing certificates valid for `valid_for` from now
    /// (an hour earlier, for clocks that run behind) rather than
    /// [`DEFAULT_VALIDITY`]. The authority's own certificate is unchanged.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mufc_net::certs::FederationCa;
    ///
    /// let ca = FederationCa::new("trial")?.validity(Duration::from_secs(30 * 24 * 3600))?;
    /// ca.issue_client("hospital-a")?;
    /// assert!(FederationCa::new("trial")?.validity(Duration::ZERO).is_err());
    /// # Ok::<(), mufc_net::NetError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`NetError::Certificate`] for no time at all or more than
    /// [`MAX_VALIDITY`].
    pub fn validity(mut self, valid_for: Duration) -> Result<Self, NetError> {
        if valid_for.is_zero() || valid_for > MAX_VALIDITY {
            return Err(NetError::Certificate {
                what: "setting the validity",
                reason: format!(
                    "{} days: a certificate is valid for 1 day to ten years",
                    valid_for.as_secs() / 86_400
                ),
            });
        }
        self.validity = valid_for;
        Ok(self)
    }

    /// The federation's name.
    pub fn federation(&self) -> &str {
        &self.federation
    }

    /// The authority's certificate (what every party trusts).
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The authority's private key: whoever holds it can make clients.
    pub fn key_pem(&self) -> String {
        self.key.serialize_pem()
    }

    fn issue(
        &self,
        names: Vec<SanType>,
        common_name: String,
        usage: ExtendedKeyUsagePurpose,
    ) -> Result<Issued, NetError> {
        let mut p = CertificateParams::default();
        p.subject_alt_names = names;
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, common_name);
        dn.push(DnType::OrganizationName, self.federation.as_str());
        p.distinguished_name = dn;
        p.is_ca = IsCa::ExplicitNoCa;
        p.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        p.extended_key_usages = vec![usage];
        p.use_authority_key_identifier_extension = true;
        let now = time::OffsetDateTime::now_utc();
        let span = |d: Duration| time::Duration::try_from(d).ok();
        let (from, until) = span(CLOCK_SKEW)
            .zip(span(self.validity))
            .and_then(|(skew, valid)| Some((now.checked_sub(skew)?, now.checked_add(valid)?)))
            .ok_or_else(|| NetError::Certificate {
                what: "setting the validity",
                reason: "the dates are out of range".into(),
            })?;
        p.not_before = from;
        p.not_after = until;
        let key = KeyPair::generate().map_err(rc("generating a key"))?;
        let issuer = Issuer::new(ca_params(&self.federation), &self.key);
        let cert = p
            .signed_by(&key, &issuer)
            .map_err(rc("signing a certificate"))?;
        Ok(Issued {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The server's certificate, valid for `hosts` (IP addresses or DNS
    /// names the clients connect to) and [`SERVER_DNS_NAME`].
    ///
    /// # Errors
    ///
    /// [`NetError::BadName`] for a host that is neither an IP address nor a
    /// DNS name; [`NetError::Certificate`] if signing fails.
    pub fn issue_server(&self, hosts: &[&str]) -> Result<Issued, NetError> {
        let mut names = vec![dns(SERVER_DNS_NAME)?];
        for h in hosts {
            names.push(match h.parse::<std::net::IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => dns(h)?,
            });
        }
        self.issue(
            names,
            format!("{} MUFC server", self.federation),
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// The dealer's certificate, valid for [`DEALER_DNS_NAME`]: with it
    /// the dealer opens its session to the server
    /// ([`crate::dealer::start_dealer`]).
    ///
    /// # Errors
    ///
    /// [`NetError::Certificate`] if signing fails.
    pub fn issue_dealer(&self) -> Result<Issued, NetError> {
        self.issue(
            vec![dns(DEALER_DNS_NAME)?],
            format!("{} MUFC dealer", self.federation),
            ExtendedKeyUsagePurpose::ClientAuth,
        )
    }

    /// Client `name`'s certificate, valid for [`client_dns_name`]`(name)`.
    ///
    /// # Errors
    ///
    /// As [`client_dns_name`]; [`NetError::Certificate`] if signing fails.
    pub fn issue_client(&self, name: &str) -> Result<Issued, NetError> {
        let names = vec![dns(&client_dns_name(name)?)?];
        self.issue(
            names,
            format!("{name} ({} MUFC client)", self.federation),
            ExtendedKeyUsagePurpose::ClientAuth,
        )
    }
}

fn dns(name: &str) -> Result<SanType, NetError> {
    name.try_into()
        .map(SanType::DnsName)
        .map_err(|e: rcgen::Error| NetError::BadName {
            name: name.to_string(),
            reason: if matches!(e, rcgen::Error::InvalidAsn1String(_)) {
                "not a DNS name"
            } else {
                "not usable in a certificate"
            },
        })
}
