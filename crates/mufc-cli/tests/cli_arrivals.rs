//! `mufc add` end to end (issue 29): a store fitted with room for records
//! that arrive takes them, by client name and record id; its model equals
//! retraining on the records it holds (`mufc verify`); a lone client's
//! records wait as a removal does; a record it holds or forgot, an
//! unknown client, a store trained without room are refused with nothing
//! changed; the audit counts what was added.

#![allow(clippy::unwrap_used)]

use crate::common;
use std::path::Path;

use common::{fails_with, mufc};
use serde_json::Value;

/// Rows `rows` of [`common::store_rows_csv`], as `name` in `dir`.
fn csv(dir: &Path, name: &str, rows: impl Iterator<Item = usize>) -> String {
    let path = common::store_rows_csv(dir, name, rows);
    path.to_str().unwrap().to_string()
}

/// Runs `mufc` with `args` and `--json`: the exit code and the JSON.
fn run(args: &[&str]) -> (i32, Value) {
    let mut all = args.to_vec();
    all.push("--json");
    let out = mufc(&all);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    let code = out.status.code().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (code, json)
}

/// A store of rows `0..100` (the rows from 100 on arrive later), with
/// room for `max_points` points when given.
fn fitted(dir: &Path, max_points: Option<&str>) -> String {
    let data = csv(dir, "data.csv", 0..100);
    let model = dir.join("model.mufc").to_str().unwrap().to_string();
    let mut args = common::store_fit_args(&data, &model);
    args.extend(["--gamma", "0.01"]);
    if let Some(n) = max_points {
        args.extend(["--max-points", n]);
    }
    let (code, _) = run(&args);
    assert_eq!(code, 0);
    model
}

/// The arguments of `mufc add` of `data` (client column 0, id column 1).
fn add_args<'a>(model: &'a str, data: &'a str) -> Vec<&'a str> {
    let columns = ["--client-column", "0", "--id-column", "1"];
    let mut args = vec!["add", "--model", model, "--data", data];
    args.extend(columns);
    args
}

/// `mufc add` of `data`, which fails saying `needle`: its stderr.
fn add_fails(model: &str, data: &str, needle: &str) -> String {
    fails_with(&add_args(model, data), needle)
}

/// `mufc add` of `data` with `extra` options: the exit code and the JSON.
fn add(model: &str, data: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = add_args(model, data);
    args.extend_from_slice(extra);
    run(&args)
}

#[test]
fn records_that_arrive_give_the_model_of_the_records_held() {
    let dir = tempfile::tempdir().unwrap();
    let model = fitted(dir.path(), Some("200"));
    // Rows 100..104 lie on clients c1 (100..103: 100/4 % 4 = 1) ... one
    // client alone: its update waits.
    let lone = csv(dir.path(), "lone.csv", 100..104);
    let (code, j) = add(&model, &lone, &[]);
    assert_eq!(code, 3, "{j}");
    assert_eq!(j["requests"][0]["added_points"], 4);
    assert_eq!(j["requests"][0]["outcome"], "deferred");
    let why = j["requests"][0]["deferred_reason"].as_str().unwrap();
    assert!(
        why.contains("added to the store") && why.contains("does not count the records"),
        "{why}"
    );
    let pending = j["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{j}");
    // The audit's row of an addition erased nothing: `-` in that column.
    let out = mufc(&["inspect", "--model", &model]);
    let text = String::from_utf8(out.stdout).unwrap();
    let row: Vec<&str> = (text.lines())
        .find(|l| l.contains(" deferred "))
        .map(|l| l.split_whitespace().collect())
        .unwrap_or_default();
    assert!(
        row.ends_with(&["deferred", "-", "-", "pending", "1", "->", "1"]),
        "{text}"
    );
    assert_eq!(j["points"], 104);
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (3, &Value::from("pending")), "{v}");
    // Rows 104..112 lie on clients c2 and c3: the round runs for all.
    let more = csv(dir.path(), "more.csv", 104..112);
    let (code, j) = add(&model, &more, &[]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(
        j["requests"][0]["applied_requests"],
        serde_json::json!([1, 2])
    );
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (0, &Value::from("equal")), "{v}");
    // The audit counts the records added, per client.
    let (_, i) = run(&["inspect", "--model", &model]);
    let added: u64 = (i["history"].as_array().unwrap().iter())
        .filter(|e| e["outcome"] == "applied")
        .map(|e| e["added"].as_u64().unwrap())
        .sum();
    assert_eq!(added, 12, "{i}");
    // A record the store holds keeps its id: refused, nothing changed.
    let (code, j) = add(&model, &more, &[]);
    assert_eq!(code, 4, "{j}");
    let err = add_fails(&model, &more, "is held already");
    assert!(err.contains("nothing changed"), "{err}");
    // A forgotten record does not come back, unless skipped.
    let (code, _) = run(&["forget", "--model", &model, "--ids", "1312,1315", "--flush"]);
    assert_eq!(code, 0);
    let forgotten = csv(dir.path(), "forgotten.csv", 104..106);
    add_fails(&model, &forgotten, "the store forgot");
    // Rows 104 and 105 were forgotten; rows 112..120 are new.
    let again = csv(
        dir.path(),
        "again.csv",
        [104, 105].into_iter().chain(112..120),
    );
    let mut args = add_args(&model, &again);
    args.extend(["--skip-forgotten", "--flush", "--json"]);
    let out = mufc(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("2 record(s) left out"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &j["requests"][0];
    assert_eq!(
        (&r["added_points"], &r["skipped"]),
        (&Value::from(8), &Value::from(2)),
        "{j}"
    );
    assert_eq!(j["points"], 118);
    let (_, v) = run(&["verify", "--model", &model]);
    assert_eq!(v["outcome"], "equal", "{v}");
}

#[test]
fn an_addition_the_store_cannot_take_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = fitted(dir.path(), None);
    let before = std::fs::read(&model).unwrap();
    let new = csv(dir.path(), "new.csv", 100..108);
    // Trained without room for records that arrive.
    add_fails(&model, &new, "max_points");
    // An unknown client.
    let stranger = dir.path().join("stranger.csv");
    std::fs::write(&stranger, "client,id,x,y\nc9,5000,0.1,0.1\n").unwrap();
    let stranger = stranger.to_str().unwrap();
    add_fails(&model, stranger, "unknown client c9");
    // No client named.
    fails_with(
        &["add", "--model", &model, "--data", &new, "--id-column", "1"],
        "--client",
    );
    assert_eq!(std::fs::read(&model).unwrap(), before);
    // A point outside the model's box, in a store with room.
    let roomy = tempfile::tempdir().unwrap();
    let model = fitted(roomy.path(), Some("200"));
    let before = std::fs::read(&model).unwrap();
    let outside = dir.path().join("outside.csv");
    std::fs::write(&outside, "client,id,x,y\nc0,5000,0.9,0.1\n").unwrap();
    let outside = outside.to_str().unwrap();
    add_fails(&model, outside, "outside");
    assert_eq!(std::fs::read(&model).unwrap(), before);
}

/// Six `mufc add` processes on one store at once: four add records of
/// their own, two the same records. Each of the four lands, exactly one
/// of the two does (the other is refused: the records are held), no
/// request is lost or applied twice, and the model equals retraining.
#[test]
fn six_mufc_add_processes_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let model = fitted(dir.path(), Some("200"));
    // Rows 100..116 in four files of four, each of one client; rows
    // 116..120 in the file two processes share.
    let files: Vec<String> = (0..4)
        .map(|i| {
            csv(
                dir.path(),
                &format!("own-{i}.csv"),
                100 + 4 * i..104 + 4 * i,
            )
        })
        .collect();
    let shared = csv(dir.path(), "shared.csv", 116..120);
    let all: Vec<&String> = files.iter().chain([&shared, &shared]).collect();
    let children: Vec<_> = (all.iter())
        .map(|data| {
            std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
                .args(["add", "--model", &model, "--data", data])
                .args(["--client-column", "0", "--id-column", "1", "--json"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let codes: Vec<i32> = (children.into_iter())
        .map(|child| {
            let o = child.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(!stderr.contains("panicked"), "{stderr}");
            let code = o.status.code().unwrap();
            if code == 4 {
                assert!(stderr.contains("is held already"), "{stderr}");
            }
            code
        })
        .collect();
    assert!(codes[..4].iter().all(|&c| c == 0 || c == 3), "{codes:?}");
    let refused = codes[4..].iter().filter(|&&c| c == 4).count();
    assert_eq!(refused, 1, "{codes:?}");
    let (_, i) = run(&["inspect", "--model", &model]);
    assert_eq!(i["points"], 120, "{i}");
    let (code, _) = run(&["forget", "--model", &model, "--flush"]);
    assert!(code == 0, "{code}");
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (0, &Value::from("equal")), "{v}");
}

/// A store whose model was withdrawn (a client left below the minimum
/// aggregate) takes additions at its clients alone: exit code 6, the
/// records held, no model, and `verify` says withdrawn.
#[test]
fn a_withdrawn_store_takes_additions_at_its_clients() {
    let dir = tempfile::tempdir().unwrap();
    let data = csv(dir.path(), "data.csv", 0..100);
    let model = dir.path().join("model.mufc").to_str().unwrap().to_string();
    let mut args = common::store_fit_args(&data, &model);
    args.extend([
        "--gamma",
        "0.01",
        "--max-points",
        "200",
        "--min-clients",
        "4",
    ]);
    assert_eq!(run(&args).0, 0);
    let (code, _) = run(&["forget", "--model", &model, "--client", "c3"]);
    assert_eq!(code, 6);
    // Rows 100..104 lie on client c1.
    let new = csv(dir.path(), "new.csv", 100..104);
    let (code, j) = add(&model, &new, &[]);
    assert_eq!(code, 6, "{j}");
    assert_eq!(j["requests"][0]["added_points"], 4, "{j}");
    assert_eq!(j["requests"][0]["outcome"], "withdrawn", "{j}");
    let text =
        String::from_utf8(mufc(&add_args(&model, &csv(dir.path(), "more.csv", 104..108))).stdout)
            .unwrap();
    assert!(text.contains("added; the store serves no model"), "{text}");
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (6, &Value::from("withdrawn")), "{v}");
    let (_, i) = run(&["inspect", "--model", &model]);
    // c3 held 24 of the 100 points.
    assert_eq!(i["points"], 76 + 8, "{i}");
}

/// A new site joins with `--new-clients`: without it the name is refused
/// as unknown, nothing changed; with it the lone join waits (its round
/// would show the server the new site's histogram), and the next
/// client's records run one round for both; the model then equals
/// retraining on every record held (`mufc verify`), and the audit names
/// the new site.
#[test]
fn a_new_site_joins_with_new_clients() {
    let dir = tempfile::tempdir().unwrap();
    let model = fitted(dir.path(), Some("200"));
    // Rows 100..104 are client c1's: renamed, a new site's.
    let rows = csv(dir.path(), "site.csv", 100..104);
    let text = std::fs::read_to_string(&rows)
        .unwrap()
        .replace("c1,", "north,");
    std::fs::write(&rows, text).unwrap();
    let before = std::fs::read(&model).unwrap();
    let err = add_fails(&model, &rows, "unknown client north");
    assert!(err.contains("nothing changed"), "{err}");
    assert_eq!(std::fs::read(&model).unwrap(), before);
    let (code, j) = add(&model, &rows, &["--new-clients"]);
    assert_eq!(code, 3, "{j}");
    assert_eq!(j["requests"][0]["added_points"], 4);
    assert_eq!(j["requests"][0]["clients"], serde_json::json!(["north"]));
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (3, &Value::from("pending")), "{v}");
    // Rows 104..112 lie on clients c2 and c3: the round runs for all.
    let more = csv(dir.path(), "more.csv", 104..112);
    let (code, j) = add(&model, &more, &[]);
    assert_eq!(code, 0, "{j}");
    assert_eq!(j["points"], 112);
    let (code, v) = run(&["verify", "--model", &model]);
    assert_eq!((code, &v["outcome"]), (0, &Value::from("equal")), "{v}");
    let out = mufc(&["inspect", "--model", &model]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("north"), "{text}");
}
