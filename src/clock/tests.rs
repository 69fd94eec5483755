use std::time::{Duration, UNIX_EPOCH};

use super::*;

#[test]
fn utc_dates_are_civil() {
    assert_eq!(utc_minute(UNIX_EPOCH), "1970-01-01 00:00 UTC");
    assert_eq!(utc_day(UNIX_EPOCH), "1970-01-01");
    // 2024-02-29 12:34 UTC (a leap day).
    let t = UNIX_EPOCH + Duration::from_secs(1_709_210_040);
    assert_eq!(utc_minute(t), "2024-02-29 12:34 UTC");
    assert_eq!(utc_day(t), "2024-02-29");
    // 2100 is not a leap year: the day after 2100-02-28 is 2100-03-01.
    let t = UNIX_EPOCH + Duration::from_secs(4_107_542_400);
    assert_eq!(utc_day(t), "2100-03-01");
    assert_eq!(utc_day(t - Duration::from_secs(86_400)), "2100-02-28");
    assert_eq!(utc_day(UNIX_EPOCH - Duration::from_secs(5)), "1970-01-01");
}
