//! Masked sketches (what a client sends) and the server's aggregation
//! state (Algorithm 2 of the paper, lines 2-3), as plain values and pure
//! state transitions: no I/O, messages in and out.

use std::collections::BTreeSet;

use crate::masking::MaskDomain;
use crate::masking::pairwise::RoundContext;
use crate::wire::Frame;
use crate::{LinearParams, LinearSketch, SketchError, SketchResult, SparseVector};

/// A client's sketch plus its mask, `S_i + z_i`, with the sender's id and
/// the round it belongs to (Algorithm 2, line 2), for any [`LinearSketch`]
/// `S` (made by [`LinearSketch::mask`] and
/// [`LinearSketch::mask_pairwise`]). Alone it is uniformly
/// distributed whatever the sketch (the mask is uniform); only the sum over
/// all clients of a round reveals anything.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::masking::deal_zero_sum_masks;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::{Aggregator, LinearSketch, Sketch, SketchParams};
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
pub struct MaskedSketch<S: LinearSketch> {
    params: S::Params,
    client_id: u64,
    context: RoundContext,
    elements: Vec<S::Elem>,
}

impl<S: LinearSketch> MaskedSketch<S> {
    /// A masked sketch from its parts (as received).
    ///
    /// # Errors
    ///
    /// As [`LinearSketch::from_elements`] (the length, and the canonical
    /// range of integer elements).
    pub fn from_parts(
        params: &S::Params,
        client_id: u64,
        context: RoundContext,
        elements: Vec<S::Elem>,
    ) -> SketchResult<Self> {
        let elements = S::from_elements(params, elements)?.into_elements();
        Ok(Self {
            params: params.clone(),
            client_id,
            context,
            elements,
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
    /// The masked elements.
    pub fn elements(&self) -> &[S::Elem] {
        &self.elements
    }
    /// The parameters.
    pub fn params(&self) -> &S::Params {
        &self.params
    }

    /// The message as a frame.
    pub fn to_frame(&self) -> Frame {
        self.params
            .frame(true, &self.elements, self.client_id, &self.context)
    }

    /// The message a frame carries, checked against the receiver's
    /// parameters.
    ///
    /// # Errors
    ///
    /// As [`LinearParams::parse_frame`] and [`from_parts`](Self::from_parts).
    pub fn from_frame(frame: &Frame, params: &S::Params) -> SketchResult<Self> {
        let elements = params.parse_frame(true, frame)?;
        Self::from_parts(params, frame.client_id, frame.context(), elements)
    }

    /// [`Frame::parse`] then [`from_frame`](Self::from_frame).
    ///
    /// # Errors
    ///
    /// As those two.
    pub fn from_bytes(bytes: &[u8], params: &S::Params, max_len: usize) -> SketchResult<Self> {
        Self::from_frame(&Frame::parse(bytes, max_len)?, params)
    }
}

/// The server's state for one round: it accepts each client's masked
/// sketch once and adds it to a running sum (Algorithm 2, line 3), for any
/// [`LinearSketch`].
///
/// Rejected messages leave the state unchanged: a different field or
/// parameters, another session or round (replay, docs/threat-model.md R2), or a client
/// already counted (first write wins, docs/threat-model.md R1).
///
/// See [`MaskedSketch`] for an example.
#[derive(Clone, Debug)]
pub struct Aggregator<S: LinearSketch> {
    params: S::Params,
    context: RoundContext,
    min_clients: usize,
    sum: Vec<S::Elem>,
    clients: BTreeSet<u64>,
}

impl<S: LinearSketch> Aggregator<S> {
    /// An empty round that will release an aggregate of at least
    /// `min_clients` clients (docs/threat-model.md §2.1: with too few clients the output
    /// reveals individual inputs).
    pub fn new(params: &S::Params, context: RoundContext, min_clients: usize) -> Self {
        Self {
            params: params.clone(),
            context,
            min_clients,
            sum: S::new(params).into_elements(),
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
    pub fn accept(&mut self, msg: &MaskedSketch<S>) -> SketchResult<()> {
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
        let d = self.params.mask_domain();
        for (a, b) in self.sum.iter_mut().zip(&msg.elements) {
            *a = d.mask_add(a, b);
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
    pub fn finish(self) -> SketchResult<S> {
        if self.clients.len() < self.min_clients {
            return Err(SketchError::MessageRejected {
                reason: format!(
                    "only {} clients, at least {} required",
                    self.clients.len(),
                    self.min_clients
                ),
            });
        }
        S::from_elements(&self.params, self.sum)
    }

    /// [`finish`](Self::finish), then [`LinearSketch::decode`].
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish) and [`LinearSketch::decode`].
    pub fn decode(self) -> SketchResult<SparseVector<S::Key, S::Count>> {
        self.finish()?.decode()
    }
}
