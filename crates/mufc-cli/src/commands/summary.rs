//! The summaries every subcommand reports: lines naming the federated
//! options and the included clients, the JSON fields about the data, and
//! the merging of JSON objects.

use serde_json::{Value, json};

use super::prepare::Prepared;
use crate::cli::FedArgs;
use crate::output::count;

/// One line naming the clients a round included and dropped, for people:
/// "92 of 100; 9 dropped (1 during unmasking, still included)".
pub(crate) fn included_summary(
    included: &[mufc::ClientId],
    dropped: &[(mufc::ClientId, mufc::SecAggStep)],
) -> String {
    // A client that dropped during unmasking is in both lists (docs/threat-model.md D3).
    let late = dropped.iter().filter(|(c, _)| included.contains(c)).count();
    let total = included.len() + dropped.len() - late;
    match (dropped.len(), late) {
        (0, _) => format!("{} of {total}", included.len()),
        (d, 0) => format!("{} of {total}; {d} dropped", included.len()),
        (d, l) => format!(
            "{} of {total}; {d} dropped ({l} during unmasking, still included)",
            included.len()
        ),
    }
}

/// One line naming the federated options, for people.
pub(crate) fn fed_summary(fed: &FedArgs, p: &Prepared) -> String {
    let masking = match fed.masking {
        mufc::Masking::SecAgg => format!(
            "secagg ({} graph, dropout {})",
            fed.secagg_graph, fed.dropout
        ),
        m => m.to_string(),
    };
    let topology = match fed.topology(p.split.num_clients()) {
        Ok(mufc::Topology::Flat) | Err(_) => String::new(),
        Ok(mufc::Topology::Groups { size }) => {
            format!("groups of at least {}, ", count(size as u64, "client"))
        }
        Ok(mufc::Topology::Tree {
            group_size,
            fan_out,
        }) => format!(
            "a tree of fan-out {fan_out} over groups of at least {}, ",
            count(group_size as u64, "client")
        ),
    };
    // The options were checked when the data was prepared.
    let Ok(st) = fed.settings() else {
        return String::new();
    };
    let min_size = st.client().min_cluster_size();
    format!(
        "{topology}preset {}, privacy {}, masking {masking}, at least {} per aggregate and {} per removal round, server points {}, clients run {}{}, server K-means best of {}, gamma = {:.5}",
        match fed.preset {
            crate::cli::Preset::Default => "default",
            crate::cli::Preset::Paper => "paper",
        },
        fed.privacy,
        count(fed.min_clients as u64, "client"),
        fed.min_updating_clients,
        st.server().points(),
        match st.client_training() {
            mufc::ClientTraining::Seeding => "K-means++ seeding".to_string(),
            mufc::ClientTraining::Full if st.client().restarts() > 1 => {
                format!("full K-means (best of {})", st.client().restarts())
            }
            mufc::ClientTraining::Full => "full K-means".to_string(),
            other => other.name().to_string(),
        },
        if min_size > 1 {
            format!(" (clusters of fewer than {min_size} points dissolved)")
        } else {
            String::new()
        },
        st.server().kmeans().restarts(),
        p.gamma,
    )
}

/// The JSON fields of MUFC's settings (the preset's, or the options
/// given), for the commands that train.
///
/// # Errors
///
/// An option out of range (checked earlier by `prepare`).
pub(super) fn settings_json(fed: &FedArgs, p: &Prepared) -> Result<Value, crate::CliError> {
    let st = fed.settings()?;
    Ok(json!({
        "preset": match fed.preset {
            crate::cli::Preset::Default => "default",
            crate::cli::Preset::Paper => "paper",
        },
        "server_points": st.server().points().name(),
        "client_training": st.client_training().name(),
        "server_restarts": st.server().kmeans().restarts(),
        "client_restarts": st.client().restarts(),
        "min_cluster_size": st.client().min_cluster_size(),
        "client_k": p.mufc_k,
    }))
}

/// The JSON fields every command reports about its data.
pub(super) fn data_json(p: &Prepared, seed: u64) -> Value {
    json!({
        "source": p.source,
        "n": p.n(),
        "d": p.d(),
        "k": p.k,
        "local_k": p.local_k,
        "clients": p.split.num_clients(),
        "split": p.split_desc,
        "seed": seed,
        "gamma": p.gamma,
    })
}

/// Merges the fields of `extra` into the object `base`.
pub(super) fn merged(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

/// The median of `v` (NaN when empty).
pub(super) fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
