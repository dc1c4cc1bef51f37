//! `cargo test -p field` builds nothing of the workspace but `field` and
//! its own test crates (issue 27, item 8): the dev-dependencies name no
//! other workspace crate, and neither do those test crates' dependencies.
//! Checked on the manifests, so that a convenient import of the `testkit`
//! hub cannot come back unnoticed.

use std::path::Path;

/// The workspace crates `manifest` depends on, in any section.
fn workspace_deps(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).expect("read the manifest");
    let members = [
        "field",
        "field-testkit",
        "testdata",
        "testkit",
        "syndrome-agg",
        "seeding",
        "mufc",
        "mufc-store",
        "mufc-cli",
        "mufc-net",
        "baselines",
    ];
    let mut found = Vec::new();
    for line in text.lines() {
        let name = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or_default()
            .trim();
        if members.contains(&name) && !found.iter().any(|f| f == name) {
            found.push(name.to_string());
        }
    }
    found
}

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
