//! A calendar date as a person or a client writes it (`YYYY-MM-DD`): the
//! one reading of it for every door (SPEC §22). Years 1–9999 only, so a
//! week, a month or a series around any date stays within what chrono,
//! PostgreSQL and spreadsheets hold (a date in year 262143 is one chrono
//! can hold, and the days after it are not).

use chrono::{Datelike, NaiveDate};

use crate::error::ApiError;

/// The date `raw` names (surrounding spaces ignored), or `None`.
pub fn parse(raw: &str) -> Option<NaiveDate> {
    let raw = raw.trim();
    NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok().filter(|d| raw.len() == 10 && (1..=9999).contains(&d.year()))
}

/// [`parse`], refused as 400 naming `field`.
pub fn parse_field(field: &str, raw: &str) -> Result<NaiveDate, ApiError> {
    parse(raw).ok_or_else(|| ApiError::malformed(field, "must be a date YYYY-MM-DD between the years 1 and 9999"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_of_years_1_to_9999_and_nothing_else() {
        assert_eq!(parse(" 2030-01-07 "), NaiveDate::from_ymd_opt(2030, 1, 7));
        assert_eq!(parse("9999-12-31"), NaiveDate::from_ymd_opt(9999, 12, 31));
        assert_eq!(parse("0001-01-01"), NaiveDate::from_ymd_opt(1, 1, 1));
        for bad in ["262143-12-31", "+262143-12-31", "-0001-01-01", "0000-12-31", "2030-02-30", "2030-1-7", "", "x"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        // The last day's week still has its Sunday.
        let last = parse("9999-12-31").unwrap();
        assert!(last.checked_add_days(chrono::Days::new(6)).is_some());
    }
}
