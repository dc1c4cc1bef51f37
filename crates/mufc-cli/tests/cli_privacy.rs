//! The `mufc` binary end to end on tiny data made by the tests: the
//! privacy policies (`--min-clients`, `--min-updating-clients`, `--privacy`,
//! `--flush`) and their warnings, and secure aggregation with dropouts.

#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::common;
use common::{blobs_csv, fails_with, json_run_stderr, mufc};

#[test]
fn privacy_flags_set_the_policies_and_weak_privacy_warns() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let d = data.to_str().unwrap();
    // The defaults: no warning.
    let (j, stderr) = json_run_stderr(&data, &["run"]);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(j["privacy_warnings"], serde_json::json!([]));
    assert_eq!(
        (
            j["min_clients"].as_u64(),
            j["min_updating_clients"].as_u64()
        ),
        (Some(3), Some(2))
    );
    // Lowered: one warning line each on stderr, and in the JSON.
    let (j, stderr) = json_run_stderr(
        &data,
        &[
            "run",
            "--min-clients",
            "2",
            "--min-updating-clients",
            "1",
            "--privacy",
            "plain",
        ],
    );
    assert_eq!(
        (
            j["min_clients"].as_u64(),
            j["min_updating_clients"].as_u64()
        ),
        (Some(2), Some(1))
    );
    let warnings: Vec<&str> = j["privacy_warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    for (w, needle) in warnings.iter().zip([
        "--min-clients 2 is below 3",
        "--min-updating-clients 1 is below 2",
        "--privacy plain",
    ]) {
        assert!(w.starts_with(needle), "{w}");
        assert!(stderr.contains(&format!("warning: {w}")), "{stderr}");
    }
    // The text output says so too, on stderr; -q silences everything but
    // errors.
    let args = [
        "run",
        "--data",
        d,
        "--k",
        "4",
        "--clients",
        "4",
        "--gamma",
        "0.01",
        "--min-clients",
        "1",
    ];
    let out = mufc(&args);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("warning: --min-clients 1 is below 3"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("at least 1 client per aggregate"));
    let quiet = mufc(&[&args[..], &["-q"]].concat());
    assert!(quiet.status.success());
    assert!(
        quiet.stdout.is_empty() && quiet.stderr.is_empty(),
        "{quiet:?}"
    );
    // Fewer clients than the minimum: refused, naming the way out.
    let stderr = fails_with(
        &[
            "run",
            "--data",
            d,
            "--k",
            "2",
            "--clients",
            "2",
            "--gamma",
            "0.01",
        ],
        "the aggregate would include 2 clients, fewer than the minimum of 3",
    );
    assert!(stderr.contains("--min-clients 2"), "{stderr}");
    let out = mufc(&[
        "run",
        "--data",
        d,
        "--k",
        "2",
        "--clients",
        "2",
        "--gamma",
        "0.01",
        "--json",
        "--min-clients",
        "2",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("warning: --min-clients 2"), "{stderr}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["clients"], 2);
    fails_with(
        &[
            "run",
            "--data",
            d,
            "--k",
            "4",
            "--clients",
            "4",
            "--gamma",
            "0.01",
            "--min-clients",
            "0",
        ],
        "min_clients: must be at least 1",
    );
    // A flush of a lone request warns, and says what the server learns.
    let (j, stderr) = json_run_stderr(&data, &["unlearn", "--removals", "1", "--flush"]);
    assert_eq!(
        (j["rounds"].as_u64(), j["deferred_requests"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(j["retrain_equal"], 1);
    let w = j["privacy_warnings"][0].as_str().unwrap();
    assert!(w.starts_with("--flush: only client"), "{w}");
    assert!(stderr.contains(&format!("warning: {w}")), "{stderr}");
    // Without --flush the lone request is reported as waiting.
    let (j, stderr) = json_run_stderr(&data, &["unlearn", "--removals", "1"]);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_eq!(
        (j["rounds"].as_u64(), j["pending_at_end"].as_u64()),
        (Some(0), Some(1))
    );
    let out = mufc(&[
        "unlearn",
        "--data",
        d,
        "--k",
        "4",
        "--clients",
        "4",
        "--gamma",
        "0.01",
        "--removals",
        "3",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("figures are per round"), "{text}");
    assert!(
        text.contains("deferred until another client's request joined"),
        "{text}"
    );
    // Every command takes both flags, and explains them.
    for command in ["run", "unlearn", "compare", "bench"] {
        let out = mufc(&[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success());
        for needle in [
            "--min-clients <M>",
            "[default: 3]",
            "P4",
            "--min-updating-clients <M>",
            "[default: 2]",
            "U3",
        ] {
            assert!(
                help.contains(needle),
                "{command} --help lacks {needle}: {help}"
            );
        }
    }
}

/// Issue 7: the aggregation runs through the dropout-tolerant protocol and
/// the output names the clients it included.
#[test]
fn secagg_with_dropouts_lists_the_included_clients() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let data = data.to_str().unwrap();
    let base = [
        "--data",
        data,
        "--k",
        "4",
        "--clients",
        "12",
        "--k-prime",
        "2",
        "--gamma",
        "0.01",
        "--json",
        "--masking",
        "secagg",
    ];
    let run = |extra: &[&str]| {
        let mut all = vec!["run"];
        all.extend_from_slice(&base);
        all.extend_from_slice(extra);
        let out = mufc(&all);
        assert!(
            out.status.success(),
            "{all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let ids = |j: &Value, key: &str, field: Option<&str>| -> Vec<u64> {
        j[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| field.map_or(v, |f| &v[f]).as_u64().unwrap())
            .collect()
    };
    // Without dropouts every client is in.
    let all = run(&[]);
    assert_eq!(ids(&all, "included_clients", None).len(), 12);
    assert!(ids(&all, "dropped_clients", Some("client")).is_empty());
    // With dropouts, over a few seeds: someone drops, and a client left out
    // before its masked input is not included.
    let mut dropped_any = false;
    for seed in ["1", "2", "3", "4"] {
        let j = run(&["--dropout", "0.2", "--seed", seed]);
        let included = ids(&j, "included_clients", None);
        for d in j["dropped_clients"].as_array().unwrap() {
            dropped_any = true;
            let c = d["client"].as_u64().unwrap();
            let late = d["step"] == "unmasking";
            assert_eq!(included.contains(&c), late, "{j}");
        }
        assert!(j["loss_ratio"].as_f64().unwrap().is_finite());
    }
    assert!(dropped_any);
    // Dropouts need the protocol that survives them.
    let mut bad = vec!["run"];
    bad.extend_from_slice(&base[..base.len() - 2]);
    bad.extend_from_slice(&["--dropout", "0.2"]);
    fails_with(&bad, "dropout");
}
