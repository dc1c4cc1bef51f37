//! An erasure applied while a round runs reaches the model (issue 28,
//! item 1), across processes: client b forgets a point, which starts
//! round 1 with a new sketch of b's; client a answers that round's
//! unmasking step three seconds late, and b forgets a second point in
//! that window, after it joined the round and before the round commits.
//! The next round carries the second removal: the model equals
//! retraining on the records left (the old code kept round 1's sketch
//! with b's histogram after the second removal, found nothing changed
//! and re-sent the old sketch: the model kept the point while b
//! acknowledged its erasure).
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::time::Duration;

use net::{Processes, assert_model, forget, write_csv};
use seeding::PointId;
use testkit::mufc::{Mixture, gaussian_clients};

const ROSTER: [&str; 3] = ["a", "b", "c"];

#[test]
fn a_point_forgotten_during_a_round_leaves_the_model_at_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let data = gaussian_clients("cli-net-erasure", Mixture::net(ROSTER.len()));
    for (name, d) in ROSTER.iter().zip(&data) {
        write_csv(&path, name, d);
    }
    let fed = Processes::start(&path, &ROSTER, &ROSTER, &["--k", "3"], |n| {
        (n == "a").then_some("1:unmasking:delay")
    });
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let first = {
        let path = path.clone();
        std::thread::spawn(move || forget(&path, "b", "3"))
    };
    fed.server.wait_for(|l| l.starts_with("round 1 started"));
    // b has answered every step of round 1 by now; a sleeps at unmasking.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        !fed.server
            .log()
            .iter()
            .any(|l| l.starts_with("round 1 committed")),
        "round 1 ended before b's removal: the window was missed"
    );
    let at_b = forget(&path, "b", "7");
    assert!(at_b.contains("acknowledged in round 2"), "{at_b}");
    assert!(first.join().unwrap().contains("acknowledged in round 1"));
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(3), PointId(7)]).unwrap();
    assert_model(&path, rest);
}
