//! UTC calendar dates of system times (civil-from-days, proleptic Gregorian): provenance dates
//! and report timestamps, with no date crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// `(year, month, day, hour, minute)` of `t` in UTC; a time before the epoch reads as the epoch.
fn utc_parts(t: SystemTime) -> (i64, i64, i64, u64, u64) {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = (secs / 86_400) as i64;
    let (h, m) = ((secs % 86_400) / 3600, (secs % 3600) / 60);
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    (y, mo, d, h, m)
}

/// `YYYY-MM-DD` of `t` in UTC.
pub(crate) fn utc_day(t: SystemTime) -> String {
    let (y, mo, d, _, _) = utc_parts(t);
    format!("{y:04}-{mo:02}-{d:02}")
}

/// `YYYY-MM-DD HH:MM UTC` of `t`.
pub fn utc_minute(t: SystemTime) -> String {
    let (y, mo, d, h, m) = utc_parts(t);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{m:02} UTC")
}

/// `YYYY-MM-DDTHH:MM:SS` of `t` in UTC (ISO 8601, as JUnit's `timestamp` takes it).
pub fn utc_iso(t: SystemTime) -> String {
    let (y, mo, d, h, m) = utc_parts(t);
    let s = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) % 60;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}")
}

#[cfg(test)]
mod tests;
