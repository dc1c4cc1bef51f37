//! The lines `mufc server` and `mufc client` print as they run: one
//! per event, stamped with the time (UTC, milliseconds) and a level, in
//! text or JSON (issue 28, item 11: the logs had no time, so an operator
//! could not tell when a refusal or a lost connection happened).
//!
//! The events are the library's typed ones ([`mufc_net::server::ServerEvent`],
//! [`mufc_net::client::ClientEvent`]); a logging framework (`tracing`)
//! would add a subscriber and two crates to format one line per event,
//! with the time formatting we already have (`mufc_store::utc`).

use serde_json::Value;

/// How much a line matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    /// What happens as it should.
    Info,
    /// What an operator should look at: a refusal, a failed round, a
    /// lost connection.
    Warn,
}

impl Level {
    fn word(self) -> &'static str {
        match self {
            Self::Info => "INFO",
            Self::Warn => "WARN",
        }
    }
}

/// Now, as `2026-11-28T19:05:12.345Z` (UTC, milliseconds).
pub(super) fn stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let day_time = mufc_store::utc(now.as_secs()).replacen(' ', "T", 1);
    format!("{day_time}.{:03}Z", now.subsec_millis())
}

/// Prints each event `next` gives, as `render` writes it (one JSON object
/// or one line of text), with the time and `level`'s word, until there
/// are no more or the process is interrupted. A text line reads
/// `2026-11-28T19:05:12.345Z INFO round 3 committed ...`; a JSON object
/// gets `"time"` and `"level"` members.
pub(super) async fn follow<E>(
    mut next: impl AsyncFnMut() -> Option<E>,
    json_out: bool,
    mut render: impl FnMut(&E) -> (Value, String),
    level: impl Fn(&E) -> Level,
) {
    // One listener for the whole run: a signal between two events is not
    // lost (once tokio handles SIGTERM, nothing else would stop us).
    let stop = interrupted();
    tokio::pin!(stop);
    // A closed stdout stops the printing, not the party.
    let mut out = crate::output::Stdout::default();
    loop {
        let ev = tokio::select! {
            ev = next() => ev,
            () = &mut stop => None,
        };
        let Some(ev) = ev else { return };
        let (mut value, text) = render(&ev);
        let (time, word) = (stamp(), level(&ev).word());
        if json_out {
            if let Value::Object(m) = &mut value {
                m.insert("time".into(), Value::String(time));
                m.insert("level".into(), Value::String(word.into()));
            }
            out.print(&format!("{value}\n"));
        } else {
            out.print(&format!("{time} {word} {text}\n"));
        }
    }
}

/// Waits for SIGINT or SIGTERM.
async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stamp is ISO 8601 in UTC with milliseconds, and it is now.
    #[test]
    fn the_stamp_reads_as_utc_with_milliseconds() {
        let s = stamp();
        assert_eq!(s.len(), 24, "{s}");
        let b = s.as_bytes();
        for (at, c) in [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
            (23, b'Z'),
        ] {
            assert_eq!(b.get(at), Some(&c), "{s}");
        }
        let year: u32 = s.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
        assert!(year >= 2026, "{s}");
    }
}
