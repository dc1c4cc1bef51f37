//! `cargo test -p masked-sum` builds nothing of the layers above it
//! (issue 27, items 5 and 8): a dense-vector system takes this crate with
//! `field` alone, and its tests build `field`, this crate and the test
//! crates of those two layers. Checked on the manifests.

use std::path::Path;

use testdata::workspace_deps;

#[test]
fn the_masked_sums_depend_on_the_field_alone() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crates = here.parent().expect("the crates directory");
    assert_eq!(
        workspace_deps(&here.join("Cargo.toml")),
        vec!["field", "sum-testkit", "field-testkit", "testdata"]
    );
    assert_eq!(
        workspace_deps(&crates.join("sum-testkit/Cargo.toml")),
        vec!["field", "masked-sum", "field-testkit", "testdata"]
    );
}
