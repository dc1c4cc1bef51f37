//! What the store commands print alike: centroids, times, ids.

use mufc::ClientId;
use mufc::store::Centroid;
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

/// Client ids as numbers, for JSON.
pub(super) fn ids(clients: &[ClientId]) -> Vec<u64> {
    clients.iter().map(|c| c.0).collect()
}

/// Client ids for people: "3, 7" or "none".
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

/// Seconds since the Unix epoch as a UTC date and time,
/// `YYYY-MM-DD HH:MM:SS`.
pub(super) fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00");
        assert_eq!(utc(1_790_000_000), "2026-09-21 14:13:20");
    }
}
