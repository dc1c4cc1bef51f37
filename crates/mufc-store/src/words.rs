//! Times and durations for people, in the store's messages and reports.

/// Seconds since the Unix epoch as a UTC date and time,
/// `YYYY-MM-DD HH:MM:SS`.
///
/// # Example
///
/// ```
/// assert_eq!(mufc_store::utc(0), "1970-01-01 00:00:00");
/// assert_eq!(mufc_store::utc(951_782_400), "2000-02-29 00:00:00");
/// ```
// Bounded arithmetic: `days` is at most 2^64 / 86400 < 2^48, so every
// step of the conversion stays far inside i64.
#[allow(clippy::arithmetic_side_effects)]
pub fn utc(secs: u64) -> String {
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days: every step is far inside i64 for
    // any u64 number of seconds.
    let z = days.saturating_add(719_468);
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe.saturating_add(era.saturating_mul(400)) + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A number of seconds for people: `7 days`, `36 hours`, `90 s`.
///
/// # Example
///
/// ```
/// assert_eq!(mufc_store::duration_words(7 * 86_400), "7 days");
/// assert_eq!(mufc_store::duration_words(3_600), "1 hour");
/// assert_eq!(mufc_store::duration_words(90), "90 s");
/// ```
pub fn duration_words(secs: u64) -> String {
    let unit = |n: u64, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    if secs >= 86_400 && secs.is_multiple_of(86_400) {
        unit(secs / 86_400, "day")
    } else if secs >= 3_600 && secs.is_multiple_of(3_600) {
        unit(secs / 3_600, "hour")
    } else if secs >= 60 && secs.is_multiple_of(60) {
        unit(secs / 60, "minute")
    } else {
        format!("{secs} s")
    }
}
