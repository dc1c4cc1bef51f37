//! The model-store commands end to end (`fit`, `forget`, `predict`,
//! `export`, `inspect`), running the binary on a store in a temporary
//! directory: 120 points in 2-D, 4 clients named by a column, record ids
//! from another column.

#![allow(clippy::unwrap_used)]

use crate::common;
use std::path::{Path, PathBuf};

use common::{fails_with, has_keys, mufc};
use serde_json::Value;

/// The 120 rows `client,id,x,y` ([`common::store_rows_csv`]).
fn data_csv(dir: &Path) -> PathBuf {
    common::store_rows_csv(dir, "data.csv", 0..120)
}

/// Runs `mufc` with `args`, checking success; stdout.
fn ok(args: &[&str]) -> String {
    let out = mufc(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// As [`ok`] with `--json`: the one JSON object on stdout.
fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let s = ok(&all);
    assert_eq!(s.lines().count(), 1, "{s}");
    serde_json::from_str(&s).unwrap()
}

/// `mufc fit --json` of `data` (client column 0, id column 1, K = 4) into
/// `model`, with `extra` options.
fn fit_json(data: &str, model: &str, extra: &[&str]) -> Value {
    let mut args = common::store_fit_args(data, model);
    args.extend_from_slice(extra);
    json(&args)
}

/// A store fitted on [`data_csv`] in `dir`: (store, data).
fn fitted(dir: &Path) -> (String, String) {
    let data = data_csv(dir);
    let model = dir.join("model.mufc");
    let (d, m) = (data.to_str().unwrap(), model.to_str().unwrap());
    let j = fit_json(d, m, &["--gamma", "0.01"]);
    has_keys(
        &j,
        &["centroids", "points", "model_version", "included_clients"],
    );
    assert_eq!(j["command"], "fit");
    assert_eq!(j["points"], 120);
    assert_eq!(j["dim"], 2);
    assert_eq!(j["record_ids"], "id column");
    let c = j["centroids"].as_array().unwrap();
    assert_eq!(c.len(), 4);
    assert_eq!(
        c.iter().map(|c| c["weight"].as_u64().unwrap()).sum::<u64>(),
        120
    );
    (m.to_string(), d.to_string())
}

#[test]
fn fit_then_inspect_export_predict() {
    let dir = tempfile::tempdir().unwrap();
    let (m, d) = fitted(dir.path());

    let j = json(&["inspect", "--model", &m]);
    assert_eq!(
        (j["clients"].as_u64(), j["points"].as_u64()),
        (Some(4), Some(120))
    );
    assert_eq!((j["k"].as_u64(), j["dim"].as_u64()), (Some(4), Some(2)));
    assert_eq!(j["model_version"], 1);
    assert_eq!(j["history"].as_array().unwrap().len(), 0);
    assert_eq!(j["config"]["min_updating_clients"], 2);
    let text = ok(&["inspect", "--model", &m]);
    assert!(text.contains("no request served yet"), "{text}");

    let csv = ok(&["export", "--model", &m, "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "centroid,weight,x0,x1");
    assert_eq!(lines.len(), 5, "{csv}");
    let e: Value =
        serde_json::from_str(&ok(&["export", "--model", &m, "--format", "json"])).unwrap();
    assert_eq!(e["centroids"].as_array().unwrap().len(), 4);
    assert_eq!(json(&["export", "--model", &m])["k"], 4);

    // Predicting the training points (without their client and id
    // columns): one label per line, the same in the file and in JSON.
    let mut pts = String::new();
    for line in std::fs::read_to_string(&d).unwrap().lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        pts.push_str(&format!("{},{}\n", f[2], f[3]));
    }
    let new = dir.path().join("new.csv");
    std::fs::write(&new, pts).unwrap();
    let new = new.to_str().unwrap();
    let labels = ok(&["predict", "--model", &m, "--data", new]);
    assert_eq!(labels.lines().count(), 120);
    assert!(labels.lines().all(|l| l.parse::<usize>().unwrap() < 4));
    // Same blob, same label: row r is in blob r % 4.
    let l: Vec<&str> = labels.lines().collect();
    for r in 4..120 {
        assert_eq!(l[r], l[r % 4], "row {r}");
    }
    let out = dir.path().join("labels.csv");
    let o = out.to_str().unwrap();
    let j = json(&["predict", "--model", &m, "--data", new, "--out", o]);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), labels);
    assert_eq!(j["labels"].as_array().unwrap().len(), 120);
}

/// With `--scale` the store keeps the map into the box: `predict` takes
/// the points as the file has them and `export` gives the centroids in the
/// file's units.
#[test]
fn a_scaled_fit_predicts_and_exports_in_the_datas_units() {
    let dir = tempfile::tempdir().unwrap();
    // The blobs of `data_csv`, in units a thousand times larger and offset:
    // far outside the box, so unscaled points would all be clamped.
    let mut s = String::from("client,id,x,y\n");
    let mut pts = String::new();
    for line in std::fs::read_to_string(data_csv(dir.path()))
        .unwrap()
        .lines()
        .skip(1)
    {
        let f: Vec<&str> = line.split(',').collect();
        let x = f[2].parse::<f64>().unwrap() * 1000.0 + 5000.0;
        let y = f[3].parse::<f64>().unwrap() * 1000.0 - 300.0;
        s.push_str(&format!("{},{},{x},{y}\n", f[0], f[1]));
        pts.push_str(&format!("{x},{y}\n"));
    }
    let data = dir.path().join("big.csv");
    std::fs::write(&data, s).unwrap();
    let new = dir.path().join("big-points.csv");
    std::fs::write(&new, pts).unwrap();
    let model = dir.path().join("big.mufc");
    let (d, m, n) = (
        data.to_str().unwrap(),
        model.to_str().unwrap(),
        new.to_str().unwrap(),
    );
    let j = fit_json(d, m, &["--scale"]);
    assert!(j["warnings"].as_array().is_none_or(Vec::is_empty), "{j}");
    // Centroids in the file's units: inside the data's range.
    let e: Value =
        serde_json::from_str(&ok(&["export", "--model", m, "--format", "json"])).unwrap();
    let cs = e["centroids"].as_array().unwrap();
    assert_eq!(cs.len(), 4);
    for c in cs {
        let x = c["coords"][0].as_f64().unwrap();
        let y = c["coords"][1].as_f64().unwrap();
        assert!(
            (4600.0..=5400.0).contains(&x) && (-700.0..=100.0).contains(&y),
            "{c}"
        );
    }
    // The file's own points: one label per blob, four different labels.
    let labels = ok(&["predict", "--model", m, "--data", n]);
    let l: Vec<&str> = labels.lines().collect();
    assert_eq!(l.len(), 120);
    for r in 4..120 {
        assert_eq!(l[r], l[r % 4], "row {r}");
    }
    let distinct: std::collections::BTreeSet<&str> = l.iter().copied().collect();
    assert_eq!(distinct.len(), 4, "{labels}");
}

#[test]
fn forget_of_two_clients_is_applied_and_audited() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = fitted(dir.path());
    // Rows 0 and 4: clients c0 and c1, ids 1000 and 1012.
    let j = json(&["forget", "--model", &m, "--ids", "1000,1012"]);
    let r = &j["requests"][0];
    assert_eq!(r["outcome"], "applied", "{j}");
    assert_eq!(r["removed_points"], 2);
    assert_eq!(
        (r["version_before"].as_u64(), r["version_after"].as_u64()),
        (Some(1), Some(2))
    );
    has_keys(r, &["centroid_shift", "reseeded_clients", "apply_seconds"]);
    assert_eq!(j["points"], 118);

    let j = json(&["inspect", "--model", &m]);
    let h = j["history"].as_array().unwrap();
    assert_eq!(h.len(), 2, "{j}");
    for (e, client) in h.iter().zip(["c0", "c1"]) {
        assert_eq!(
            (e["client"].as_str(), e["points"].as_u64()),
            (Some(client), Some(1))
        );
        assert_eq!(e["outcome"], "applied");
        assert_eq!(e["version_after"], 2);
    }
    let text = ok(&["inspect", "--model", &m]);
    assert!(
        text.contains("applied") && text.contains("1 -> 2"),
        "{text}"
    );

    // A lone client's request: its record is erased at once, its model
    // update waits (exit code 3); --flush applies it with a warning.
    let out = mufc(&["forget", "--model", &m, "--ids", "1024", "--json"]);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["requests"][0]["outcome"], "deferred");
    assert_eq!(j["requests"][0]["erased_points"], 1);
    assert!(
        j["requests"][0]["deferred_reason"]
            .as_str()
            .unwrap()
            .contains("privacy policy")
    );
    assert_eq!(j["pending"].as_array().unwrap().len(), 1);
    assert_eq!(json(&["inspect", "--model", &m])["points"], 117);
    let out = mufc(&["forget", "--model", &m, "--flush"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: --flush"));
    let j = json(&["inspect", "--model", &m]);
    assert_eq!(
        (j["points"].as_u64(), j["model_version"].as_u64()),
        (Some(117), Some(3))
    );
}

#[test]
fn an_unknown_id_is_named_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = fitted(dir.path());
    let before = std::fs::read(&m).unwrap();
    let err = fails_with(
        &["forget", "--model", &m, "--ids", "1000,1001,77"],
        "unknown record ids",
    );
    assert!(err.contains("77") && err.contains("1001"), "{err}");
    assert_eq!(std::fs::read(&m).unwrap(), before);
    // With --json: one JSON object naming the error, and the refusal's
    // exit code.
    let out = mufc(&["forget", "--model", &m, "--ids", "5", "--json"]);
    assert_eq!(out.status.code(), Some(4));
    let j: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["error"].as_str().unwrap().contains('5'));
    assert_eq!(std::fs::read(&m).unwrap(), before);
}

#[test]
fn fit_refuses_an_existing_store_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let (m, d) = fitted(dir.path());
    let before = std::fs::read(&m).unwrap();
    let args = [
        "fit",
        "--data",
        &d,
        "--model",
        &m,
        "--client-column",
        "0",
        "--k",
        "4",
        "--gamma",
        "0.01",
        "--quiet",
    ];
    fails_with(&args, "--force");
    assert_eq!(std::fs::read(&m).unwrap(), before);
    let mut forced = args.to_vec();
    forced.extend(["--id-column", "1", "--force"]);
    assert_eq!(json(&forced)["model_version"], 1);
    // Without --id-column (on the data without its id column) the ids are
    // row numbers, and fit says so.
    let rows = dir.path().join("rows.csv");
    let text: String = std::fs::read_to_string(&d)
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            format!("{},{},{}\n", f[0], f[2], f[3])
        })
        .collect();
    std::fs::write(&rows, text).unwrap();
    let mut plain = args.to_vec();
    plain[2] = rows.to_str().unwrap();
    plain.push("--force");
    assert_eq!(json(&plain)["record_ids"], "row numbers");
    // Without --quiet: the text says so (--quiet prints nothing).
    let loud: Vec<&str> = plain.iter().copied().filter(|a| *a != "--quiet").collect();
    assert!(ok(&plain).is_empty());
    let text = ok(&loud);
    assert!(
        text.contains("record ids are the 0-based data row numbers"),
        "{text}"
    );
}

#[test]
fn bad_ids_and_bad_columns_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = fitted(dir.path());
    // Predict on three columns for a model of dimension 2.
    let three = dir.path().join("three.csv");
    std::fs::write(&three, "0.1,0.2,0.3\n0.0,0.1,0.2\n").unwrap();
    fails_with(
        &["predict", "--model", &m, "--data", three.to_str().unwrap()],
        "3 feature columns, but the model",
    );
    // A duplicate id names its lines; ids are kept as written.
    let dup = dir.path().join("dup.csv");
    std::fs::write(&dup, "id,x,y\n5,0.1,0.1\n6,0.2,0.2\n5,0.1,0.2\n").unwrap();
    let m2 = dir.path().join("m2.mufc");
    let base = [
        "fit",
        "--model",
        m2.to_str().unwrap(),
        "--id-column",
        "0",
        "--clients",
        "1",
        "--k",
        "1",
        "--min-clients",
        "1",
        "--quiet",
        "--data",
    ];
    let mut a = base.to_vec();
    a.push(dup.to_str().unwrap());
    fails_with(
        &a,
        "line 4: record id \"5\" is already the id of line 2: record ids must be unique",
    );
    let empty = dir.path().join("empty-id.csv");
    std::fs::write(&empty, "id,x,y\n5,0.1,0.1\n,0.2,0.2\n").unwrap();
    let mut a = base.to_vec();
    a.push(empty.to_str().unwrap());
    fails_with(
        &a,
        "line 3, column 0 (counting from 0): \"\" is an empty record id",
    );
    assert!(!m2.exists());
}

/// `predict` on a store that keeps no map of the data's coordinates (a
/// server's, or a fit of data already in the box), given data in the
/// sites' own units (issue 28, item 11): it answered labels of nothing
/// with exit 0. Points outside the model's box are now refused, naming
/// the row and `--bounds`; with `--bounds` they are mapped as the sites
/// mapped theirs, and label as the same points in the box do. A store
/// with its own map refuses `--bounds`.
#[test]
fn predict_refuses_data_in_other_units_and_maps_them_with_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let (m, _) = fitted(dir.path());
    // Points in the box, and the same points in units of 0..200.
    let inside = [(-0.3, -0.3), (0.3, -0.28), (-0.31, 0.3), (0.29, 0.3)];
    let write = |name: &str, scale: &dyn Fn(f64) -> f64| {
        let mut s = String::from("x,y\n");
        for (x, y) in inside {
            s.push_str(&format!("{},{}\n", scale(x), scale(y)));
        }
        let p = dir.path().join(name);
        std::fs::write(&p, s).unwrap();
        p.to_str().unwrap().to_string()
    };
    let boxed = write("box.csv", &|v| v);
    let units = write("units.csv", &|v| (v + 0.5) * 200.0);
    let err = fails_with(
        &["predict", "--model", &m, "--data", &units],
        "outside the model's box",
    );
    assert!(err.contains("row 0") && err.contains("--bounds"), "{err}");
    let labels = |data: &str, extra: &[&str]| {
        let mut args = vec!["predict", "--model", m.as_str(), "--data", data, "--json"];
        args.extend_from_slice(extra);
        let s = ok(&args);
        serde_json::from_str::<Value>(&s).unwrap()["labels"].clone()
    };
    assert_eq!(
        labels(&units, &["--bounds", "0,200"]),
        labels(&boxed, &[]),
        "mapped with the bounds, the points label as in the box"
    );

    // A store with its own map (a scaled fit) takes the data's units as
    // they are and refuses a second map.
    let mut full = String::from("client,id,x,y\n");
    for line in std::fs::read_to_string(data_csv(dir.path()))
        .unwrap()
        .lines()
        .skip(1)
    {
        let f: Vec<&str> = line.split(',').collect();
        let unit = |i: usize| (f[i].parse::<f64>().unwrap() + 0.5) * 200.0;
        full.push_str(&format!("{},{},{},{}\n", f[0], f[1], unit(2), unit(3)));
    }
    let full_path = dir.path().join("units-full.csv");
    std::fs::write(&full_path, full).unwrap();
    let scaled = dir.path().join("scaled.mufc");
    let s = scaled.to_str().unwrap();
    fit_json(full_path.to_str().unwrap(), s, &["--scale"]);
    fails_with(
        &[
            "predict", "--model", s, "--data", &units, "--bounds", "0,200",
        ],
        "keeps its own map",
    );
    ok(&["predict", "--model", s, "--data", &units]);
}
