//! The layout of `field` (docs/architecture.md §1): four areas, one
//! directory each, and one import rule between them, checked here on the
//! source. Outside tests,
//!
//! - `poly` (the polynomial kernels: products, division, transforms,
//!   gcd, multipoint evaluation) names no concrete field and nothing of the
//!   other areas: it works for any `Field`;
//! - `fields` (each field's arithmetic) may use `poly`'s kernels for its
//!   own products;
//! - `recurrence` (Berlekamp-Massey, the half-GCD recurrence, the
//!   Vandermonde solve) builds on `poly`;
//! - `roots` (root finding, the integer roots of Appendix K) builds on
//!   `poly`, `recurrence` and `fields` (the rationals).
//!
//! So the areas form a graph without a cycle, and a new kernel in `poly`
//! cannot come to depend on one field.

use std::fs;
use std::path::{Path, PathBuf};

const AREAS: [&str; 4] = ["fields", "poly", "recurrence", "roots"];

/// The names by which other modules reach a concrete field (the crate
/// root's re-exports).
const FIELD_NAMES: [&str; 13] = [
    "BigPrime",
    "Fp64",
    "Mont64",
    "Goldilocks",
    "Mersenne61",
    "Mersenne127",
    "Rational",
    "Rationals",
    "FfField",
    "FfMersenne61",
    "FfMersenne127",
    "Fp61",
    "Fp127",
];

fn allowed(area: &str) -> &'static [&'static str] {
    match area {
        "poly" => &[],
        "fields" | "recurrence" => &["poly"],
        "roots" => &["poly", "recurrence", "fields"],
        _ => unreachable!("unknown area {area}"),
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).expect("read dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The file's code without its comments (doc links name other areas
/// freely) and without its test module (`#[cfg(test)]` then `mod ...`).
fn without_tests(src: &str) -> String {
    let lines: Vec<&str> = src
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect();
    let cut = lines
        .windows(2)
        .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
        .unwrap_or(lines.len());
    lines[..cut].join("\n")
}

/// The areas (and "fields" for a concrete field's name) a piece of code
/// imports from.
fn named_areas(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for area in AREAS {
        if code.contains(&format!("crate::{area}::")) || code.contains(&format!("crate::{area};")) {
            out.push(area.to_string());
        }
    }
    // `use crate::{Field, Fp64}` or `crate::Goldilocks::new()`.
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let group: &str = if let Some(inner) = rest.strip_prefix('{') {
            &inner[..inner.find('}').unwrap_or(inner.len())]
        } else {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        };
        if group
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| FIELD_NAMES.contains(&w))
        {
            out.push("fields".to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_areas_import_in_one_direction() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut report = Vec::new();
    for area in AREAS {
        let mut files = Vec::new();
        rust_files(&src.join(area), &mut files);
        let top = src.join(format!("{area}.rs"));
        assert!(top.is_file(), "src/{area}.rs is missing");
        files.push(top);
        for f in files {
            if f.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let code = without_tests(&fs::read_to_string(&f).expect("read"));
            for other in named_areas(&code) {
                if other != area && !allowed(area).contains(&other.as_str()) {
                    report.push(format!(
                        "{} ({area}) imports from {other}",
                        f.strip_prefix(&src).unwrap_or(&f).display()
                    ));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "imports against the layout:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_checker_sees_a_planted_import() {
    assert_eq!(named_areas("use crate::{Field, Goldilocks};"), ["fields"]);
    assert_eq!(
        named_areas("let x = crate::roots::find_roots(f, p);"),
        ["roots"]
    );
    assert_eq!(
        named_areas("use crate::{Field, FieldError};"),
        Vec::<String>::new()
    );
    assert_eq!(
        without_tests("use crate::poly;\n#[cfg(test)]\nmod tests {\n use crate::Fp64;\n}"),
        "use crate::poly;"
    );
    assert_eq!(
        without_tests("/// [`Fp64`](crate::Fp64)\nfn f() {}"),
        "fn f() {}"
    );
}
