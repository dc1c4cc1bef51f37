//! `cargo test -p syndrome-agg` builds nothing of the layers above it
//! (issue 27, item 8): its dependencies and dev-dependencies, and those of
//! its test crate, name only `field`, `masked-sum`, `syndrome-agg` and the
//! test crates of those layers. Checked on the manifests.

use std::path::Path;

use testdata::workspace_deps;

#[test]
fn the_sketch_tests_build_only_the_layers_below() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = here.parent().expect("the crates directory");
    assert_eq!(
        workspace_deps(&here.join("Cargo.toml")),
        vec![
            "field",
            "masked-sum",
            "sagg-testkit",
            "sum-testkit",
            "field-testkit",
            "testdata"
        ]
    );
    assert_eq!(
        workspace_deps(&crates.join("sagg-testkit/Cargo.toml")),
        vec!["field", "syndrome-agg", "field-testkit", "testdata"]
    );
}
