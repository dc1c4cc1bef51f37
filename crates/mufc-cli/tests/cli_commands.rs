//! The `mufc` binary end to end on tiny data made by the tests: every
//! command's JSON keys are present and sane (`run`, `unlearn`, `compare`,
//! `bench`). Privacy options are in `cli_privacy.rs`, bad input in
//! `cli_errors.rs`.

#![allow(clippy::unwrap_used)]

use crate::common;
use common::{blobs_csv, fails_with, has_keys, json_run};

#[test]
fn run_reports_every_key_of_the_issue() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let j = json_run(&data, &["run", "--trials", "2"]);
    has_keys(
        &j,
        &[
            "loss_ratio",
            "loss_ratio_std",
            "phi_f",
            "phi_c_star",
            "n",
            "d",
            "k",
            "clients",
            "client_seconds",
            "aggregation_seconds",
            "server_seconds",
            "bytes_per_client",
            "nonzero_bins",
        ],
    );
    assert_eq!((j["n"].as_u64(), j["d"].as_u64()), (Some(120), Some(2)));
    assert_eq!(j["loss_ratios"].as_array().unwrap().len(), 2);
    let ratio = j["loss_ratio"].as_f64().unwrap();
    // Four tight, far-apart blobs: every method finds them.
    assert!((0.99..1.2).contains(&ratio), "{ratio}");
    assert!(j["nonzero_bins"].as_u64().unwrap() > 0);
    assert!(j["bytes_per_client"].as_u64().unwrap() > 0);
    // Plain mode sends centroids in the clear.
    let plain = json_run(&data, &["run", "--privacy", "plain", "--client-k", "4"]);
    assert_eq!(plain["privacy"], "plain");
    // k = 4 centroids of two f64 and a u64 size each, and the message's
    // header (the client's id and round, the lengths).
    let bytes = plain["bytes_per_client"].as_u64().unwrap();
    assert!(
        (4 * (8 * 2 + 8)..4 * (8 * 2 + 8) + 32).contains(&bytes),
        "{bytes}"
    );
}

#[test]
fn unlearn_matches_retraining_and_draws_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let fig = dir.path().join("fig.svg");
    let j = json_run(
        &data,
        &[
            "unlearn",
            "--removals",
            "4",
            "--compare",
            "--plot",
            fig.to_str().unwrap(),
        ],
    );
    has_keys(
        &j,
        &[
            "removals",
            "retrained_rounds",
            "unlearn_seconds_total",
            "retrain_seconds_total",
            "speedup",
            "loss_ratio_before",
            "loss_ratio_after",
            "dc_kmeans",
        ],
    );
    assert_eq!(j["removals"], 4);
    // A request of one client alone waits for another client's: the
    // figures and the check are per applied round.
    let rounds = j["rounds"].as_u64().unwrap();
    assert!(rounds >= 1, "{j}");
    assert_eq!(
        j["retrain_equal"], rounds,
        "{}",
        j["retrain_first_difference"]
    );
    assert!(j["speedup"].as_f64().unwrap() > 0.0);
    assert_eq!(j["loss_ratios"].as_array().unwrap().len() as u64, rounds);
    let per_round: u64 = j["requests_per_round"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(per_round + j["pending_at_end"].as_u64().unwrap(), 4, "{j}");
    assert_eq!(
        j["deferred_requests"].as_u64().unwrap(),
        4 - rounds - j["pending_at_end"].as_u64().unwrap()
    );
    assert_eq!(j["privacy_warnings"], serde_json::json!([]));
    assert!(std::fs::read_to_string(&fig).unwrap().contains("<svg"));
    // Every request its own round, as before the policy.
    let each = json_run(
        &data,
        &["unlearn", "--removals", "4", "--min-updating-clients", "1"],
    );
    assert_eq!(
        (each["rounds"].as_u64(), each["deferred_requests"].as_u64()),
        (Some(4), Some(0))
    );
    assert_eq!(
        each["retrain_equal"], 4,
        "{}",
        each["retrain_first_difference"]
    );

    // Adversarial batches, and whole clients.
    let adv = json_run(
        &data,
        &[
            "unlearn",
            "--removals",
            "2",
            "--mode",
            "adversarial",
            "--batch",
            "3",
            "--flush",
        ],
    );
    assert_eq!(adv["removed_points"], 6);
    assert_eq!(adv["retrain_equal"], adv["rounds"]);
    assert_eq!(adv["pending_at_end"], 0);
    // Whole clients: two of four leave, below the default minimum of 3.
    let whole = json_run(
        &data,
        &[
            "unlearn",
            "--removals",
            "2",
            "--whole-clients",
            "--min-clients",
            "2",
        ],
    );
    // Two of the four clients (the split's sizes vary), in one round.
    let gone = whole["removed_points"].as_u64().unwrap();
    assert!((2..120).contains(&gone), "{gone}");
    assert_eq!(
        (
            whole["rounds"].as_u64(),
            whole["deferred_requests"].as_u64()
        ),
        (Some(1), Some(1))
    );
    assert_eq!(whole["retrain_equal"], 1);
    fails_with(
        &[
            "unlearn",
            "--data",
            data.to_str().unwrap(),
            "--clients",
            "4",
            "--k",
            "4",
            "--removals",
            "2",
            "--whole-clients",
        ],
        "must leave at least --min-clients clients",
    );
    // Rows named by the user, two per request, spanning clients.
    let given = json_run(
        &data,
        &[
            "unlearn",
            "--remove",
            "0,31,62,93",
            "--batch",
            "2",
            "--flush",
        ],
    );
    assert_eq!(
        (given["removals"].as_u64(), given["removed_points"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(given["mode"], "given");
}

#[test]
fn compare_and_bench_report_every_method_and_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let j = json_run(&data, &["compare", "--trials", "2"]);
    for m in ["mufc", "k_fed", "dc_kmeans"] {
        let r = j[m]["loss_ratio"].as_f64().unwrap();
        assert!((0.99..1.2).contains(&r), "{m}: {r}");
        assert!(j[m]["loss_ratio_std"].as_f64().unwrap() >= 0.0);
    }
    let b = json_run(&data, &["bench", "--requests", "6"]);
    has_keys(
        &b,
        &[
            "retrain_over_unlearn",
            "server_over_client",
            "decode",
            "retrain_equal",
        ],
    );
    let modes: Vec<&str> = b["decode"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["privacy"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["scma", "scma-wide", "scma-integer", "plain"]);
    // Per applied round: requests of one client alone wait for another's.
    let rounds = b["rounds"].as_u64().unwrap();
    assert!((1..=6).contains(&rounds), "{b}");
    assert_eq!(b["retrain_equal"], rounds);
    assert_eq!(
        rounds + b["deferred_requests"].as_u64().unwrap() - b["pending_at_end"].as_u64().unwrap(),
        6,
        "{b}"
    );
    for r in b["decode"].as_array().unwrap() {
        if r["privacy"] == "scma" {
            assert!(r["removal_decode_seconds"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}
