//! Masked sketches (what a client sends) and the server's aggregation
//! state (Algorithm 2 of the paper, lines 2-3), as plain values and pure
//! state transitions: no I/O, messages in and out.

use std::collections::BTreeSet;

use field::FiniteField;

use crate::error::check_len;
use crate::masking::MaskVector;
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext, pairwise_mask};
use crate::{Sketch, SketchError, SketchResult, SparseVector, ValidSketchParams};

/// A client's sketch plus its mask, `S_i + z_i`, with the sender's id and
/// the round it belongs to (Algorithm 2, line 2). Alone it is uniformly
/// distributed whatever the sketch (the mask is uniform); only the sum over
/// all clients of a round reveals anything.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::masking::deal_zero_sum_masks;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::{Aggregator, Sketch, SketchParams};
///
/// let params = SketchParams::new(2, 100u32).validate(Mersenne61)?;
/// let ctx = RoundContext { session: SessionId([0; 32]), round: 0 };
/// let masks = deal_zero_sum_masks(params.field(), 2, params.num_syndromes(), &mut testkit::rng("doc"));
/// let a = Sketch::from_unsigned(&params, [(3u32, 1u64)])?.mask(&masks[0], 1, ctx)?;
/// let b = Sketch::from_unsigned(&params, [(3u32, 2u64)])?.mask(&masks[1], 2, ctx)?;
/// let mut server = Aggregator::new(&params, ctx, 2);
/// server.accept(&a)?;
/// server.accept(&b)?;
/// assert_eq!(server.decode()?.to_unsigned(params.field()), vec![(3u32.into(), 3u32.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MaskedSketch<F: FiniteField> {
    params: ValidSketchParams<F>,
    client_id: u64,
    context: RoundContext,
    syndromes: Vec<F::Elem>,
}

impl<F: FiniteField> MaskedSketch<F> {
    /// A masked sketch from its parts (as received).
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`] unless there are `2t + r` syndromes.
    pub fn from_parts(
        params: &ValidSketchParams<F>,
        client_id: u64,
        context: RoundContext,
        syndromes: Vec<F::Elem>,
    ) -> SketchResult<Self> {
        let expected = params.num_syndromes();
        check_len(expected, syndromes.len())?;
        Ok(Self {
            params: params.clone(),
            client_id,
            context,
            syndromes,
        })
    }

    /// The sender.
    pub fn client_id(&self) -> u64 {
        self.client_id
    }
    /// The session and round.
    pub fn context(&self) -> &RoundContext {
        &self.context
    }
    /// The masked syndromes.
    pub fn syndromes(&self) -> &[F::Elem] {
        &self.syndromes
    }
    /// The parameters.
    pub fn params(&self) -> &ValidSketchParams<F> {
        &self.params
    }
}

impl<F: FiniteField> Sketch<F> {
    /// Adds `mask` to the syndromes: the message of client `client_id` in
    /// `context`.
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`] unless the mask has `2t + r` elements.
    pub fn mask(
        &self,
        mask: &MaskVector<F::Elem>,
        client_id: u64,
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<F>> {
        let expected = self.syndromes().len();
        check_len(expected, mask.0.len())?;
        let f = self.field();
        let syndromes = self
            .syndromes()
            .iter()
            .zip(&mask.0)
            .map(|(s, z)| f.add(s, z))
            .collect();
        MaskedSketch::from_parts(self.params(), client_id, context, syndromes)
    }

    /// Masks the sketch with client `own_id`'s pairwise masks against
    /// `peers` (see [`crate::masking::pairwise`]).
    ///
    /// # Errors
    ///
    /// As [`pairwise_mask`].
    pub fn mask_pairwise(
        &self,
        keys: &MaskKeyPair,
        own_id: u64,
        peers: &[(u64, MaskPublicKey)],
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<F>> {
        let mask = pairwise_mask(
            self.field(),
            self.syndromes().len(),
            keys,
            own_id,
            peers,
            &context,
        )?;
        self.mask(&mask, own_id, context)
    }
}

/// The server's state for one round: it accepts each client's masked
/// sketch once and adds it to a running sum (Algorithm 2, line 3).
///
/// Rejected messages leave the state unchanged: a different field or
/// parameters, another session or round (replay, docs/threat-model.md R2), or a client
/// already counted (first write wins, docs/threat-model.md R1).
///
/// See [`MaskedSketch`] for an example.
#[derive(Clone, Debug)]
pub struct Aggregator<F: FiniteField> {
    params: ValidSketchParams<F>,
    context: RoundContext,
    min_clients: usize,
    sum: Vec<F::Elem>,
    clients: BTreeSet<u64>,
}

impl<F: FiniteField> Aggregator<F> {
    /// An empty round that will release an aggregate of at least
    /// `min_clients` clients (docs/threat-model.md §2.1: with too few clients the output
    /// reveals individual inputs).
    pub fn new(params: &ValidSketchParams<F>, context: RoundContext, min_clients: usize) -> Self {
        let f = params.field();
        Self {
            params: params.clone(),
            context,
            min_clients,
            sum: vec![f.zero(); params.num_syndromes()],
            clients: BTreeSet::new(),
        }
    }

    /// Adds one client's message.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`] for other parameters,
    /// [`SketchError::MessageRejected`] for another session or round or a
    /// duplicate client.
    pub fn accept(&mut self, msg: &MaskedSketch<F>) -> SketchResult<()> {
        self.params.check_same(&msg.params)?;
        if msg.context != self.context {
            return Err(SketchError::MessageRejected {
                reason: format!(
                    "message of round {} in another session or round (expected round {})",
                    msg.context.round, self.context.round
                ),
            });
        }
        if self.clients.contains(&msg.client_id) {
            return Err(SketchError::MessageRejected {
                reason: format!("duplicate message from client {}", msg.client_id),
            });
        }
        let f = self.params.field();
        for (a, b) in self.sum.iter_mut().zip(&msg.syndromes) {
            f.add_assign(a, b);
        }
        self.clients.insert(msg.client_id);
        Ok(())
    }

    /// The clients counted so far.
    pub fn clients(&self) -> &BTreeSet<u64> {
        &self.clients
    }

    /// The summed sketch (the masks cancel once every client of the round
    /// is in).
    ///
    /// # Errors
    ///
    /// [`SketchError::MessageRejected`] with fewer than `min_clients`
    /// clients.
    pub fn finish(self) -> SketchResult<Sketch<F>> {
        if self.clients.len() < self.min_clients {
            return Err(SketchError::MessageRejected {
                reason: format!(
                    "only {} clients, at least {} required",
                    self.clients.len(),
                    self.min_clients
                ),
            });
        }
        Sketch::from_syndromes(&self.params, self.sum)
    }

    /// [`finish`](Self::finish), then [`Sketch::decode`].
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish) and [`Sketch::decode`].
    pub fn decode(self) -> SketchResult<SparseVector<F::Elem>> {
        self.finish()?.decode()
    }
}
