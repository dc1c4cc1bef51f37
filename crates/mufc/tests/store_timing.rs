//! What one request costs on the built-in data (issue 14's target: the
//! library-level apply and commit of one point that reseeds nobody within
//! 5 ms). Ignored by default (a measurement, not a check); run with
//! `cargo test -p mufc --test store_timing -- --ignored --nocapture`.
#![cfg(feature = "store")]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::time::{Duration, Instant};

use mufc::store::{ClientRecords, IfExists, RecordId, Store};
use mufc::{ClientId, FederationConfig};
use testkit::mufc::paper_gaussian_clients;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[test]
#[ignore = "a measurement; run it on its own"]
fn one_request_on_the_built_in_data() {
    // The paper's Gaussian data as `mufc run` builds it: 10 clusters of
    // 3000 points in 10-D, over 100 clients (300 points each).
    let data = paper_gaussian_clients("store-timing", 100, 10, 10, 3000, 2);
    for policy in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("model.mufc");
        let config = FederationConfig::new(10)
            .seed(2023)
            .min_updating_clients(policy)
            .validate()
            .unwrap();
        let start = Instant::now();
        let (store, _) = Store::fit(
            &path,
            ClientRecords::numbered(data.clone()),
            &config,
            IfExists::Refuse,
        )
        .unwrap();
        let fit = start.elapsed();
        drop(store);
        let start = Instant::now();
        let mut store = Store::open(&path).unwrap();
        let open = start.elapsed();
        let bytes = std::fs::metadata(&path).unwrap().len();
        // Non-seed points of clients 0, 1, 2, ...: nobody reseeds.
        let non_seed = |store: &Store, c: u64, skip: usize| {
            let client = store.federation().client(ClientId(c)).unwrap();
            let p = client
                .data()
                .ids()
                .iter()
                .copied()
                .filter(|p| !client.seed_ids().contains(p))
                .nth(skip)
                .unwrap();
            RecordId(300 * c + p.0)
        };
        let (mut apply, mut commit, mut wall) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..9u64 {
            let ids: Vec<RecordId> = if policy == 1 {
                vec![non_seed(&store, run, 0)]
            } else {
                vec![
                    non_seed(&store, 2 * run, 0),
                    non_seed(&store, 2 * run + 1, 0),
                ]
            };
            let start = Instant::now();
            let r = store.forget(&ids).unwrap();
            wall.push(start.elapsed());
            assert!(!r.outcome.is_deferred());
            assert!(r.reseeded.is_empty());
            if run == 8 {
                println!(
                    "policy {policy}, last request's stages: {:?}",
                    r.removal.times
                );
            }
            apply.push(r.apply_time);
            commit.push(r.commit_time);
        }
        println!(
            "policy {policy} ({} point(s), {} client(s) per request): store {bytes} bytes, fit {:.0} ms, open {:.0} ms; \
             per request, median of 9: apply {:.2} ms, commit {:.2} ms, forget() {:.2} ms (apply: {:?} ms; commit: {:?} ms)",
            policy,
            policy,
            ms(fit),
            ms(open),
            ms(median(apply.clone())),
            ms(median(commit.clone())),
            ms(median(wall)),
            apply
                .iter()
                .map(|d| (ms(*d) * 100.0).round() / 100.0)
                .collect::<Vec<_>>(),
            commit
                .iter()
                .map(|d| (ms(*d) * 100.0).round() / 100.0)
                .collect::<Vec<_>>(),
        );
    }
}
