//! Checks of the options against the data, run before any training so that
//! a bad combination fails fast with its real cause and the numbers
//! involved, instead of surfacing later as an unrelated error of the
//! split or of the library.

use nalgebra::DMatrix;
use seeding::Quantizer;

use crate::CliError;

/// K and the number of clients against the number of points `n`: K-means
/// needs at least K points and every client at least one (`clients` is
/// `None` when a client column names the clients).
pub(crate) fn counts(k: usize, clients: Option<usize>, n: usize) -> Result<(), CliError> {
    if k > n {
        return Err(CliError::KExceedsPoints { k, points: n });
    }
    if let Some(clients) = clients
        && clients > n
    {
        return Err(CliError::ClientsExceedPoints { clients, points: n });
    }
    Ok(())
}

/// The quantizer's step against the data (points as columns): refused when
/// the points are not all equal but every one falls into the same bin of
/// the grid the federation would use (no shift, origin `-1/2`), so the
/// server would see one point. Data outside the box `[-1/2, 1/2]^d` is
/// left to the library, which names it.
pub(crate) fn gamma(points: &DMatrix<f64>, gamma: f64, defaulted: bool) -> Result<(), CliError> {
    let (d, n) = points.shape();
    if n < 2 || d == 0 || points.iter().any(|x| !(-0.5..=0.5).contains(x)) {
        return Ok(());
    }
    let q = Quantizer::new(d, gamma)?;
    let mut columns = points.as_slice().chunks_exact(d);
    let first = columns.next().map(|p| q.coords_of(p)).transpose()?;
    for p in columns {
        if Some(q.coords_of(p)?) != first {
            return Ok(());
        }
    }
    let spread = points
        .row_iter()
        .map(|r| r.max() - r.min())
        .fold(0.0, f64::max);
    if spread == 0.0 {
        // Identical points: every step puts them in one bin.
        return Ok(());
    }
    Err(CliError::GammaOneBin {
        gamma,
        defaulted,
        points: n,
        bins_per_axis: q.bins_per_axis(),
        suggestion: spread / 4.0,
    })
}

/// The dropout rate of `--masking secagg` against the number of clients,
/// as the library plans the complete graph's protocol
/// ([`mufc::SecAggOptions::complete_graph_plan`]: `ceil(rate n)` dropouts,
/// the threshold of a lying server), and at least `t` clients must survive.
/// With `harary` the finder may choose a Harary graph with another
/// threshold (and otherwise falls back to the complete graph, whose
/// refusal names its numbers), so only a rate that leaves no client is
/// refused here. A lone client needs no peers and is not checked.
pub(crate) fn dropout(rate: f64, clients: usize, harary: bool) -> Result<(), CliError> {
    if rate <= 0.0 || clients < 2 {
        return Ok(());
    }
    let plan = mufc::SecAggOptions::new()
        .dropout(rate)
        .complete_graph_plan(clients)?;
    let (dropouts, colluding, threshold) = (plan.dropouts, plan.colluders, plan.threshold);
    let survivors = clients - dropouts;
    let refused = if harary {
        survivors == 0
    } else {
        !plan.survives()
    };
    if !refused {
        return Ok(());
    }
    let max_dropouts = clients.saturating_sub(threshold);
    // max_dropouts / n, rounded down to four decimals for people, and
    // still planning for at most max_dropouts.
    #[allow(clippy::cast_precision_loss)]
    let max_rate = {
        let n = clients as f64;
        let r = (max_dropouts as f64 / n * 1e4 + 1e-9).floor() / 1e4;
        if (r * n).ceil() > max_dropouts as f64 {
            r - 1e-4
        } else {
            r
        }
    };
    Err(CliError::DropoutTooHigh {
        rate,
        clients,
        dropouts,
        survivors,
        threshold,
        colluding,
        max_dropouts,
        max_rate,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_and_clients_name_the_number_of_points() {
        assert!(counts(60, Some(60), 60).is_ok());
        assert!(counts(4, None, 3).is_err());
        let e = counts(100, Some(100), 60).unwrap_err();
        assert_eq!(e, CliError::KExceedsPoints { k: 100, points: 60 });
        assert!(
            e.to_string()
                .contains("K = 100 exceeds the number of points (60)")
        );
        let e = counts(4, Some(61), 60).unwrap_err();
        assert!(
            e.to_string()
                .contains("--clients 61 exceeds the number of points (60)"),
            "{e}"
        );
    }

    #[test]
    fn a_step_that_bins_everything_together_is_refused() {
        let pts = DMatrix::from_column_slice(2, 3, &[-0.4, 0.1, 0.2, 0.3, 0.4, -0.2]);
        assert!(gamma(&pts, 0.1, false).is_ok());
        // gamma >= 1: one bin per axis.
        let e = gamma(&pts, 2.0, false).unwrap_err();
        let CliError::GammaOneBin {
            bins_per_axis,
            suggestion,
            ..
        } = e
        else {
            panic!("{e}")
        };
        assert_eq!(bins_per_axis, 1);
        // A quarter of the widest extent (0.8 along the first axis).
        assert!((suggestion - 0.2).abs() < 1e-12);
        assert!(gamma(&pts, suggestion, false).is_ok());
        let msg = gamma(&pts, 2.0, true).unwrap_err().to_string();
        assert!(msg.contains("--gamma 2 (the default"), "{msg}");
        assert!(
            msg.contains("every one of the 3 points falls into one"),
            "{msg}"
        );
        // Two bins per axis, but the points share one.
        let close = DMatrix::from_column_slice(1, 2, &[0.1, 0.2]);
        assert!(gamma(&close, 0.6, false).is_err());
        // Identical points, one point, data outside the box: not ours.
        let same = DMatrix::from_column_slice(1, 2, &[0.1, 0.1]);
        assert!(gamma(&same, 2.0, false).is_ok());
        assert!(gamma(&DMatrix::from_column_slice(1, 1, &[0.1]), 2.0, false).is_ok());
        let wide = DMatrix::from_column_slice(1, 2, &[3.0, 4.0]);
        assert!(gamma(&wide, 0.01, false).is_ok());
    }

    #[test]
    fn dropouts_must_leave_the_threshold() {
        // 4 clients, no colluder: t = 3, so one dropout at most.
        assert!(dropout(0.25, 4, false).is_ok());
        let e = dropout(0.9, 4, false).unwrap_err();
        assert!(matches!(
            e,
            CliError::DropoutTooHigh {
                clients: 4,
                dropouts: 4,
                survivors: 0,
                threshold: 3,
                max_dropouts: 1,
                ..
            }
        ));
        let msg = e.to_string();
        assert!(
            msg.contains("--dropout 0.9 with 4 clients plans for 4 dropouts"),
            "{msg}"
        );
        assert!(msg.contains("pass --dropout 0.25 or less"), "{msg}");
        assert!(dropout(0.3, 4, false).is_err());
        // Harary: only a rate that leaves nobody.
        assert!(dropout(0.3, 4, true).is_ok());
        assert!(dropout(0.9, 4, true).is_err());
        // 100 clients, 5 colluders: t = 53, 47 may drop.
        assert!(dropout(0.4, 100, false).is_ok());
        assert!(dropout(0.5, 100, false).is_err());
        assert!(dropout(0.0, 4, false).is_ok());
        // 3 clients: t = 2, one may drop; the suggestion is rounded down.
        let msg = dropout(0.5, 3, false).unwrap_err().to_string();
        assert!(msg.contains("pass --dropout 0.3333 or less"), "{msg}");
        assert!(dropout(0.3333, 3, false).is_ok());
        assert!(dropout(0.9, 1, false).is_ok());
    }
}
