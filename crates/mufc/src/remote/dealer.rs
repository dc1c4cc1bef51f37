//! The dealer's half: the third party of dealt masks
//! ([`Masks::Dealer`](crate::Masks::Dealer)), across processes.

use std::collections::BTreeMap;

use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};

use super::{Agreement, Announcement, RemoteSetup};
use crate::aggregation::Aggregation;
use crate::{ClientId, MufcError, MufcResult};

/// The dealer of a federation run across processes (Algorithm 2, line 2:
/// the zero-sum masks, dealt as the module `syndrome_agg::masking::dealer`
/// describes). For every round the server forwards it the round's
/// [`Announcement`] and the request of [`RoundStep::Deal`](super::RoundStep::Deal);
/// the dealer checks the round as a client would, draws a fresh seed for
/// each client of the ring from the operating system, seals it to that
/// client under the key the two agreed once, and answers the sealed
/// seeds and the correction that makes the masks sum to zero. The server
/// relays each seal and adds the correction; it holds no pair's key, so
/// it can neither open a seal nor make one a client would accept.
///
/// What the dealer refuses, so that its correction never unmasks less
/// than an aggregate the federation allows (the correction is minus the
/// sum of the ring's masks: dealt for a ring of one client, it would
/// unmask that client's sketch):
///
/// - a ring of fewer clients than the configuration's minimum
///   aggregate, a ring that names a client twice, or a client outside the
///   roster or without a key shared with the dealer;
/// - with groups, a ring across groups;
/// - a setup outside its [`Agreement`], if it holds one, and any setup
///   other than the one of its first deal (a server cannot lower the
///   minimum aggregate halfway), but that setup with clients admitted
///   whose keys the dealer's operator pinned since
///   ([`Self::pin_client`], issue 29);
/// - a request that does not name exactly the announced ring.
///
/// The dealer keeps no record of its deals: each draws fresh seeds, so two
/// deals for one round are unrelated and the clients mask with one.
///
/// # Example
///
/// ```
/// use std::collections::BTreeMap;
/// use mufc::remote::RemoteDealer;
/// use mufc::ClientId;
/// use syndrome_agg::masking::pairwise::MaskKeyPair;
///
/// let dealer_key = MaskKeyPair::generate(&mut rand::rng());
/// let client_keys: Vec<MaskKeyPair> = (0..3).map(|_| MaskKeyPair::generate(&mut rand::rng())).collect();
/// let public: BTreeMap<ClientId, _> =
///     client_keys.iter().enumerate().map(|(i, k)| (ClientId(i as u64), k.public_key())).collect();
/// let dealer = RemoteDealer::new(&dealer_key, &public)?;
/// assert_eq!(dealer.clients().count(), 3);
/// // Each client pairs with `dealer_key.public_key()`
/// // (`RemoteClient::pair_with_dealer`); the module docs drive a round.
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RemoteDealer {
    public: MaskPublicKey,
    keys: BTreeMap<ClientId, SealKey>,
    agreement: Option<Agreement>,
    /// The setup of the first deal, with its aggregation's parameters:
    /// the dealer deals for no other.
    pinned: Option<(RemoteSetup, Aggregation)>,
    /// Whether the dealer's operator allowed seeds derived from the
    /// federation seed ([`Self::allowing_deterministic_masks`]).
    deterministic: bool,
}

impl RemoteDealer {
    /// The dealer with the static key pair `own`, sharing a key with each
    /// client of `clients` (their long-term public keys, pinned out of
    /// band, as each client pins the dealer's).
    ///
    /// # Errors
    ///
    /// [`MufcError::Sketch`] for a low-order client key (its agreement
    /// would contribute nothing secret).
    pub fn new(own: &MaskKeyPair, clients: &BTreeMap<ClientId, MaskPublicKey>) -> MufcResult<Self> {
        let keys = clients
            .iter()
            .map(|(c, k)| Ok((*c, SealKey::agree(own, c.0, k)?)))
            .collect::<MufcResult<_>>()?;
        Ok(Self::with_keys(own.public_key(), keys))
    }

    /// The dealer whose public key is `public`, sharing `keys` with the
    /// clients (each agreed out of band: the in-process driver, which
    /// plays every operator, draws each pair's key and gives it to both).
    pub(crate) fn with_keys(public: MaskPublicKey, keys: BTreeMap<ClientId, SealKey>) -> Self {
        Self {
            public,
            keys,
            agreement: None,
            pinned: None,
            deterministic: false,
        }
    }

    /// Allows seeds derived from the federation seed and the round, as
    /// [`RemoteClient::allowing_deterministic_masks`](super::RemoteClient::allowing_deterministic_masks)
    /// allows a client's masks: without it the dealer refuses a setup
    /// that asks for them.
    #[must_use]
    pub fn allowing_deterministic_masks(mut self) -> Self {
        self.deterministic = true;
        self
    }

    /// Holds the dealer to `agreement`: it deals for no setup outside it
    /// (a weaker policy, a smaller minimum aggregate, another roster size).
    pub fn agree(&mut self, agreement: Agreement) {
        self.agreement = Some(agreement);
    }

    /// The dealer's public key (what every client pins).
    pub fn public_key(&self) -> MaskPublicKey {
        self.public
    }

    /// The clients the dealer shares a key with, in id order.
    pub fn clients(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.keys.keys().copied()
    }

    /// The setup the dealer deals for, once it dealt a first round.
    pub fn setup(&self) -> Option<&RemoteSetup> {
        self.pinned.as_ref().map(|(s, _)| s)
    }

    /// Answers the server's `request` for the round of `announcement`: the
    /// sealed seeds and the correction, as bytes for
    /// [`ServerRound::receive_deal`](super::ServerRound::receive_deal).
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] for a round the dealer must not deal
    /// (the [type's docs](Self) list them); a protocol error for bytes
    /// that are no request of this round's ring. Nothing changes on error.
    pub fn deal(&mut self, announcement: &Announcement, request: &[u8]) -> MufcResult<Vec<u8>> {
        let spec = &announcement.spec;
        let setup = &announcement.setup;
        let refuse = |reason: String| MufcError::RoundRefused {
            round: spec.round,
            reason,
        };
        if setup.config().insecure_deterministic_masks() && !self.deterministic {
            return Err(refuse(
                "the setup derives every seed from the federation seed, and the dealer's \
                 operator did not allow it"
                    .into(),
            ));
        }
        // A setup that admits clients whose keys the dealer's operator
        // pinned since (issue 29) is taken, as each member takes it once
        // it checked the new clients: the roster grows by them.
        let joined = self.admitted_in(setup).map_err(refuse)?;
        let admitted = !joined.is_empty();
        // One group's clients moved to another (a merge): the pinned setup
        // was checked against the agreement, and nothing else changed.
        let regrouped = !admitted
            && (self.pinned.as_ref())
                .is_some_and(|(p, _)| p != setup && setup.taken_since(p).is_ok());
        let mut agreement = self.agreement.clone();
        if let Some(a) = agreement.as_mut().filter(|_| !regrouped) {
            if admitted {
                a.clients = a.clients.max(setup.roster().len());
                a.admitted.extend(joined);
            }
            a.check_setup(setup)
                .map_err(|why| refuse(format!("outside the agreement: {why}")))?;
        }
        let admitted = admitted || regrouped;
        if !admitted
            && self
                .pinned
                .as_ref()
                .is_some_and(|(pinned, _)| pinned != setup)
        {
            return Err(refuse(
                "the federation's setup is not the one of the dealer's first deal".into(),
            ));
        }
        let keys = self.ring_keys(announcement)?;
        // The pinned aggregation keeps the change rounds' parameters it
        // built (validating them may search a prime): built once.
        match &mut self.pinned {
            Some((_, aggregation)) if !admitted => {
                Ok(aggregation.deal_remote(spec, keys)?.handle(request)?)
            }
            _ => {
                let mut fresh = setup.aggregation(&setup.parts()?)?.ok_or_else(|| {
                    MufcError::Remote("the plain mode has no dealer: it masks nothing".into())
                })?;
                let answer = fresh.deal_remote(spec, keys)?.handle(request)?;
                self.pinned = Some((setup.clone(), fresh));
                self.agreement = agreement;
                Ok(answer)
            }
        }
    }

    /// The clients `setup` admits when it is the pinned one with clients
    /// admitted (then maybe a group split or merged,
    /// [`RemoteSetup::joined_since`]), each of whom the dealer shares a key with
    /// ([`Self::pin_client`]); none for the pinned setup itself, before a
    /// first deal, or a setup that is no admission (refused as another
    /// setup).
    ///
    /// # Errors
    ///
    /// Why not, for an admission of a client the dealer has no key for.
    fn admitted_in(&self, setup: &RemoteSetup) -> Result<Vec<ClientId>, String> {
        let Some((pinned, _)) = &self.pinned else {
            return Ok(Vec::new());
        };
        if pinned == setup {
            return Ok(Vec::new());
        }
        // Admitted alone, or then a group split or merged: the new
        // clients are checked either way.
        let Ok(joined) = setup.joined_since(pinned) else {
            return Ok(Vec::new());
        };
        match joined.iter().find(|c| !self.keys.contains_key(c)) {
            Some(c) => Err(format!(
                "the setup admits client {c}, whose key the dealer's operator has not pinned"
            )),
            None => Ok(joined),
        }
    }

    /// Shares a key with client `id`, which joins after training (issue
    /// 29): its long-term public key `key`, pinned out of band as the
    /// first clients' were (the federation file `mufc certs --join`
    /// extends), agreed with the dealer's own key pair `own`. The dealer
    /// deals for it once a setup admits it.
    ///
    /// # Errors
    ///
    /// [`MufcError::Remote`] when `own` is not the dealer's key pair;
    /// [`MufcError::DuplicateClient`] for a client the dealer shares a
    /// key with already; [`MufcError::Sketch`] for a low-order key.
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mufc::remote::RemoteDealer;
    /// use mufc::ClientId;
    /// use syndrome_agg::masking::pairwise::MaskKeyPair;
    ///
    /// let own = MaskKeyPair::generate(&mut rand::rng());
    /// let client = |_| MaskKeyPair::generate(&mut rand::rng()).public_key();
    /// let first: BTreeMap<ClientId, _> = (0..3).map(|i| (ClientId(i), client(i))).collect();
    /// let mut dealer = RemoteDealer::new(&own, &first)?;
    /// dealer.pin_client(&own, ClientId(3), &client(3))?;
    /// assert_eq!(dealer.clients().count(), 4);
    /// assert!(dealer.pin_client(&own, ClientId(3), &client(3)).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn pin_client(
        &mut self,
        own: &MaskKeyPair,
        id: ClientId,
        key: &MaskPublicKey,
    ) -> MufcResult<()> {
        if own.public_key() != self.public {
            return Err(MufcError::Remote(
                "the key pair given is not the dealer's".into(),
            ));
        }
        if self.keys.contains_key(&id) {
            return Err(MufcError::DuplicateClient(id));
        }
        let agreed = SealKey::agree(own, id.0, key)?;
        self.keys.insert(id, agreed);
        Ok(())
    }

    /// Shares `key` with client `id`, new to the federation, and takes
    /// `setup`, the federation's with it admitted: a dealer pinned to the
    /// setup of its first deal takes only that setup with clients joined
    /// ([`RemoteSetup::admitted_since`]), and deals at the new capacity
    /// from then on. Unchanged on an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] (round 0) for a setup that is not the
    /// pinned one with clients admitted; the aggregation's errors.
    pub(crate) fn admit(
        &mut self,
        id: ClientId,
        key: SealKey,
        setup: &RemoteSetup,
    ) -> MufcResult<()> {
        self.take(setup)?;
        self.keys.insert(id, key);
        Ok(())
    }

    /// Takes `setup`, the federation's with a group split in two or
    /// clients admitted ([`RemoteSetup::taken_since`]), when the dealer
    /// is pinned to a setup; it deals in the new groups from then on.
    /// Unchanged on an error.
    ///
    /// # Errors
    ///
    /// As [`Self::admit`].
    pub(crate) fn take(&mut self, setup: &RemoteSetup) -> MufcResult<()> {
        if let Some((pinned, _)) = &self.pinned {
            setup
                .taken_since(pinned)
                .map_err(|why| MufcError::RoundRefused {
                    round: 0,
                    reason: format!("the dealer keeps its setup: {why}"),
                })?;
            let fresh = setup.aggregation(&setup.parts()?)?.ok_or_else(|| {
                MufcError::Remote("the plain mode has no dealer: it masks nothing".into())
            })?;
            self.pinned = Some((setup.clone(), fresh));
        }
        Ok(())
    }

    /// The keys of the round's ring, once the ring is checked against the
    /// roster and the groups (anchored at its first client).
    fn ring_keys(&self, announcement: &Announcement) -> MufcResult<BTreeMap<ClientId, SealKey>> {
        let spec = &announcement.spec;
        if let Some(first) = spec.ring.first() {
            (announcement.setup).check_members(spec, *first)?;
        }
        spec.ring
            .iter()
            .map(|c| match self.keys.get(c) {
                Some(key) => Ok((*c, key.clone())),
                None => Err(MufcError::RoundRefused {
                    round: spec.round,
                    reason: format!(
                        "the ring names client {c}, with whom the dealer shares no key"
                    ),
                }),
            })
            .collect()
    }
}
