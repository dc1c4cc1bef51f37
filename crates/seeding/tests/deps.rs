//! `cargo test -p seeding` builds nothing of the layers above it (issue
//! 27, item 8): its dependencies and dev-dependencies, and those of its
//! test crate, name only `field`, `seeding` and the test crates. Checked
//! on the manifests.

use std::path::Path;

use testdata::workspace_deps;

#[test]
fn the_seeding_tests_build_only_the_layers_below() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = here.parent().expect("the crates directory");
    let mut mine = workspace_deps(&here.join("Cargo.toml"));
    mine.sort();
    assert_eq!(mine, vec!["field", "seeding-testkit", "testdata"]);
    let mut kit = workspace_deps(&crates.join("seeding-testkit/Cargo.toml"));
    kit.sort();
    assert_eq!(kit, vec!["field", "seeding", "testdata"]);
}
