//! How an event's times are written: in UTC, or as wall-clock times of an
//! IANA zone (`TZID`) with the `VTIMEZONE` they refer to, which the writer
//! makes the same way every time (no generated TZID, no stamp), so one
//! version of a member always reads the same bytes and ETag (SPEC §17, §23,
//! §24: "iCalendar written by yeyak uses the area's `TZID` with its
//! `VTIMEZONE`").
//!
//! chrono-tz does not expose its rule table, so a zone's observances are
//! found by scanning its offsets: day by day over UTC from 1 January of the
//! year before the first instant written to the end of the last one's year,
//! then bisecting each change to the second. A zone that keeps one offset
//! over that span (Asia/Seoul) gets the one `STANDARD` observance it always
//! had; one with daylight saving time gets a `STANDARD` or `DAYLIGHT`
//! observance per transition. Spans longer than [`MAX_YEARS`] are written
//! in UTC, so a far-future date cannot make a huge `VTIMEZONE`.

use std::fmt::Write;

use chrono::{DateTime, Datelike, Duration, NaiveDateTime, Offset, TimeZone, Utc};
use chrono_tz::{OffsetComponents, OffsetName, Tz};

use super::line::Lines;

/// The most years (last instant's year minus first instant's) a zoned clock
/// covers; longer spans are written in UTC.
pub const MAX_YEARS: i32 = 30;

/// The clock an object's times are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    Utc,
    /// Local times with `TZID`, made by [`Clock::zoned`].
    Zoned(Zone),
}

/// A zone and the UTC span its `VTIMEZONE` describes: from 1 January of
/// the year before the first instant written to 1 January after the last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    tz: Tz,
    /// The first instant written.
    first: DateTime<Utc>,
    /// Where the scan for transitions starts and ends.
    scan_from: DateTime<Utc>,
    scan_to: DateTime<Utc>,
}

/// One change of a zone's offset: its instant and the offsets around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Transition {
    at: DateTime<Utc>,
    before: i32,
    after: i32,
}

impl Clock {
    /// Wall-clock times of `tz` for an object whose times lie between
    /// `from` and `to` (its first and last instant written, in either
    /// order); UTC when they are more than [`MAX_YEARS`] years apart or at
    /// the edge of what chrono represents.
    pub fn zoned(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Clock {
        let (first, last) = if from <= to { (from, to) } else { (to, from) };
        if last.year() - first.year() > MAX_YEARS {
            return Clock::Utc;
        }
        let jan1 = |year: i32| Utc.with_ymd_and_hms(year, 1, 1, 0, 0, 0).single();
        match (jan1(first.year() - 1), jan1(last.year() + 1)) {
            (Some(scan_from), Some(scan_to)) => Clock::Zoned(Zone { tz, first, scan_from, scan_to }),
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
            Clock::Zoned(zone) => {
                let _ = write!(buf, "{}", t.with_timezone(&zone.tz).format("%Y%m%dT%H%M%S"));
                lines.with_params(name, &[("TZID", zone.tz.name())], buf);
            }
        }
    }

    /// The `VTIMEZONE` a zoned clock's times refer to; nothing for UTC.
    pub(super) fn vtimezone(self, lines: &mut Lines) {
        let Clock::Zoned(zone) = self else { return };
        let tz = zone.tz;
        let transitions = transitions(tz, zone.scan_from, zone.scan_to);
        lines.raw("BEGIN", "VTIMEZONE");
        lines.raw("TZID", tz.name());
        match transitions.first() {
            None => {
                // One offset all along: the observance yeyak always wrote.
                let offset = offset_at(tz, zone.scan_from);
                observance(lines, "STANDARD", "19700101T000000", offset, offset, None);
            }
            Some(t) if t.at > zone.first => {
                // The first instant comes before any change found: it
                // needs the observance in force at the start of the scan.
                let at = tz.offset_from_utc_datetime(&zone.scan_from.naive_utc());
                let kind = if at.dst_offset() > Duration::zero() { "DAYLIGHT" } else { "STANDARD" };
                observance(lines, kind, "19700101T000000", t.before, t.before, at.abbreviation());
            }
            Some(_) => {}
        }
        let mut onset = String::with_capacity(15);
        for t in &transitions {
            let after = tz.offset_from_utc_datetime(&t.at.naive_utc());
            let kind = if after.dst_offset() > Duration::zero() { "DAYLIGHT" } else { "STANDARD" };
            onset.clear();
            let _ = write!(onset, "{}", local(t.at, t.before).format("%Y%m%dT%H%M%S"));
            observance(lines, kind, &onset, t.before, t.after, after.abbreviation());
        }
        lines.raw("END", "VTIMEZONE");
    }
}

/// One `STANDARD` or `DAYLIGHT` component.
fn observance(lines: &mut Lines, kind: &str, dtstart: &str, from: i32, to: i32, name: Option<&str>) {
    lines.raw("BEGIN", kind);
    lines.raw("DTSTART", dtstart);
    lines.raw("TZOFFSETFROM", &utc_offset(from));
    lines.raw("TZOFFSETTO", &utc_offset(to));
    if let Some(name) = name.filter(|n| !n.is_empty()) {
        lines.text("TZNAME", name);
    }
    lines.raw("END", kind);
}

/// `±hhmm`, or `±hhmmss` when the offset has seconds (RFC 5545 §3.3.14).
fn utc_offset(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let abs = seconds.unsigned_abs();
    let mut text = format!("{sign}{:02}{:02}", abs / 3600, (abs % 3600) / 60);
    if !abs.is_multiple_of(60) {
        let _ = write!(text, "{:02}", abs % 60);
    }
    text
}

/// The zone's offset at an instant, in seconds east.
fn offset_at(tz: Tz, t: DateTime<Utc>) -> i32 {
    tz.offset_from_utc_datetime(&t.naive_utc()).fix().local_minus_utc()
}

/// An instant's wall-clock time at a given offset.
fn local(t: DateTime<Utc>, offset: i32) -> NaiveDateTime {
    t.naive_utc() + Duration::seconds(i64::from(offset))
}

/// Every change of `tz`'s offset in `[from, to)`, in order: sampled once a
/// day, each change bisected to the second. (Two changes less than a day
/// apart that cancel each other out would not be seen.)
fn transitions(tz: Tz, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Transition> {
    let mut found = Vec::new();
    let mut at = from;
    let mut offset = offset_at(tz, at);
    while at < to {
        let next = (at + Duration::days(1)).min(to);
        if offset_at(tz, next) == offset {
            at = next;
            continue;
        }
        // The offset is `offset` at `lo` and another at `hi`: narrow to
        // the first second of the other.
        let (mut lo, mut hi) = (at.timestamp(), next.timestamp());
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            match DateTime::from_timestamp(mid, 0) {
                Some(t) if offset_at(tz, t) == offset => lo = mid,
                _ => hi = mid,
            }
        }
        let hi = DateTime::from_timestamp(hi, 0).unwrap_or(next);
        let after = offset_at(tz, hi);
        found.push(Transition { at: hi, before: offset, after });
        at = hi;
        offset = after;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn vtimezone(clock: Clock) -> String {
        let mut lines = Lines::default();
        clock.vtimezone(&mut lines);
        lines.finish()
    }

    /// The observances of a `VTIMEZONE` as (kind, DTSTART, FROM, TO, NAME).
    fn observances(text: &str) -> Vec<[String; 5]> {
        let mut found = Vec::new();
        let mut current: Option<[String; 5]> = None;
        for line in text.split("\r\n") {
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            match (name, current.as_mut()) {
                ("BEGIN", None) if value == "STANDARD" || value == "DAYLIGHT" => {
                    current = Some([value.into(), String::new(), String::new(), String::new(), String::new()]);
                }
                ("DTSTART", Some(o)) => o[1] = value.into(),
                ("TZOFFSETFROM", Some(o)) => o[2] = value.into(),
                ("TZOFFSETTO", Some(o)) => o[3] = value.into(),
                ("TZNAME", Some(o)) => o[4] = value.into(),
                ("END", Some(_)) => found.extend(current.take()),
                _ => {}
            }
        }
        found
    }

    fn has(found: &[[String; 5]], o: [&str; 5]) -> bool {
        found.iter().any(|f| f.iter().zip(o).all(|(a, b)| a == b))
    }

    #[test]
    fn a_zone_with_one_offset_keeps_its_one_standard_observance() {
        let seoul = Clock::zoned(chrono_tz::Asia::Seoul, t("2030-01-07T01:00:00Z"), t("2030-12-30T01:00:00Z"));
        // The bytes yeyak wrote before zones with daylight saving time were
        // written out: ETags of existing members stay as they were.
        assert_eq!(
            vtimezone(seoul),
            "BEGIN:VTIMEZONE\r\nTZID:Asia/Seoul\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\n\
             TZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
        );
        let mut lines = Lines::default();
        seoul.write(&mut lines, &mut String::new(), "DTSTART", t("2030-01-07T01:00:00Z"));
        assert_eq!(lines.finish(), "DTSTART;TZID=Asia/Seoul:20300107T100000\r\n");
    }

    #[test]
    fn new_york_2027_has_its_daylight_and_standard_onsets() {
        let clock = Clock::zoned(chrono_tz::America::New_York, t("2027-01-04T15:00:00Z"), t("2027-12-27T16:00:00Z"));
        let found = observances(&vtimezone(clock));
        assert!(has(&found, ["DAYLIGHT", "20270314T020000", "-0500", "-0400", "EDT"]), "{found:?}");
        assert!(has(&found, ["STANDARD", "20271107T020000", "-0400", "-0500", "EST"]), "{found:?}");
        // The year before covers the first instant (January 2027 is in the
        // observance that began in November 2026); nothing else is written.
        assert!(has(&found, ["STANDARD", "20261101T020000", "-0400", "-0500", "EST"]), "{found:?}");
        assert_eq!(found.len(), 4, "{found:?}");
        // Wall-clock times are New York's, in winter and in summer.
        let mut lines = Lines::default();
        let mut buf = String::new();
        clock.write(&mut lines, &mut buf, "DTSTART", t("2027-01-04T15:00:00Z"));
        clock.write(&mut lines, &mut buf, "DTSTART", t("2027-07-05T14:00:00Z"));
        assert_eq!(
            lines.finish(),
            "DTSTART;TZID=America/New_York:20270104T100000\r\nDTSTART;TZID=America/New_York:20270705T100000\r\n"
        );
    }

    #[test]
    fn berlin_2027_has_its_summer_and_winter_onsets() {
        let clock = Clock::zoned(chrono_tz::Europe::Berlin, t("2027-02-01T09:00:00Z"), t("2027-11-29T09:00:00Z"));
        let found = observances(&vtimezone(clock));
        assert!(has(&found, ["DAYLIGHT", "20270328T020000", "+0100", "+0200", "CEST"]), "{found:?}");
        assert!(has(&found, ["STANDARD", "20271031T030000", "+0200", "+0100", "CET"]), "{found:?}");
        assert_eq!(found.len(), 4, "2026 and 2027: {found:?}");
    }

    #[test]
    fn a_span_over_several_years_has_every_transition_of_them() {
        let clock = Clock::zoned(chrono_tz::America::New_York, t("2027-06-01T14:00:00Z"), t("2030-06-01T14:00:00Z"));
        let found = observances(&vtimezone(clock));
        assert_eq!(found.len(), 2 * 5, "2026 to 2030: {found:?}");
        // A zone that stopped changing inside the span (Asia/Seoul in 1988,
        // its last summer time) is covered from before its last change.
        let seoul = Clock::zoned(chrono_tz::Asia::Seoul, t("1988-01-10T01:00:00Z"), t("1989-01-10T01:00:00Z"));
        let found = observances(&vtimezone(seoul));
        assert!(has(&found, ["DAYLIGHT", "19880508T020000", "+0900", "+1000", "KDT"]), "{found:?}");
        assert!(has(&found, ["STANDARD", "19881009T030000", "+1000", "+0900", "KST"]), "{found:?}");
        // A zone whose one change in the span comes after the first instant
        // (Pyongyang's +0830 from 15 August 2015) also says what held before it.
        let pyongyang = Clock::zoned(chrono_tz::Asia::Pyongyang, t("2015-01-10T01:00:00Z"), t("2015-12-10T01:00:00Z"));
        let found = observances(&vtimezone(pyongyang));
        assert!(has(&found, ["STANDARD", "19700101T000000", "+0900", "+0900", "KST"]), "{found:?}");
        assert!(has(&found, ["STANDARD", "20150815T000000", "+0900", "+0830", "KST"]), "{found:?}");
        assert_eq!(found.len(), 2, "{found:?}");
    }

    #[test]
    fn a_span_of_more_than_thirty_years_is_written_in_utc() {
        let ny = chrono_tz::America::New_York;
        assert_ne!(Clock::zoned(ny, t("2027-01-01T00:00:00Z"), t("2057-12-31T00:00:00Z")), Clock::Utc);
        assert_eq!(Clock::zoned(ny, t("2027-01-01T00:00:00Z"), t("2058-01-01T00:00:00Z")), Clock::Utc);
        let far = DateTime::<Utc>::MAX_UTC;
        assert_eq!(Clock::zoned(ny, far, far), Clock::Utc, "no year after the last chrono knows");
        assert_eq!(vtimezone(Clock::Utc), "");
    }

    #[test]
    fn the_vtimezone_parses_and_reads_the_same_every_time() {
        for tz in [chrono_tz::America::New_York, chrono_tz::Europe::Berlin, chrono_tz::Asia::Seoul] {
            let clock = Clock::zoned(tz, t("2027-01-04T15:00:00Z"), t("2029-12-27T16:00:00Z"));
            let object = |clock: Clock| {
                let mut lines = Lines::default();
                lines.raw("BEGIN", "VCALENDAR");
                lines.raw("VERSION", "2.0");
                lines.raw("PRODID", "-//yeyak//rooms//KO");
                clock.vtimezone(&mut lines);
                lines.raw("END", "VCALENDAR");
                lines.finish()
            };
            let text = object(clock);
            assert_eq!(text, object(Clock::zoned(tz, t("2027-01-04T15:00:00Z"), t("2029-12-27T16:00:00Z"))));
            assert!(!text.contains("DTSTAMP"), "{text}");
            let unfolded = icalendar::parser::unfold(&text);
            let parsed = icalendar::parser::read_calendar(&unfolded).expect(&text);
            let zone = parsed.components.iter().find(|c| c.name == "VTIMEZONE").expect(&text);
            assert!(zone.properties.iter().any(|p| p.name == "TZID" && p.val.as_str() == tz.name()), "{text}");
            assert!(!zone.components.is_empty(), "{text}");
            for o in &zone.components {
                for name in ["DTSTART", "TZOFFSETFROM", "TZOFFSETTO"] {
                    assert!(o.properties.iter().any(|p| p.name == name), "{name} in {text}");
                }
            }
        }
    }
}
