//! What the store commands print alike: centroids, times, ids.

use mufc_store::Centroid;
use serde_json::{Value, json};

use crate::output::TextTable;

/// The centroids as a table: index, weight, coordinates.
pub(super) fn centroid_table(centroids: &[Centroid]) -> String {
    let mut t = TextTable::new(&["centroid", "weight", "coordinates"]);
    for (j, c) in centroids.iter().enumerate() {
        let coords: Vec<String> = c.coords.iter().map(|x| format!("{x:.4}")).collect();
        t.row([j.to_string(), c.weight.to_string(), coords.join(", ")]);
    }
    t.render()
}

/// The centroids as JSON: index, weight, coordinates.
pub(super) fn centroids_json(centroids: &[Centroid]) -> Value {
    centroids
        .iter()
        .enumerate()
        .map(|(j, c)| json!({ "index": j, "weight": c.weight, "coords": c.coords }))
        .collect()
}

/// Names or numbers for people: "3, 7" or "none".
pub(super) fn list<T: ToString>(v: &[T]) -> String {
    if v.is_empty() {
        "none".to_string()
    } else {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    }
}
