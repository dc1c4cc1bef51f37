//! Records that arrive, across processes (issue 29): a `mufc client`
//! process trained on part of its records is asked, by `mufc client add`
//! beside it, to add the rest; the request is acknowledged once its round
//! committed, and the model is then the in-process `Federation`'s on
//! every record present, bit for bit (with pairwise masks, by a change
//! round). Records with an id the client held, outside the model's box,
//! or past the federation's bound are refused with a clear error and
//! change nothing. A lone addition waits for the lone-update policy, and
//! its deadline serves it.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::process::Command;

use net::{Processes, assert_model, write_csv};
use seeding::PointId;

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

/// `mufc client add` at client `client` (its store `<client>.db` in
/// `dir`) of the records in `file`, with `extra` options: whether it
/// succeeded, and what it printed.
fn add(dir: &std::path::Path, client: &str, file: &str, extra: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["client", "add", "--store", &format!("{client}.db")])
        .args(["--data", file, "--wait", "60"])
        .args(extra)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// The five clients of `label` started with `extra` server options (and
/// `--k 3 --max-points 400`), client c with its first 30 points (the
/// other 10 written to `c-more.csv`, to arrive), once trained: every
/// client's data, the data they trained on, and the processes.
fn trained_without_later(
    dir: &std::path::Path,
    label: &str,
    extra: &[&str],
) -> (Vec<seeding::Dataset>, Vec<seeding::Dataset>, Processes) {
    let all = net::written_data(dir, label, &NAMES);
    let later: Vec<PointId> = all[2].ids()[30..].to_vec();
    let mut present = all.clone();
    present[2] = all[2].without(&later).unwrap();
    write_csv(dir, "c", &present[2]);
    write_csv(dir, "c-more", &all[2].only(&later).unwrap());
    let mut options = vec!["--k", "3", "--max-points", "400"];
    options.extend_from_slice(extra);
    let fed = Processes::start(dir, &NAMES, &NAMES, &options, |_| None);
    fed.server.wait_for(|l| l.contains("committed (training)"));
    (all, present, fed)
}

#[test]
fn records_a_client_process_adds_give_the_model_of_training_on_them() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let extra = ["--seed", "11", "--masking", "pairwise"];
    let (all, present, fed) = trained_without_later(dir, "cli-net-arrivals", &extra);
    assert_model(dir, present);

    // The records, numbered on from the client's largest id: 30..40.
    let (ok, text) = add(dir, "c", "c-more.csv", &[]);
    assert!(
        ok && text.contains("10 records added, acknowledged in round"),
        "{text}"
    );
    assert_model(dir, all.clone());
    let log = fed.server.log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("round 1 started") && l.contains("a change round")),
        "{log:?}"
    );

    // A record whose id the client holds: refused before anything is
    // recorded.
    std::fs::write(dir.join("held.csv"), "5,0.0,0.0\n").unwrap();
    let (ok, text) = add(dir, "c", "held.csv", &["--id-column", "0"]);
    assert!(!ok && text.contains("held by the client"), "{text}");
    // Outside the model's box: refused by the command, nothing recorded
    // (not by the running client, which would name a refused request).
    std::fs::write(dir.join("far.csv"), "3.0,0.0\n").unwrap();
    let (ok, text) = add(dir, "c", "far.csv", &[]);
    assert!(!ok && text.contains("map the records"), "{text}");
    assert!(!text.contains("refused"), "{text}");
    // More than the federation's bound (400 points) at one client: the
    // running client refuses the request.
    let many: String = (0..361)
        .map(|i| format!("{},0.1\n", f64::from(i) / 1000.0))
        .collect();
    std::fs::write(dir.join("many.csv"), many).unwrap();
    let (ok, text) = add(dir, "c", "many.csv", &[]);
    assert!(
        !ok && text.contains("refused") && text.contains("max_points"),
        "{text}"
    );
    assert_model(dir, all);
}

/// Two `mufc client add` processes at once at one client, each numbering
/// its records itself (no id column): both are acknowledged, the ten
/// records take ten distinct ids (the store numbers them inside each
/// request's write), and the model is the in-process `Federation`'s on
/// the records the client holds, bit for bit.
#[test]
fn two_client_add_processes_at_once_get_distinct_ids() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-arrivals-two", &NAMES);
    // Client c starts with its first 30 points; two files of five arrive.
    let later = all[2].ids()[30..].to_vec();
    let mut present = all.clone();
    present[2] = all[2].without(&later).unwrap();
    write_csv(dir, "c", &present[2]);
    write_csv(dir, "c-one", &all[2].only(&later[..5]).unwrap());
    write_csv(dir, "c-two", &all[2].only(&later[5..]).unwrap());
    let extra = ["--k", "3", "--seed", "12", "--max-points", "400"];
    let fed = Processes::start(dir, &NAMES, &NAMES, &extra, |_| None);
    fed.server.wait_for(|l| l.contains("committed (training)"));
    let spawn = |file: &str| {
        Command::new(env!("CARGO_BIN_EXE_mufc"))
            .current_dir(dir)
            .args(["client", "add", "--store", "c.db", "--data", file])
            .args(["--wait", "60"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let children = [spawn("c-one.csv"), spawn("c-two.csv")];
    for child in children {
        let out = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && text.contains("5 records added, acknowledged"),
            "{text}"
        );
    }
    // The client holds forty points with forty distinct ids, the first
    // thirty as trained and ten new ones numbered on from them.
    let held = mufc_net::client_store::ClientStore::open(dir.join("c.db"))
        .unwrap()
        .data()
        .unwrap();
    let mut ids: Vec<u64> = held.ids().iter().map(|p| p.0).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..40).collect::<Vec<u64>>());
    // The same points as the client's forty, whichever took which id.
    let points = |d: &seeding::Dataset| {
        let mut v: Vec<Vec<u64>> = (0..d.len())
            .map(|i| d.point(i).iter().map(|x| x.to_bits()).collect())
            .collect();
        v.sort_unstable();
        v
    };
    assert_eq!(points(&held), points(&all[2]));
    let mut expected = present;
    expected[2] = held;
    assert_model(dir, expected);
}

/// A site down at an addition: the round runs without it (SecAgg planned
/// for a quarter of the sites dropping out), and when it returns a
/// catch-up round brings its data back: the model is then the in-process
/// federation's on every record present, the added ones included.
#[test]
fn a_site_down_at_an_addition_is_caught_up_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-arrivals-down", &net::FOUR_SITES);
    // Site a starts with its first 30 points; the other 10 arrive.
    let later = all[0].ids()[30..].to_vec();
    let mut present = all.clone();
    present[0] = all[0].without(&later).unwrap();
    write_csv(dir, "a", &present[0]);
    write_csv(dir, "a-more", &all[0].only(&later).unwrap());
    let extra = [&net::ONE_MAY_DROP[..], &["--max-points", "400"]].concat();
    let sites = net::FOUR_SITES;
    let mut fed = Processes::start(dir, &sites, &sites, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    assert_model(dir, present);
    // d goes down; a's records arrive.
    fed.clients[3].kill();
    let (ok, text) = add(dir, "a", "a-more.csv", &[]);
    assert!(
        ok && text.contains("10 records added, acknowledged in round"),
        "{text}"
    );
    let committed = fed.server.wait_for(|l| l.starts_with("round 1 committed"));
    assert!(committed.contains("included 0,1,2, dropped"), "{committed}");
    // d comes back: a catch-up round brings its data back at once.
    let _d = net::bring_back(&fed, dir, "d", 2);
    assert_model(dir, all);
}

/// A lone addition waits for the lone-update policy across processes as a
/// lone removal does (its round would show the server the records' bins),
/// and is served alone once `--max-defer` (3 s) has passed; the model is
/// then the in-process fit on every record.
#[test]
fn a_lone_addition_waits_for_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let extra = [
        "--seed",
        "13",
        "--min-updating-clients",
        "2",
        "--max-defer",
        "3",
    ];
    let (all, _, fed) = trained_without_later(dir, "cli-net-arrivals-deadline", &extra);
    let start = std::time::Instant::now();
    let (ok, text) = add(dir, "c", "c-more.csv", &[]);
    assert!(ok && text.contains("acknowledged in round 1"), "{text}");
    assert!(start.elapsed() >= std::time::Duration::from_secs(3));
    let log = fed.server.log();
    let deferred = log
        .iter()
        .find(|l| l.starts_with("request of client 2 deferred"));
    assert!(
        deferred.is_some_and(|l| l.contains("lone-update policy")),
        "{log:?}"
    );
    assert_model(dir, all);
}
