//! A client's half of a pairwise or dealt round: its fresh key, then,
//! once the directory is checked (or its sealed seed opened), its masked
//! sketch.

use std::collections::{BTreeMap, BTreeSet};

use syndrome_agg::masking::dealer::open_seed;
use syndrome_agg::masking::pairwise::MaskKeyPair;
use syndrome_agg::secagg::Step;
use syndrome_agg::{AnySketch, ValidAnyParams};

use super::{Directory, Mode, SealedSeed, ToServer, from_bytes, to_bytes};
use crate::aggregation::halves::{ClientHalf, Joined, RoundSpec};
use crate::aggregation::round::Input;
use crate::client::message::pairwise_frame;
use crate::{ClientId, MufcError, MufcResult};

/// A client's half of a pairwise or dealt round.
pub(crate) struct FramedClient {
    me: ClientId,
    spec: RoundSpec,
    own: Mode,
    sketch: AnySketch,
    done: bool,
}

impl FramedClient {
    /// Client `me` joins the round `spec` with its input and what it masks
    /// with (`mode`): its sketch is encoded; the half, its first message
    /// (its fresh public key; none with dealt masks) and the sketch to
    /// keep once the round commits.
    pub(crate) fn join(
        spec: &RoundSpec,
        input: Input<'_>,
        params: &ValidAnyParams,
        mode: Mode,
    ) -> MufcResult<Joined> {
        let me = input.id;
        let (sketch, keep) = input.sketch(params)?;
        let sketch = sketch.into_owned();
        // With dealt masks the client waits for its sealed seed: its one
        // message is its masked input.
        let first = match &mode {
            Mode::Pairwise(keys) => Some(to_bytes(&ToServer::Key {
                client: me.0,
                session: spec.session,
                round: spec.round,
                key: keys.public_key(),
            })?),
            Mode::Dealer(_) => None,
        };
        let new = keep.then(|| sketch.clone());
        Ok((
            Box::new(Self {
                me,
                spec: spec.clone(),
                own: mode,
                sketch,
                done: false,
            }),
            first,
            new,
        ))
    }

    /// Checks the directory: this round's, naming exactly the ring once
    /// each, with this client's own key.
    fn check(&self, d: &Directory, keys: &MaskKeyPair) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused {
            round: self.spec.round,
            reason,
        };
        if d.session != self.spec.session || d.round != self.spec.round {
            return Err(refuse("a key directory of another round".into()));
        }
        let named: BTreeSet<u64> = d.keys.iter().map(|(c, _)| *c).collect();
        let ring: BTreeSet<u64> = self.spec.ring.iter().map(|c| c.0).collect();
        if named.len() != d.keys.len() || named != ring {
            return Err(refuse(
                "the key directory does not name the round's clients once each".into(),
            ));
        }
        let own = d
            .keys
            .iter()
            .find(|(c, _)| *c == self.me.0)
            .map(|(_, k)| *k);
        if own != Some(keys.public_key()) {
            return Err(refuse("the key directory changed this client's key".into()));
        }
        Ok(())
    }
}

impl ClientHalf for FramedClient {
    fn steps(&self) -> &'static [Step] {
        match self.own {
            Mode::Pairwise(_) => &[Step::AdvertiseKeys, Step::MaskedInput],
            Mode::Dealer(_) => &[Step::MaskedInput],
        }
    }

    fn summed(&self) -> Option<std::borrow::Cow<'_, [ClientId]>> {
        // No dropout: the frame sent, the server sums the whole ring.
        self.done.then(|| crate::ids::in_order(&self.spec.ring))
    }

    fn check_directory(
        &self,
        bytes: &[u8],
        firsts: &BTreeMap<ClientId, Vec<u8>>,
    ) -> MufcResult<()> {
        // Dealt masks have no directory: the dealer's seal is the check.
        if let Mode::Dealer(_) = self.own {
            return Ok(());
        }
        let d: Directory = from_bytes(bytes, 64 << 20, "a key directory")?;
        for (c, key) in &d.keys {
            let signed = (firsts.get(&ClientId(*c)))
                .and_then(|b| from_bytes::<ToServer>(b, 4096, "a key").ok());
            let ok = matches!(signed, Some(ToServer::Key { client, session, round, key: k })
                if client == *c && session == self.spec.session
                    && round == self.spec.round && k == *key);
            if !ok {
                return Err(MufcError::RoundRefused {
                    round: self.spec.round,
                    reason: format!(
                        "the key directory gives client {c} a key it did not sign for this round"
                    ),
                });
            }
        }
        Ok(())
    }

    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>> {
        if self.done {
            return Err(MufcError::Remote(
                "the client sent its masked input already".into(),
            ));
        }
        let ctx = self.spec.context();
        let frame = match &self.own {
            Mode::Pairwise(keys) => {
                // A directory of a million clients fits far below this.
                let d: Directory = from_bytes(bytes, 64 << 20, "a key directory")?;
                self.check(&d, keys)?;
                pairwise_frame(self.me, &self.sketch, keys, &d.keys, ctx)?
            }
            Mode::Dealer(key) => {
                let s: SealedSeed = from_bytes(bytes, 4096, "a sealed seed")?;
                let refuse = |reason: String| MufcError::RoundRefused {
                    round: self.spec.round,
                    reason,
                };
                if s.session != self.spec.session || s.round != self.spec.round {
                    return Err(refuse("a sealed seed of another round".into()));
                }
                // Sealed by the dealer under the key the two share, for
                // the ring this client was announced: the server can make
                // none that opens, nor have one dealt for a smaller ring.
                let ring: Vec<u64> = self.spec.ring.iter().map(|c| c.0).collect();
                let seed = open_seed(key, &ctx, self.me.0, &ring, &s.sealed)
                    .map_err(|e| refuse(format!("the dealer's seal: {e}")))?;
                // Expanded and added in the sketch's own field.
                let masked = self.sketch.mask_seeded(&seed, self.me.0, ctx)?;
                masked.to_frame().to_bytes()?
            }
        };
        self.done = true;
        // The frame alone: it names its client and round, and the server
        // reads the masked-input step's messages as frames.
        Ok(frame)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
