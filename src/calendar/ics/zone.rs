//! How an event's times are written: in UTC, or as wall-clock times of a
//! zone that keeps one offset all year, with a `VTIMEZONE` the writer makes
//! the same way every time (no generated TZID, no stamp), so one version of
//! a member always reads the same bytes and ETag (SPEC §17, §23).

use std::fmt::Write;

use chrono::{DateTime, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::line::Lines;

/// The clock an object's times are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    Utc,
    /// Local times with `TZID`; the zone's one offset, in seconds east.
    Zoned(Tz, i32),
}

impl Clock {
    /// `tz` when it keeps one offset all of `year` (Asia/Seoul), else UTC:
    /// a zone with daylight saving time would need its rules written out,
    /// and a series written in UTC repeats at the first occurrence's offset.
    pub fn fixed(tz: Tz, year: i32) -> Clock {
        let at = |month| {
            let t = Utc.with_ymd_and_hms(year, month, 1, 0, 0, 0).single()?;
            Some(tz.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc())
        };
        match (at(1), at(7)) {
            (Some(january), Some(july)) if january == july => Clock::Zoned(tz, january),
            _ => Clock::Utc,
        }
    }

    /// `NAME:…Z` or `NAME;TZID=…:…` (local).
    pub(super) fn write(self, lines: &mut Lines, buf: &mut String, name: &str, t: DateTime<Utc>) {
        buf.clear();
        match self {
            Clock::Utc => {
                let _ = write!(buf, "{}", t.format("%Y%m%dT%H%M%SZ"));
                lines.raw(name, buf);
            }
            Clock::Zoned(tz, _) => {
                let _ = write!(buf, "{}", t.with_timezone(&tz).format("%Y%m%dT%H%M%S"));
                lines.with_params(name, &[("TZID", tz.name())], buf);
            }
        }
    }

    /// The `VTIMEZONE` a zoned clock's times refer to; nothing for UTC.
    pub(super) fn vtimezone(self, lines: &mut Lines) {
        let Clock::Zoned(tz, seconds) = self else { return };
        let sign = if seconds < 0 { '-' } else { '+' };
        let abs = seconds.unsigned_abs();
        let offset = format!("{sign}{:02}{:02}", abs / 3600, (abs % 3600) / 60);
        lines.raw("BEGIN", "VTIMEZONE");
        lines.raw("TZID", tz.name());
        lines.raw("BEGIN", "STANDARD");
        lines.raw("DTSTART", "19700101T000000");
        lines.raw("TZOFFSETFROM", &offset);
        lines.raw("TZOFFSETTO", &offset);
        lines.raw("END", "STANDARD");
        lines.raw("END", "VTIMEZONE");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zone_with_one_offset_is_kept_and_one_with_summer_time_is_not() {
        assert_eq!(Clock::fixed(chrono_tz::Asia::Seoul, 2030), Clock::Zoned(chrono_tz::Asia::Seoul, 9 * 3600));
        assert_eq!(Clock::fixed(chrono_tz::Europe::Berlin, 2030), Clock::Utc);
        let mut lines = Lines::default();
        Clock::fixed(chrono_tz::Asia::Seoul, 2030).vtimezone(&mut lines);
        let text = lines.finish();
        assert!(text.contains("TZID:Asia/Seoul\r\n") && text.contains("TZOFFSETTO:+0900\r\n"), "{text}");
        let mut lines = Lines::default();
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        Clock::Zoned(chrono_tz::Asia::Seoul, 9 * 3600).write(&mut lines, &mut String::new(), "DTSTART", t);
        assert_eq!(lines.finish(), "DTSTART;TZID=Asia/Seoul:20300107T100000\r\n");
    }
}
