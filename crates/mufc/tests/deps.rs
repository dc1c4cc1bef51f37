//! `cargo test -p mufc` builds `mufc` once (issue 27, item 8): its
//! dependencies and dev-dependencies name no crate that depends on `mufc`
//! (`mufc-testkit` and `app-testkit` do, and would make the unit tests
//! build a second `mufc`), only the layers below and their test crates.
//! Checked on the manifests.

use std::path::Path;

use testdata::workspace_deps;

#[test]
fn the_mufc_tests_build_only_the_layers_below() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut mine = workspace_deps(&here.join("Cargo.toml"));
    mine.sort();
    assert_eq!(
        mine,
        vec![
            "masked-sum",
            "seeding",
            "seeding-testkit",
            "syndrome-agg",
            "testdata"
        ]
    );
}
