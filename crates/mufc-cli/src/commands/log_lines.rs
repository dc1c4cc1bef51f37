//! The lines `mufc server` and `mufc client` print as they run: one
//! per event, stamped with the time (UTC, microseconds) and a level, in
//! text or JSON (issue 28, item 11: the logs had no time, so an operator
//! could not tell when a refusal or a lost connection happened).
//!
//! The events are the library's typed ones ([`mufc_net::server::ServerEvent`],
//! [`mufc_net::client::ClientEvent`]), emitted as `tracing` events and
//! written by a `tracing-subscriber` formatter: the same subscriber
//! writes what the libraries underneath log (tonic, h2, rustls), so
//! `MUFC_LOG=debug` shows a connection's details in the same stream.
//! `MUFC_LOG` sets the least level written: `error`, `warn`, `info` (the
//! default), `debug`, `trace` or `off`.

use std::str::FromStr;
use std::sync::Mutex;

use serde_json::{Value, json};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

use crate::CliError;
use crate::output::Stdout;

/// How much a line matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Level {
    /// What happens as it should.
    Info,
    /// What an operator should look at: a refusal, a failed round, a
    /// lost connection.
    Warn,
}

/// The environment variable that sets the least level written.
pub(super) const LOG_ENV: &str = "MUFC_LOG";

/// Where and how the lines go: read from the environment before the
/// party starts (a bad `MUFC_LOG` is an error then, not a silent
/// default).
#[derive(Clone, Copy, Debug)]
pub(super) struct Logger {
    json: bool,
    least: LevelFilter,
}

impl Logger {
    /// Lines in JSON if `json`, else text; the least level from
    /// `MUFC_LOG` (`info` when unset).
    ///
    /// # Errors
    ///
    /// `MUFC_LOG` names no level.
    pub(super) fn from_env(json: bool) -> Result<Self, CliError> {
        let least = match std::env::var(LOG_ENV) {
            Ok(v) => LevelFilter::from_str(v.trim()).map_err(|_| CliError::InvalidParameter {
                name: LOG_ENV,
                value: v,
                reason: "is one of error, warn, info, debug, trace, off",
            })?,
            Err(_) => LevelFilter::INFO,
        };
        Ok(Self { json, least })
    }

    /// Makes this the process's subscriber (once: a second call keeps the
    /// first).
    fn install(self) {
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(self.least)
            .with_writer(StdoutLines::default())
            .event_format(Line { json: self.json })
            .finish();
        let _ = tracing::subscriber::set_global_default(subscriber);
    }
}

/// Emits one event of ours: its text as the message, its JSON object as
/// the `json` field.
fn emit(level: Level, value: &Value, text: &str) {
    match level {
        Level::Info => tracing::info!(json = %value, "{text}"),
        Level::Warn => tracing::warn!(json = %value, "{text}"),
    }
}

/// Prints each event `next` gives, as `render` writes it (one JSON object
/// or one line of text), with the time and `level`'s word, until there
/// are no more or the process is interrupted. A text line reads
/// `2026-11-28T19:05:12.345678Z INFO round 3 committed ...`; a JSON object
/// gets `"time"` and `"level"` members.
pub(super) async fn follow<E>(
    mut next: impl AsyncFnMut() -> Option<E>,
    log: Logger,
    mut render: impl FnMut(&E) -> (Value, String),
    level: impl Fn(&E) -> Level,
) {
    log.install();
    // One listener for the whole run: a signal between two events is not
    // lost (once tokio handles SIGTERM, nothing else would stop us).
    let stop = interrupted();
    tokio::pin!(stop);
    loop {
        let ev = tokio::select! {
            ev = next() => ev,
            () = &mut stop => None,
        };
        let Some(ev) = ev else { return };
        let (value, text) = render(&ev);
        emit(level(&ev), &value, &text);
    }
}

/// The fields of one event: its message, our JSON object, the rest (an
/// event of a library underneath) as `name=value`.
#[derive(Default)]
struct Fields {
    message: String,
    json: Option<String>,
    rest: Vec<(&'static str, String)>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let text = format!("{value:?}");
        match field.name() {
            "message" => self.message = text,
            "json" => self.json = Some(text),
            name => self.rest.push((name, text)),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message = value.to_string(),
            "json" => self.json = Some(value.to_string()),
            name => self.rest.push((name, value.to_string())),
        }
    }
}

/// The line format: `TIME LEVEL message`, or one JSON object with
/// `time` and `level` members.
struct Line {
    json: bool,
}

impl<S, N> FormatEvent<S, N> for Line
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut w: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let mut time = String::new();
        SystemTime.format_time(&mut Writer::new(&mut time))?;
        let meta = event.metadata();
        let level = meta.level().as_str();
        if self.json {
            let mut value = match fields.json.as_deref().map(serde_json::from_str::<Value>) {
                Some(Ok(v @ Value::Object(_))) => v,
                // A library's event: its message, target and fields.
                _ => {
                    let mut v = json!({ "message": fields.message, "target": meta.target() });
                    for (name, text) in fields.rest {
                        v[name] = Value::String(text);
                    }
                    v
                }
            };
            value["time"] = Value::String(time);
            value["level"] = Value::String(level.into());
            writeln!(w, "{value}")
        } else {
            write!(w, "{time} {level} ")?;
            if fields.json.is_none() {
                write!(w, "{}: ", meta.target())?;
            }
            write!(w, "{}", fields.message)?;
            for (name, text) in fields.rest {
                write!(w, " {name}={text}")?;
            }
            writeln!(w)
        }
    }
}

/// Standard output for the subscriber: a closed stdout stops the
/// printing, not the party ([`Stdout`]).
#[derive(Default)]
struct StdoutLines(Mutex<Stdout>);

/// One event's line, written in one piece.
struct LineWriter<'a>(&'a Mutex<Stdout>);

impl std::io::Write for LineWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .print(&String::from_utf8_lossy(buf));
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for StdoutLines {
    type Writer = LineWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        LineWriter(&self.0)
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

    /// One line per event, stamped in UTC with microseconds, with the
    /// level; in JSON our object gets `time` and `level`; a library's
    /// event keeps its target and fields; the least level is honoured.
    #[test]
    fn events_are_stamped_leveled_and_filtered() {
        let written = std::sync::Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = {
            let w = written.clone();
            move || Capture(w.clone())
        };
        for json in [false, true] {
            written.lock().unwrap().clear();
            let subscriber = tracing_subscriber::fmt()
                .with_max_level(LevelFilter::WARN)
                .with_writer(sink.clone())
                .event_format(Line { json })
                .finish();
            tracing::subscriber::with_default(subscriber, || {
                emit(
                    Level::Warn,
                    &json!({ "event": "x", "round": 3 }),
                    "round 3 failed",
                );
                emit(Level::Info, &json!({ "event": "y" }), "filtered out");
                tracing::warn!(target: "h2", peer = 7, "went away");
            });
            let text = String::from_utf8(written.lock().unwrap().clone()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.len(), 2, "{text}");
            if json {
                let ours: Value = serde_json::from_str(lines[0]).unwrap();
                assert_eq!(ours["event"], "x");
                assert_eq!(ours["round"], 3);
                assert_eq!(ours["level"], "WARN");
                check_stamp(ours["time"].as_str().unwrap());
                let theirs: Value = serde_json::from_str(lines[1]).unwrap();
                assert_eq!(theirs["target"], "h2");
                assert_eq!(theirs["peer"], "7");
                assert_eq!(theirs["message"], "went away");
            } else {
                let (time, rest) = lines[0].split_once(' ').unwrap();
                check_stamp(time);
                assert_eq!(rest, "WARN round 3 failed");
                assert!(lines[1].ends_with(" WARN h2: went away peer=7"), "{text}");
            }
        }
        assert!(Logger::from_env(false).is_ok());
    }

    struct Capture(std::sync::Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// ISO 8601 in UTC with microseconds, and now.
    fn check_stamp(s: &str) {
        assert_eq!(s.len(), 27, "{s}");
        let b = s.as_bytes();
        for (at, c) in [
            (4, b'-'),
            (7, b'-'),
            (10, b'T'),
            (13, b':'),
            (16, b':'),
            (19, b'.'),
            (26, b'Z'),
        ] {
            assert_eq!(b.get(at), Some(&c), "{s}");
        }
        let year: u32 = s.get(..4).and_then(|y| y.parse().ok()).unwrap_or(0);
        assert!(year >= 2026, "{s}");
    }
}
