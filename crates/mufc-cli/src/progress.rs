//! A progress bar on stderr for work longer than a second; hidden when
//! stderr is not a terminal, with `--quiet`, or with `--json`.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
const DELAY: Duration = Duration::from_secs(1);

/// A progress bar that stays hidden for its first second, and for good
/// when disabled.
///
/// # Example
///
/// ```
/// use mufc_cli::progress::Progress;
///
/// let mut p = Progress::new(3, "trials", false); // disabled: draws nothing
/// p.inc(1);
/// p.inc(2);
/// p.finish();
/// ```
#[derive(Debug)]
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    enabled: bool,
    shown: bool,
}

impl Progress {
    /// Whether bars should be drawn at all: stderr is a terminal and
    /// neither `--quiet` nor `--json` was given.
    pub fn wanted(quiet: bool, json: bool) -> bool {
        !quiet && !json && std::io::stderr().is_terminal()
    }

    /// A bar of `len` steps labelled `message`; `enabled` as
    /// [`Self::wanted`] says.
    pub fn new(len: u64, message: &str, enabled: bool) -> Self {
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} ({elapsed})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(message.to_string());
        Self {
            bar,
            start: Instant::now(),
            enabled,
            shown: false,
        }
    }

    /// Advances by `n` steps; shows the bar once a second has passed.
    pub fn inc(&mut self, n: u64) {
        self.bar.inc(n);
        if self.enabled && !self.shown && self.start.elapsed() >= DELAY {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.shown = true;
        }
    }

    /// Steps done so far (for this module's tests).
    #[cfg(test)]
    pub(crate) fn position(&self) -> u64 {
        self.bar.position()
    }

    /// Removes the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disabled_bar_counts_its_steps() {
        let mut p = Progress::new(3, "trials", false);
        p.inc(1);
        p.inc(2);
        assert_eq!(p.position(), 3);
        p.finish();
    }
}
