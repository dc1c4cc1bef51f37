//! Deletion that is always right (issue 25), through the binary: clients
//! and records named as the data names them, a repeated request answered
//! with when the record was forgotten, erasure at once whatever the
//! privacy policy, `mufc verify`, a re-import that cannot bring a record
//! back, and the command line's contract (exit codes, `-q`, conflicting
//! options). Each test names the defect it would have caught.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{fails_with, mufc};
use serde_json::Value;

/// Sites named out of their numeric order, rows interleaved across them
/// (as the Celltype file of the report): row `r` is on site
/// `NAMES[r % 6]` with record id `P-<r>` (zero-padded, a string).
const NAMES: [&str; 6] = ["72", "65", "site-5", "3", "Hôpital Nord", "10"];

fn data_csv(dir: &Path) -> PathBuf {
    let mut s = String::from("x,site,record,y\n");
    for r in 0..180usize {
        let b = r % 3;
        let (cx, cy) = ([-0.3, 0.3, 0.0][b], [-0.3, -0.2, 0.3][b]);
        let dx = ((r * 7 + b * 3) % 13) as f64 / 130.0 - 0.05;
        let dy = ((r * 5 + b) % 17) as f64 / 170.0 - 0.05;
        s.push_str(&format!(
            "{},{},P-{r:06},{}\n",
            cx + dx,
            NAMES[r % 6],
            cy + dy
        ));
    }
    let path = dir.join("sites.csv");
    std::fs::write(&path, s).unwrap();
    path
}

fn fit(data: &Path, model: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model.to_str().unwrap(),
        "--client-column",
        "1",
        "--id-column",
        "2",
        "--k",
        "3",
        "--gamma",
        "0.02",
        "-q",
    ];
    args.extend_from_slice(extra);
    mufc(&args)
}

fn fitted(dir: &Path) -> (PathBuf, String) {
    let data = data_csv(dir);
    let model = dir.join("sites.mufc");
    let out = fit(&data, &model, &[]);
    assert!(out.status.success(), "{out:?}");
    let m = model.to_str().unwrap().to_string();
    (data, m)
}

/// `mufc <args> --json`: the exit code and the JSON object.
fn json(args: &[&str]) -> (i32, Value) {
    let out = mufc(&[args, &["--json"]].concat());
    let code = out.status.code().unwrap();
    let j =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}: {out:?}"));
    (code, j)
}

fn inspect(m: &str) -> Value {
    let (code, j) = json(&["inspect", "--model", m]);
    assert_eq!(code, 0, "{j}");
    j
}

/// Rows per site in the file.
fn rows_of(site: &str) -> u64 {
    (0..180).filter(|r| NAMES[r % 6] == site).count() as u64
}

#[test]
fn a_client_is_forgotten_by_its_name_as_the_data_writes_it() {
    // Defect 1: `forget --client 65` removed the file's client 72 (the
    // loader numbered clients by first appearance and threw the names
    // away), and `site-5` could not be named at all.
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = fitted(dir.path());
    let j = inspect(&m);
    let mut names: Vec<&str> = j["client_names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    names.sort_unstable();
    let mut expected = NAMES.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected);
    for site in ["65", "site-5", "Hôpital Nord"] {
        let before = inspect(&m)["points"].as_u64().unwrap();
        let (code, j) = json(&["forget", "--model", &m, "--client", site, "--flush"]);
        assert_eq!(code, 0, "{j}");
        let r = &j["requests"][0];
        assert_eq!(r["clients"][0], site, "{j}");
        assert_eq!(r["erased_points"].as_u64(), Some(rows_of(site)), "{j}");
        let after = inspect(&m);
        assert_eq!(after["points"].as_u64(), Some(before - rows_of(site)));
        let held: Vec<&str> = after["client_names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(!held.contains(&site) && held.contains(&"72"), "{held:?}");
        // The audit names it too.
        let audit: Vec<&str> = after["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["client"].as_str().unwrap())
            .collect();
        assert!(audit.contains(&site), "{audit:?}");
    }
    // Every record of site 65 is forgotten, no record of site 72 is.
    let (_, f) = json(&["inspect", "--model", &m, "--id", "P-000001"]);
    assert_eq!(f["record"]["status"], "forgotten", "{f}");
    assert_eq!(f["record"]["client"], "65");
    let (_, h) = json(&["inspect", "--model", &m, "--id", "P-000000"]);
    assert_eq!(h["record"]["status"], "held");
    assert_eq!(h["record"]["client"], "72");
    // A name the store never held: refused, naming the store's clients.
    let out = mufc(&["forget", "--model", &m, "--client", "site-9"]);
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown client site-9") && err.contains("72"),
        "{err}"
    );
    // A client forgotten already: says when.
    let out = mufc(&["forget", "--model", &m, "--client", "65"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("client 65 was already forgotten in request 1"),
        "{out:?}"
    );
}

#[test]
fn record_ids_are_strings_and_a_repeated_request_says_when() {
    // Defect 4: ids had to be integers below 2^53, and a repeated request
    // got "unknown record id".
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = fitted(dir.path());
    // Rows 0 and 1: sites 72 and 65, two clients: applied at once.
    let (code, j) = json(&["forget", "--model", &m, "--ids", "P-000000,P-000001"]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["requests"][0]["outcome"], "applied");
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000001,P-000002"]);
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("record P-000001 was already forgotten in request 1 at ")
            && err.contains("UTC (removed from the model in version 2)"),
        "{err}"
    );
    // Nothing of that request changed: P-000002 is held.
    let (_, h) = json(&["inspect", "--model", &m, "--id", "P-000002"]);
    assert_eq!(h["record"]["status"], "held");
    // An id the store never held, and the integer 1 (not "P-000001").
    let out = mufc(&["forget", "--model", &m, "--ids", "1"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("unknown record ids (the store never held them): 1"),
        "{out:?}"
    );
    // inspect says so, and fails: a mistyped id is not an answer.
    let (code, u) = json(&["inspect", "--model", &m, "--id", "1"]);
    assert_eq!(code, 1, "{u}");
    assert_eq!(u["record"]["status"], "unknown", "{u}");
    // Ids from a file, one per line, comments and blank lines skipped.
    let file = dir.path().join("ids.txt");
    std::fs::write(&file, "# to forget\nP-000010\n\nP-000011\n").unwrap();
    let (code, j) = json(&[
        "forget",
        "--model",
        &m,
        "--ids-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["requests"][0]["records"], 2);
    // inspect --id in words.
    let out = mufc(&["inspect", "--model", &m, "--id", "P-000010"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("record P-000010: forgotten in request 2")
            && text.contains("removed from the model in version 3"),
        "{text}"
    );
}

#[test]
fn a_deferred_request_erases_at_once_and_its_update_has_a_deadline() {
    // Defect 3: a lone client's request kept the point's coordinates in
    // the store until another client's request came, possibly forever.
    let dir = tempfile::tempdir().unwrap();
    let data = data_csv(dir.path());
    let model = dir.path().join("sites.mufc");
    // A deadline of one second.
    assert!(fit(&data, &model, &["--max-defer", "1s"]).status.success());
    let m = model.to_str().unwrap();
    // Row 3's coordinates, as the store keeps a point (no --scale: as
    // written; postcard's 8 bytes each, x then y): found before.
    let text = std::fs::read_to_string(&data).unwrap();
    let row3: Vec<&str> = text.lines().nth(4).unwrap().split(',').collect();
    let point: Vec<u8> = [row3[0], row3[3]]
        .iter()
        .flat_map(|v| v.parse::<f64>().unwrap().to_le_bytes())
        .collect();
    let found = |path: &str| std::fs::read(path).unwrap().windows(16).any(|w| w == point);
    assert!(found(m), "the search finds the point before");
    // Row 3 is site "3": alone, deferred (exit code 3), erased.
    let (code, j) = json(&["forget", "--model", m, "--ids", "P-000003"]);
    assert_eq!(code, 3, "{j}");
    let r = &j["requests"][0];
    assert_eq!(r["outcome"], "deferred");
    assert_eq!(r["erased_points"], 1);
    assert!(r["deadline"].as_u64().unwrap() > 1_700_000_000);
    assert!(!found(m), "the erased point is still in the store");
    let (_, f) = json(&["inspect", "--model", m, "--id", "P-000003"]);
    assert_eq!(f["record"]["status"], "forgotten");
    assert!(f["record"]["applied_version"].is_null(), "{f}");
    // verify: the clients equal retraining, the model waits (exit 3).
    let (code, v) = json(&["verify", "--model", m]);
    assert_eq!((code, v["outcome"].as_str()), (3, Some("pending")), "{v}");
    // Past the deadline, the next forget applies it first, with a warning
    // in the audit.
    std::thread::sleep(std::time::Duration::from_millis(2100));
    let (code, j) = json(&["forget", "--model", m, "--overdue"]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["requests"][0]["overdue"], true, "{j}");
    let a = inspect(m);
    let last = a["history"].as_array().unwrap().last().unwrap().clone();
    assert!(
        last["warning"]
            .as_str()
            .unwrap()
            .contains("past the deferral deadline"),
        "{last}"
    );
    assert!(
        last["erased_at"].as_u64() < last["removed_at"].as_u64(),
        "{last}"
    );
    let (code, v) = json(&["verify", "--model", m]);
    assert_eq!((code, v["outcome"].as_str()), (0, Some("equal")), "{v}");
    assert_eq!(v["served_digest"], v["retrained_digest"]);
}

#[test]
fn a_client_leaving_at_the_minimum_is_erased_and_the_model_withdrawn() {
    // A record could not be erased when its removal would leave fewer
    // clients than --min-clients: `forget` refused, the coordinates stayed.
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = fitted(dir.path());
    for site in ["72", "65", "site-5"] {
        let (code, j) = json(&["forget", "--model", &m, "--client", site, "--flush"]);
        assert_eq!(code, 0, "{j}");
    }
    // Three sites left, three per aggregate: the fourth to leave withdraws
    // the model (exit code 6) and its rows are erased.
    let (code, j) = json(&["forget", "--model", &m, "--client", "3"]);
    assert_eq!(code, 6, "{j}");
    let r = &j["requests"][0];
    assert_eq!(r["outcome"], "withdrawn", "{j}");
    assert_eq!(r["erased_points"], rows_of("3"), "{j}");
    assert!(
        r["withdrawn"]
            .as_str()
            .unwrap()
            .contains("would have left 2 clients")
    );
    assert_eq!(j["points"], rows_of("Hôpital Nord") + rows_of("10"));
    let a = inspect(&m);
    assert!(a["withdrawn"].is_string(), "{a}");
    assert_eq!(a["centroids"].as_array().unwrap().len(), 0);
    let last = a["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["outcome"], "withdrawn", "{last}");
    // verify: the clients equal their fit, no model (exit code 6).
    let (code, v) = json(&["verify", "--model", &m]);
    assert_eq!((code, v["outcome"].as_str()), (6, Some("withdrawn")), "{v}");
    assert_eq!(v["served_clients_digest"], v["retrained_clients_digest"]);
    // No model to export or to predict with: an error that says why.
    fails_with(&["export", "--model", &m], "the store serves no model");
    let points = dir.path().join("points.csv");
    std::fs::write(&points, "0.1,0.2\n-0.2,0.1\n").unwrap();
    fails_with(
        &["predict", "--model", &m, "--data", points.to_str().unwrap()],
        "the store serves no model",
    );
    // A later request erases too, with no round; -q prints nothing.
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000010", "-q"]);
    assert_eq!(out.status.code(), Some(6), "{out:?}");
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let (_, f) = json(&["inspect", "--model", &m, "--id", "P-000010"]);
    assert_eq!(f["record"]["status"], "forgotten", "{f}");
}

#[test]
fn the_file_fit_read_predicts_as_it_is() {
    // `predict` read every column as a coordinate: the file `fit` was
    // given (client and id columns) could not be predicted.
    let dir = tempfile::tempdir().unwrap();
    let (data, m) = fitted(dir.path());
    let d = data.to_str().unwrap();
    let out = mufc(&[
        "predict",
        "--model",
        &m,
        "--data",
        d,
        "--client-column",
        "1",
        "--id-column",
        "2",
    ]);
    assert!(out.status.success(), "{out:?}");
    let labels: Vec<usize> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(labels.len(), 180);
    // The three blobs of the file (row r is in blob r % 3) get three
    // labels, one each.
    for b in 0..3 {
        let of: std::collections::BTreeSet<usize> =
            (b..180).step_by(3).map(|r| labels[r]).collect();
        assert_eq!(of.len(), 1, "blob {b}: {of:?}");
    }
    fails_with(
        &["predict", "--model", &m, "--data", d, "--id-column", "2"],
        "column 1 (counting from 0): \"site-5\" is not a number",
    );
}

#[test]
fn verify_prints_the_evidence_and_a_refit_cannot_bring_records_back() {
    // Defect 5: nobody could check the "equals retraining" claim from the
    // command line. And a re-import of the original data brought
    // forgotten records back.
    let dir = tempfile::tempdir().unwrap();
    let (data, m) = fitted(dir.path());
    let (code, j) = json(&[
        "forget",
        "--model",
        &m,
        "--ids",
        "P-000006,P-000007,P-000008",
    ]);
    assert_eq!(code, 0, "{j}");
    let out = mufc(&["verify", "--model", &m]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "EQUAL",
        "model version",
        "served model SHA-256",
        "retrained model SHA-256",
        "remaining records",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
    let (_, v) = json(&["verify", "--model", &m]);
    assert_eq!(v["model_version"], 2);
    assert_eq!(v["points"], 177);
    assert_eq!(v["served_digest"].as_str().unwrap().len(), 64);
    // The original data again over the store: refused, naming the records.
    let model = PathBuf::from(&m);
    let out = fit(&data, &model, &["--force"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("brings back 3 records the store forgot") && err.contains("P-000006"),
        "{err}"
    );
    assert_eq!(inspect(&m)["points"], 177, "the store is untouched");
    // --skip-forgotten: the new store leaves them out, and knows them.
    let out = fit(&data, &model, &["--force", "--skip-forgotten"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(inspect(&m)["points"], 177);
    let (_, f) = json(&["inspect", "--model", &m, "--id", "P-000007"]);
    assert_eq!(f["record"]["status"], "forgotten");
    assert_eq!(f["record"]["inherited"], true);
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000007"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("of the store this one replaced"),
        "{out:?}"
    );
}

#[test]
fn the_command_line_keeps_its_contract() {
    let dir = tempfile::tempdir().unwrap();
    let (_, m) = fitted(dir.path());
    // -q: nothing but errors, the exit code tells the outcome.
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000000,P-000001", "-q"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000000", "-q"]);
    assert_eq!(out.status.code(), Some(4));
    assert!(out.stdout.is_empty() && !out.stderr.is_empty(), "{out:?}");
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000003", "-q"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // export: --json and --format csv ask for two formats.
    fails_with(
        &["export", "--model", &m, "--json", "--format", "csv"],
        "ask for two formats",
    );
    // A negative --gamma parses, and is refused for what it is.
    fails_with(
        &["run", "--gamma", "-1"],
        "invalid gamma = -1: must be finite and positive",
    );
    fails_with(&["run", "--variance", "-2"], "variance");
    // A short row: line, fields, expected.
    let short = dir.path().join("short.csv");
    std::fs::write(&short, "1,2,3\n4,5,6\n7,8\n").unwrap();
    fails_with(
        &[
            "run",
            "--data",
            short.to_str().unwrap(),
            "--k",
            "1",
            "--clients",
            "1",
        ],
        "line 3 has 2 fields, expected 3",
    );
    // Singular and plural.
    let out = mufc(&["forget", "--model", &m, "--ids", "P-000004"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("pending model updates;") || text.contains("pending model update;"),
        "{text}"
    );
    assert!(
        !text.contains("1 clients") && !text.contains("(s)"),
        "{text}"
    );
    // Exit codes in --help.
    let help = String::from_utf8_lossy(&mufc(&["--help"]).stdout).into_owned();
    assert!(help.contains("4 refused"), "{help}");
    // Every forget leaves one audit row per client it names.
    let audit = inspect(&m)["history"].as_array().unwrap().clone();
    let mut per: BTreeMap<u64, usize> = BTreeMap::new();
    for e in &audit {
        *per.entry(e["request"].as_u64().unwrap()).or_default() += 1;
    }
    assert_eq!(per.get(&1), Some(&2), "{audit:?}");
}

/// Bad input is exit code 1, not a refusal (4): a `--max-defer` beyond
/// the store's 30 days, and an `--ids` list that names no record or an
/// id no store can hold.
#[test]
fn bad_deferral_limits_and_ids_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = data_csv(dir.path());
    let out = fit(
        &data,
        &dir.path().join("long.mufc"),
        &["--max-defer", "31d"],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 30 days"));
    assert!(!dir.path().join("long.mufc").exists());
    let (_, m) = fitted(dir.path());
    for ids in ["", " , ", &"x".repeat(300)] {
        let out = mufc(&["forget", "--model", &m, "--ids", ids]);
        assert_eq!(out.status.code(), Some(1), "--ids {ids:?}: {out:?}");
    }
    // Spaces around a valid id are not part of it.
    let out = mufc(&["forget", "--model", &m, "--ids", " P-000001 ", "-q"]);
    assert!(matches!(out.status.code(), Some(0 | 3)), "{out:?}");
}
