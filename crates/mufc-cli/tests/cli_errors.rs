//! The `mufc` binary end to end on tiny data made by the tests: bad
//! input (files, data, options that do not fit the data) gives a clear
//! error and a non-zero exit, never a panic.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

use crate::common;
use common::{blobs_csv, blobs_options, fails_with, json_run_stderr, mufc};

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
    // Across processes the masks are a protocol the parties run: the
    // dealer has none, and pairwise masks survive no dropout. Refused
    // before anything is read or bound.
    let server = |extra: &[&str]| {
        let mut args = vec![
            "server",
            "--listen",
            "127.0.0.1:0",
            "--store",
            "s.db",
            "--clients",
            "a,b,c",
            "--certs",
            "no/such/dir",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let dealer = server(&["--masking", "dealer", "--dropout", "0.1"]);
    fails_with(
        &dealer.iter().map(String::as_str).collect::<Vec<_>>(),
        "dealt masks tolerate no dropout",
    );
    let lossy = server(&["--masking", "pairwise", "--dropout", "0.1"]);
    fails_with(
        &lossy.iter().map(String::as_str).collect::<Vec<_>>(),
        "pairwise masks tolerate no dropout",
    );
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
    // A fixed client k above a client's 30 points: every point its own
    // cluster, and a warning that says so.
    let (_, stderr) = json_run_stderr(&data, &["run", "--client-k", "40", "--split", "iid"]);
    assert!(
        stderr.contains("hold fewer points than the 40 clusters a client computes"),
        "{stderr}"
    );
    // More clusters than points in all is an error.
    fails_with(&["run", "--data", d, "--k", "200", "--clients", "4"], "200");
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
        &["ragged.csv: line 2 has 1 field, expected 2"],
    );
    run(
        &write("inf.csv", "0.1,0.2\n0.1,inf\n"),
        &["inf.csv: line 2, column 1 (counting from 0): \"inf\" is not finite"],
    );
}

/// `mufc` with its stdout closed (`mufc ... | head` after head exited):
/// the text is lost, never the exit code, and nothing panics; with stderr
/// closed too, still no panic.
#[test]
fn a_closed_stdout_loses_the_text_not_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let data = blobs_csv(dir.path());
    let d = data.to_str().unwrap();
    let ok = [&["run"][..], &blobs_options(d)].concat();
    let missing = dir.path().join("missing.csv");
    let bad = ["run", "--data", missing.to_str().unwrap(), "--json"];
    for (args, code) in [(&ok[..], 0), (&bad[..], 1)] {
        for close_stderr in [false, true] {
            let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
                .args(args)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            // The reader goes away before the command prints.
            drop(child.stdout.take());
            if close_stderr {
                drop(child.stderr.take());
            }
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
            assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
    }
}

/// A client's records outside the model's box (issue 28, item 10): data
/// in its own units, given without `--bounds` or outside them, was
/// imported, and every round then failed with a coordinate in the error
/// sent to the server. `mufc client` now refuses it before it writes a
/// store or connects to anything, and says how to map the data.
#[test]
fn a_client_refuses_records_outside_the_box_before_it_creates_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("units.csv");
    std::fs::write(&csv, "x,y\n12,180\n40,35\n150,90\n").unwrap();
    let store = dir.path().join("a.db");
    let certs = dir.path().join("certs");
    let made = mufc(&[
        "certs",
        "--out-dir",
        certs.to_str().unwrap(),
        "--federation",
        "f",
        "--clients",
        "a",
    ]);
    assert!(made.status.success());
    let args = |bounds: &'static [&'static str], certs: &Path| -> Vec<String> {
        let mut v: Vec<String> = ["client", "--server", "127.0.0.1:9", "--id", "a"]
            .iter()
            .map(ToString::to_string)
            .collect();
        v.extend(["--data".into(), csv.to_str().unwrap().into()]);
        v.extend(["--store".into(), store.to_str().unwrap().into()]);
        v.extend(["--certs".into(), certs.to_str().unwrap().into()]);
        v.extend(bounds.iter().map(ToString::to_string));
        v
    };
    for bounds in [&[][..], &["--bounds", "0,100"][..]] {
        let a = args(bounds, &certs);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fails_with(&a, "outside the model's box");
        assert!(!store.exists(), "no store is written ({bounds:?})");
    }
    // Inside the agreed bounds but without its certificates, the client
    // stops before it writes its records anywhere.
    let a = args(&["--bounds", "0,200"], &dir.path().join("no-certs"));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    fails_with(&a, "ca.pem");
    assert!(!store.exists(), "no store without certificates");
}
