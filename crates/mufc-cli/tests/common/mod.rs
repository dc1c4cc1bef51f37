//! Helpers shared by the `mufc` end-to-end test files (`cli_*.rs`): the
//! data they make, and running the binary.

// Test helpers: a failure panics, with the failing call's location.
#![allow(clippy::unwrap_used)]

pub(crate) mod evil;
pub(crate) mod member;
pub(crate) mod net;
pub(crate) mod netns;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Four tight blobs of 30 points in 2-D, inside the box, as CSV with a
/// header; row `r` is point `r`.
pub(crate) fn blobs_csv(dir: &Path) -> PathBuf {
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

/// Rows `client,id,x,y` of the model-store tests, as `name` in `dir`:
/// row `r` (of `rows`) lies in blob `r % 4` (four tight blobs inside the
/// box), on client `c<r / 4 % 4>`, with record id `1000 + 3 r`.
pub(crate) fn store_rows_csv(dir: &Path, name: &str, rows: impl Iterator<Item = usize>) -> PathBuf {
    let mut s = String::from("client,id,x,y\n");
    for r in rows {
        let b = r % 4;
        let (cx, cy) = ([-0.3, 0.3, -0.3, 0.3][b], [-0.3, -0.3, 0.3, 0.3][b]);
        let dx = ((r * 7 + b * 3) % 13) as f64 / 130.0 - 0.05;
        let dy = ((r * 5 + b) % 17) as f64 / 170.0 - 0.05;
        let (client, id) = (r / 4 % 4, 1000 + 3 * r);
        s.push_str(&format!("c{client},{id},{},{}\n", cx + dx, cy + dy));
    }
    let path = dir.join(name);
    std::fs::write(&path, s).unwrap();
    path
}

/// The arguments of `mufc fit` of [`store_rows_csv`]'s `data` into
/// `model`: client column 0, id column 1, K = 4, quietly.
pub(crate) fn store_fit_args<'a>(data: &'a str, model: &'a str) -> Vec<&'a str> {
    let columns = ["--client-column", "0", "--id-column", "1", "--k", "4"];
    let mut args = vec!["fit", "--data", data, "--model", model, "--quiet"];
    args.extend(columns);
    args
}

/// Rows `client,id,x,y` in three blobs in 2-D, as `data.csv` in `dir`:
/// row `r` is on client `c<r % clients>` (so rows interleave across the
/// clients) with record id `id(r)`.
pub(crate) fn clients_csv(
    dir: &Path,
    clients: usize,
    points: usize,
    id: impl Fn(usize) -> i64,
) -> PathBuf {
    let mut s = String::from("client,id,x,y\n");
    for r in 0..clients * points {
        let b = r % 3;
        let (cx, cy) = ([-0.3, 0.3, 0.0][b], [-0.3, -0.2, 0.3][b]);
        let dx = ((r * 7 + b * 3) % 13) as f64 / 130.0 - 0.05;
        let dy = ((r * 5 + b) % 17) as f64 / 170.0 - 0.05;
        s.push_str(&format!(
            "c{},{},{},{}\n",
            r % clients,
            id(r),
            cx + dx,
            cy + dy
        ));
    }
    let path = dir.join("data.csv");
    std::fs::write(&path, s).unwrap();
    path
}

pub(crate) fn mufc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs `mufc` on the blobs (4 clients, K = 4, K' = 2) with `--json` and
/// returns the object, checking success.
pub(crate) fn json_run(data: &Path, args: &[&str]) -> Value {
    json_run_stderr(data, args).0
}

/// The options that fit the blobs in `data`: 4 clients, K = 4, K' = 2.
pub(crate) fn blobs_options(data: &str) -> Vec<&str> {
    vec![
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
    ]
}

/// As [`json_run`], with what `mufc` wrote on stderr.
pub(crate) fn json_run_stderr(data: &Path, args: &[&str]) -> (Value, String) {
    let data = data.to_str().unwrap();
    let mut all = vec![args[0]];
    all.extend(blobs_options(data));
    all.push("--json");
    all.extend_from_slice(&args[1..]);
    let out = mufc(&all);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{all:?}: {stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

pub(crate) fn has_keys(j: &Value, keys: &[&str]) {
    for k in keys {
        assert!(j.get(k).is_some_and(|v| !v.is_null()), "missing {k} in {j}");
    }
}

/// Runs `mufc` expecting a failure whose message contains `needle`;
/// returns the message, for further checks.
pub(crate) fn fails_with(args: &[&str], needle: &str) -> String {
    let out = mufc(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    assert!(stderr.contains(needle), "{args:?}: {stderr}");
    stderr
}
