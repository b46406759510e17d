//! iCalendar text from outside (CalDAV bodies, holiday files), read by the
//! `icalendar` crate's parser behind a depth bound (SPEC §22). The parser
//! recurses once per nested `BEGIN:`, so 2,000 nested components (32 KiB)
//! overflowed a worker's stack and aborted the process; the nesting is
//! counted line by line first, exactly as the parser will see it (a
//! component ends only at an `END:` of its own name), and refused before
//! the parser runs.

use icalendar::parser::{self, Component};

/// The deepest nesting of components accepted: `VCALENDAR` › `VEVENT` ›
/// `VALARM` needs three, `VTIMEZONE` › `STANDARD` two.
pub const MAX_DEPTH: usize = 8;

/// Why a body is not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unreadable {
    /// Components nested deeper than [`MAX_DEPTH`].
    TooDeep,
    /// Not iCalendar text (unbalanced `BEGIN`/`END`, or what the parser refuses).
    NotICalendar,
}

impl Unreadable {
    /// Why, in a sentence for the client.
    pub fn reason(&self) -> String {
        match self {
            Unreadable::TooDeep => format!("components nest deeper than {MAX_DEPTH}"),
            Unreadable::NotICalendar => "not iCalendar text".to_owned(),
        }
    }
}

/// The text with folded lines joined (RFC 5545 §3.1), what [`components`] reads.
pub fn unfold(text: &str) -> String {
    parser::unfold(text)
}

/// The top-level components of unfolded text (see [`unfold`]).
pub fn components(unfolded: &str) -> Result<Vec<Component<'_>>, Unreadable> {
    check_nesting(unfolded)?;
    parser::read_components(unfolded).map_err(|_| Unreadable::NotICalendar)
}

/// The parser's nesting, without building anything: a stack of open names,
/// bounded by [`MAX_DEPTH`].
fn check_nesting(unfolded: &str) -> Result<(), Unreadable> {
    let mut open: Vec<&str> = Vec::with_capacity(MAX_DEPTH);
    for line in unfolded.lines() {
        if let Some(name) = strip_prefix_ignore_case(line, "BEGIN:") {
            if open.len() == MAX_DEPTH {
                return Err(Unreadable::TooDeep);
            }
            open.push(name.trim_end());
        } else if let Some(name) = strip_prefix_ignore_case(line, "END:") {
            if open.pop() != Some(name.trim_end()) {
                return Err(Unreadable::NotICalendar);
            }
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(Unreadable::NotICalendar)
    }
}

fn strip_prefix_ignore_case<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    let head = line.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &line[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(depth: usize) -> String {
        let inner: String = (1..depth).map(|i| format!("BEGIN:X{i}\r\n")).collect();
        let outer: String = (1..depth).rev().map(|i| format!("END:X{i}\r\n")).collect();
        format!("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{inner}{outer}END:VCALENDAR\r\n")
    }

    #[test]
    fn nesting_up_to_the_bound_is_read_and_deeper_is_refused_before_parsing() {
        let at_bound = unfold(&nested(MAX_DEPTH));
        assert_eq!(components(&at_bound).unwrap().len(), 1);
        assert_eq!(components(&unfold(&nested(MAX_DEPTH + 1))).unwrap_err(), Unreadable::TooDeep);
        let deep = format!("BEGIN:VCALENDAR\r\n{}", "BEGIN:X\r\n".repeat(20_000));
        assert_eq!(components(&unfold(&deep)).unwrap_err(), Unreadable::TooDeep);
    }

    #[test]
    fn an_end_that_does_not_close_its_component_is_not_icalendar() {
        // A mismatched END would not end the parser's component: counting it
        // as one would let the parser nest deeper than the count.
        let crossed = "BEGIN:VCALENDAR\r\nBEGIN:A\r\nEND:B\r\nEND:VCALENDAR\r\n";
        assert_eq!(components(&unfold(crossed)).unwrap_err(), Unreadable::NotICalendar);
        assert_eq!(components("BEGIN:VCALENDAR\r\n").unwrap_err(), Unreadable::NotICalendar);
        assert_eq!(components("END:VCALENDAR\r\n").unwrap_err(), Unreadable::NotICalendar);
        let lower = unfold("begin:VCALENDAR\r\nVERSION:2.0\r\nend:VCALENDAR\r\n");
        assert_eq!(components(&lower).unwrap().len(), 1, "BEGIN and END are case-blind, as the parser's");
    }
}
