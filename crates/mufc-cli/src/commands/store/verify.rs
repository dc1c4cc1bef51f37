//! `mufc verify`: retrains from the store's remaining records and
//! compares with the served model ([`Store::verify`]), printing the
//! evidence.

use mufc_store::{Store, Verification, VerifyOutcome, utc};
use serde_json::{Value, json};

use super::show::list;
use crate::cli::VerifyArgs;
use crate::output::{Report, TextTable};
use crate::{CliError, exit};

/// `mufc verify`: what was compared, the digests of the served and the
/// retrained model, and the verdict. Exit code ([`exit`]): 0 equal, 3
/// the clients equal and the model's update pending, 5 different, 6 the
/// model withdrawn and the clients equal.
///
/// # Errors
///
/// The store's errors (a missing, foreign or damaged file, ...).
pub fn verify(a: &VerifyArgs) -> Result<Report, CliError> {
    let store = Store::open(&a.model)?;
    let start = std::time::Instant::now();
    let v = store.verify()?;
    let seconds = start.elapsed().as_secs_f64();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (verdict, code) = verdict(v.outcome());
    let evidence = Evidence {
        a,
        store: &store,
        v: &v,
        now,
        seconds,
    };
    let mut text = format!(
        "mufc verify: {}\n\n{}\n{verdict}\n",
        a.model.display(),
        evidence.table().render()
    );
    if let Some(w) = &v.withdrawn {
        text.push_str(&format!("withdrawn: {w}\n"));
    }
    for d in &v.differences {
        text.push_str(&format!("difference: {d}\n"));
    }
    Ok(Report {
        json: evidence.json(),
        text,
        warnings: Vec::new(),
        exit: code,
    })
}

/// The verdict, for people, and the exit code ([`exit`]) of an outcome.
fn verdict(outcome: VerifyOutcome) -> (&'static str, u8) {
    match outcome {
        VerifyOutcome::Equal => (
            "EQUAL: the served model is, bit for bit, the model retrained from the store's remaining records",
            exit::SUCCESS,
        ),
        VerifyOutcome::Pending => (
            "PENDING: the clients equal retraining (the forgotten records are erased); the model \
             still counts the records of the pending requests until their update runs \
             (`mufc forget --model STORE --flush`, or their deadline)",
            exit::DEFERRED,
        ),
        VerifyOutcome::Differs => (
            "DIFFERENT: the served model is not the model retrained from the remaining records",
            exit::DIFFERS,
        ),
        VerifyOutcome::Withdrawn => (
            "WITHDRAWN: the store serves no model (retraining would be refused: too few clients \
             for an aggregate), and every client equals, bit for bit, its fit from the store's \
             remaining records",
            exit::WITHDRAWN,
        ),
    }
}

/// What `mufc verify` shows: the store, when it was checked, what was
/// compared and how long retraining took.
struct Evidence<'a> {
    a: &'a VerifyArgs,
    store: &'a Store,
    v: &'a Verification,
    /// When the check ran (seconds since the epoch, UTC).
    now: u64,
    seconds: f64,
}

impl Evidence<'_> {
    /// The evidence's table.
    fn table(&self) -> TextTable {
        let (store, v) = (self.store, self.v);
        let c = store.config();
        let mut t = TextTable::new(&["evidence", "value"]);
        t.row(["store".to_string(), self.a.model.display().to_string()]);
        t.row(["checked at (UTC)".to_string(), utc(self.now)]);
        t.row(["model version".to_string(), v.model_version.to_string()]);
        t.row(["remaining records".to_string(), v.points.to_string()]);
        t.row(["remaining clients".to_string(), v.clients.to_string()]);
        t.row([
            "configuration".to_string(),
            format!(
                "K = {}, k = {}, gamma = {}, seed {}, {} / {}",
                store.k(),
                c.client_k(),
                c.gamma().map_or("-".to_string(), |g| format!("{g}")),
                c.seed(),
                c.client_training().name(),
                c.topology().name()
            ),
        ]);
        t.row([
            "requests whose model update waits".to_string(),
            list(&v.pending_requests),
        ]);
        t.row(["served model SHA-256".to_string(), v.served_digest.clone()]);
        t.row([
            "retrained model SHA-256".to_string(),
            v.retrained_digest.clone(),
        ]);
        t.row([
            "served clients SHA-256".to_string(),
            v.clients_digest.0.clone(),
        ]);
        t.row([
            "retrained clients SHA-256".to_string(),
            v.clients_digest.1.clone(),
        ]);
        t.row([
            "retraining time".to_string(),
            format!("{:.2} s", self.seconds),
        ]);
        t
    }

    /// `mufc verify --json`.
    fn json(&self) -> Value {
        let mut out = json!({
            "command": "verify",
            "model": self.a.model.display().to_string(),
            "checked_at": self.now,
            "seconds": self.seconds,
        });
        if let (Value::Object(o), Value::Object(v)) = (&mut out, verification_json(self.v)) {
            o.extend(v);
        }
        out
    }
}

/// A verification's evidence as `mufc verify --json` writes it (the
/// Python estimator's `verify()` returns the same object).
pub fn verification_json(v: &Verification) -> Value {
    json!({
        "outcome": match v.outcome() {
            VerifyOutcome::Equal => "equal",
            VerifyOutcome::Pending => "pending",
            VerifyOutcome::Differs => "different",
            VerifyOutcome::Withdrawn => "withdrawn",
        },
        "withdrawn": v.withdrawn.as_ref().map(ToString::to_string),
        "model_version": v.model_version,
        "points": v.points,
        "clients": v.clients,
        "pending_requests": v.pending_requests,
        "served_digest": v.served_digest,
        "retrained_digest": v.retrained_digest,
        "served_clients_digest": v.clients_digest.0,
        "retrained_clients_digest": v.clients_digest.1,
        "differences": v.differences,
    })
}
