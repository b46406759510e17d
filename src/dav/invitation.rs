//! What a calendar app's `PUT` asks for (SPEC §17), read from the iCalendar
//! text by the `icalendar` crate's parser: one event (a master `VEVENT`,
//! with its `RECURRENCE-ID` overrides when it repeats), its rooms (the
//! attendees whose address is a room's), its times as instants. Strict:
//! anything this cannot read is refused before anything runs. No I/O.
//!
//! Times: `…Z` is UTC; a `TZID` names an IANA zone, or a `VTIMEZONE` of the
//! request (its `X-LIC-LOCATION`, or its one fixed offset); floating times
//! and dates are in the configured zone (`YEYAK_TIMEZONE`).

use chrono::{DateTime, Duration, FixedOffset, NaiveDate, NaiveDateTime, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use icalendar::parser::{Component, Property};

use crate::calendar::address;
use crate::calendar::ics::read;

/// Why a body is refused before anything runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Not iCalendar, or not one event (400 `CALDAV:valid-calendar-data`).
    Invalid(String),
    /// A `VJOURNAL` (403 `CALDAV:supported-calendar-component`).
    Unsupported(String),
}

pub(super) fn invalid(reason: impl Into<String>) -> Refusal {
    Refusal::Invalid(reason.into())
}

/// One occurrence changed from the rule (`RECURRENCE-ID`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Override {
    /// Where the rule put it.
    pub recurrence_id: DateTime<Utc>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// `STATUS:CANCELLED`: this occurrence is off.
    pub cancelled: bool,
}

/// The event a `PUT` carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    pub uid: String,
    /// `SUMMARY`, unescaped (may be empty: the caller names it).
    pub summary: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Room codes as the attendee addresses write them (matched to the
    /// catalogue case-insensitively by the caller).
    pub rooms: Vec<String>,
    /// The `RRULE` value.
    pub rrule: Option<String>,
    pub exdates: Vec<DateTime<Utc>>,
    pub overrides: Vec<Override>,
    /// `STATUS:CANCELLED` on the event: it asks for no room any more.
    pub cancelled: bool,
    /// `CLASS:PRIVATE` or `CLASS:CONFIDENTIAL` (SPEC §26).
    pub private: bool,
}

/// A time zone a request may name.
#[derive(Debug, Clone, Copy)]
enum Zone {
    Named(Tz),
    Fixed(FixedOffset),
}

impl Zone {
    fn instant(self, local: NaiveDateTime) -> Option<DateTime<Utc>> {
        match self {
            Zone::Named(tz) => tz.from_local_datetime(&local).earliest().map(|t| t.with_timezone(&Utc)),
            Zone::Fixed(off) => off.from_local_datetime(&local).single().map(|t| t.with_timezone(&Utc)),
        }
    }
}

pub(super) fn is(name: &str, want: &str) -> bool {
    name.eq_ignore_ascii_case(want)
}

pub(super) fn param<'a>(p: &'a Property<'_>, key: &str) -> Option<&'a str> {
    p.params.iter().find(|x| is(x.key.as_str(), key)).and_then(|x| x.val.as_ref()).map(|v| v.as_str().trim_matches('"'))
}

pub(super) fn props<'a, 'b>(c: &'a Component<'b>, name: &'a str) -> impl Iterator<Item = &'a Property<'b>> + 'a {
    c.properties.iter().filter(move |p| is(p.name.as_str(), name))
}

pub(super) fn prop<'a, 'b>(c: &'a Component<'b>, name: &'a str) -> Option<&'a Property<'b>> {
    props(c, name).next()
}

/// The zones a request's `VTIMEZONE`s define, by `TZID`.
pub(super) struct Zones {
    home: Tz,
    defined: Vec<(String, Zone)>,
}

impl Zones {
    pub(super) fn read(calendar: &Component<'_>, home: Tz) -> Result<Zones, Refusal> {
        let mut defined = Vec::new();
        for tz in calendar.components.iter().filter(|c| is(c.name.as_str(), "VTIMEZONE")) {
            let Some(id) = prop(tz, "TZID").map(|p| p.val.as_str().to_owned()) else {
                return Err(invalid("a VTIMEZONE without TZID"));
            };
            let named = prop(tz, "X-LIC-LOCATION").and_then(|p| p.val.as_str().parse::<Tz>().ok());
            let zone = match named.or_else(|| id.parse::<Tz>().ok()) {
                Some(tz) => Some(Zone::Named(tz)),
                None => fixed_offset(tz),
            };
            if let Some(zone) = zone {
                defined.push((id, zone));
            }
        }
        Ok(Zones { home, defined })
    }

    fn zone(&self, tzid: Option<&str>) -> Result<Zone, Refusal> {
        let Some(id) = tzid else { return Ok(Zone::Named(self.home)) };
        if let Some((_, zone)) = self.defined.iter().find(|(d, _)| d == id) {
            return Ok(*zone);
        }
        id.parse::<Tz>().map(Zone::Named).map_err(|_| invalid(format!("unknown TZID `{id}` and no VTIMEZONE for it")))
    }

    /// An instant from a DATE-TIME (or DATE: local midnight) property.
    pub(super) fn instant(&self, p: &Property<'_>) -> Result<DateTime<Utc>, Refusal> {
        self.value(p.name.as_str(), p.val.as_str(), param(p, "TZID"), is_date(p))
    }

    /// An instant from one DATE-TIME or DATE value (of a list such as
    /// `EXDATE`'s) with the property's `TZID`.
    pub(super) fn value(
        &self,
        name: &str,
        value: &str,
        tzid: Option<&str>,
        date: bool,
    ) -> Result<DateTime<Utc>, Refusal> {
        let value = value.trim();
        let bad = || invalid(format!("{name} `{value}` is not a date or date-time"));
        if let Some(utc) = value.strip_suffix('Z').or_else(|| value.strip_suffix('z')) {
            let t = NaiveDateTime::parse_from_str(utc, "%Y%m%dT%H%M%S").map_err(|_| bad())?;
            return Ok(t.and_utc());
        }
        let local = if value.len() == 8 || date {
            NaiveDate::parse_from_str(value, "%Y%m%d").map_err(|_| bad())?.and_time(NaiveTime::MIN)
        } else {
            NaiveDateTime::parse_from_str(value, "%Y%m%dT%H%M%S").map_err(|_| bad())?
        };
        self.zone(tzid)?.instant(local).ok_or_else(bad)
    }

    /// The wall clock a recurrence in `tzid` is expanded in: an IANA zone, a whole-hour
    /// fixed offset as `Etc/GMT∓h` (POSIX signs: Etc/GMT-9 is UTC+9), else UTC.
    pub(super) fn wall_clock(&self, tzid: Option<&str>) -> Tz {
        match self.zone(tzid) {
            Ok(Zone::Named(tz)) => tz,
            Ok(Zone::Fixed(off)) if off.local_minus_utc() % 3600 == 0 => {
                format!("Etc/GMT{:+}", -off.local_minus_utc() / 3600).replace("+0", "").parse().unwrap_or(Tz::UTC)
            }
            _ => Tz::UTC,
        }
    }
}

/// Whether a property's value is a DATE (`VALUE=DATE` or eight digits).
pub(super) fn is_date(p: &Property<'_>) -> bool {
    p.val.as_str().trim().len() == 8 || param(p, "VALUE").is_some_and(|v| is(v, "DATE"))
}

/// A `VTIMEZONE` all of whose observances have one offset (most of Asia):
/// that offset. Zones with daylight rules need an IANA name.
fn fixed_offset(tz: &Component<'_>) -> Option<Zone> {
    let mut offsets = tz.components.iter().filter_map(|o| prop(o, "TZOFFSETTO")).map(|p| p.val.as_str().trim());
    let first = offsets.next()?;
    if offsets.any(|o| o != first) {
        return None;
    }
    let (sign, digits) = match first.as_bytes().first()? {
        b'+' => (1, &first[1..]),
        b'-' => (-1, &first[1..]),
        _ => return None,
    };
    if !(digits.len() == 4 || digits.len() == 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |r: std::ops::Range<usize>| digits.get(r).and_then(|s| s.parse::<i32>().ok()).unwrap_or(0);
    FixedOffset::east_opt(sign * (n(0..2) * 3600 + n(2..4) * 60 + n(4..6))).map(Zone::Fixed)
}

/// `DURATION` (RFC 5545 §3.3.6) through the `iso8601` crate.
pub(super) fn duration(p: &Property<'_>) -> Result<Duration, Refusal> {
    let raw = p.val.as_str().trim();
    let bad = || invalid(format!("DURATION `{raw}` is not a duration"));
    let positive = raw.strip_prefix('+').unwrap_or(raw);
    if positive.starts_with('-') {
        return Err(bad());
    }
    // RFC 5545 durations have weeks, days, hours, minutes and seconds: no
    // years, months or fractions. Summed with checked arithmetic (the
    // crate's own conversion multiplies without checks).
    match iso8601::duration(positive).map_err(|_| bad())? {
        iso8601::Duration::Weeks(w) => Duration::try_weeks(i64::from(w)).ok_or_else(bad),
        iso8601::Duration::YMDHMS { year: 0, month: 0, day, hour, minute, second, millisecond: 0 } => {
            [Duration::try_days(i64::from(day)), Duration::try_hours(i64::from(hour))]
                .into_iter()
                .chain([Duration::try_minutes(i64::from(minute)), Duration::try_seconds(i64::from(second))])
                .try_fold(Duration::zero(), |sum, part| sum.checked_add(&part?))
                .ok_or_else(bad)
        }
        iso8601::Duration::YMDHMS { .. } => Err(bad()),
    }
}

/// Start and end of a VEVENT.
fn times(e: &Component<'_>, zones: &Zones) -> Result<(DateTime<Utc>, DateTime<Utc>), Refusal> {
    let start_prop = prop(e, "DTSTART").ok_or_else(|| invalid("a VEVENT without DTSTART"))?;
    let start = zones.instant(start_prop)?;
    let end = match (prop(e, "DTEND"), prop(e, "DURATION")) {
        (Some(end), _) => zones.instant(end)?,
        (None, Some(d)) => start
            .checked_add_signed(duration(d)?)
            .ok_or_else(|| invalid(format!("DURATION `{}` ends past any date", d.val.as_str().trim())))?,
        // RFC 5545 §3.6.1: a date lasts a day, a date-time no time at all.
        (None, None) if is_date(start_prop) => start + Duration::days(1),
        (None, None) => start,
    };
    Ok((start, end))
}

/// Reads a `PUT` body. `home` is the configured zone; `room_domain` the
/// domain of room addresses.
pub fn read(text: &str, home: Tz, room_domain: &str) -> Result<Invitation, Refusal> {
    let unfolded = read::unfold(text);
    let roots = read::components(&unfolded).map_err(|e| invalid(e.reason()))?;
    let calendar = match roots.as_slice() {
        [one] if is(one.name.as_str(), "VCALENDAR") => one,
        _ => return Err(invalid("the body must be one VCALENDAR")),
    };
    for c in &calendar.components {
        if is(c.name.as_str(), "VJOURNAL") {
            return Err(Refusal::Unsupported("a VJOURNAL cannot be stored here; only VEVENT and VTODO".into()));
        }
        if is(c.name.as_str(), "VTODO") {
            return Err(invalid("one resource holds events or to-dos, not both"));
        }
    }
    let zones = Zones::read(calendar, home)?;
    let events: Vec<&Component<'_>> = calendar.components.iter().filter(|c| is(c.name.as_str(), "VEVENT")).collect();
    let (masters, overrides): (Vec<_>, Vec<_>) = events.iter().partition(|e| prop(e, "RECURRENCE-ID").is_none());
    let master = match masters.as_slice() {
        [one] => *one,
        [] => return Err(invalid("no VEVENT without RECURRENCE-ID")),
        _ => return Err(invalid("more than one VEVENT without RECURRENCE-ID")),
    };
    let uid = prop(master, "UID").map(|p| p.val.as_str().trim().to_owned()).unwrap_or_default();
    if uid.is_empty() || uid.len() > 255 || uid.chars().any(crate::text::is_forbidden) {
        return Err(invalid("the VEVENT needs a UID of 1-255 plain characters"));
    }
    if events.iter().any(|e| prop(e, "UID").is_none_or(|p| p.val.as_str().trim() != uid)) {
        return Err(invalid("every VEVENT of one resource has the same UID"));
    }
    let (starts_at, ends_at) = times(master, &zones)?;
    let summary = prop(master, "SUMMARY").map(|p| p.val.clone().unescape_text().as_str().trim().to_owned());
    let cancelled = prop(master, "STATUS").is_some_and(|s| is(s.val.as_str().trim(), "CANCELLED"));
    let private = prop(master, "CLASS")
        .is_some_and(|c| is(c.val.as_str().trim(), "PRIVATE") || is(c.val.as_str().trim(), "CONFIDENTIAL"));
    let mut rooms: Vec<String> = Vec::new();
    for a in props(master, "ATTENDEE") {
        if let Some(code) = address::room_code(p_value(a), room_domain) {
            if !rooms.iter().any(|r| r.eq_ignore_ascii_case(code)) {
                rooms.push(code.to_owned());
            }
        }
    }
    let rrule = match props(master, "RRULE").count() {
        0 => None,
        1 => prop(master, "RRULE").map(|p| p.val.as_str().trim().to_owned()),
        _ => return Err(invalid("more than one RRULE")),
    };
    let mut exdates = Vec::new();
    for p in props(master, "EXDATE") {
        // One EXDATE line may list several, comma-separated (same TZID).
        for v in p.val.as_str().split(',') {
            let one = Property { name: p.name.clone(), val: v.into(), params: p.params.clone() };
            exdates.push(zones.instant(&one)?);
        }
    }
    let mut changed = Vec::new();
    for o in overrides {
        let recurrence_id = zones.instant(prop(o, "RECURRENCE-ID").expect("partitioned by it"))?;
        let (starts_at, ends_at) = times(o, &zones)?;
        let cancelled = prop(o, "STATUS").is_some_and(|s| is(s.val.as_str().trim(), "CANCELLED"));
        changed.push(Override { recurrence_id, starts_at, ends_at, cancelled });
    }
    if rrule.is_none() && (!exdates.is_empty() || !changed.is_empty()) {
        return Err(invalid("EXDATE and RECURRENCE-ID need an RRULE"));
    }
    Ok(Invitation {
        private,
        uid,
        summary: summary.unwrap_or_default(),
        starts_at,
        ends_at,
        rooms,
        rrule,
        exdates,
        overrides: changed,
        cancelled,
    })
}

pub(super) fn p_value<'a>(p: &'a Property<'_>) -> &'a str {
    p.val.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEOUL: Tz = chrono_tz::Asia::Seoul;

    fn cal(body: &str) -> String {
        format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\n{body}END:VCALENDAR\r\n")
    }

    fn event(lines: &str) -> String {
        cal(&format!("BEGIN:VEVENT\r\nUID:u-1\r\nDTSTAMP:20300101T000000Z\r\n{lines}END:VEVENT\r\n"))
    }

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn rooms_times_and_title() {
        let text = event(
            "SUMMARY:주간\\, 회의\r\nDTSTART;TZID=Asia/Seoul:20300107T100000\r\nDTEND;TZID=Asia/Seoul:20300107T110000\r\n\
             ORGANIZER:mailto:kim@example.com\r\nATTENDEE;CUTYPE=INDIVIDUAL:mailto:lee@example.com\r\n\
             ATTENDEE;CUTYPE=ROOM;CN=A:MAILTO:Room-A@Rooms.Example.com\r\nATTENDEE:mailto:room-b@rooms.example.com\r\n",
        );
        let inv = read(&text, SEOUL, "rooms.example.com").unwrap();
        assert_eq!(inv.uid, "u-1");
        assert_eq!(inv.summary, "주간, 회의");
        assert_eq!((inv.starts_at, inv.ends_at), (utc("2030-01-07T01:00:00Z"), utc("2030-01-07T02:00:00Z")));
        assert_eq!(inv.rooms, ["A", "b"]);
        assert!(inv.rrule.is_none());
    }

    #[test]
    fn floating_utc_duration_and_vtimezone() {
        let floating = read(&event("DTSTART:20300107T100000\r\nDURATION:PT90M\r\n"), SEOUL, "h").unwrap();
        assert_eq!((floating.starts_at, floating.ends_at), (utc("2030-01-07T01:00:00Z"), utc("2030-01-07T02:30:00Z")));
        let z = read(&event("DTSTART:20300107T010000Z\r\nDTEND:20300107T020000Z\r\n"), SEOUL, "h").unwrap();
        assert_eq!(z.starts_at, utc("2030-01-07T01:00:00Z"));
        let outlook =
            cal("BEGIN:VTIMEZONE\r\nTZID:Korea Standard Time\r\nBEGIN:STANDARD\r\nDTSTART:16010101T000000\r\n\
             TZOFFSETFROM:+0900\r\nTZOFFSETTO:+0900\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\nBEGIN:VEVENT\r\nUID:x\r\n\
             DTSTART;TZID=Korea Standard Time:20300107T100000\r\nDTEND;TZID=\"Korea Standard Time\":20300107T110000\r\n\
             END:VEVENT\r\n");
        let o = read(&outlook, chrono_tz::UTC, "h").unwrap();
        assert_eq!((o.starts_at, o.ends_at), (utc("2030-01-07T01:00:00Z"), utc("2030-01-07T02:00:00Z")));
    }

    #[test]
    fn a_series_with_exceptions() {
        let text = cal("BEGIN:VEVENT\r\nUID:s\r\nDTSTART;TZID=Asia/Seoul:20300107T100000\r\n\
             DTEND;TZID=Asia/Seoul:20300107T110000\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\n\
             EXDATE;TZID=Asia/Seoul:20300114T100000,20300121T100000\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nUID:s\r\nRECURRENCE-ID;TZID=Asia/Seoul:20300128T100000\r\n\
             DTSTART;TZID=Asia/Seoul:20300128T140000\r\nDTEND;TZID=Asia/Seoul:20300128T150000\r\nEND:VEVENT\r\n");
        let inv = read(&text, SEOUL, "h").unwrap();
        assert_eq!(inv.rrule.as_deref(), Some("FREQ=WEEKLY;COUNT=4"));
        assert_eq!(inv.exdates, [utc("2030-01-14T01:00:00Z"), utc("2030-01-21T01:00:00Z")]);
        assert_eq!(inv.overrides.len(), 1);
        assert_eq!(inv.overrides[0].recurrence_id, utc("2030-01-28T01:00:00Z"));
        assert_eq!(inv.overrides[0].starts_at, utc("2030-01-28T05:00:00Z"));
    }

    #[test]
    fn refusals() {
        let refused = |text: &str| read(text, SEOUL, "h").unwrap_err();
        assert!(matches!(refused("hello"), Refusal::Invalid(_)));
        assert!(matches!(refused(&cal("")), Refusal::Invalid(_)), "no event");
        assert!(matches!(refused(&event("DTEND:20300107T100000\r\n")), Refusal::Invalid(_)), "no DTSTART");
        assert!(matches!(refused(&event("DTSTART;TZID=Mars/Olympus:20300107T100000\r\n")), Refusal::Invalid(_)));
        assert!(matches!(refused(&event("DTSTART:2030-01-07\r\n")), Refusal::Invalid(_)));
        let endless = event("DTSTART:20300107T100000Z\r\nDURATION:P99999999W\r\n");
        assert!(matches!(refused(&endless), Refusal::Invalid(_)), "an end past any date is refused, not a panic");
        let todo = cal("BEGIN:VTODO\r\nUID:t\r\nSUMMARY:x\r\nEND:VTODO\r\n");
        assert_eq!(
            super::super::sent::read_object(&todo, SEOUL, "h").unwrap(),
            super::super::sent::Object::Todo { uid: "t".into() }
        );
        let journal = cal("BEGIN:VJOURNAL\r\nUID:t\r\nEND:VJOURNAL\r\n");
        assert!(matches!(refused(&journal), Refusal::Unsupported(_)));
        let two_uids =
            cal("BEGIN:VEVENT\r\nUID:a\r\nDTSTART:20300107T100000Z\r\nRRULE:FREQ=DAILY;COUNT=2\r\nEND:VEVENT\r\n\
             BEGIN:VEVENT\r\nUID:b\r\nRECURRENCE-ID:20300108T100000Z\r\nDTSTART:20300108T110000Z\r\nEND:VEVENT\r\n");
        assert!(matches!(refused(&two_uids), Refusal::Invalid(_)));
    }
}
