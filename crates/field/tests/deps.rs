//! `cargo test -p field` builds nothing of the workspace but `field` and
//! its own test crates (issue 27, item 8): the dev-dependencies name no
//! other workspace crate, and neither do those test crates' dependencies.
//! Checked on the manifests, so that a convenient import of a test crate
//! of the layers above (the `testkit` hub, once) cannot come back
//! unnoticed.

use std::path::Path;

use testdata::workspace_deps;

#[test]
fn the_field_tests_build_only_the_field_layer() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = here.parent().expect("the crates directory");
    assert_eq!(
        workspace_deps(&here.join("Cargo.toml")),
        vec!["field-testkit", "testdata"]
    );
    assert_eq!(
        workspace_deps(&crates.join("field-testkit/Cargo.toml")),
        vec!["field", "testdata"]
    );
    assert_eq!(
        workspace_deps(&crates.join("testdata/Cargo.toml")),
        Vec::<String>::new()
    );
}
