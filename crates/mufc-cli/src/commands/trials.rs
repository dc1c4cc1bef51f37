//! What every trial-running subcommand sets up alike: the trial seeds,
//! the federation's configuration, and the prepared data split into the
//! clients' data sets.

use mufc::ValidConfig;

use super::prepare::{Prepared, invalid, prepare};
use crate::CliError;
use crate::cli::{DataArgs, FedArgs};
use crate::federated;
use crate::random::{derive_seed, tag};

/// The federation seed of trial `t` of a run seeded by `seed` (the same in
/// `run`, `compare` and, for trial 0, `unlearn` and `bench`).
pub(crate) fn trial_seed(seed: u64, t: usize) -> u64 {
    derive_seed(seed, tag::TRIAL, t as u64)
}

/// The federation's configuration for the prepared data and a trial seed.
pub(crate) fn fed_config(p: &Prepared, fed: &FedArgs, seed: u64) -> Result<ValidConfig, CliError> {
    // The adaptive rule's k was resolved on this data once, by `prepare`
    // (a survey of every client's points): each trial takes it.
    let config = federated::config(p.k, p.gamma, p.split.num_clients(), fed, seed)?;
    Ok(config
        .into_builder()
        .resolved_client_k(p.mufc_k)
        .validate()?)
}

/// The data, split and checked, of a command that runs `trials` trials:
/// the configuration is validated before any work, so a bad flag fails
/// fast.
pub(super) fn prepare_trials(
    data: &DataArgs,
    fed: &FedArgs,
    seed: u64,
    trials: usize,
) -> Result<(Prepared, Vec<seeding::Dataset>), CliError> {
    if trials == 0 {
        return Err(invalid("trials", 0, "must be at least 1"));
    }
    let p = prepare(data, fed, seed)?;
    fed_config(&p, fed, 0)?;
    let clients = p.split.client_datasets(&p.points)?;
    Ok((p, clients))
}
