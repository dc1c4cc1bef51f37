//! `--topology groups|tree` on the command line (issue 16): `mufc unlearn`
//! checks the unlearned tree against the tree retrained in the same
//! groups and prints each removal's cost next to flat's; `mufc
//! topologies` serves the same requests with the three; bad sizes are
//! refused with the setting named.
#![allow(clippy::unwrap_used)]

use crate::common;
use common::{blobs_csv, fails_with, mufc};
use serde_json::Value;

/// Groups of 3 clients under a tree of fan-out 2 (four groups of the
/// blobs' 12 clients).
const TREE: &[&str] = &["--topology", "tree", "--group-size", "3", "--fan-out", "2"];

/// `mufc` on the blobs split over 12 clients, with `--json`.
fn run(command: &str, data: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec![
        command,
        "--data",
        data.to_str().unwrap(),
        "--header",
        "--k",
        "4",
        "--clients",
        "12",
        "--k-prime",
        "2",
        "--gamma",
        "0.01",
        "--json",
        "-q",
    ];
    args.extend_from_slice(extra);
    let out = mufc(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn unlearn_in_a_tree_matches_the_tree_retrained_and_reports_flat_alongside() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let j = run("unlearn", &data, &[&["--removals", "6"], TREE].concat());
    let rounds = j["rounds"].as_u64().unwrap();
    assert!(rounds >= 1, "{j}");
    // Checked after every round against the tree retrained in the same
    // groups, bit for bit.
    assert_eq!(j["retrain_equal"].as_u64(), Some(rounds), "{j}");
    assert_eq!(j["topology"], "tree");
    let n = &j["next_to_flat"];
    assert_eq!(n["rounds"].as_u64(), Some(rounds), "{j}");
    let grouped = n["per_round_mean"]["clients_involved"].as_f64().unwrap();
    let flat = n["flat_per_round_mean"]["clients_involved"]
        .as_f64()
        .unwrap();
    assert_eq!(n["flat_per_round_mean"]["clients_involved"], 12.0);
    assert!(grouped < flat, "{n}");
    // Whole clients too: the groups shrink, the layout stays.
    let groups = [
        "--removals",
        "3",
        "--whole-clients",
        "--min-clients",
        "2",
        "--min-updating-clients",
        "1",
        "--topology",
        "groups",
        "--group-size",
        "4",
    ];
    let j = run("unlearn", &data, &groups);
    assert_eq!(j["retrain_equal"], j["rounds"], "{j}");
}

#[test]
fn topologies_serves_the_same_requests_three_ways_with_equal_roots() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let j = run(
        "topologies",
        &data,
        &["--removals", "4", "--group-size", "3", "--fan-out", "2"],
    );
    assert_eq!(j["roots_equal"], true, "{j}");
    let t = j["topologies"].as_array().unwrap();
    assert_eq!(t.len(), 3);
    assert_eq!(
        t[0]["per_round_median"]["clients_involved"].as_f64(),
        Some(12.0)
    );
    for side in &t[1..] {
        // One group of 3 clients per removal.
        assert_eq!(
            side["per_round_median"]["clients_involved"].as_f64(),
            Some(3.0),
            "{side}"
        );
        assert_eq!(
            side["per_round_median"]["groups"].as_f64(),
            Some(1.0),
            "{side}"
        );
        assert_eq!(side["loss_ratio"], t[0]["loss_ratio"]);
    }
    assert_eq!(t[0]["client_rounds_total"].as_f64(), Some(48.0));
    assert_eq!(t[2]["client_rounds_total"].as_f64(), Some(12.0));
}

#[test]
fn groups_below_the_minimum_or_a_fan_out_of_one_are_refused() {
    fails_with(
        &["run", "--topology", "groups", "--group-size", "2", "-q"],
        "group_size",
    );
    fails_with(
        &[
            "run",
            "--topology",
            "tree",
            "--group-size",
            "5",
            "--fan-out",
            "1",
            "-q",
        ],
        "fan_out",
    );
    fails_with(
        &["run", "--topology", "tree", "--privacy", "plain", "-q"],
        "SCMA",
    );
    // ParGen finds no size among 100 clients with 30 % dropping out.
    fails_with(
        &[
            "run",
            "--topology",
            "groups",
            "--group-size",
            "auto",
            "--masking",
            "secagg",
            "--dropout",
            "0.3",
            "-q",
        ],
        "no group size",
    );
    fails_with(
        &["run", "--group-size", "ten", "-q"],
        "neither a number nor `auto`",
    );
}

/// A configuration the federation refuses is named before any work on
/// the data: here the data would fail the split (one distinct point, so
/// the labelling finds fewer clusters than K'), and the group size is
/// what the command reports.
#[test]
fn a_refused_configuration_is_named_before_the_data_is_worked_on() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("same.csv");
    std::fs::write(&data, format!("x,y\n{}", "1.0,2.0\n".repeat(40))).unwrap();
    let d = data.to_str().unwrap();
    let base = ["run", "--data", d, "--k", "3", "--clients", "4", "-q"];
    // With a configuration it takes, the split is what fails.
    fails_with(&base, "K' = 3 exceeds");
    let bad = [&base[..], &["--topology", "groups", "--group-size", "2"]].concat();
    let err = fails_with(&bad, "group_size");
    assert!(!err.contains("K' = 3"), "{err}");
}

#[test]
fn a_store_fit_as_a_tree_forgets_and_says_its_groups() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let model = dir.path().join("tree.mufc");
    let m = model.to_str().unwrap();
    let args = [&["--model", m, "--min-updating-clients", "1"], TREE].concat();
    let j = run("fit", &data, &args);
    assert_eq!(j["command"], "fit", "{j}");
    let json = |args: &[&str]| -> Value {
        let out = mufc(args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let j = json(&["forget", "--model", m, "--ids", "0,1", "--json"]);
    assert_eq!(j["requests"][0]["outcome"], "applied", "{j}");
    // Reopened from the file: the tree, its four groups, the removal.
    let j = json(&["inspect", "--model", m, "--json"]);
    assert_eq!(j["config"]["topology"], "tree", "{j}");
    let groups = j["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 4, "{j}");
    assert!(groups.iter().all(|g| g.as_array().unwrap().len() == 3));
    assert_eq!(j["model_version"], 2, "{j}");
    let out = mufc(&["inspect", "--model", m]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tree: 4 groups of 3, 3, 3, 3, fan-out 2, height 2"),
        "{text}"
    );
}
