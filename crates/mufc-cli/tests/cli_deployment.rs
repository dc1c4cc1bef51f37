//! `docs/deployment.md` is run as written: every `$ mufc ...` line of its
//! console blocks, in order, with the host and port replaced by 127.0.0.1
//! and a free port, and the three hospitals' data files written here. The
//! long-running `server` and `client` commands run as background
//! processes; the others must succeed. The model is then checked against
//! the in-process federation on the records left.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::path::Path;

use mufc_store::Store;
use nalgebra::DMatrix;
use net::{Proc, assert_model, free_port};
use seeding::{BoxTransform, Dataset, PointId};

const HOSPITALS: [&str; 3] = ["st-marys", "general", "childrens"];

/// The commands of the walkthrough, in order, without the `$ mufc`.
fn commands(port: u16) -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/deployment.md"),
    )
    .unwrap();
    let mut out = Vec::new();
    let mut in_console = false;
    for line in doc.lines() {
        if line.starts_with("```") {
            in_console = line == "```console";
            continue;
        }
        if let (true, Some(cmd)) = (in_console, line.strip_prefix("$ mufc ")) {
            let cmd = cmd
                .replace("fed.example.org:7443", &format!("127.0.0.1:{port}"))
                .replace("0.0.0.0:7443", &format!("127.0.0.1:{port}"));
            out.push(cmd.split_whitespace().map(str::to_string).collect());
        }
    }
    out
}

/// Each hospital's records: 60 measurements in [0, 200]^2 around three
/// centres, with a header row; returned as read back (in the box).
fn write_data(dir: &Path) -> Vec<Dataset> {
    let to_box = BoxTransform::from_bounds(&[0.0, 0.0], &[200.0, 200.0]).unwrap();
    HOSPITALS
        .iter()
        .enumerate()
        .map(|(h, name)| {
            let mut csv = String::from("systolic,weight\n");
            let mut coords = Vec::new();
            for i in 0..60usize {
                let c = (i + h) % 3;
                let x = [60.0, 120.0, 150.0][c] + ((i * 7 + h) % 11) as f64;
                let y = [40.0, 90.0, 160.0][c] + ((i * 5 + 2 * h) % 13) as f64;
                csv.push_str(&format!("{x:?},{y:?}\n"));
                coords.extend(to_box.apply(&[x, y]));
            }
            std::fs::write(dir.join(format!("{name}.csv")), csv).unwrap();
            Dataset::new(DMatrix::from_column_slice(2, 60, &coords)).unwrap()
        })
        .collect()
}

#[test]
fn the_deployment_walkthrough_runs_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = write_data(dir);
    let port = free_port();
    let cmds = commands(port);
    let names: Vec<&str> = cmds.iter().map(|c| c[0].as_str()).collect();
    assert_eq!(
        names,
        [
            "certs", "server", "client", "client", "client", "client", "client", "client", "certs",
            "inspect", "export", "predict"
        ],
        "the walkthrough's commands changed: update this test with it"
    );
    // The new records `predict` labels, in the hospitals' units.
    let new_patients = [[64.0, 45.0], [151.0, 165.0], [118.0, 92.0], [70.0, 150.0]];
    let csv: String = std::iter::once("systolic,weight\n".to_string())
        .chain(new_patients.iter().map(|[x, y]| format!("{x:?},{y:?}\n")))
        .collect();
    std::fs::write(dir.join("new-patients.csv"), csv).unwrap();
    // The records General admits (section 4b), in the same units.
    std::fs::write(
        dir.join("admitted.csv"),
        "systolic,weight\n66.0,47.0\n148.0,158.0\n",
    )
    .unwrap();
    let mut predicted = String::new();
    let mut background = Vec::new();
    for cmd in &cmds {
        let request = cmd[0] == "client" && (cmd[1] == "forget" || cmd[1] == "add");
        let long_running = cmd[0] == "server" || (cmd[0] == "client" && !request);
        if long_running {
            let p = Proc::start(&cmd.join(" "), dir, cmd, &[]);
            if cmd[0] == "server" {
                p.wait_for(|l| l.starts_with("listening on"));
            }
            background.push(p);
            continue;
        }
        if cmd[0] == "client" {
            // The requests: after training.
            background[0].wait_for(|l| l.contains("committed (training)"));
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
            .current_dir(dir)
            .args(cmd)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "mufc {}: {text}{}",
            cmd.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        if cmd[0] == "client" {
            // General's request alone is held back (the lone-update
            // policy); St Mary's makes two, and one round serves both.
            // General's addition is alone again, and held back.
            let alone = cmd.contains(&"general.db".to_string());
            assert_eq!(text.contains("acknowledged in round 1"), !alone, "{text}");
            assert_eq!(text.contains("not yet"), alone, "{text}");
        }
        if cmd[0] == "inspect" {
            assert!(text.contains("audit history"), "{text}");
        }
        if cmd[0] == "certs" && cmd.contains(&"--join".to_string()) {
            assert_joined(dir, "riverside");
        }
        if cmd[0] == "predict" {
            predicted = text;
        }
    }

    // The model: training on what the hospitals still hold (General's
    // addition waits for another request: it is in its store, not yet in
    // the model).
    let mut rest = data;
    rest[0] = rest[0].without(&[PointId(5)]).unwrap();
    rest[1] = rest[1].without(&[PointId(17), PointId(42)]).unwrap();
    assert_model(dir, rest);
    let stored = Store::open(dir.join("server.db")).unwrap();
    assert_eq!(stored.roster().unwrap().unwrap(), HOSPITALS);
    // `predict --bounds` labelled the new records as the model labels
    // them mapped into its box.
    let to_box = BoxTransform::from_bounds(&[0.0, 0.0], &[200.0, 200.0]).unwrap();
    let mapped: Vec<f64> = new_patients.iter().flat_map(|p| to_box.apply(p)).collect();
    let want = stored
        .predict(&DMatrix::from_column_slice(2, new_patients.len(), &mapped))
        .unwrap();
    let got: Vec<usize> = predicted.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(got, want, "{predicted}");
}

/// Section 4c: the federation file now names `name` last.
fn assert_joined(dir: &Path, name: &str) {
    let file = std::fs::read_to_string(dir.join("certs/federation.json")).unwrap();
    let file: serde_json::Value = serde_json::from_str(&file).unwrap();
    assert_eq!(file["roster"].as_array().unwrap().last().unwrap(), name);
}
