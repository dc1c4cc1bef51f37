//! `mufc unlearn`: train, serve removal requests (Algorithm 4), and
//! retrain from scratch after every request in the same run.
//!
//! The requests themselves (the rows given, or chosen at random or
//! adversarially) are made in the `requests` submodule; the figures, the
//! JSON and the text in `report`. The federation, its requests and the
//! check against retraining are the experiment `mufc bench` shares
//! (`commands/experiment.rs`).

use baselines::{DcKMeans, DcParams};
use std::time::Instant;

use mufc::RemovalRequest;

use super::experiment::{Checked, Entries, Experiment};
use super::prepare::{invalid, prepare};
use crate::CliError;
use crate::central::best_kmeans;
use crate::cli::{Mode, UnlearnArgs};
use crate::output::Report;
use crate::progress::Progress;

mod report;
mod requests;
mod served;
mod topology;

use report::{Figures, Losses};
use requests::{choose, explicit};
use served::{Rounds, Served};
use topology::NextToFlat;

/// The run's experiment with what `unlearn` adds to it: the requests
/// given, DC-KMeans removing the same points, the flat federation served
/// next to a tree, and phi_c* of the whole data.
struct Unlearning<'a> {
    a: &'a UnlearnArgs,
    exp: Experiment,
    planned: Option<Vec<Entries>>,
    dc: Option<DcKMeans>,
    next_to_flat: Option<NextToFlat>,
    phi_star: f64,
}

/// Checks the arguments that need no data: at least one removal and one
/// point per request, and a figure's format.
fn check_args(a: &UnlearnArgs) -> Result<(), CliError> {
    if a.removals == 0 {
        return Err(invalid("removals", 0, "must be at least 1"));
    }
    if a.batch == 0 {
        return Err(invalid("batch", 0, "must be at least 1"));
    }
    if let Some(path) = &a.plot {
        let ext = path.extension().and_then(|e| e.to_str());
        if !matches!(
            ext.map(str::to_ascii_lowercase).as_deref(),
            Some("svg" | "png")
        ) {
            return Err(CliError::UnknownFormat {
                path: path.clone(),
                expected: ".svg or .png",
            });
        }
    }
    Ok(())
}

/// The requests given with `--remove`, grouped, and how many requests
/// the run serves; checked against the data before any training.
fn plan(
    a: &UnlearnArgs,
    p: &super::prepare::Prepared,
) -> Result<(Option<Vec<Entries>>, usize), CliError> {
    let planned = match &a.remove {
        Some(rows) => Some(explicit(rows, a.batch, &p.split.client_of(p.n())?)?),
        None => None,
    };
    let removals = planned.as_ref().map_or(a.removals, Vec::len);
    if removals == 0 {
        return Err(invalid("remove", 0, "name at least one row"));
    }
    if a.whole_clients && a.removals.saturating_add(a.fed.min_clients) > p.split.num_clients() {
        return Err(invalid(
            "removals",
            a.removals,
            "removing whole clients must leave at least --min-clients clients",
        ));
    }
    if planned.is_none() && !a.whole_clients && a.removals.saturating_mul(a.batch) >= p.n() {
        return Err(invalid(
            "removals",
            a.removals,
            "removals times the batch must be fewer than the points",
        ));
    }
    Ok((planned, removals))
}

impl Unlearning<'_> {
    /// Request `i`: the one given, or one chosen now.
    fn request(&mut self, i: usize) -> Result<(RemovalRequest, Entries), CliError> {
        if let Some(plan) = &self.planned {
            let entries = plan[i].clone();
            let mut request = RemovalRequest::new();
            for (c, ids) in &entries {
                request = request.with_points(*c, ids.clone());
            }
            return Ok((request, entries));
        }
        let (client, ids) = choose(&self.exp.fed, self.a, &mut self.exp.rng)?;
        let request = if self.a.whole_clients {
            RemovalRequest::clients(vec![client])
        } else {
            RemovalRequest::points(client, ids.clone())
        };
        Ok((request, vec![(client, ids)]))
    }

    /// Serves `removals` requests, and with `--flush` the ones still
    /// deferred; every round is checked against retraining.
    fn serve(&mut self, removals: usize, bar: &mut Progress) -> Result<Rounds, CliError> {
        let mut rounds = Rounds::default();
        for i in 0..removals {
            let (request, entries) = self.request(i)?;
            let report = self.exp.remove(&request, entries)?;
            if let Some(n) = &mut self.next_to_flat {
                n.serve(Some(&request), &report, &self.exp.fed)?;
            }
            bar.inc(1);
            if report.outcome.is_deferred() {
                // Erased at once; no round yet, nothing to retrain or compare.
                continue;
            }
            let checked = self.exp.check(report)?;
            rounds.served.push(self.record(checked)?);
        }
        if self.a.flush
            && let Some(report) = self.exp.fed.flush()?
        {
            if let Some(n) = &mut self.next_to_flat {
                n.serve(None, &report, &self.exp.fed)?;
            }
            if let Some(w) = &report.privacy_warning {
                rounds.warnings.push(format!("--flush: {w}"));
            }
            rounds.flushed = true;
            let checked = self.exp.check(report)?;
            rounds.served.push(self.record(checked)?);
            bar.inc(1);
        }
        Ok(rounds)
    }

    /// The figures of a checked round; DC-KMeans removes what it applied.
    fn record(&mut self, c: Checked) -> Result<Served, CliError> {
        let dc_seconds = match &mut self.dc {
            Some(t) => {
                let mut total = 0.0;
                for (_, ids) in &c.applied {
                    total += t.delete_many(ids)?.seconds;
                }
                Some(total)
            }
            None => None,
        };
        let report = c.report;
        Ok(Served {
            removed: report.removed_points,
            unlearn: report.times,
            retrain: c.fresh.fit_report().times,
            reseeded: !report.reseeded.is_empty(),
            server: report.server.name(),
            included: report.included.len(),
            requests: report.requests.len(),
            equal: c.diff,
            loss_ratio: self
                .exp
                .fed
                .objectives(Some(self.phi_star))?
                .loss_ratio
                .unwrap_or(f64::NAN),
            dc_seconds,
        })
    }

    /// The loss ratios before and after, MUFC's and DC-KMeans'.
    fn losses(
        &self,
        before: f64,
        dc_before: Option<f64>,
        rounds: &Rounds,
    ) -> Result<Losses, CliError> {
        let fed = &self.exp.fed;
        let after = fed.objectives(None)?;
        let star_after = best_kmeans(
            &fed.union()?,
            self.exp.p.k,
            self.a.data.restarts,
            self.a.common.seed,
        )?
        .phi();
        let dc_after = self
            .dc
            .as_ref()
            .map(|t| {
                t.phi_f()
                    .and_then(|f| Ok(seeding::loss_ratio(f, star_after)?))
            })
            .transpose()?;
        Ok(Losses {
            before,
            after: seeding::loss_ratio(after.phi_f, star_after)?,
            after_fixed: rounds.served.last().map_or(before, |s| s.loss_ratio),
            phi_star: self.phi_star,
            star_after,
            dc_before,
            dc_after,
        })
    }
}

/// `mufc unlearn`: trains (trial 0's federation seed), then serves
/// `--removals` requests. A request that would change one client's message
/// alone is deferred (`--min-updating-clients`, docs/threat-model.md U3)
/// until other clients' requests join it; one removal round then applies
/// them all. After every round it retrains from scratch on the remaining
/// data (Algorithm 1: every client, a full aggregation and decode, the
/// server's fit), checks that the unlearned federation equals the
/// retrained one bit for bit, and records both times and the loss ratio:
/// the figures are per round. Requests still deferred at the end are
/// reported, or applied with `--flush` (with a warning). With `--compare`,
/// DC-KMeans removes the same points when MUFC does.
///
/// The loss ratio after each request divides by phi_c* of the whole data
/// (as a fixed scale, for the figure); `loss_ratio_after` divides by phi_c*
/// re-estimated on the data left (the same estimator).
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for zero removals or batch, more removals
/// than the data allows; [`CliError::UnknownFormat`] for a plot that is not
/// `.svg` or `.png`; and the errors of the steps.
pub fn unlearn(a: &UnlearnArgs, progress: bool) -> Result<Report, CliError> {
    check_args(a)?;
    let seed = a.common.seed;
    let start = Instant::now();
    let mut p = prepare(&a.data, &a.fed, seed)?;
    let (planned, removals) = plan(a, &p)?;
    // One tick per request (a deferred one too), and one for the --flush.
    let mut bar = Progress::new(removals as u64 + u64::from(a.flush), "requests", progress);
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let exp = Experiment::new(p, &a.fed, seed)?;
    let next_to_flat = NextToFlat::new(&exp.clients, &exp.config)?;
    let fit = exp.fed.fit_report().times;
    let before = exp
        .fed
        .objectives(Some(phi_star))?
        .loss_ratio
        .unwrap_or(f64::NAN);
    let dc = match a.compare {
        true => Some(DcKMeans::fit(
            exp.clients.clone(),
            DcParams::new(exp.p.k, exp.p.local_k).validate()?,
            exp.fed_seed,
        )?),
        false => None,
    };
    let dc_before = dc
        .as_ref()
        .map(|t| {
            t.phi_f()
                .and_then(|f| Ok(seeding::loss_ratio(f, phi_star)?))
        })
        .transpose()?;
    let mut run = Unlearning {
        a,
        exp,
        planned,
        dc,
        next_to_flat,
        phi_star,
    };
    let rounds = run.serve(removals, &mut bar)?;
    let losses = run.losses(before, dc_before, &rounds)?;
    bar.finish();
    let mode = match (&run.planned, a.mode) {
        (Some(_), _) => "given",
        (None, Mode::Random) => "random",
        (None, Mode::Adversarial) => "adversarial",
    };
    let figures = Figures::new(&rounds.served, run.dc.is_some());
    let plot = report::plot(a, &rounds.served, &figures, losses.before)?;
    report::report(report::Run {
        a,
        exp: &run.exp,
        rounds: &rounds,
        figures: &figures,
        losses: &losses,
        removals,
        mode,
        fit,
        dc_fit_seconds: run.dc.as_ref().map(DcKMeans::fit_seconds),
        next_to_flat: run.next_to_flat.as_ref(),
        plot,
        total: start.elapsed().as_secs_f64(),
    })
}
