//! The committed seed corpus of every fuzz target, replayed on stable Rust
//! through the target's body (`testkit::fuzz_corpus::TARGETS`), so that
//! every regression input found by fuzzing stays fixed in
//! `cargo test --workspace`.
//!
//! Regenerate the seed corpus (after a change of a body or of a format, for
//! instance the save format of `mufc`):
//!
//! ```sh
//! MUFC_WRITE_CORPUS=1 cargo test -p mufc-tests --test fuzz_corpus
//! ```
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use testkit::fuzz_corpus::{TARGETS, seed_corpus, seed_is_current};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// The committed corpus files of a target: `seed-*` (git ignores the rest
/// of `fuzz/corpus/`, which a local campaign grows).
fn seeds(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("seed-"))
        })
        .collect();
    files.sort();
    files
}

/// Every corpus directory has a body and every body a non-empty corpus
/// directory; then every committed input runs through its body.
#[test]
fn every_target_replays_its_seed_corpus() {
    let corpus = fuzz_dir().join("corpus");
    let dirs: BTreeSet<String> = fs::read_dir(&corpus)
        .unwrap_or_else(|e| panic!("{}: {e}", corpus.display()))
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    let names: BTreeSet<String> = TARGETS.iter().map(|t| t.0.to_string()).collect();
    assert_eq!(names.len(), TARGETS.len(), "a target listed twice");
    let orphans: Vec<_> = dirs.difference(&names).collect();
    assert!(
        orphans.is_empty(),
        "corpus directories without a body: {orphans:?}"
    );
    let missing: Vec<_> = names.difference(&dirs).collect();
    assert!(
        missing.is_empty(),
        "targets without a corpus directory: {missing:?}"
    );
    let mut total = 0;
    for (name, _, body) in TARGETS {
        let files = seeds(&corpus.join(name));
        assert!(!files.is_empty(), "{name}: no seed-* file in its corpus");
        for file in files {
            let data = fs::read(&file).unwrap();
            let run = std::panic::catch_unwind(|| body(&data));
            assert!(run.is_ok(), "{name}: {} fails", file.display());
            total += 1;
        }
    }
    assert!(total >= TARGETS.len());
}

/// Every `[[bin]]` of `fuzz/Cargo.toml` is a listed target whose one-line
/// file calls the listed body, and every listed target is a `[[bin]]`.
#[test]
fn fuzz_crate_matches_the_target_list() {
    let manifest = fs::read_to_string(fuzz_dir().join("Cargo.toml")).unwrap();
    let bins: BTreeSet<String> = manifest
        .split("[[bin]]")
        .skip(1)
        .map(|section| {
            let line = section
                .lines()
                .find(|l| l.trim_start().starts_with("name"))
                .expect("a [[bin]] without a name");
            line.split('"').nth(1).unwrap().to_string()
        })
        .collect();
    let names: BTreeSet<String> = TARGETS.iter().map(|t| t.0.to_string()).collect();
    assert_eq!(
        bins, names,
        "fuzz/Cargo.toml and testkit::fuzz_corpus::TARGETS differ"
    );
    for (name, path, _) in TARGETS {
        let file = fuzz_dir().join("fuzz_targets").join(format!("{name}.rs"));
        let src = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            src.contains(&format!("{path}(data)")),
            "{name}.rs does not call {path}"
        );
    }
}

/// The committed seed files are what `seed_corpus` generates (with
/// `MUFC_WRITE_CORPUS=1`, writes them instead). Hand-added files must be
/// added to `seed_corpus` too, so that regeneration keeps them.
#[test]
fn seed_corpus_is_generated() {
    let write = std::env::var_os("MUFC_WRITE_CORPUS").is_some_and(|v| v == "1");
    let corpus = fuzz_dir().join("corpus");
    for (name, _, _) in TARGETS {
        let dir = corpus.join(name);
        let want = seed_corpus(name);
        assert!(!want.is_empty(), "{name}: no seeds generated");
        if write {
            fs::create_dir_all(&dir).unwrap();
            for old in seeds(&dir) {
                fs::remove_file(old).unwrap();
            }
            for (file, bytes) in &want {
                fs::write(dir.join(file), bytes).unwrap();
            }
            continue;
        }
        let have: Vec<(String, Vec<u8>)> = seeds(&dir)
            .into_iter()
            .map(|p| {
                let n = p.file_name().unwrap().to_str().unwrap().to_string();
                (n, fs::read(&p).unwrap())
            })
            .collect();
        let mut want = want;
        want.sort();
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
        let current = names(&have) == names(&want)
            && have
                .iter()
                .zip(&want)
                .all(|((n, c), (_, g))| seed_is_current(name, n, c, g));
        assert!(
            current,
            "{name}: the committed seed corpus is stale; regenerate it with \
             MUFC_WRITE_CORPUS=1 cargo test -p mufc-tests --test fuzz_corpus"
        );
    }
}
