//! A lying SecAgg server played against the real clients
//! (docs/threat-model.md S6, S7): it may withhold shares in the masking
//! requests, send each client its own alive set to attest, send any
//! unmasking lists, and forward any real attestation tag (plus tags it
//! forges for its colluders). Everything the server and the colluders hold
//! afterwards is gathered in a [`View`], and [`try_unmask_with`] really
//! tries to recover an honest input from it.

use std::collections::{BTreeMap, BTreeSet};

use field::{Field, FiniteField, Mersenne61};
use masked_sum::masking::pairwise::{
    MaskKeyPair, MaskPublicKey, RoundContext, combine_terms, peer_mask_terms,
};
use masked_sum::secagg::client::open_share;
use masked_sum::secagg::messages::{
    AdvertiseKeys, Attestation, ClientBody, ConsistencyRequest, ServerBody, ServerEnvelope,
    UnmaskingRequest,
};
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
use masked_sum::secagg::shamir::{self, SecretShare};
use masked_sum::secagg::{ClientId, attest_key, attestation_tag, seed_commitment, self_mask};

use crate::secagg::{Harness, config, inputs};

/// The field of these runs.
pub type Elem = <Mersenne61 as Field>::Elem;
/// The input length of these runs.
pub const LEN: usize = 3;

/// Complete-graph parameters under the semi-malicious policy.
pub fn params(t: usize, c: usize) -> SecAggParams {
    SecAggParams::new(GraphChoice::Complete, t, c, ServerModel::SemiMalicious)
}

/// Everything the adversary (the server and the colluders) holds.
#[derive(Debug, Default)]
pub struct View {
    /// Shares of each client's self-mask seed `b_u`.
    pub seeds: BTreeMap<ClientId, Vec<SecretShare>>,
    /// Shares of each client's mask secret key `s_sk_u`.
    pub keys: BTreeMap<ClientId, Vec<SecretShare>>,
    /// The masked inputs the server received.
    pub masked: BTreeMap<ClientId, Vec<Elem>>,
    /// Each client's advertised keys.
    pub adverts: BTreeMap<ClientId, AdvertiseKeys>,
}

/// The shares each client of `holders` received in the ShareKeys step
/// (opened with its secrets, which the harness regenerates from its
/// label): holder -> owner -> (share of `s_sk`, share of `b`).
pub fn held_shares(
    h: &Harness<Mersenne61>,
    adverts: &BTreeMap<ClientId, AdvertiseKeys>,
    holders: &BTreeSet<ClientId>,
) -> BTreeMap<ClientId, BTreeMap<ClientId, (SecretShare, SecretShare)>> {
    let mut out: BTreeMap<ClientId, BTreeMap<ClientId, (SecretShare, SecretShare)>> =
        BTreeMap::new();
    for m in &h.sent {
        let ClientBody::ShareKeys(sk) = &m.body else {
            continue;
        };
        for e in sk.shares.iter().filter(|e| holders.contains(&e.peer)) {
            let secrets = Harness::<Mersenne61>::secrets(&h.label, e.peer);
            let owner_enc = MaskPublicKey(adverts[&m.client].enc_key);
            let pair = open_share(
                &secrets.enc,
                e.peer,
                m.client,
                &owner_enc,
                h.cfg.context(),
                &e.ciphertext,
            )
            .unwrap();
            out.entry(e.peer).or_default().insert(m.client, pair);
        }
    }
    out
}

/// The adversary's view of a harness's transcript so far: advertised keys,
/// masked inputs, every share the colluders received, and every share
/// revealed in an unmasking response.
pub fn view_of(h: &Harness<Mersenne61>, colluders: &BTreeSet<ClientId>) -> View {
    let f = Mersenne61;
    let mut view = View::default();
    for m in &h.sent {
        match &m.body {
            ClientBody::AdvertiseKeys(k) => {
                view.adverts.insert(m.client, *k);
            }
            ClientBody::MaskedInput(mi) => {
                let y = mi
                    .elements
                    .chunks_exact(f.byte_len())
                    .map(|c| f.from_bytes(c).unwrap())
                    .collect();
                view.masked.insert(m.client, y);
            }
            ClientBody::UnmaskingResponse(r) => {
                for s in &r.seed_shares {
                    let share = SecretShare::from_bytes(&s.share).unwrap();
                    view.seeds.entry(s.owner).or_default().push(share);
                }
                for s in &r.key_shares {
                    let share = SecretShare::from_bytes(&s.share).unwrap();
                    view.keys.entry(s.owner).or_default().push(share);
                }
            }
            _ => {}
        }
    }
    for shares in held_shares(h, &view.adverts, colluders).into_values() {
        for (owner, (k, s)) in shares {
            view.keys.entry(owner).or_default().push(k);
            view.seeds.entry(owner).or_default().push(s);
        }
    }
    view
}

/// The secrets the adversary can reconstruct and check: client -> `b_u`,
/// client -> `s_sk_u`. Colluders' secrets are known outright.
#[derive(Debug)]
pub struct Known {
    /// Self-mask seeds.
    pub seeds: BTreeMap<ClientId, [u8; 32]>,
    /// Mask key pairs.
    pub keys: BTreeMap<ClientId, MaskKeyPair>,
}

/// Reconstructs every secret with `t` checked shares in `view`.
pub fn reconstruct(
    view: &View,
    t: usize,
    colluders: &BTreeSet<ClientId>,
    label: &str,
    ctx: &RoundContext,
) -> Known {
    let mut known = Known {
        seeds: BTreeMap::new(),
        keys: BTreeMap::new(),
    };
    for c in colluders {
        let s = Harness::<Mersenne61>::secrets(label, *c);
        known.seeds.insert(*c, *s.seed);
        known.keys.insert(*c, s.mask);
    }
    for (u, shares) in &view.seeds {
        if let Ok(b) = shamir::reconstruct_secret(shares, t)
            && seed_commitment(ctx, *u, &b) == view.adverts[u].seed_commitment
        {
            known.seeds.insert(*u, *b);
        }
    }
    for (u, shares) in &view.keys {
        if let Ok(s) = shamir::reconstruct_secret(shares, t) {
            let key = MaskKeyPair::from_secret_bytes(*s);
            if key.public_key().0 == view.adverts[u].mask_key {
                known.keys.insert(*u, key);
            }
        }
    }
    known
}

/// The adversary's attempt to unmask client `u`'s input alone, `u` having
/// masked with `peers`: possible when it knows `b_u` and, for every peer
/// `w`, one of `s_sk_u` and `s_sk_w`. Returns the recovered input.
pub fn try_unmask_with(
    view: &View,
    known: &Known,
    u: ClientId,
    peers: &[ClientId],
    ctx: &RoundContext,
) -> Option<Vec<Elem>> {
    let f = Mersenne61;
    let b = known.seeds.get(&u)?;
    let pk = |w: ClientId| MaskPublicKey(view.adverts[&w].mask_key);
    let mut x = view.masked.get(&u)?.clone();
    let own = self_mask(&f, LEN, b, ctx, u).unwrap();
    for (a, m) in x.iter_mut().zip(&own.0) {
        f.sub_assign(a, m);
    }
    if let Some(key) = known.keys.get(&u) {
        let all: Vec<(u64, MaskPublicKey)> = peers.iter().map(|w| (*w, pk(*w))).collect();
        let terms = peer_mask_terms(&f, LEN, key, u, &all, ctx).unwrap();
        for (a, v) in x.iter_mut().zip(&combine_terms(&f, LEN, &terms).0) {
            f.sub_assign(a, v);
        }
        return Some(x);
    }
    for &w in peers {
        // w's term for u is the negation of u's term for w.
        let key = known.keys.get(&w)?;
        let terms = peer_mask_terms(&f, LEN, key, w, &[(u, pk(u))], ctx).unwrap();
        for (a, v) in x.iter_mut().zip(&combine_terms(&f, LEN, &terms).0) {
            f.add_assign(a, v);
        }
    }
    Some(x)
}

/// The lists an unmasking request must carry for a client that masked
/// with `masked_with` and attested `set`: alive = its peers in the set,
/// dropped = the rest of the peers it masked with.
pub fn implied_lists(
    me: ClientId,
    set: &[ClientId],
    masked_with: &BTreeSet<ClientId>,
) -> (Vec<ClientId>, Vec<ClientId>) {
    let alive = set.iter().copied().filter(|w| *w != me).collect();
    let dropped = masked_with
        .iter()
        .copied()
        .filter(|w| !set.contains(w))
        .collect();
    (alive, dropped)
}

/// Which alive set a client is sent to attest, given the true one.
pub type SetChoice<'a> = dyn FnMut(ClientId, &[ClientId]) -> Option<Vec<ClientId>> + 'a;
/// Unmasking lists (alive, dropped) for a client, given the set it
/// attested and the peers it masked with.
pub type Lists = (Vec<ClientId>, Vec<ClientId>);
/// Which unmasking lists a client is sent.
pub type ListChoice<'a> =
    dyn FnMut(ClientId, &[ClientId], &BTreeSet<ClientId>) -> Option<Lists> + 'a;

/// One lying server's plan, decided step by step by callbacks.
pub struct Plan<'a> {
    /// The peers whose shares the server relays to a client in its masking
    /// request (`None`: all of them).
    pub keep: &'a dyn Fn(ClientId) -> Option<BTreeSet<ClientId>>,
    /// The alive set the server sends a client to attest (`None`: the
    /// client is not asked), given the true alive set.
    pub set: &'a mut SetChoice<'a>,
    /// The unmasking lists for a client given the set it attested and the
    /// peers it masked with (`None`: the lists the set implies).
    pub lists: &'a mut ListChoice<'a>,
}

impl std::fmt::Debug for Plan<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan").finish_non_exhaustive()
    }
}

/// What a played attack left.
#[derive(Debug)]
pub struct Outcome {
    /// The adversary's view after unmasking.
    pub view: View,
    /// The secrets it can reconstruct from it.
    pub known: Known,
    /// The peers each client masked with.
    pub masked_with: BTreeMap<ClientId, BTreeSet<ClientId>>,
    /// The honest clients that answered the unmasking request.
    pub answered: usize,
    /// The true inputs.
    pub inputs: Vec<(ClientId, Vec<Elem>)>,
    /// The round's context.
    pub ctx: RoundContext,
}

/// Plays `plan` against real clients `1..=n` (complete graph, threshold
/// `t`, semi-malicious policy, the clients of `colluders` colluding), the
/// server relaying honestly wherever the plan does not lie. At unmasking
/// the server forwards to each honest client every real tag of the set it
/// attested (those from clients that attested the same set) and forges the
/// tags of its colluders.
pub fn play(
    n: u64,
    t: usize,
    colluders: &BTreeSet<ClientId>,
    label: &str,
    plan: Plan<'_>,
) -> Outcome {
    play_with(n, params(t, colluders.len()), colluders, label, plan)
}

/// [`play`] under any parameters (a semi-honest threshold, a SecAgg+
/// graph).
pub fn play_with(
    n: u64,
    p: SecAggParams,
    colluders: &BTreeSet<ClientId>,
    label: &str,
    plan: Plan<'_>,
) -> Outcome {
    let f = Mersenne61;
    let t = p.threshold;
    let cfg = config(&f, n, p, LEN, label);
    let truth = inputs(&f, n, LEN, label);
    let mut h = Harness::new(cfg, &truth, label);
    let ctx = *h.cfg.context();
    let dir = h.step(&[]);
    assert!(
        h.answer(&dir).is_empty(),
        "{label}: the directory is honest"
    );
    let mut reqs = h.step(&[]);
    let mut masked_with = BTreeMap::new();
    for m in &mut reqs {
        let ServerBody::MaskingRequest(r) = &mut m.body else {
            panic!("a masking request")
        };
        if let Some(keep) = (plan.keep)(m.client) {
            r.shares.retain(|e| keep.contains(&e.peer));
        }
        masked_with.insert(m.client, r.shares.iter().map(|e| e.peer).collect());
    }
    let _ = h.answer(&reqs);
    let cons = h.step(&[]);
    let truth_set: Vec<ClientId> = match cons.first().map(|m| &m.body) {
        Some(ServerBody::ConsistencyRequest(c)) => c.alive.clone(),
        _ => Vec::new(),
    };
    // Each honest client's set, its tags to each peer.
    let mut attested: BTreeMap<ClientId, Vec<ClientId>> = BTreeMap::new();
    let mut tags: BTreeMap<ClientId, BTreeMap<ClientId, [u8; 32]>> = BTreeMap::new();
    for m in &cons {
        if colluders.contains(&m.client) {
            continue;
        }
        let Some(set) = (plan.set)(m.client, &truth_set) else {
            continue;
        };
        let mut lie = m.clone();
        lie.body = ServerBody::ConsistencyRequest(ConsistencyRequest { alive: set.clone() });
        if let Ok(reply) = h.answer_one(&lie) {
            let ClientBody::Attestations(a) = reply.body else {
                panic!("attestations")
            };
            tags.insert(m.client, a.tags.iter().map(|x| (x.peer, x.tag)).collect());
            attested.insert(m.client, set);
        }
    }
    h.pending.clear();
    let adverts = view_of(&h, &BTreeSet::new()).adverts;
    let mut answered = 0;
    for (r, set) in &attested {
        let mine = masked_with.get(r).cloned().unwrap_or_default();
        let (alive, dropped) =
            (plan.lists)(*r, set, &mine).unwrap_or_else(|| implied_lists(*r, set, &mine));
        let mut attestations: Vec<Attestation> = attested
            .iter()
            .filter(|(w, s)| *w != r && *s == set)
            .filter_map(|(w, _)| {
                tags[w].get(r).map(|tag| Attestation {
                    peer: *w,
                    tag: *tag,
                })
            })
            .collect();
        for c in colluders.iter().filter(|c| set.contains(c)) {
            let secrets = Harness::<Mersenne61>::secrets(label, *c);
            let shared = secrets
                .enc
                .agree(*r, &MaskPublicKey(adverts[r].enc_key))
                .unwrap();
            let key = attest_key(&shared, &ctx, *c, *r);
            attestations.push(Attestation {
                peer: *c,
                tag: attestation_tag(&key, &ctx, *c, *r, set),
            });
        }
        let req = ServerEnvelope::new(
            &ctx,
            *r,
            ServerBody::UnmaskingRequest(UnmaskingRequest {
                alive,
                dropped,
                attestations,
            }),
        );
        if h.answer_one(&req).is_ok() {
            answered += 1;
        }
    }
    let view = view_of(&h, colluders);
    let known = reconstruct(&view, t, colluders, label, &ctx);
    Outcome {
        view,
        known,
        masked_with,
        answered,
        inputs: truth,
        ctx,
    }
}

impl Outcome {
    /// Client `u`'s input, if the adversary can unmask it alone.
    pub fn unmask(&self, u: ClientId) -> Option<Vec<Elem>> {
        let peers: Vec<ClientId> = self
            .masked_with
            .get(&u)
            .map(|s| s.iter().copied().collect())
            .unwrap_or_default();
        try_unmask_with(&self.view, &self.known, u, &peers, &self.ctx)
    }
}
