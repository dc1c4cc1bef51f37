//! `mufc predict` and `mufc export`: what a store tells without changing
//! it ([`Store::predict`], [`Store::centroids`]).

use std::fmt::Write as _;

use mufc_store::Store;
use serde_json::json;

use super::show::centroids_json;
use crate::CliError;
use crate::cli::{ExportArgs, ExportFormat, PredictArgs};
use crate::data::{Header, LoadOptions, load};
use crate::output::{Report, TextTable};

/// `mufc predict`: the index of the nearest centroid of each row of
/// `--data`, on stdout (one per line) or in `--out`.
///
/// # Errors
///
/// The store's errors, the data's, and [`CliError::InvalidParameter`]
/// when the data's columns are not the model's dimension.
pub fn predict(a: &PredictArgs) -> Result<Report, CliError> {
    let store = Store::open(&a.model)?;
    let opts = LoadOptions {
        header: Header::from_flag(a.header),
        client_column: a.client_column,
        id_column: a.id_column,
    };
    let table = load(&a.data, &opts)?;
    if table.dim() != store.dim() {
        return Err(CliError::Store(format!(
            "{}: {} feature columns, but the model {} has dimension {} (one column per \
             coordinate; --client-column and --id-column skip a client and an id column)",
            a.data.display(),
            table.dim(),
            a.model.display(),
            store.dim()
        )));
    }
    let points = in_the_models_box(a, &store, table.points())?;
    let labels = store.predict(&points)?;
    let mut counts = vec![0usize; store.k().max(1)];
    for &l in &labels {
        if let Some(c) = counts.get_mut(l) {
            *c += 1;
        }
    }
    let mut lines = String::with_capacity(labels.len() * 3);
    for l in &labels {
        let _ = writeln!(lines, "{l}");
    }
    let text = match &a.out_file {
        Some(f) => {
            std::fs::write(f, &lines).map_err(|e| CliError::io(f, &e))?;
            let mut t = TextTable::new(&["centroid", "points"]);
            for (j, c) in counts.iter().enumerate() {
                t.row([j.to_string(), c.to_string()]);
            }
            format!(
                "mufc predict: wrote {} labels to {} (model {}, version {})\n\n{}",
                labels.len(),
                f.display(),
                a.model.display(),
                store.model_version(),
                t.render()
            )
        }
        None => lines,
    };
    let json = json!({
        "command": "predict",
        "model": a.model.display().to_string(),
        "model_version": store.model_version(),
        "data": a.data.display().to_string(),
        "points": labels.len(),
        "out": a.out_file.as_ref().map(|f| f.display().to_string()),
        "counts": counts,
        "labels": labels,
    });
    Ok(Report {
        json,
        text,
        warnings: Vec::new(),
        exit: 0,
    })
}

/// The points in the model's coordinates. A store that keeps a map (a
/// scaled fit) applies it itself. One that keeps none, such as a
/// server's, holds a model in the box `[-1/2, 1/2]^d`: `--bounds` maps
/// the points into it as the sites mapped theirs, and without it a point
/// outside the box is refused (issue 28, item 11: data in the sites'
/// units got labels of nothing, with exit 0).
fn in_the_models_box(
    a: &PredictArgs,
    store: &Store,
    points: &nalgebra::DMatrix<f64>,
) -> Result<nalgebra::DMatrix<f64>, CliError> {
    let bounds = match (&a.bounds, store.transform()) {
        (Some(_), Some(_)) => {
            return Err(CliError::InvalidParameter {
                name: "bounds",
                value: format!("{:?}", a.bounds),
                reason: "the store keeps its own map of the data's coordinates; drop --bounds",
            });
        }
        (Some(b), None) => Some(b),
        (None, Some(_)) => return Ok(points.clone()),
        (None, None) => None,
    };
    let points = seeding::Dataset::new(points.clone())?;
    let Some(b) = bounds else {
        if let Err(seeding::SeedingError::OutsideBox {
            point: Some(row),
            axis,
            value,
        }) = points.check_in_box()
        {
            return Err(CliError::Store(format!(
                "{}: row {row} lies outside the model's box [-1/2, 1/2] (coordinate {value} \
                 on axis {axis}): {} keeps no map of the data's coordinates (a server's \
                 store does not); give --bounds LO,HI, the bounds the sites mapped their \
                 data with",
                a.data.display(),
                a.model.display()
            )));
        }
        return Ok(points.points().clone());
    };
    Ok(b.map(&points)?.points().clone())
}

/// `mufc export`: the centroids and their weights as CSV or JSON.
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for `--json` with `--format csv` (two
/// formats asked for), and the store's errors.
pub fn export(a: &ExportArgs) -> Result<Report, CliError> {
    if a.out.json && a.format == Some(ExportFormat::Csv) {
        return Err(CliError::InvalidParameter {
            name: "--format",
            value: "csv".into(),
            reason: "and --json ask for two formats: pass --format csv for CSV, or --json (or \
                     --format json) for JSON",
        });
    }
    let store = Store::open(&a.model)?;
    if let Some(w) = store.federation().withdrawal() {
        return Err(mufc_store::StoreError::Withdrawn(w.clone()).into());
    }
    let centroids = store.centroids();
    let body = json!({
        "k": centroids.len(),
        "dim": store.dim(),
        "model_version": store.model_version(),
        "centroids": centroids_json(&centroids),
    });
    let text = match a.format.unwrap_or(ExportFormat::Csv) {
        ExportFormat::Json => format!("{body}\n"),
        ExportFormat::Csv => {
            let mut s = String::from("centroid,weight");
            for i in 0..store.dim() {
                let _ = write!(s, ",x{i}");
            }
            s.push('\n');
            for (j, c) in centroids.iter().enumerate() {
                let _ = write!(s, "{j},{}", c.weight);
                for x in &c.coords {
                    // Shortest text that reads back to the same f64.
                    let _ = write!(s, ",{x:?}");
                }
                s.push('\n');
            }
            s
        }
    };
    let mut json = json!({ "command": "export", "model": a.model.display().to_string() });
    if let (Some(o), serde_json::Value::Object(b)) = (json.as_object_mut(), body) {
        o.extend(b);
    }
    Ok(Report {
        json,
        text,
        warnings: Vec::new(),
        exit: 0,
    })
}
