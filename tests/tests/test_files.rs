//! Every test file runs. Each crate's `tests/` folder builds one binary,
//! `tests/integration.rs`, whose `mod` lines name the files (a file it
//! does not name would compile nowhere and pass silently); a file that
//! needs a process of its own is a `[[test]]` of its manifest.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The test folders of the workspace's members: `crates/*/tests` and
/// `tests/tests`.
fn test_folders() -> Vec<PathBuf> {
    let root = workspace_root();
    let mut out = vec![root.join("tests/tests")];
    let crates = fs::read_dir(root.join("crates")).expect("crates/ is readable");
    for entry in crates {
        let dir = entry.expect("a crate folder").path().join("tests");
        if dir.is_dir() {
            out.push(dir);
        }
    }
    out.sort();
    out
}

/// The files a manifest names as test targets of their own (`path = ...`
/// lines inside `[[test]]` tables).
fn own_targets(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_test = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_test = line == "[[test]]";
        } else if in_test && let Some(path) = line.strip_prefix("path = ") {
            out.push(path.trim_matches('"').to_string());
        }
    }
    out
}

#[test]
fn every_test_file_is_a_module_of_the_one_binary_or_a_target_of_its_own() {
    let mut missing = Vec::new();
    for dir in test_folders() {
        let integration = fs::read_to_string(dir.join("integration.rs"))
            .unwrap_or_else(|e| panic!("{}: no integration.rs ({e})", dir.display()));
        let manifest = fs::read_to_string(dir.parent().expect("a crate").join("Cargo.toml"))
            .expect("a manifest");
        assert!(
            manifest.contains("autotests = false"),
            "{}: the manifest must set autotests = false",
            dir.display()
        );
        let own = own_targets(&manifest);
        assert!(
            own.iter().any(|p| p == "tests/integration.rs"),
            "{}: integration.rs is not a [[test]] target",
            dir.display()
        );
        for entry in fs::read_dir(&dir).expect("a test folder") {
            let path = entry.expect("a file").path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(stem) = name.strip_suffix(".rs") else {
                continue;
            };
            if name == "integration.rs" || own.iter().any(|p| p == &format!("tests/{name}")) {
                continue;
            }
            let named = integration.lines().any(|l| {
                let l = l.trim();
                l == format!("mod {stem};") || l == format!("#[path = \"{name}\"]")
            });
            if !named {
                missing.push(path.display().to_string());
            }
        }
    }
    assert!(
        missing.is_empty(),
        "test files that no binary compiles: {missing:?}"
    );
}

#[test]
fn a_manifest_target_table_is_read() {
    let manifest = "[package]\nname = \"x\"\n\n[[test]]\nname = \"a\"\npath = \"tests/a.rs\"\n\n[[bench]]\nname = \"b\"\npath = \"benches/b.rs\"\n";
    assert_eq!(own_targets(manifest), vec!["tests/a.rs".to_string()]);
}
