//! A calendar object's times (RFC 5545, RFC 4791 §9.9): when each event
//! takes place — its one span, or the instances of its rule less its
//! `EXDATE`s and the instances its overrides replace — for the filters of
//! `calendar-query`, its `expand`, and a person's free/busy.

use chrono::{DateTime, Duration, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use icalendar::parser::Component;

use super::invitation::{duration, is, is_date, param, prop, props, Zones};
use crate::calendar::ics::read as ics;

/// A half-open span of time.
pub type Range = (DateTime<Utc>, DateTime<Utc>);

/// The most instances one repeating component is expanded to.
const MAX_INSTANCES: usize = 5_000;

/// One calendar object, read, with the zones its times name.
pub struct Timed<'a, 'b> {
    pub(super) zones: &'a Zones,
    pub(super) calendar: &'a Component<'b>,
}

/// `f` of `text`'s calendar (`home`: the zone of its floating times), or
/// `otherwise` when it cannot be read.
pub fn read<T>(text: &str, home: Tz, otherwise: T, f: impl FnOnce(&Timed<'_, '_>) -> T) -> T {
    let unfolded = ics::unfold(text);
    let Ok(roots) = ics::components(&unfolded) else { return otherwise };
    let Some(calendar) = roots.iter().find(|c| is(c.name.as_str(), "VCALENDAR")) else { return otherwise };
    let Ok(zones) = Zones::read(calendar, home) else { return otherwise };
    f(&Timed { zones: &zones, calendar })
}

impl Timed<'_, '_> {
    pub(super) fn time(&self, c: &Component<'_>, name: &str) -> Option<DateTime<Utc>> {
        prop(c, name).and_then(|p| self.zones.instant(p).ok())
    }

    /// The spans of an event up to `until`: its one span, or each instance
    /// of its rule (`RRULE`, `RDATE`, less `EXDATE`s and the instances its
    /// overrides replace; each as long in wall-clock time as the first).
    pub(super) fn instances(&self, c: &Component<'_>, until: DateTime<Utc>) -> Vec<Range> {
        let Some(start_prop) = prop(c, "DTSTART") else { return Vec::new() };
        let Ok(start) = self.zones.instant(start_prop) else { return Vec::new() };
        let end = match (prop(c, "DTEND"), prop(c, "DURATION")) {
            (Some(e), _) => self.zones.instant(e).unwrap_or(start),
            (None, Some(d)) => duration(d).ok().and_then(|d| start.checked_add_signed(d)).unwrap_or(start),
            (None, None) if is_date(start_prop) => start + Duration::days(1),
            (None, None) => start,
        };
        let rule = prop(c, "RRULE");
        if rule.is_none() && prop(c, "RDATE").is_none() || prop(c, "RECURRENCE-ID").is_some() {
            return vec![(start, end)];
        }
        let tz = self.zones.wall_clock(param(start_prop, "TZID"));
        let local_len = end.with_timezone(&tz).naive_local() - start.with_timezone(&tz).naive_local();
        let skipped = self.skipped(c);
        let mut starts = vec![start];
        if let Some(rule) = rule {
            starts.extend(expand_rule(rule.val.as_str(), start, tz, until));
        }
        for p in props(c, "RDATE") {
            let tzid = param(p, "TZID");
            for v in p.val.as_str().split(',') {
                if let Ok(t) = self.zones.value("RDATE", v, tzid, is_date(p)) {
                    starts.push(t);
                }
            }
        }
        starts.sort();
        starts.dedup();
        starts
            .into_iter()
            .filter(|s| !skipped.contains(s))
            .take(MAX_INSTANCES)
            .map(|s| {
                let local = s.with_timezone(&tz).naive_local() + local_len;
                (s, wall(tz, local).unwrap_or(s + (end - start)))
            })
            .collect()
    }

    /// A repeating event's instances that are not its own: its `EXDATE`s
    /// and the `RECURRENCE-ID`s of the overrides beside it.
    fn skipped(&self, master: &Component<'_>) -> Vec<DateTime<Utc>> {
        let mut out = Vec::new();
        for p in props(master, "EXDATE") {
            let tzid = param(p, "TZID");
            out.extend(p.val.as_str().split(',').filter_map(|v| self.zones.value("EXDATE", v, tzid, is_date(p)).ok()));
        }
        let uid = prop(master, "UID").map(|p| p.val.as_str().trim());
        for o in self.calendar.components.iter().filter(|o| is(o.name.as_str(), master.name.as_str())) {
            if prop(o, "UID").map(|p| p.val.as_str().trim()) == uid {
                out.extend(self.time(o, "RECURRENCE-ID"));
            }
        }
        out
    }
}

/// RFC 4791 §9.9 for a span: a zero-length one is an instant.
pub(super) fn overlaps(from: DateTime<Utc>, to: DateTime<Utc>, s: DateTime<Utc>, e: DateTime<Utc>) -> bool {
    if e > s {
        from < e && to > s
    } else {
        from <= s && to > s
    }
}

fn wall(tz: Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    tz.from_local_datetime(&local).earliest().map(|t| t.with_timezone(&Utc))
}

/// The starts of `rule` from `start` (in `tz`'s wall clock) up to `until`,
/// at most [`MAX_INSTANCES`]; none when the rule cannot be read.
fn expand_rule(rule: &str, start: DateTime<Utc>, tz: Tz, until: DateTime<Utc>) -> Vec<DateTime<Utc>> {
    let Ok(recurrence) = crate::series::domain::Recurrence::parse(rule.trim(), tz) else { return Vec::new() };
    let Ok(parsed) = recurrence.rule().parse::<rrule::RRule<rrule::Unvalidated>>() else { return Vec::new() };
    let Ok(set) = parsed.build(start.with_timezone(&rrule::Tz::Tz(tz))) else { return Vec::new() };
    set.into_iter().map(|d| d.with_timezone(&Utc)).take_while(|d| *d < until).take(MAX_INSTANCES).collect()
}

/// The busy time of `text`'s events within `range`: every instance of an
/// event that is not `TRANSP:TRANSPARENT` or `STATUS:CANCELLED`, clipped.
pub fn busy(text: &str, home: Tz, (from, to): Range) -> Vec<Range> {
    read(text, home, Vec::new(), |at| {
        let calendar = at.calendar;
        let value_is =
            |c: &Component<'_>, name: &str, want: &str| prop(c, name).is_some_and(|p| is(p.val.as_str().trim(), want));
        calendar
            .components
            .iter()
            .filter(|c| is(c.name.as_str(), "VEVENT"))
            .filter(|c| !value_is(c, "TRANSP", "TRANSPARENT") && !value_is(c, "STATUS", "CANCELLED"))
            .flat_map(|c| at.instances(c, to))
            .filter(|&(s, e)| overlaps(from, to, s, e))
            .map(|(s, e)| (s.max(from), e.min(to)))
            .collect()
    })
}

/// `text` with each repeating event written as its instances within
/// `range` (RFC 4791 §9.6.5 `expand`): each a `VEVENT` with its
/// `RECURRENCE-ID`, no rule, times in UTC; overrides as instances; other
/// events within the range in UTC; time zones left out.
pub fn expand(text: &str, home: Tz, (from, to): Range) -> String {
    read(text, home, text.to_owned(), |at| {
        let calendar = at.calendar;
        let utc = |t: DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
        let mut out = String::from("BEGIN:VCALENDAR\r\n");
        for p in &calendar.properties {
            out.push_str(&p.to_string());
        }
        const TIMES: [&str; 7] = ["DTSTART", "DTEND", "DURATION", "RRULE", "RDATE", "EXDATE", "RECURRENCE-ID"];
        for c in &calendar.components {
            if is(c.name.as_str(), "VTIMEZONE") {
                continue;
            }
            if !is(c.name.as_str(), "VEVENT") {
                write_component(&mut out, c, &[]);
                continue;
            }
            let repeats =
                prop(c, "RECURRENCE-ID").is_none() && (prop(c, "RRULE").is_some() || prop(c, "RDATE").is_some());
            let own_id = at.time(c, "RECURRENCE-ID");
            for (s, e) in at.instances(c, to).into_iter().filter(|&(s, e)| overlaps(from, to, s, e)) {
                out.push_str("BEGIN:VEVENT\r\n");
                if let Some(id) = own_id.or(repeats.then_some(s)) {
                    out.push_str(&format!("RECURRENCE-ID:{}\r\n", utc(id)));
                }
                out.push_str(&format!("DTSTART:{}\r\nDTEND:{}\r\n", utc(s), utc(e)));
                for p in c.properties.iter().filter(|p| !TIMES.iter().any(|t| is(p.name.as_str(), t))) {
                    out.push_str(&p.to_string());
                }
                for sub in &c.components {
                    write_component(&mut out, sub, &[]);
                }
                out.push_str("END:VEVENT\r\n");
            }
        }
        out.push_str("END:VCALENDAR\r\n");
        out
    })
}

fn write_component(out: &mut String, c: &Component<'_>, skip: &[&str]) {
    out.push_str(&format!("BEGIN:{}\r\n", c.name.as_str()));
    for p in c.properties.iter().filter(|p| !skip.iter().any(|s| is(p.name.as_str(), s))) {
        out.push_str(&p.to_string());
    }
    for sub in &c.components {
        write_component(out, sub, skip);
    }
    out.push_str(&format!("END:{}\r\n", c.name.as_str()));
}
