//! Dates from Unix time, without a time zone database: the proleptic
//! Gregorian calendar's era arithmetic (400-year eras of 146,097 days,
//! years counted from March so that the leap day comes last). For the
//! dates the engine writes (a data file's provenance) and the ones its
//! hosts write (a PGN's `Date`), one copy for the workspace.

/// The Gregorian date `(year, month, day)` `days` days after 1970-01-01
/// (negative before it).
pub fn civil_date(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `seconds` after the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
pub fn utc_date_time(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_date(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), (1970, 1, 1));
        assert_eq!(civil_date(-1), (1969, 12, 31));
        assert_eq!(civil_date(11_016), (2000, 2, 29));
        assert_eq!(civil_date(20_786), (2026, 11, 29));
        assert_eq!(utc_date_time(1_795_943_045), "2026-11-29 09:04:05 UTC");
    }
}
