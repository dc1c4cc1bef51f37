//! A server that lies (docs/threat-model.md S6, S7 and the counting
//! argument `2t > h + c`), played against the real clients with
//! `sum_testkit::lying`: the consistent-lie unmasking attack and the
//! masking-set withholding attack, exactly, and a property test over
//! random lying strategies (withheld shares, a different alive set for
//! each client to attest, arbitrary unmasking lists, forged colluder
//! attestations) in which the adversary really tries to unmask every
//! honest input with everything it holds.
#![allow(clippy::unwrap_used)]
// Client ids and counts in these tests are tiny: the casts are exact.
#![allow(clippy::cast_possible_truncation)]

use std::collections::{BTreeMap, BTreeSet};

use field::Mersenne61;
use masked_sum::secagg::ClientId;
use rand::{Rng, RngExt};
use sum_testkit::lying::{
    Outcome, Plan, View, held_shares, params, play, reconstruct, try_unmask_with, view_of,
};
use sum_testkit::secagg::{Harness, config, inputs};

/// Plays a plan whose callbacks are plain closures.
fn run(
    n: u64,
    t: usize,
    colluders: &BTreeSet<ClientId>,
    label: &str,
    keep: &dyn Fn(ClientId) -> Option<BTreeSet<ClientId>>,
    mut set: impl FnMut(ClientId, &[ClientId]) -> Option<Vec<ClientId>>,
    mut lists: impl FnMut(
        ClientId,
        &[ClientId],
        &BTreeSet<ClientId>,
    ) -> Option<(Vec<ClientId>, Vec<ClientId>)>,
) -> Outcome {
    play(
        n,
        t,
        colluders,
        label,
        Plan {
            keep,
            set: &mut set,
            lists: &mut lists,
        },
    )
}

/// The consistent-lie attack, exactly: n = 5, t = 3, c = 0, complete graph
/// (parameters the semi-malicious policy accepts). The server tells every
/// survivor "alive = {1}, dropped = everyone else".
#[test]
fn consistent_lie_attack_learns_nothing() {
    let (n, t, victim) = (5u64, 3usize, 1u64);
    assert!(params(t, 0).validate(n as usize).is_ok());
    let label = "s6-consistent-lie";
    let none = BTreeSet::new();
    let lie = |r: ClientId| {
        (
            vec![victim],
            (2..=n).filter(|w| *w != r).collect::<Vec<_>>(),
        )
    };

    // The attack is real: had the survivors answered as the old client
    // did (seed shares of those called alive, key shares of those called
    // dropped), the server would recover the victim's input exactly.
    let f = Mersenne61;
    let truth = inputs(&f, n, 3, label);
    let mut h = Harness::new(config(&f, n, params(t, 0), 3, label), &truth, label);
    let _ = h.to_consistency();
    let ctx = *h.cfg.context();
    let base = view_of(&h, &none);
    let everyone: BTreeSet<ClientId> = (1..=n).collect();
    let held = held_shares(&h, &base.adverts, &everyone);
    let mut old = View {
        masked: base.masked,
        adverts: base.adverts,
        ..View::default()
    };
    for r in 2..=n {
        let (alive, dropped) = lie(r);
        for a in alive {
            old.seeds.entry(a).or_default().push(held[&r][&a].1.clone());
        }
        for d in dropped {
            old.keys.entry(d).or_default().push(held[&r][&d].0.clone());
        }
    }
    let known = reconstruct(&old, t, &none, label, &ctx);
    let peers: Vec<ClientId> = (2..=n).collect();
    assert_eq!(
        try_unmask_with(&old, &known, victim, &peers, &ctx),
        Some(truth[0].1.clone())
    );

    // Against the real clients, whether the lie comes at unmasking (the
    // lists are not those of the set they attested) or already at the
    // consistency step (a set too small to attest), nobody answers.
    let all = |_: ClientId| None;
    let at_unmasking = run(
        n,
        t,
        &none,
        label,
        &all,
        |_, truth| Some(truth.to_vec()),
        |r, _, _| (r != victim).then(|| lie(r)),
    );
    let at_consistency = run(
        n,
        t,
        &none,
        label,
        &all,
        |r, _| Some(vec![victim.min(r), victim.max(r)]),
        |r, _, _| (r != victim).then(|| lie(r)),
    );
    for (what, out) in [
        ("at unmasking", &at_unmasking),
        ("at consistency", &at_consistency),
    ] {
        assert_eq!(
            out.answered,
            if what == "at unmasking" { 1 } else { 0 },
            "{what}"
        );
        assert!(
            out.view.seeds.get(&victim).map_or(0, Vec::len) < t,
            "{what}"
        );
        assert_eq!(out.unmask(victim), None, "{what}");
    }

    // Every strategy the check still allows at this size, each responder
    // (the victim included) told a maximal lie (alive: any t - 1 or more of
    // its peers; dropped: all the others), counted exhaustively: the
    // victim's input never becomes unmaskable.
    let ids: Vec<ClientId> = (1..=n).collect();
    let choices: Vec<Vec<BTreeSet<ClientId>>> = ids
        .iter()
        .map(|r| {
            let peers: Vec<ClientId> = ids.iter().copied().filter(|w| w != r).collect();
            (0u32..1 << peers.len())
                .map(|mask| {
                    peers
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| mask & (1 << i) != 0)
                        .map(|(_, w)| *w)
                        .collect::<BTreeSet<_>>()
                })
                .filter(|a| a.len() + 1 >= t)
                .collect()
        })
        .collect();
    let mut pick = vec![0usize; ids.len()];
    let mut strategies = 0u64;
    loop {
        strategies += 1;
        let mut seeds: BTreeMap<ClientId, usize> = BTreeMap::new();
        let mut keys: BTreeMap<ClientId, usize> = BTreeMap::new();
        for (i, r) in ids.iter().enumerate() {
            let alive = &choices[i][pick[i]];
            *seeds.entry(*r).or_default() += 1; // its own seed share
            for w in ids.iter().filter(|w| *w != r) {
                let counter = if alive.contains(w) {
                    &mut seeds
                } else {
                    &mut keys
                };
                *counter.entry(*w).or_default() += 1;
            }
        }
        let has = |m: &BTreeMap<ClientId, usize>, u: ClientId| m.get(&u).copied().unwrap_or(0) >= t;
        for u in &ids {
            assert!(!(has(&seeds, *u) && has(&keys, *u)), "both secrets of {u}");
            let unmaskable = has(&seeds, *u)
                && ids
                    .iter()
                    .filter(|w| *w != u)
                    .all(|w| has(&keys, *u) || has(&keys, *w));
            assert!(!unmaskable, "client {u} unmaskable under {pick:?}");
        }
        // Next combination (odometer).
        let mut i = 0;
        while i < pick.len() {
            pick[i] += 1;
            if pick[i] < choices[i].len() {
                break;
            }
            pick[i] = 0;
            i += 1;
        }
        if i == pick.len() {
            break;
        }
    }
    assert_eq!(strategies, 11u64.pow(5));
}

/// The masking-set withholding attack (docs/threat-model.md S7), exactly:
/// the victim hears only from clients 2 and 3, so it masks with them alone,
/// and each other client is then told the lie that would let the server
/// rebuild `b_1`, `s_sk_2` and `s_sk_3`. Without the consistency round this
/// recovered the victim's input; now every liar's attestations fall short
/// of the threshold and nobody reveals anything.
#[test]
fn masking_set_withholding_learns_nothing() {
    let (n, t, v) = (5u64, 3usize, 1u64);
    let none = BTreeSet::new();
    let keep = |c: ClientId| (c == v).then(|| BTreeSet::from([2, 3]));
    // The attack's lists (w1..w4 = 2..5) and the sets they imply.
    let table: BTreeMap<ClientId, (Vec<ClientId>, Vec<ClientId>)> = [
        (4, (vec![1, 5], vec![2, 3])),
        (5, (vec![1, 4], vec![2, 3])),
        (2, (vec![1, 4], vec![3, 5])),
        (3, (vec![1, 4], vec![2, 5])),
    ]
    .into();
    for ask_victim in [false, true] {
        let label = format!("s7-withholding-{ask_victim}");
        let out = run(
            n,
            t,
            &none,
            &label,
            &keep,
            |r, _| {
                if r == v {
                    return ask_victim.then(|| vec![1, 2, 3]);
                }
                let (alive, _) = &table[&r];
                let mut set: Vec<ClientId> = alive.clone();
                set.push(r);
                set.sort_unstable();
                Some(set)
            },
            |r, _, _| table.get(&r).cloned(),
        );
        assert_eq!(
            out.masked_with[&v],
            BTreeSet::from([2, 3]),
            "the victim's mask set shrank"
        );
        assert_eq!(out.unmask(v), None, "{label}");
        assert!(out.view.keys.get(&2).map_or(0, Vec::len) < t, "{label}");
        assert!(out.view.keys.get(&3).map_or(0, Vec::len) < t, "{label}");
    }
}

/// How the server draws its lies in one run.
#[derive(Clone, Copy, Debug)]
enum Lies {
    /// Random alive sets to attest, each client masking with everyone.
    Sets,
    /// Aimed at one victim: it masks with `t - 1` peers only, and the sets
    /// are small sets around it.
    Withhold(ClientId),
}

/// A random subset of `1..=n` holding each id with probability `p`.
fn subset<R: Rng>(rng: &mut R, n: u64, p: f64) -> BTreeSet<ClientId> {
    (1..=n).filter(|_| rng.random_range(0.0..1.0) < p).collect()
}

/// For every n in 3..=8, every number of colluders c, and every t that
/// the semi-malicious policy accepts, random lying strategies: shares
/// withheld from a victim, a few candidate alive sets handed out at random
/// to be attested, sometimes arbitrary unmasking lists, colluders that
/// attest anything and reveal everything they hold. No honest client's
/// `b_u` and `s_sk_u` are both reconstructible, and, where at least two
/// clients are honest, no honest input can be unmasked alone.
#[test]
fn lying_server_never_unmasks_an_honest_input() {
    const STRATEGIES: usize = 8;
    let mut rng = testdata::rng("s6-s7-property");
    let (mut runs, mut answered, mut seeds_learned, mut keys_learned) = (0, 0, 0, 0);
    for n in 3..=8u64 {
        for c in 0..n as usize {
            for t in 1..=n as usize {
                if params(t, c).validate(n as usize).is_err() {
                    continue;
                }
                let colluders: BTreeSet<ClientId> = (n - c as u64 + 1..=n).collect();
                let honest = n - c as u64;
                for s in 0..STRATEGIES {
                    let label = format!("s7-prop-{n}-{c}-{t}-{s}");
                    let lies = if s % 2 == 0 {
                        Lies::Sets
                    } else {
                        Lies::Withhold(rng.random_range(1..=honest))
                    };
                    let kept: Option<BTreeSet<ClientId>> = match lies {
                        Lies::Withhold(v) => {
                            let mut peers: Vec<ClientId> = (1..=n).filter(|w| *w != v).collect();
                            for i in (1..peers.len()).rev() {
                                let j = rng.random_range(0..=i);
                                peers.swap(i, j);
                            }
                            Some(peers.into_iter().take(t.saturating_sub(1)).collect())
                        }
                        Lies::Sets => None,
                    };
                    let victim = match lies {
                        Lies::Withhold(v) => Some(v),
                        Lies::Sets => None,
                    };
                    let mut candidates: Vec<BTreeSet<ClientId>> = (0..rng.random_range(1..=3))
                        .map(|_| {
                            let p = rng.random_range(0.5..1.0);
                            subset(&mut rng, n, p)
                        })
                        .collect();
                    if let (Some(v), Some(k)) = (victim, &kept) {
                        // Sets around the victim: it, some of the peers it
                        // masked with, some it did not.
                        let mut around = subset(&mut rng, n, 0.5);
                        around.insert(v);
                        around.retain(|w| *w == v || k.contains(w) || rng.random_range(0..2) == 0);
                        candidates.push(around);
                    }
                    let keep = |client: ClientId| {
                        if Some(client) == victim {
                            kept.clone()
                        } else {
                            None
                        }
                    };
                    let mut draw = rng.clone();
                    let mut draw2 = rng.clone();
                    let out = run(
                        n,
                        t,
                        &colluders,
                        &label,
                        &keep,
                        |r, truth| {
                            if draw.random_range(0..8) == 0 {
                                return None;
                            }
                            if let (Some(v), Some(k)) = (victim, &kept)
                                && r != v
                                && draw.random_range(0..4) != 0
                            {
                                // The withholding attack's shape: the victim,
                                // the client, and t - 2 others, chosen mostly
                                // among the clients the victim did not mask
                                // with, different for every client.
                                let mut others: Vec<ClientId> =
                                    (1..=n).filter(|w| *w != v && *w != r).collect();
                                for i in (1..others.len()).rev() {
                                    let j = draw.random_range(0..=i);
                                    others.swap(i, j);
                                }
                                others.sort_by_key(|w| k.contains(w));
                                let mut set: BTreeSet<ClientId> =
                                    others.into_iter().take(t.saturating_sub(2)).collect();
                                set.extend([v, r]);
                                return Some(set.into_iter().collect());
                            }
                            let mut set = if draw.random_range(0..2) == 0 {
                                truth.iter().copied().collect()
                            } else {
                                candidates[draw.random_range(0..candidates.len())].clone()
                            };
                            set.insert(r);
                            Some(set.into_iter().collect())
                        },
                        |r, _, mine| {
                            (draw2.random_range(0..5) == 0).then(|| {
                                let alive: Vec<ClientId> = mine
                                    .iter()
                                    .copied()
                                    .filter(|w| *w != r && draw2.random_range(0..2) == 0)
                                    .collect();
                                let dropped = mine
                                    .iter()
                                    .copied()
                                    .filter(|w| !alive.contains(w) && draw2.random_range(0..2) == 0)
                                    .collect();
                                (alive, dropped)
                            })
                        },
                    );
                    let _ = rng.random_range(0..2); // decorrelate the next run
                    rng = draw;
                    answered += out.answered;
                    for u in (1..=n).filter(|u| !colluders.contains(u)) {
                        let (b, k) = (
                            out.known.seeds.contains_key(&u),
                            out.known.keys.contains_key(&u),
                        );
                        seeds_learned += usize::from(b);
                        keys_learned += usize::from(k);
                        assert!(!(b && k), "{label}: both secrets of client {u}");
                        // With one honest client the sum itself is its
                        // input (docs/threat-model.md §2.1).
                        if honest >= 2 {
                            assert_eq!(out.unmask(u), None, "{label}: client {u}'s input unmasked");
                        }
                    }
                    runs += 1;
                }
            }
        }
    }
    // The search is not vacuous: clients answered lies, and the adversary
    // did reconstruct honest clients' secrets (one of the two each).
    assert!(runs > 50, "{runs} runs");
    assert!(2 * answered > runs, "{answered} answers in {runs} runs");
    assert!(
        seeds_learned > 0 && keys_learned > 0,
        "{seeds_learned} {keys_learned}"
    );
}
