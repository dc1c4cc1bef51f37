//! The committed seed corpus of every fuzz target, replayed on stable Rust
//! through the target's body (`app_testkit::fuzz_corpus::TARGETS`), so that
//! every regression input found by fuzzing stays fixed in
//! `cargo test --workspace`.
//!
//! Regenerate the seed corpus (after a change of a body or of a format, for
//! instance the save format of `mufc`):
//!
//! ```sh
//! MUFC_WRITE_CORPUS=1 cargo test -p mufc-tests --test integration fuzz_corpus
//! ```
//!
//! Open findings (`seed-open-*`: inputs that still crash or hang library
//! code) are skipped by the replay and fail `no_finding_is_left_open`
//! until fixed.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use app_testkit::fuzz_corpus::{TARGETS, seed_corpus, seed_is_current};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

fn file_name(file: &Path) -> String {
    file.file_name().unwrap().to_str().unwrap().to_string()
}

/// Whether a seed file is an open finding (`seed-open-*`): an input that
/// still crashes or hangs library code, skipped by the replay.
fn is_open(file: &Path) -> bool {
    file_name(file).starts_with("seed-open-")
}

/// The committed corpus files of a target: `seed-*` (git ignores the rest
/// of `fuzz/corpus/`, which a local campaign grows).
fn seeds(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| file_name(p).starts_with("seed-"))
        .collect();
    files.sort();
    files
}

/// With `MUFC_WRITE_CORPUS=1`, writes the seed files `seed_corpus`
/// generates (keeping a committed file that is still current, so that the
/// saved federations, whose reports hold measured times, do not churn);
/// otherwise checks that the committed files are current. Hand-added
/// files must be added to `seed_corpus`, so that regeneration keeps them.
fn check_or_write_seeds(corpus: &Path) {
    let write = std::env::var_os("MUFC_WRITE_CORPUS").is_some_and(|v| v == "1");
    for (name, _, _) in TARGETS {
        let dir = corpus.join(name);
        let mut want = seed_corpus(name);
        want.sort();
        assert!(!want.is_empty(), "{name}: no seeds generated");
        let have: Vec<(String, Vec<u8>)> = seeds(&dir)
            .into_iter()
            .map(|p| (file_name(&p), fs::read(&p).unwrap()))
            .collect();
        let current = |file: &str, generated: &[u8]| {
            have.iter()
                .any(|(n, c)| n == file && seed_is_current(name, n, c, generated))
        };
        if write {
            fs::create_dir_all(&dir).unwrap();
            for (file, _) in &have {
                if !want.iter().any(|(w, _)| w == file) {
                    fs::remove_file(dir.join(file)).unwrap();
                }
            }
            for (file, bytes) in &want {
                if !current(file, bytes) {
                    fs::write(dir.join(file), bytes).unwrap();
                }
            }
            continue;
        }
        let names = |v: &[(String, Vec<u8>)]| v.iter().map(|s| s.0.clone()).collect::<Vec<_>>();
        assert!(
            names(&have) == names(&want) && want.iter().all(|(f, b)| current(f, b)),
            "{name}: the committed seed corpus is stale; regenerate it with \
             MUFC_WRITE_CORPUS=1 cargo test -p mufc-tests --test integration fuzz_corpus"
        );
    }
}

/// The seed files are current (or written), every corpus directory has a
/// body and every body a non-empty corpus directory; then every committed
/// input but the open findings runs through its body.
#[test]
fn every_target_replays_its_seed_corpus() {
    let corpus = fuzz_dir().join("corpus");
    check_or_write_seeds(&corpus);
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
            if is_open(&file) {
                eprintln!("{name}: skipping the open finding {}", file.display());
                continue;
            }
            let data = fs::read(&file).unwrap();
            let run = std::panic::catch_unwind(|| body(&data));
            assert!(run.is_ok(), "{name}: {} fails", file.display());
            total += 1;
        }
    }
    assert!(total >= TARGETS.len());
}

/// No finding stays open: a `seed-open-*` file (an input that crashes or
/// hangs its target, committed so that it is not lost) fails the build
/// until the library is fixed and the file renamed `seed-regression-*`.
#[test]
fn no_finding_is_left_open() {
    let corpus = fuzz_dir().join("corpus");
    let open: Vec<String> = TARGETS
        .iter()
        .flat_map(|(name, _, _)| seeds(&corpus.join(name)))
        .filter(|f| is_open(f))
        .map(|f| f.display().to_string())
        .collect();
    assert!(open.is_empty(), "open fuzz findings: {open:?}");
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
        "fuzz/Cargo.toml and app_testkit::fuzz_corpus::TARGETS differ"
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
