//! What commands print: an aligned plain-text table by default, or one
//! JSON object with `--json`.

use std::io::Write;

use serde_json::Value;

/// Standard output that a closed reader does not stop. Rust's `print!`
/// panics when a write fails (the reader of a pipe went away: `mufc client
/// ... | head`), and a client or server would die mid-federation for it.
/// Here the first failed write turns printing off, says so once on stderr,
/// and the process goes on with its work.
///
/// # Example
///
/// ```
/// use mufc_cli::output::Stdout;
///
/// let mut out = Stdout::default();
/// assert!(out.is_open());
/// out.print("");
/// ```
#[derive(Debug)]
pub struct Stdout {
    open: bool,
}

impl Default for Stdout {
    fn default() -> Self {
        Self { open: true }
    }
}

impl Stdout {
    /// Writes `text` and flushes, unless an earlier write failed.
    pub fn print(&mut self, text: &str) {
        if !self.open {
            return;
        }
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
            self.open = false;
            eprint_line(&format!(
                "warning: standard output failed ({e}); nothing more is printed there"
            ));
        }
    }

    /// Whether writes still go out.
    pub fn is_open(&self) -> bool {
        self.open
    }
}

/// Writes one line on stderr; a failure is ignored (there is nowhere left
/// to report it), where `eprintln!` would panic.
///
/// # Example
///
/// ```
/// mufc_cli::output::eprint_line("warning: an example");
/// ```
pub fn eprint_line(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// A command's result: one JSON object (for `--json`) and its text form.
///
/// # Example
///
/// ```
/// use mufc_cli::output::Report;
///
/// let r = Report { json: serde_json::json!({"n": 3}), text: "n  3\n".into(), warnings: vec![], exit: 0 };
/// assert_eq!(r.render(true), "{\"n\":3}\n");
/// assert_eq!(r.render(false), "n  3\n");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The JSON object.
    pub json: Value,
    /// The readable text.
    pub text: String,
    /// What is weak about the run's privacy, one sentence each (printed
    /// on stderr as `warning: ...` lines, and in the JSON object as
    /// `privacy_warnings`).
    pub warnings: Vec<String>,
    /// The process's exit code: 0, or the code of a successful run that
    /// has more to say ([`crate::exit`]: a deferred model update, a
    /// verification that found a difference).
    pub exit: u8,
}

impl Report {
    /// The JSON object on one line, or the text, each ending in a newline.
    pub fn render(&self, json: bool) -> String {
        if json {
            format!("{}\n", self.json)
        } else if self.text.ends_with('\n') {
            self.text.clone()
        } else {
            format!("{}\n", self.text)
        }
    }
}

/// `n` things for people: `1 client`, `3 clients`, `0 clients`.
///
/// # Example
///
/// ```
/// use mufc_cli::output::count;
///
/// assert_eq!(count(1, "client"), "1 client");
/// assert_eq!(count(2, "request"), "2 requests");
/// assert_eq!(count(0, "point"), "0 points");
/// ```
pub fn count(n: u64, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// A plain-text table: a header, a rule, and rows, columns separated by two
/// spaces; cells that look like numbers are right-aligned, others
/// left-aligned. Widths count characters, not bytes.
///
/// # Example
///
/// ```
/// use mufc_cli::output::TextTable;
///
/// let mut t = TextTable::new(&["method", "loss ratio"]);
/// t.row(["K-FED", "1.25"]);
/// t.row(["DC-KMeans", "1.02"]);
/// assert_eq!(
///     t.render(),
///     "method     loss ratio\n---------  ----------\nK-FED            1.25\nDC-KMeans        1.02\n"
/// );
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextTable {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl TextTable {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|h| (*h).to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are blank, extra cells are dropped.
    pub fn row<I, S>(&mut self, cells: I)
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut row: Vec<String> = cells.into_iter().map(Into::into).collect();
        row.resize(self.headers.len(), String::new());
        self.rows.push(row);
    }

    /// The table as text, one line per row, each ending in a newline;
    /// trailing spaces are trimmed.
    pub fn render(&self) -> String {
        let width = |s: &str| s.chars().count();
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| width(&r[c]))
                    .chain([width(&self.headers[c])])
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String], align_numbers: bool| {
            let parts: Vec<String> = cells
                .iter()
                .zip(&widths)
                .map(|(cell, &w)| {
                    let pad = " ".repeat(w - width(cell));
                    if align_numbers && looks_numeric(cell) {
                        format!("{pad}{cell}")
                    } else {
                        format!("{cell}{pad}")
                    }
                })
                .collect();
            format!("{}\n", parts.join("  ").trim_end())
        };
        let mut out = line(&self.headers, false);
        let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
        out.push_str(&line(&rule, false));
        for r in &self.rows {
            out.push_str(&line(r, true));
        }
        out
    }
}

/// Whether a cell reads as a number (possibly with a `±` part, a unit
/// suffix `s` or `x`, or a lone `-` for missing).
fn looks_numeric(cell: &str) -> bool {
    let t = cell.trim();
    if t == "-" {
        return true;
    }
    let first = t.split_whitespace().next().unwrap_or("");
    let core = first.trim_end_matches(['s', 'x', '%']);
    !core.is_empty() && core.parse::<f64>().is_ok()
}

/// The mean and the population standard deviation (as NumPy's `np.std`,
/// which the paper's tables use) of a non-empty sample; `(NaN, NaN)` when
/// empty.
///
/// # Example
///
/// ```
/// use mufc_cli::output::mean_std;
///
/// assert_eq!(mean_std(&[1.0, 3.0]), (2.0, 1.0));
/// ```
pub fn mean_std(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// `mean ± std` with `digits` decimals.
///
/// # Example
///
/// ```
/// use mufc_cli::output::fmt_mean_std;
///
/// assert_eq!(fmt_mean_std(1.2549, 0.0123, 2), "1.25 ± 0.01");
/// ```
pub fn fmt_mean_std(mean: f64, std: f64, digits: usize) -> String {
    format!("{mean:.digits$} ± {std:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_and_missing_cells() {
        let mut t = TextTable::new(&["a", "bb"]);
        t.row(["xyz"]);
        t.row(["1", "2.5 ± 0.1", "dropped"]);
        let s = t.render();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines,
            ["a    bb", "---  ---------", "xyz", "  1  2.5 ± 0.1"]
        );
    }

    #[test]
    fn numeric_cells_are_recognised() {
        for yes in ["1", "-2.5e3", "1.25 ± 0.02", "0.3s", "84x", "-"] {
            assert!(looks_numeric(yes), "{yes}");
        }
        for no in ["MUFC", "", "n/a", "s"] {
            assert!(!looks_numeric(no), "{no}");
        }
    }
}
