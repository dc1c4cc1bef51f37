//! The `mufc` binary end to end on tiny data made by the tests: every
//! command's JSON keys are present and sane, and bad input gives a clear
//! error and a non-zero exit, never a panic.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Four tight blobs of 30 points in 2-D, inside the box, as CSV with a
/// header; row `r` is point `r`.
fn blobs_csv(dir: &Path) -> PathBuf {
    let mut s = String::from("x,y\n");
    for c in 0..4 {
        let (cx, cy) = ([-0.3, 0.3, -0.3, 0.3][c], [-0.3, -0.3, 0.3, 0.3][c]);
        for i in 0..30 {
            // A deterministic scatter of +-0.05 around the centre.
            let dx = ((i * 7 + c * 3) % 13) as f64 / 130.0 - 0.05;
            let dy = ((i * 5 + c) % 17) as f64 / 170.0 - 0.05;
            s.push_str(&format!("{},{}\n", cx + dx, cy + dy));
        }
    }
    let path = dir.join("blobs.csv");
    std::fs::write(&path, s).unwrap();
    path
}

fn mufc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `mufc` on the blobs (4 clients, K = 4, K' = 2) with `--json` and
/// returns the object, checking success.
fn json_run(data: &Path, args: &[&str]) -> Value {
    json_run_stderr(data, args).0
}

/// As [`json_run`], with what `mufc` wrote on stderr.
fn json_run_stderr(data: &Path, args: &[&str]) -> (Value, String) {
    let data = data.to_str().unwrap();
    let mut all = vec![
        args[0],
        "--data",
        data,
        "--k",
        "4",
        "--clients",
        "4",
        "--k-prime",
        "2",
        // The blobs are 0.1 wide: a step below the default 1/sqrt(120).
        "--gamma",
        "0.01",
        "--json",
    ];
    all.extend_from_slice(&args[1..]);
    let out = mufc(&all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{all:?}: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

fn has_keys(j: &Value, keys: &[&str]) {
    for k in keys {
        assert!(j.get(k).is_some_and(|v| !v.is_null()), "missing {k} in {j}");
    }
}

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
    let plain = json_run(&data, &["run", "--privacy", "plain"]);
    assert_eq!(plain["privacy"], "plain");
    // k = K = 4 centroids of two f64 and a u64 size each.
    assert_eq!(plain["bytes_per_client"], 4 * (8 * 2 + 8));
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
    // The text output says so too, on stderr.
    let out = mufc(&[
        "run",
        "--data",
        d,
        "--k",
        "4",
        "--clients",
        "4",
        "--gamma",
        "0.01",
        "--quiet",
        "--min-clients",
        "1",
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("warning: --min-clients 1 is below 3"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("at least 1 clients per aggregate"));
    // Fewer clients than the minimum: refused, naming the way out.
    fails_with(
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
    fails_with(
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
        "--min-clients 2",
    );
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
        "--quiet",
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
        text.contains("deferred until another client's request joined them"),
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

/// Runs `mufc` expecting a failure whose message contains `needle`.
fn fails_with(args: &[&str], needle: &str) {
    let out = mufc(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let d = data.to_str().unwrap();
    let bad_row = dir.path().join("bad.csv");
    std::fs::write(&bad_row, "x,y\n0.1,0.2\n0.1,oops\n").unwrap();
    fails_with(
        &["run", "--data", bad_row.to_str().unwrap()],
        "line 3, column 1",
    );
    let npy = dir.path().join("cut.npy");
    // A valid header for a 10 x 2 f64 array, then only 3 numbers.
    let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10, 2), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    let pad = 64 - (10 + header.len() + 1) % 64;
    let h = format!("{header}{}\n", " ".repeat(pad));
    bytes.extend_from_slice(&u16::try_from(h.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(&[0u8; 24]);
    std::fs::write(&npy, bytes).unwrap();
    fails_with(&["run", "--data", npy.to_str().unwrap()], "cut.npy");
    fails_with(
        &["run", "--data", d, "--client-column", "5"],
        "client column 5",
    );
    fails_with(&["run", "--privacy", "none"], "invalid value");
    fails_with(
        &[
            "unlearn",
            "--data",
            d,
            "--k",
            "4",
            "--clients",
            "4",
            "--remove",
            "5,120",
        ],
        "point 120 is not in the data",
    );
    // K (and with it every client's k) above a client's 30 points.
    fails_with(
        &[
            "run",
            "--data",
            d,
            "--k",
            "40",
            "--clients",
            "4",
            "--split",
            "iid",
        ],
        "fewer than its k = 40",
    );
    fails_with(&["run", "--data", "no/such.csv"], "no/such.csv");
    // Data outside the quantizer's box, with the way out.
    let wide = dir.path().join("wide.csv");
    std::fs::write(&wide, "0,0\n5,5\n0.1,0\n5.1,5\n").unwrap();
    fails_with(
        &[
            "run",
            "--data",
            wide.to_str().unwrap(),
            "--k",
            "2",
            "--clients",
            "2",
            "--split",
            "iid",
        ],
        "pass --scale",
    );
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

/// 60 points in 2-D inside the box, as CSV with a header.
fn sixty_rows_csv(dir: &Path) -> PathBuf {
    let mut s = String::from("x,y\n");
    for i in 0..60 {
        let x = f64::from((i * 37) % 60) / 75.0 - 0.4;
        let y = f64::from((i * 11) % 60) / 75.0 - 0.4;
        s.push_str(&format!("{x},{y}\n"));
    }
    let path = dir.join("sixty.csv");
    std::fs::write(&path, s).unwrap();
    path
}

/// Issue 11 (part 3): a bad option names its real cause with the numbers,
/// not an error of a later step.
#[test]
fn options_that_do_not_fit_the_data_name_the_real_cause() {
    let dir = tempfile::tempdir().unwrap();
    let data = sixty_rows_csv(dir.path());
    let d = data.to_str().unwrap();
    // Was: "invalid clients = 100: must be between 1 and the number of
    // points" (the default --clients 100), or with --clients 4 "no
    // non-i.i.d. split with K' = 3 over 4 clients found in 100 attempts".
    fails_with(
        &["run", "--data", d, "--k", "100"],
        "K = 100 exceeds the number of points (60)",
    );
    fails_with(
        &["run", "--data", d, "--k", "100", "--clients", "4"],
        "K = 100 exceeds the number of points (60)",
    );
    fails_with(
        &["run", "--data", d, "--k", "2", "--clients", "61"],
        "--clients 61 exceeds the number of points (60)",
    );
    // Was: "no non-i.i.d. split with K' = 3 over 4 clients found in 100
    // attempts"; no split can exist.
    fails_with(
        &["run", "--data", d, "--k", "20", "--clients", "4"],
        "20 clusters cannot be spread over 4 clients holding at most K' = 3 clusters each",
    );
    // Was: "invalid K' = 3: must be between 1 and the number of clusters
    // K" for the default K'; now the default is min(3, K), and a K' given
    // above K names K.
    fails_with(
        &["run", "--data", d, "--k", "4", "--k-prime", "5"],
        "K' = 5 exceeds K = 4",
    );
    let ok = mufc(&[
        "run",
        "--data",
        d,
        "--k",
        "2",
        "--clients",
        "4",
        "--gamma",
        "0.05",
        "--quiet",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    // Was: "invalid configuration: dropout: no secure aggregation
    // parameters for 4 clients with dropout rate 0.9 and colluding fraction
    // 0.05: invalid parameters: rates must be in [0, 1) and there must be
    // two clients".
    let secagg = [
        "run",
        "--data",
        d,
        "--k",
        "4",
        "--clients",
        "4",
        "--masking",
        "secagg",
        "--dropout",
    ];
    for needle in [
        "--dropout 0.9 with 4 clients plans for 4 dropouts",
        "leaving 0, fewer than the 3 clients secure aggregation needs",
        "at most 1 of 4 clients may drop: pass --dropout 0.25 or less",
    ] {
        fails_with(&[&secagg[..], &["0.9"]].concat(), needle);
    }
    fails_with(
        &[&secagg[..], &["0.9", "--secagg-graph", "harary"]].concat(),
        "leaving 0",
    );
    // Out of range before any work (was: the --clients error of the data).
    fails_with(
        &[
            "run",
            "--data",
            d,
            "--masking",
            "secagg",
            "--dropout",
            "1.5",
        ],
        "invalid dropout = 1.5",
    );
}

/// Issue 11 (part 3): a step that puts every point into one bin is
/// refused with the reason and a smaller step (was: accepted, and the
/// server clustered a single bin).
#[test]
fn a_gamma_that_bins_every_point_together_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = sixty_rows_csv(dir.path());
    let d = data.to_str().unwrap();
    let base = ["run", "--data", d, "--k", "4", "--clients", "4", "--gamma"];
    for needle in [
        "--gamma 10: every one of the 60 points falls into one quantization bin",
        "pass a smaller --gamma, for instance 0.197",
    ] {
        fails_with(&[&base[..], &["10"]].concat(), needle);
    }
    // The plain mode does not quantize: any step is fine there.
    let plain = mufc(&[&base[..], &["10", "--privacy", "plain", "--quiet"]].concat());
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    // Below the grid's 2^53 bins per axis (was: "invalid grid step gamma
    // = 1e-300", without the reason).
    fails_with(
        &[&base[..], &["1e-300"]].concat(),
        "invalid gamma = 1e-300: is too small",
    );
}

/// Issue 11 (part 3): bad files name the file and what is wrong.
#[test]
fn bad_files_name_the_file_and_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let run = |path: &str, needles: &[&str]| {
        for needle in needles {
            fails_with(
                &["run", "--data", path, "--k", "2", "--clients", "2"],
                needle,
            );
        }
    };
    // Was: "the data has no points", without the file.
    let empty = write("empty.csv", "");
    run(
        &empty,
        &["empty.csv: the file has no data rows (it is empty or blank)"],
    );
    run(
        &write("blank.csv", "\n \n\n"),
        &["blank.csv: the file has no data rows"],
    );
    run(
        &write("header.csv", "x,y\n"),
        &["header.csv: the file has only a header line, no data rows"],
    );
    run(
        &write("word.csv", "x,y\n0.1,0.2\n0.3,abc\n0.1,0.1\n"),
        &["word.csv: line 3, column 1 (counting from 0): \"abc\" is not a number"],
    );
    run(
        &write("semi.csv", "x;y\n0.1;0.2\n0.3;0.4\n"),
        &[
            "semi.csv: line 2, column 0",
            "fields are separated by ',' in .csv and .txt files",
        ],
    );
    run(
        &write("ragged.csv", "1,2\n3\n"),
        &["ragged.csv: line 2: 1 fields, but the first record has 2"],
    );
    run(
        &write("inf.csv", "0.1,0.2\n0.1,inf\n"),
        &["inf.csv: line 2, column 1 (counting from 0): \"inf\" is not finite"],
    );
}
