//! What a client keeps between rounds besides its points: the agreement
//! it holds the federation to, the clients of its last sum, what it sent
//! in its last committed round, and the key it shares with the dealer.

use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};

use crate::remote::client::{ClientRound, SentRound};
use crate::remote::{Agreement, RemoteClient};
use crate::{ClientId, MufcResult};

impl RemoteClient {
    /// Holds the client to `agreement`: from now on it refuses to join a
    /// round whose setup lies outside it (a finer grid step, more points,
    /// another number of clients or dimension), before it trains or sends
    /// anything (issue 28, item 6). A store keeps no agreement: the
    /// client's operator gives it at every start.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Agreement, RemoteClient};
    /// use mufc::ClientId;
    ///
    /// let points = nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]);
    /// let data = seeding::Dataset::new(points)?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?;
    /// client.agree(Agreement::new(3).dim(2));
    /// assert_eq!(client.agreement().map(|a| a.clients), Some(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn agree(&mut self, agreement: Agreement) {
        self.agreement = Some(agreement);
    }

    /// The clients of the last sum the client took part in, in id order
    /// (empty before its first): see [`Self::took_part`].
    pub fn last_sum(&self) -> &[ClientId] {
        &self.last_sum
    }

    /// Notes that the client took part in `round`'s sum, once it knows
    /// whose inputs that sum holds ([`ClientRound::summed`](crate::remote::ClientRound::summed); nothing
    /// before). From then on the client joins only rings that name every
    /// client of that sum still in its roster and group (issue 28, item
    /// 5): a server holding S(all) and S(all but v) would hold v's
    /// histogram. A client the protocol dropped inside a ring that named
    /// it is not in the sum, and may be left out of the next ring. Returns
    /// whether the set changed (the caller saves it).
    pub fn took_part(&mut self, round: &ClientRound) -> bool {
        // Compared before it is copied: the set rarely changes.
        match round.half.summed() {
            Some(s) if *s != *self.last_sum => {
                self.last_sum = s.into_owned();
                true
            }
            _ => false,
        }
    }

    /// The client restored with `last_sum` ([`Self::last_sum`] as it was
    /// saved).
    #[must_use]
    pub fn with_last_sum(mut self, mut last_sum: Vec<ClientId>) -> Self {
        last_sum.sort_unstable();
        last_sum.dedup();
        self.last_sum = last_sum;
        self
    }

    /// What the client sent in the last committed round that included it
    /// (none before its first, or after a restore without it): for its
    /// store to keep.
    pub fn sent(&self) -> Option<&SentRound> {
        self.sent.as_ref()
    }

    /// The client restored with `sent` ([`Self::sent`] as it was saved).
    /// A base that is not the server's makes the client refuse the next
    /// change round, and the server runs a whole one: a wrong base costs
    /// a round, never a wrong model.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::RemoteClient;
    /// use mufc::ClientId;
    ///
    /// let data = seeding::Dataset::new(nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]))?;
    /// let client = RemoteClient::new(ClientId(0), data)?;
    /// let kept = client.sent().cloned(); // none: no round committed yet
    /// let restored = client.clone().with_sent(kept);
    /// assert_eq!(restored.sent(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_sent(mut self, sent: Option<SentRound>) -> Self {
        self.sent = sent;
        self
    }

    /// Pairs the client with the federation's dealer, for dealt masks
    /// ([`Masks::Dealer`](crate::Masks::Dealer)): the key the two share
    /// is agreed once from the client's long-term key pair `own` and the
    /// dealer's public key `dealer`, which the client pinned out of band
    /// (X25519 and HKDF-SHA256, `SealKey::agree`); the dealer agrees the
    /// same key from the client's public key ([`RemoteDealer`](crate::remote::RemoteDealer)).
    /// Without it the client refuses dealt rounds. Like an agreement, the
    /// pairing is not kept by a store: the client's operator gives it at
    /// every start.
    ///
    /// # Errors
    ///
    /// [`MufcError::Sketch`](crate::MufcError::Sketch) for a low-order dealer key (one whose
    /// agreement contributes nothing secret).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::RemoteClient;
    /// use mufc::ClientId;
    /// use syndrome_agg::masking::pairwise::MaskKeyPair;
    ///
    /// let data = seeding::Dataset::new(nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]))?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?;
    /// let own = MaskKeyPair::generate(&mut rand::rng());
    /// let dealer = MaskKeyPair::generate(&mut rand::rng());
    /// client.pair_with_dealer(&own, &dealer.public_key())?;
    /// assert!(client.is_paired_with_dealer());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pair_with_dealer(
        &mut self,
        own: &MaskKeyPair,
        dealer: &MaskPublicKey,
    ) -> MufcResult<()> {
        self.pair_with_dealer_key(SealKey::agree(own, self.id.0, dealer)?);
        Ok(())
    }

    /// Pairs the client with a dealer under `key`, a key the two share
    /// already (the in-process driver's: it plays both operators).
    pub(crate) fn pair_with_dealer_key(&mut self, key: SealKey) {
        self.dealer = Some(key);
    }

    /// Whether the client holds a key shared with a dealer
    /// ([`Self::pair_with_dealer`]).
    pub fn is_paired_with_dealer(&self) -> bool {
        self.dealer.is_some()
    }

    /// The agreement the client holds to, if any.
    pub fn agreement(&self) -> Option<&Agreement> {
        self.agreement.as_ref()
    }

    /// Draws the client's round secrets (its key pairs, masks and the
    /// protocol's seeds) from `key`, a 32-byte secret it keeps, with each
    /// round's session and number, instead of from the operating system
    /// at each join. To anyone without the key they are as fresh: no two
    /// rounds share a session, and the client joins none twice. To the
    /// client they are the same on every replay of one round, so that a
    /// client run as a new process for every message (a federated
    /// framework's, the Python binding's) rebuilds its half of a round
    /// from the round's messages. Its driver must then answer each step
    /// of a session once (`mufc-net`'s `ClientStore::answer_once`): a half
    /// rebuilt after the client's points changed would answer the masked
    /// step otherwise under the same masks.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::RemoteClient;
    /// use mufc::ClientId;
    ///
    /// let data = seeding::Dataset::new(nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]))?;
    /// let client = RemoteClient::new(ClientId(0), data)?.with_round_key([7; 32]);
    /// // The key is the client's secret: never printed.
    /// assert!(!format!("{client:?}").contains("7, 7"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_round_key(mut self, key: [u8; 32]) -> Self {
        self.round_key = Some(RoundKey(zeroize::Zeroizing::new(key)));
        self
    }
}

/// A kept round key: wiped on drop, never printed.
#[derive(Clone)]
pub(crate) struct RoundKey(zeroize::Zeroizing<[u8; 32]>);

impl RoundKey {
    pub(crate) fn bytes(&self) -> [u8; 32] {
        *self.0
    }
}

impl std::fmt::Debug for RoundKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoundKey(..)")
    }
}
