//! The `filter` of a `calendar-query` (RFC 4791 §9.7), evaluated on a
//! member's iCalendar text: `comp-filter` (any component, `VTODO` and
//! `VALARM` included), `prop-filter`, `param-filter`, `text-match` (the
//! `i;ascii-casemap`, `i;unicode-casemap` and `i;octet` collations,
//! `negate-condition`), `is-not-defined` and `time-range` (§9.9: events,
//! to-dos and alarms, repeating ones by their instances, overrides by their
//! own times). The database narrows by the event time range first
//! ([`Filter::event_window`]); this decides.

use actix_web::http::StatusCode;
use chrono::{DateTime, Duration, Utc};
use chrono_tz::Tz;
use icalendar::parser::{Component, Property};

use super::instances::{self, overlaps, Range, Timed};
use super::invitation::{duration, is, param, prop, props};
use super::time_range;
use super::xml::{Element, CALDAV};
use super::DavError;

/// A whole filter: its one `comp-filter` (on `VCALENDAR`).
#[derive(Debug, Clone)]
pub struct Filter(CompFilter);

#[derive(Debug, Clone)]
struct CompFilter {
    name: String,
    absent: bool,
    range: Option<Range>,
    props: Vec<PropFilter>,
    comps: Vec<CompFilter>,
}

#[derive(Debug, Clone)]
struct PropFilter {
    name: String,
    absent: bool,
    range: Option<Range>,
    text: Option<TextMatch>,
    params: Vec<ParamFilter>,
}

#[derive(Debug, Clone)]
struct ParamFilter {
    name: String,
    absent: bool,
    text: Option<TextMatch>,
}

#[derive(Debug, Clone)]
struct TextMatch {
    text: String,
    negate: bool,
    collation: Collation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Collation {
    Octet,
    AsciiCasemap,
    UnicodeCasemap,
}

fn invalid(why: &str) -> DavError {
    DavError::precondition(StatusCode::FORBIDDEN, CALDAV, "valid-filter", why)
}

fn name_of(el: &Element) -> Result<String, DavError> {
    el.attr("name")
        .map(|n| n.trim().to_ascii_uppercase())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| invalid("a filter without a name"))
}

fn text_match(el: &Element) -> Result<Option<TextMatch>, DavError> {
    let Some(t) = el.child(CALDAV, "text-match") else { return Ok(None) };
    let collation = match t.attr("collation").map(str::trim) {
        None | Some("i;ascii-casemap") => Collation::AsciiCasemap,
        Some("i;octet") => Collation::Octet,
        Some("i;unicode-casemap") => Collation::UnicodeCasemap,
        Some(_) => {
            return Err(DavError::precondition(
                StatusCode::FORBIDDEN,
                CALDAV,
                "supported-collation",
                "collations: i;ascii-casemap, i;unicode-casemap, i;octet",
            ))
        }
    };
    let negate = t.attr("negate-condition").is_some_and(|v| v.trim() == "yes");
    Ok(Some(TextMatch { text: t.text(), negate, collation }))
}

fn range_of(el: &Element) -> Result<Option<Range>, DavError> {
    el.child(CALDAV, "time-range").map(time_range::open_window).transpose()
}

impl CompFilter {
    fn read(el: &Element) -> Result<CompFilter, DavError> {
        Ok(CompFilter {
            name: name_of(el)?,
            absent: el.child(CALDAV, "is-not-defined").is_some(),
            range: range_of(el)?,
            props: el.children_named(CALDAV, "prop-filter").map(PropFilter::read).collect::<Result<_, _>>()?,
            comps: el.children_named(CALDAV, "comp-filter").map(CompFilter::read).collect::<Result<_, _>>()?,
        })
    }
}

impl PropFilter {
    fn read(el: &Element) -> Result<PropFilter, DavError> {
        Ok(PropFilter {
            name: name_of(el)?,
            absent: el.child(CALDAV, "is-not-defined").is_some(),
            range: range_of(el)?,
            text: text_match(el)?,
            params: el
                .children_named(CALDAV, "param-filter")
                .map(|p| {
                    Ok(ParamFilter {
                        name: name_of(p)?,
                        absent: p.child(CALDAV, "is-not-defined").is_some(),
                        text: text_match(p)?,
                    })
                })
                .collect::<Result<_, DavError>>()?,
        })
    }
}

impl TextMatch {
    fn matches(&self, value: &str) -> bool {
        let found = match self.collation {
            Collation::Octet => value.contains(&self.text),
            Collation::AsciiCasemap => value.to_ascii_lowercase().contains(&self.text.to_ascii_lowercase()),
            Collation::UnicodeCasemap => value.to_lowercase().contains(&self.text.to_lowercase()),
        };
        found != self.negate
    }
}

/// A TEXT value as written, unescaped (`\,` `\;` `\\` `\n`).
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n' | 'N') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

impl Filter {
    /// The `filter` of a `calendar-query`; none when it has none.
    pub fn read(query: &Element) -> Result<Option<Filter>, DavError> {
        let Some(filter) = query.child(CALDAV, "filter") else { return Ok(None) };
        let top = filter.child(CALDAV, "comp-filter").ok_or_else(|| invalid("a filter needs a comp-filter"))?;
        Ok(Some(Filter(CompFilter::read(top)?)))
    }

    /// The event time range when that is all the filter asks
    /// (`VCALENDAR` › `VEVENT` with a `time-range`): the database answers
    /// it alone for bookings, and narrows what the rest is checked on.
    pub fn event_window(&self) -> Option<Range> {
        let event = self.only_events()?;
        event.range.filter(|_| !event.absent)
    }

    /// Whether the filter asks for nothing but events in a time range (or
    /// all events): bookings need no reading to answer it.
    pub fn is_event_range(&self) -> bool {
        self.only_events().is_some_and(|e| !e.absent && e.props.is_empty() && e.comps.is_empty())
    }

    fn only_events(&self) -> Option<&CompFilter> {
        let top = &self.0;
        if top.name != "VCALENDAR" || top.absent || top.range.is_some() || !top.props.is_empty() {
            return None;
        }
        match top.comps.as_slice() {
            [one] if one.name == "VEVENT" => Some(one),
            _ => None,
        }
    }

    /// Whether `text` (one calendar object) passes; `home` is the zone of
    /// its floating times.
    pub fn matches(&self, text: &str, home: Tz) -> bool {
        let top = &self.0;
        if top.name != "VCALENDAR" || top.absent {
            return false;
        }
        instances::read(text, home, false, |at| {
            top.props.iter().all(|p| at.prop_matches(at.calendar, p))
                && top.comps.iter().all(|c| at.child_matches(at.calendar, c))
        })
    }
}

/// The matching half of a calendar object's times (`instances` has the rest).
impl Timed<'_, '_> {
    /// Whether some child of `parent` named as `f` passes `f` (or none
    /// exists, for `is-not-defined`).
    fn child_matches(&self, parent: &Component<'_>, f: &CompFilter) -> bool {
        let mut named = parent.components.iter().filter(|c| c.name.as_str().eq_ignore_ascii_case(&f.name)).peekable();
        if f.absent {
            return named.peek().is_none();
        }
        named.any(|c| self.comp_matches(parent, c, f))
    }

    fn comp_matches(&self, parent: &Component<'_>, c: &Component<'_>, f: &CompFilter) -> bool {
        if let Some(range) = f.range {
            if !self.in_range(parent, c, range) {
                return false;
            }
        }
        f.props.iter().all(|p| self.prop_matches(c, p)) && f.comps.iter().all(|sub| self.child_matches(c, sub))
    }

    fn prop_matches(&self, c: &Component<'_>, f: &PropFilter) -> bool {
        let mut named = props(c, &f.name).peekable();
        if f.absent {
            return named.peek().is_none();
        }
        named.any(|p| {
            let in_range = f.range.is_none_or(|(from, to)| self.zones.instant(p).is_ok_and(|t| from <= t && t < to));
            in_range
                && f.text.as_ref().is_none_or(|t| t.matches(&unescape(p.val.as_str())))
                && f.params.iter().all(|pf| {
                    let value = param(p, &pf.name);
                    match (pf.absent, value) {
                        (true, v) => v.is_none(),
                        (false, None) => false,
                        (false, Some(v)) => pf.text.as_ref().is_none_or(|t| t.matches(v)),
                    }
                })
        })
    }

    /// RFC 4791 §9.9 for the component kinds that have times; others
    /// never match a time range.
    fn in_range(&self, parent: &Component<'_>, c: &Component<'_>, (from, to): Range) -> bool {
        let name = c.name.as_str().to_ascii_uppercase();
        match name.as_str() {
            "VEVENT" => self.instances(c, to).iter().any(|&(s, e)| overlaps(from, to, s, e)),
            "VTODO" => self.todo_in_range(c, from, to),
            "VALARM" => self.alarm_in_range(parent, c, from, to),
            _ => false,
        }
    }

    /// RFC 4791 §9.9's table for `VTODO`.
    fn todo_in_range(&self, c: &Component<'_>, from: DateTime<Utc>, to: DateTime<Utc>) -> bool {
        let start = self.time(c, "DTSTART");
        let due = self.time(c, "DUE");
        let length = prop(c, "DURATION").and_then(|d| duration(d).ok());
        let (completed, created) = (self.time(c, "COMPLETED"), self.time(c, "CREATED"));
        let at = |start: Option<DateTime<Utc>>, due: Option<DateTime<Utc>>| match (start, length, due) {
            (Some(s), Some(d), _) => from <= s + d && (to > s || to >= s + d),
            (Some(s), None, Some(due)) => (from < due || from <= s) && (to > s || to >= due),
            (Some(s), None, None) => from <= s && to > s,
            (None, _, Some(due)) => from < due && to >= due,
            (None, _, None) => match (completed, created) {
                (Some(done), Some(made)) => (from <= made || from <= done) && (to >= made || to >= done),
                (Some(done), None) => from <= done && to >= done,
                (None, Some(made)) => to > made,
                (None, None) => true,
            },
        };
        match start {
            // A repeating to-do: each instance, its due as far from its start.
            Some(first) if prop(c, "RRULE").is_some() || prop(c, "RDATE").is_some() => {
                self.instances(c, to).iter().any(|&(s, _)| at(Some(s), due.map(|d| s + (d - first))))
            }
            _ => at(start, due),
        }
    }

    /// Whether an alarm of `parent` rings within the range: its trigger
    /// (relative to each instance's start or end, or absolute) and repeats.
    fn alarm_in_range(
        &self,
        parent: &Component<'_>,
        alarm: &Component<'_>,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> bool {
        let Some(trigger) = prop(alarm, "TRIGGER") else { return false };
        let repeat: i64 =
            prop(alarm, "REPEAT").and_then(|p| p.val.as_str().trim().parse().ok()).unwrap_or(0).clamp(0, 1000);
        let every = prop(alarm, "DURATION").and_then(|d| duration(d).ok()).unwrap_or_else(Duration::zero);
        let rings = |first: DateTime<Utc>| {
            (0..=repeat).any(|i| {
                let t = first + every * i32::try_from(i).unwrap_or(0);
                from <= t && t < to
            })
        };
        if param(trigger, "VALUE").is_some_and(|v| is(v, "DATE-TIME")) {
            return self.zones.instant(trigger).is_ok_and(rings);
        }
        let raw = trigger.val.as_str().trim();
        let (negative, magnitude) = match raw.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, raw.strip_prefix('+').unwrap_or(raw)),
        };
        let one = Property { name: trigger.name.clone(), val: magnitude.into(), params: Vec::new() };
        let Ok(offset) = duration(&one) else { return false };
        let offset = if negative { -offset } else { offset };
        let from_end = param(trigger, "RELATED").is_some_and(|r| is(r, "END"));
        let reach = to.checked_add_signed(offset.abs()).unwrap_or(to);
        let spans = if is(parent.name.as_str(), "VTODO") {
            let s = self.time(parent, "DTSTART").or_else(|| self.time(parent, "DUE"));
            let e = self.time(parent, "DUE").or(s);
            s.zip(e).into_iter().collect()
        } else {
            self.instances(parent, reach)
        };
        spans.into_iter().any(|(s, e)| rings(if from_end { e } else { s } + offset))
    }
}
