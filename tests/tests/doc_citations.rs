//! Citations of the project's documents resolve: no source, manifest or
//! Markdown file cites the documents the project started from (they are
//! not in the repository), every `docs/threat-model.md <id>` names a case
//! of the threat model's table (or a `§n` section of it), and every
//! `docs/crates.md §n` a section of the dependency notes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const THREAT_MODEL: &str = "docs/threat-model.md";
const CRATES: &str = "docs/crates.md";

/// The repository root: the parent of this package's directory.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests package lives inside the repository")
        .to_path_buf()
}

/// Every `.rs`, `.md` and `.toml` file of the repository, skipping build
/// output (`target/`, which also covers `fuzz/target/`) and `.git`.
fn files() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(fs::DirEntry::file_name);
        for e in entries {
            let path = e.path();
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if name != "target" && name != ".git" {
                    walk(&path, out);
                }
            } else if kind.is_file()
                && path
                    .extension()
                    .is_some_and(|x| x == "rs" || x == "md" || x == "toml")
                && let Ok(text) = fs::read_to_string(&path)
            {
                out.push((path, text));
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), &mut out);
    out
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Byte offsets of `needle` in `text` as a whole word (no letter, digit or
/// underscore on either side).
fn word_hits(text: &str, needle: &str) -> Vec<usize> {
    text.match_indices(needle)
        .map(|(i, _)| i)
        .filter(|&i| {
            let before = text[..i].chars().next_back().is_none_or(|c| !is_word(c));
            let after = text[i + needle.len()..]
                .chars()
                .next()
                .is_none_or(|c| !is_word(c));
            before && after
        })
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset].matches('\n').count() + 1
}

/// A token at the start of `s`: a section `§n` or `§n.m...`, or a case id
/// (a capital letter, digits, optionally one lowercase letter: `S1b`).
/// Returns the token and its length in bytes.
fn token(s: &str) -> Option<(String, usize)> {
    if let Some(rest) = s.strip_prefix('§') {
        let mut len = 0;
        let bytes = rest.as_bytes();
        while len < bytes.len()
            && (bytes[len].is_ascii_digit()
                || (bytes[len] == b'.'
                    && len > 0
                    && bytes.get(len + 1).is_some_and(u8::is_ascii_digit)))
        {
            len += 1;
        }
        if len == 0 {
            return None;
        }
        return Some((format!("§{}", &rest[..len]), '§'.len_utf8() + len));
    }
    let b = s.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_uppercase) {
        return None;
    }
    let mut len = 1;
    while b.get(len).is_some_and(u8::is_ascii_digit) {
        len += 1;
    }
    if len == 1 {
        return None;
    }
    if b.get(len).is_some_and(u8::is_ascii_lowercase)
        && !b.get(len + 1).is_some_and(|c| is_word(char::from(*c)))
    {
        len += 1;
    }
    if b.get(len).is_some_and(|c| is_word(char::from(*c))) {
        return None;
    }
    Some((s[..len].to_string(), len))
}

/// The ids a citation names: the list right after `doc` and one space,
/// such as `S1`, `§2.2, U3`, `C1/C2`, `C1, C2, M1, M2`, `S1-S3` (a range
/// names every id between its ends).
fn cited_ids(after: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let Some(mut rest) = after.strip_prefix(' ') else {
        return ids;
    };
    while let Some((id, len)) = token(rest) {
        rest = &rest[len..];
        if let Some(r) = rest.strip_prefix('-')
            && let Some((end, elen)) = token(r)
        {
            ids.extend(range(&id, &end));
            rest = &r[elen..];
        } else {
            ids.push(id);
        }
        let next = [", ", "/", " and "]
            .iter()
            .find_map(|sep| rest.strip_prefix(sep).filter(|r| token(r).is_some()));
        match next {
            Some(r) => rest = r,
            None => break,
        }
    }
    ids
}

/// `S1`..`S3` as `S1, S2, S3`; anything else as its two ends.
fn range(a: &str, b: &str) -> Vec<String> {
    let split = |s: &str| -> Option<(char, u32)> {
        let mut cs = s.chars();
        let l = cs.next()?;
        let n: u32 = cs.as_str().parse().ok()?;
        l.is_ascii_uppercase().then_some((l, n))
    };
    match (split(a), split(b)) {
        (Some((la, na)), Some((lb, nb))) if la == lb && na <= nb => {
            (na..=nb).map(|n| format!("{la}{n}")).collect()
        }
        _ => vec![a.to_string(), b.to_string()],
    }
}

/// Every citation of `doc` in the repository: (file, line, id).
fn citations(doc: &str) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    for (path, text) in files() {
        for (i, _) in text.match_indices(doc) {
            for id in cited_ids(&text[i + doc.len()..]) {
                out.push((rel(&path), line_of(&text, i), id));
            }
        }
    }
    out
}

/// The case ids (first cells of table rows) and the `§n` section numbers
/// (headings) of a document.
fn anchors(doc: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let text =
        fs::read_to_string(root().join(doc)).unwrap_or_else(|e| panic!("{doc} must exist: {e}"));
    let mut ids = BTreeSet::new();
    let mut sections = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("| ") {
            let cell = rest.split(" |").next().unwrap_or("").trim();
            if token(cell).is_some_and(|(t, len)| len == cell.len() && !t.starts_with('§')) {
                ids.insert(cell.to_string());
            }
        }
        let heading = line.trim_start_matches('#');
        if heading.len() < line.len()
            && let Some((s, _)) = heading.trim_start().split_once(' ')
            && s.starts_with('§')
        {
            sections.insert(s.to_string());
        }
    }
    (ids, sections)
}

#[test]
fn no_file_cites_the_documents_we_started_from() {
    // Built at run time so that this file does not match itself.
    let threats = ["THR", "EATS"].concat();
    let crates = ["CRATES", ".md"].concat();
    let mut bad = Vec::new();
    for (path, text) in files() {
        for i in word_hits(&text, &threats) {
            bad.push(format!(
                "{}:{}: cites {threats}",
                rel(&path),
                line_of(&text, i)
            ));
        }
        for (i, _) in text.match_indices(crates.as_str()) {
            bad.push(format!(
                "{}:{}: cites {crates}",
                rel(&path),
                line_of(&text, i)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "cite {THREAT_MODEL} or {CRATES} instead:\n{}",
        bad.join("\n")
    );
}

#[test]
fn threat_model_citations_name_existing_cases_and_sections() {
    let (ids, sections) = anchors(THREAT_MODEL);
    // The case ids that code and tests rely on.
    for id in [
        "C1", "D3", "M6", "S1", "S1b", "S4", "S6", "S7", "P3", "R3", "U3", "F1",
    ] {
        assert!(ids.contains(id), "{THREAT_MODEL} has no case {id}");
    }
    let cites = citations(THREAT_MODEL);
    assert!(!cites.is_empty(), "no citation of {THREAT_MODEL} found");
    let bad: Vec<String> = cites
        .iter()
        .filter(|(_, _, id)| {
            if id.starts_with('§') {
                !sections.contains(id)
            } else {
                !ids.contains(id)
            }
        })
        .map(|(f, l, id)| format!("{f}:{l}: {THREAT_MODEL} {id}"))
        .collect();
    assert!(
        bad.is_empty(),
        "citations of cases or sections that {THREAT_MODEL} does not have:\n{}",
        bad.join("\n")
    );
}

#[test]
fn crates_citations_name_existing_sections() {
    let (_, sections) = anchors(CRATES);
    assert!(sections.contains("§1") && sections.contains("§2"));
    let bad: Vec<String> = citations(CRATES)
        .iter()
        .filter(|(_, _, id)| !sections.contains(id))
        .map(|(f, l, id)| format!("{f}:{l}: {CRATES} {id}"))
        .collect();
    assert!(
        bad.is_empty(),
        "citations of sections that {CRATES} does not have:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_citation_parser_reads_every_form() {
    let ids = |s: &str| cited_ids(s);
    assert_eq!(ids(" S1b)."), ["S1b"]);
    assert_eq!(ids(" C1, C2, M1, M2)"), ["C1", "C2", "M1", "M2"]);
    assert_eq!(ids(" U1/U2)."), ["U1", "U2"]);
    assert_eq!(ids(" S1-S3):"), ["S1", "S2", "S3"]);
    assert_eq!(ids(" §2.2, U3)."), ["§2.2", "U3"]);
    assert_eq!(ids(" §8). Field"), ["§8"]);
    assert_eq!(ids(" C2, P3 in spirit"), ["C2", "P3"]);
    assert_eq!(ids(" M1: random"), ["M1"]);
    assert!(ids("`.").is_empty());
    assert!(ids(" in the repository").is_empty());
    assert!(ids(" <id>").is_empty());
    assert!(ids(" A test").is_empty());
    let w = ["THR", "EATS"].concat();
    assert_eq!(word_hits(&format!("a {w} b {w}x"), &w), [2]);
}
