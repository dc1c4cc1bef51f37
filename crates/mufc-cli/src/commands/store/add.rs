//! `mufc add`: records that arrive, added to clients of the store
//! ([`Store::add`]; with `--new-clients`, new clients join with theirs,
//! [`Store::add_admitting`]), after the pending model updates whose
//! deadline passed ([`Store::apply_overdue`]), as `mufc forget` serves a
//! removal.

use std::collections::BTreeMap;
use std::time::Instant;

use mufc_store::{ClientName, ClientRecords, OnForgotten, RecordId, Store, StoreError};
use nalgebra::DMatrix;
use seeding::Dataset;

use super::forget::{Served, refusal};
use crate::CliError;
use crate::cli::AddArgs;
use crate::data::{Header, LoadOptions, Table, load};
use crate::output::Report;

/// `mufc add`: opens the store, applies the overdue model updates, adds
/// the records of `--data` to their clients (and, with `--flush`, applies
/// the pending updates), each committed before it is reported. Exit code
/// as `mufc forget`'s: 0 when the model update ran, 3 when it is
/// deferred, 4 when refused, 6 when the store serves no model.
///
/// # Errors
///
/// Bad options or data (no client for the records, another dimension,
/// an invalid id or client name), [`CliError::Refused`] for an addition
/// the store refuses (a record it holds or forgot, an unknown client, a
/// record outside the model's box, past the bound on points: nothing is
/// changed then), and the store's other errors.
pub fn add(a: &AddArgs) -> Result<Report, CliError> {
    let start = Instant::now();
    if a.client.is_none() && a.client_column.is_none() {
        return Err(CliError::InvalidParameter {
            name: "client",
            value: "none".into(),
            reason: "name the records' client with --client NAME, or each row's with \
                     --client-column N",
        });
    }
    let opts = LoadOptions {
        header: Header::from_flag(a.header),
        client_column: a.client_column,
        id_column: Some(a.id_column),
    };
    let table = load(&a.data, &opts)?;
    let mut store = Store::open(&a.model)?;
    let clients = client_records(a, &store, &table)?;
    let on_forgotten = match a.skip_forgotten {
        true => OnForgotten::Skip,
        false => OnForgotten::Refuse,
    };
    let served = Served::on(&mut store, a.flush, |store| {
        let added = match a.new_clients {
            true => store.add_admitting(&clients, on_forgotten),
            false => store.add(&clients, on_forgotten),
        };
        added.map(Some).map_err(|e| match e {
            // A name the store does not know may be a new client's.
            StoreError::UnknownClient { name, known } => refusal(StoreError::UnknownClient {
                name,
                known: format!("{known}; pass --new-clients if it is a new client that joins"),
            }),
            e => refusal(e),
        })
    })?;
    let skipped = served.skipped();
    let mut report = served.report("add", &a.model, &store, start);
    if skipped > 0 {
        report.warnings.push(format!(
            "{skipped} record(s) left out: the store forgot them (--skip-forgotten)"
        ));
    }
    Ok(report)
}

/// The records of `table` by client, in the model's coordinates, each
/// with its id as written.
fn client_records(
    a: &AddArgs,
    store: &Store,
    table: &Table,
) -> Result<Vec<ClientRecords>, CliError> {
    if table.dim() != store.dim() {
        return Err(CliError::Store(format!(
            "{}: {} feature columns, but the model {} has dimension {} (--client-column and \
             --id-column skip a client and an id column)",
            a.data.display(),
            table.dim(),
            a.model.display(),
            store.dim()
        )));
    }
    let points = in_the_models_box(a, store, table)?;
    let ids = table.ids().unwrap_or_default();
    let mut by: BTreeMap<String, (Vec<f64>, Vec<RecordId>)> = BTreeMap::new();
    for (row, id) in ids.iter().enumerate() {
        let client = match (&a.client, table.clients()) {
            (Some(name), _) => name.clone(),
            (None, Some(of)) => of
                .get(row)
                .and_then(|&c| table.client_names().get(c))
                .cloned()
                .unwrap_or_default(),
            (None, None) => String::new(),
        };
        let e = by.entry(client).or_default();
        e.0.extend(points.column(row).iter());
        e.1.push(RecordId::parse(id).map_err(|e| CliError::InvalidParameter {
            name: "id-column",
            value: id.clone(),
            reason: e.reason,
        })?);
    }
    by.into_iter()
        .map(|(name, (coords, ids))| {
            let m = DMatrix::from_column_slice(store.dim(), ids.len(), &coords);
            let name = ClientName::new(&name)?;
            Ok(ClientRecords::new(name, Dataset::new(m)?, ids)?)
        })
        .collect()
}

/// The records' points in the model's coordinates: the store's own map
/// when it keeps one, else `--bounds`, else as written (the store refuses
/// a point outside the box).
fn in_the_models_box(a: &AddArgs, store: &Store, table: &Table) -> Result<DMatrix<f64>, CliError> {
    match (a.bounds, store.transform()) {
        (Some(_), Some(_)) => Err(CliError::InvalidParameter {
            name: "bounds",
            value: format!("{:?}", a.bounds),
            reason: "the store keeps its own map of the data's coordinates; drop --bounds",
        }),
        (None, Some(t)) => Ok(t.apply_dataset(&table.dataset()?)?.points().clone()),
        (Some(b), None) => Ok(b.map(&table.dataset()?)?.points().clone()),
        (None, None) => Ok(table.points().clone()),
    }
}
