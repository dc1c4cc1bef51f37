//! No module circle inside any crate (issue 12, docs/architecture.md).
//!
//! A circle is a chain of source files in one crate where each file uses an
//! item *defined* in the next and the last uses one defined in the first.
//! Re-exports (`pub use`) and `mod` declarations are not uses: a parent
//! that only declares and re-exports its children is not in a circle with
//! them. Uses are resolved through re-exports to the file that defines the
//! item, so `use crate::Foo` counts as a use of the file where `Foo` is
//! written, not of `lib.rs`.
//!
//! The parser is textual (this test needs no compiler internals): it strips
//! comments, string literals and `#[cfg(test)]` modules, then reads `use`
//! declarations and `crate::` / `super::` / `self::` paths in code.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// A module path inside a crate: `[]` is the crate root, `["a", "b"]` is
/// `crate::a::b`.
type ModPath = Vec<String>;

struct Crate {
    name: String,
    files: BTreeMap<ModPath, PathBuf>,
    /// Code of each file with comments, strings and test modules removed.
    code: BTreeMap<ModPath, String>,
    /// Items defined in each file.
    defs: BTreeMap<ModPath, BTreeSet<String>>,
    /// `pub use` re-exports of each file: exported name -> absolute path.
    reexports: BTreeMap<ModPath, BTreeMap<String, ModPath>>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives in the workspace root")
        .to_path_buf()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .expect("readable source dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn module_path(src: &Path, file: &Path) -> ModPath {
    let rel = file.strip_prefix(src).expect("file under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs").to_string();
    if !(parts.is_empty() && (stem == "lib" || stem == "main")) {
        parts.push(stem);
    }
    parts
}

/// Removes comments, string and char literals (kept as empty quotes) and
/// every `#[cfg(test)]` item, so that only code the crate compiles remains.
fn strip(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r'
            && (next == Some('"') || (next == Some('#') && !is_ident(b.get(i.wrapping_sub(1)))))
        {
            // Raw string r"..." or r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') || is_ident(b.get(i.wrapping_sub(1))) {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                if b[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' && next.is_some() && b.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else if c == '\'' && next == Some('\\') {
            // '\n', '\u{..}', '\''
            let mut j = i + 2;
            while j < b.len() && b[j] != '\'' {
                j += 1;
            }
            out.push_str("' '");
            i = j + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    remove_test_items(&out)
}

fn is_ident(c: Option<&char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || *c == '_')
}

/// Drops each `#[cfg(test)]` item: from the attribute to the end of the
/// item's braces (or its `;`).
fn remove_test_items(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let after = &rest[at..];
        let brace = after.find('{');
        let semi = after.find(';');
        let end = match (brace, semi) {
            (Some(b), Some(s)) if s < b => s + 1,
            (Some(b), _) => {
                let mut depth = 0;
                let mut end = after.len();
                for (k, ch) in after[b..].char_indices() {
                    match ch {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = b + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(s)) => s + 1,
            (None, None) => after.len(),
        };
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

fn idents(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// Names defined by item keywords in `code` (at any nesting: impl blocks
/// contribute methods too, which is harmless: paths never name them).
fn definitions(code: &str) -> BTreeSet<String> {
    const KEYWORDS: [&str; 8] = [
        "struct", "enum", "trait", "fn", "type", "const", "static", "union",
    ];
    let words: Vec<&str> = idents(code).collect();
    let mut defs = BTreeSet::new();
    for w in words.windows(2) {
        if KEYWORDS.contains(&w[0]) {
            defs.insert(w[1].to_string());
        }
    }
    for mac in code.split("macro_rules!").skip(1) {
        if let Some(name) = idents(mac).next() {
            defs.insert(name.to_string());
        }
    }
    defs
}

/// A `use` declaration: whether it is `pub`, its tree without blanks, and
/// its byte span (from `use` to `;`) in the code.
struct UseDecl {
    is_pub: bool,
    tree: String,
    span: std::ops::Range<usize>,
}

/// The `use` declarations of `code`.
fn use_decls(code: &str) -> Vec<UseDecl> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(rel) = code[from..].find("use ") {
        let at = from + rel;
        from = at + 4;
        let before = code[..at].trim_end();
        let boundary = at == 0 || !is_ident(code[..at].chars().last().as_ref());
        if !boundary {
            continue;
        }
        let is_pub = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        // Only declarations at statement position: preceded by `;`, `{`,
        // `}`, an attribute `]`, a visibility, or the file start.
        let prev = before.chars().last();
        let at_statement = matches!(prev, None | Some(';' | '{' | '}' | ']'))
            || before.ends_with("pub")
            || (prev == Some(')')
                && before
                    .rfind("pub(")
                    .is_some_and(|p| !before[p..].contains('\n')));
        if !at_statement {
            continue;
        }
        let Some(end) = code[from..].find(';') else {
            break;
        };
        let tree: String = code[from..from + end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        out.push(UseDecl {
            is_pub,
            tree,
            span: at..from + end + 1,
        });
        from += end;
    }
    out
}

/// Expands a use tree (`a::{b, c::{d as e}}`) into (path, exported name).
fn expand(tree: &str) -> Vec<(Vec<String>, String)> {
    let mut out = Vec::new();
    expand_into(&[], tree, &mut out);
    out
}

fn expand_into(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = tree[..open]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let mut p = prefix.to_vec();
        p.extend(head);
        let mut depth = 0;
        let mut start = 0;
        for (k, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&p, &inner[start..k], out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            expand_into(&p, &inner[start..], out);
        }
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once("as") {
        Some((p, a)) if !p.ends_with(':') && !a.is_empty() => (p, Some(a)),
        _ => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(
        path.split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    let name = alias
        .map(str::to_string)
        .or_else(|| full.last().cloned())
        .unwrap_or_default();
    out.push((full, name));
}

impl Crate {
    fn load(name: &str, src: &Path) -> Self {
        let mut files = Vec::new();
        rust_files(src, &mut files);
        let mut c = Self {
            name: name.to_string(),
            files: BTreeMap::new(),
            code: BTreeMap::new(),
            defs: BTreeMap::new(),
            reexports: BTreeMap::new(),
        };
        for f in files {
            let m = module_path(src, &f);
            let code = strip(&fs::read_to_string(&f).expect("readable source"));
            c.defs.insert(m.clone(), definitions(&code));
            c.code.insert(m.clone(), code);
            c.files.insert(m, f);
        }
        let mods: Vec<ModPath> = c.files.keys().cloned().collect();
        for m in mods {
            let mut re = BTreeMap::new();
            for decl in use_decls(&c.code[&m]) {
                if !decl.is_pub {
                    continue;
                }
                for (path, name) in expand(&decl.tree) {
                    if let Some(abs) = c.absolute(&m, &path) {
                        re.insert(name, abs);
                    }
                }
            }
            c.reexports.insert(m, re);
        }
        c
    }

    /// `path` as written in module `from`, made absolute; `None` for paths
    /// into other crates.
    fn absolute(&self, from: &ModPath, path: &[String]) -> Option<ModPath> {
        let first = path.first()?;
        let mut base: ModPath = match first.as_str() {
            "crate" => Vec::new(),
            "self" => from.clone(),
            "super" => {
                let mut b = from.clone();
                b.pop();
                b
            }
            // A child module named without `self::` (2018 paths).
            m if self
                .files
                .contains_key(&[from.as_slice(), &[m.to_string()]].concat()) =>
            {
                let mut b = from.clone();
                b.push(m.to_string());
                b
            }
            _ => return None,
        };
        let mut rest = &path[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file that defines what the absolute `path` names (a module, an
    /// item, or a glob `*` of a module).
    fn resolve(&self, path: &ModPath, depth: usize) -> Option<ModPath> {
        if depth > 16 {
            return None;
        }
        // The longest prefix that is a file.
        let mut k = path.len();
        while k > 0 && !self.files.contains_key(&path[..k]) {
            k -= 1;
        }
        let module = path[..k].to_vec();
        let Some(item) = path.get(k) else {
            return Some(module);
        };
        if item == "*" || self.defs[&module].contains(item) {
            return Some(module);
        }
        if let Some(target) = self.reexports[&module].get(item) {
            let mut t = target.clone();
            t.extend(path[k + 1..].iter().cloned());
            return self.resolve(&t, depth + 1).or(Some(module));
        }
        // Inline modules, enum variants, associated items: the file itself.
        Some(module)
    }

    fn edges(&self) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
        let mut g: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
        for (m, code) in &self.code {
            let mut uses: Vec<Vec<String>> = Vec::new();
            // Code outside `use` declarations, for the paths written in it.
            let mut rest = String::new();
            let mut last = 0;
            for decl in use_decls(code) {
                rest.push_str(&code[last..decl.span.start]);
                last = decl.span.end;
                // A `pub use` re-exports; if this file also uses the item,
                // it names it in its code, which the paths below count.
                if !decl.is_pub {
                    uses.extend(expand(&decl.tree).into_iter().map(|(path, _)| path));
                }
            }
            rest.push_str(&code[last..]);
            uses.extend(code_paths(&rest));
            let entry = g.entry(m.clone()).or_default();
            for p in uses {
                let Some(abs) = self.absolute(m, &p) else {
                    continue;
                };
                if let Some(r) = self.resolve(&abs, 0) {
                    // A module path that is an ancestor of this file and
                    // names no item is a `super` step, not a use.
                    if r != *m && !(abs == r && m.starts_with(&r)) {
                        entry.insert(r);
                    }
                }
            }
        }
        g
    }
}

/// `crate::a::B`, `super::B`, `self::b::C` paths written in code (outside
/// `use` declarations too).
fn code_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(Some(&chars[i]))
            && (i == 0 || !is_ident(Some(&chars[i - 1])) && chars[i - 1] != ':')
        {
            let mut j = i;
            let mut segs = Vec::new();
            loop {
                let s = j;
                while j < chars.len() && is_ident(Some(&chars[j])) {
                    j += 1;
                }
                segs.push(chars[s..j].iter().collect::<String>());
                if chars.get(j) == Some(&':')
                    && chars.get(j + 1) == Some(&':')
                    && is_ident(chars.get(j + 2))
                {
                    j += 2;
                } else {
                    break;
                }
            }
            if segs.len() > 1 && matches!(segs[0].as_str(), "crate" | "super" | "self") {
                out.push(segs);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// Strongly connected components with more than one file (Tarjan).
fn circles(g: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        g: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        let g = s.g;
        for w in g.get(v).into_iter().flatten() {
            let Some((w, _)) = g.get_key_value(w) else {
                continue;
            };
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                comp.push(w.clone());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

fn show(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        format!("crate::{}", m.join("::"))
    }
}

fn crates() -> Vec<Crate> {
    let root = workspace_root();
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    dirs.push(root.join("tests"));
    for d in dirs {
        let src = d.join("src");
        if src.is_dir() {
            let name = d
                .file_name()
                .expect("dir name")
                .to_string_lossy()
                .into_owned();
            out.push(Crate::load(&name, &src));
        }
    }
    out
}

#[test]
fn no_module_circle_in_any_crate() {
    let mut report = Vec::new();
    for c in crates() {
        for comp in circles(&c.edges()) {
            let g = c.edges();
            let lines: Vec<String> = comp
                .iter()
                .map(|m| {
                    let uses: Vec<String> =
                        g[m].iter().filter(|t| comp.contains(t)).map(show).collect();
                    format!(
                        "    {} ({}) uses {}",
                        show(m),
                        c.files[m].display(),
                        uses.join(", ")
                    )
                })
                .collect();
            report.push(format!(
                "{}: {} files\n{}",
                c.name,
                comp.len(),
                lines.join("\n")
            ));
        }
    }
    assert!(report.is_empty(), "module circles:\n{}", report.join("\n"));
}

#[test]
fn the_checker_finds_a_planted_circle() {
    // Two files that use each other's items, and a third that only
    // re-exports: the circle is a <-> b, and lib is outside it.
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src");
    fs::create_dir_all(&src).expect("src");
    fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\npub use a::A;\npub use b::B;\n",
    )
    .expect("lib");
    fs::write(src.join("a.rs"), "use crate::B;\npub struct A(B);\n").expect("a");
    fs::write(src.join("b.rs"), "/// Uses [`crate::a::A`] in a comment only.\npub struct B;\npub fn f(_: super::a::A) {}\n// crate::x::Y\n").expect("b");
    let c = Crate::load("planted", &src);
    let found = circles(&c.edges());
    assert_eq!(
        found,
        vec![vec![vec!["a".to_string()], vec!["b".to_string()]]]
    );

    // Without b's use of a, no circle.
    fs::write(
        src.join("b.rs"),
        "/// [`crate::a::A`]\npub struct B;\nconst S: &str = \"crate::a::A\";\n",
    )
    .expect("b");
    let c = Crate::load("planted", &src);
    assert!(circles(&c.edges()).is_empty());
}

/// The crate graph of docs/architecture.md §1: `mufc` compiles no SQLite
/// (the store is `mufc-store`'s), and nothing below the store depends on
/// it.
#[test]
fn only_the_store_and_above_depend_on_sqlite() {
    let root = workspace_root();
    for below in [
        "field",
        "masked-sum",
        "syndrome-agg",
        "seeding",
        "baselines",
        "mufc",
    ] {
        let manifest = fs::read_to_string(root.join("crates").join(below).join("Cargo.toml"))
            .expect("manifest");
        for dep in ["rusqlite", "mufc-store"] {
            assert!(
                !manifest.lines().any(|l| l.trim_start().starts_with(dep)),
                "crates/{below}/Cargo.toml depends on {dep}"
            );
        }
    }
    let store = fs::read_to_string(root.join("crates/mufc-store/Cargo.toml")).expect("manifest");
    assert!(store.lines().any(|l| l.starts_with("rusqlite")));
}

/// The test crates of docs/architecture.md §1 (issue 27, item 8): the
/// application fuzz bodies (`app-testkit`, which builds the CLI, the
/// store and `mufc-net`) are the fuzz crate's and the corpus replay's
/// alone, so no layer's tests build them; `mufc-testkit` builds `mufc`,
/// `seeding` and `seeding-testkit` and nothing above.
#[test]
fn the_test_crates_follow_the_layers() {
    let root = workspace_root();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.push(root.join("tests"));
    dirs.push(root.join("fuzz"));
    dirs.sort();
    let users: Vec<String> = dirs
        .iter()
        .filter(|d| d.join("Cargo.toml").is_file() && !d.ends_with("app-testkit"))
        .filter(|d| {
            testdata::workspace_deps(&d.join("Cargo.toml")).contains(&"app-testkit".to_string())
        })
        .map(|d| {
            d.file_name()
                .expect("dir name")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    assert_eq!(users, ["fuzz", "tests"]);
    let mut kit = testdata::workspace_deps(&root.join("crates/mufc-testkit/Cargo.toml"));
    kit.sort();
    assert_eq!(kit, ["mufc", "seeding", "seeding-testkit"]);
}
