//! A calendar object as a person's calendar app sent it (SPEC §23): its
//! text is kept byte for byte, and only what a scheduling server owns is
//! written in — the `ORGANIZER` of an event with attendees, and on each
//! room `ATTENDEE` its `PARTSTAT`, `SCHEDULE-STATUS` and `X-YEYAK-CODE`
//! (RFC 6638 §3.2). Every other line, parameter and byte stays as sent, so
//! a client that reads the object back and sends it again changes nothing,
//! and the same stored text always gives the same bytes.
//!
//! The text has been read by the `icalendar` crate's parser (through
//! `calendar::ics::read`, which bounds it) before it comes here; this
//! module only finds the lines to change: content lines are split at the
//! first `;` or `:` outside a quoted parameter value (RFC 5545 §3.1), and a
//! changed line is folded again at 75 octets.

/// What a room answers an event (RFC 5545 `PARTSTAT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomAnswer {
    /// Booked.
    Accepted,
    /// Booked, waiting for an admin's approval.
    Tentative,
    /// Refused, with the JSON API's code (`ROOM_TIME_TAKEN`, …).
    Declined(String),
}

impl RoomAnswer {
    pub fn partstat(&self) -> &'static str {
        match self {
            RoomAnswer::Accepted => "ACCEPTED",
            RoomAnswer::Tentative => "TENTATIVE",
            RoomAnswer::Declined(_) => "DECLINED",
        }
    }
}

/// The parameters yeyak owns on a room attendee; any the client wrote are
/// replaced.
const OWNED: [&str; 3] = ["PARTSTAT", "SCHEDULE-STATUS", "X-YEYAK-CODE"];

/// One content line: its raw text (with its folds) and where it splits.
pub(super) struct Line<'a> {
    pub(super) raw: &'a str,
    /// Unfolded, without the line break.
    pub(super) text: String,
}

impl Line<'_> {
    /// `(name, params, value)` of the unfolded text; `params` keeps its
    /// leading `;` pieces as written.
    pub(super) fn parts(&self) -> Option<(&str, Vec<&str>, &str)> {
        let text = self.text.as_str();
        let mut quoted = false;
        let mut cuts = Vec::new();
        for (i, c) in text.char_indices() {
            match c {
                '"' => quoted = !quoted,
                ';' if !quoted => cuts.push(i),
                ':' if !quoted => {
                    let head = &text[..i];
                    let name_end = cuts.first().copied().unwrap_or(i);
                    let params = cuts
                        .iter()
                        .zip(cuts.iter().skip(1).chain(std::iter::once(&i)))
                        .map(|(a, b)| &head[a + 1..*b])
                        .collect();
                    return Some((&text[..name_end], params, &text[i + 1..]));
                }
                _ => {}
            }
        }
        None
    }
}

/// The content lines of `text`, each with its continuation lines.
pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for piece in text.split_inclusive('\n') {
        let continues = piece.starts_with(' ') || piece.starts_with('\t');
        match out.last_mut() {
            Some(last) if continues => last.1 = at + piece.len(),
            _ => out.push((at, at + piece.len())),
        }
        at += piece.len();
    }
    out.into_iter()
        .map(|(a, b)| {
            let raw = &text[a..b];
            let mut unfolded = String::with_capacity(raw.len());
            for (i, piece) in raw.split_inclusive('\n').enumerate() {
                let piece = if i == 0 { piece } else { &piece[1..] };
                unfolded.push_str(piece.trim_end_matches(['\r', '\n']));
            }
            Line { raw, text: unfolded }
        })
        .collect()
}

/// `line` folded at 75 octets (never inside a character), ended by `eol`.
pub fn fold(line: &str, eol: &str) -> String {
    let mut out = String::with_capacity(line.len() + line.len() / 70 * 3 + 2);
    let mut width = 0;
    for c in line.chars() {
        let n = c.len_utf8();
        if width + n > 75 {
            out.push_str(eol);
            out.push(' ');
            width = 1;
        }
        out.push(c);
        width += n;
    }
    out.push_str(eol);
    out
}

/// What yeyak writes into a stored event.
pub struct Owned<'a> {
    /// `ORGANIZER` as a whole content line's value part, e.g.
    /// `;CN=김민지:mailto:kim@example.com` (parameters, then `:` and the
    /// address), written on every `VEVENT` that has attendees.
    pub organizer: Option<&'a str>,
    /// The answer of the room an attendee's address names, if it is a room.
    pub room: &'a dyn Fn(&str) -> Option<RoomAnswer>,
}

/// `text` with what yeyak owns written in; every other byte as sent.
pub fn merge(text: &str, owned: &Owned<'_>) -> String {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let all = lines(text);
    // Which events (in order) have attendees: only theirs get an ORGANIZER.
    let mut scheduled = Vec::new();
    let mut depth = 0usize;
    for line in &all {
        let upper = line.text.to_ascii_uppercase();
        if upper.starts_with("BEGIN:") {
            depth += 1;
            if depth == 2 && upper.trim_end() == "BEGIN:VEVENT" {
                scheduled.push(false);
            }
        } else if upper.starts_with("END:") {
            depth = depth.saturating_sub(1);
        } else if depth == 2
            && upper.starts_with("ATTENDEE")
            && line.parts().is_some_and(|(n, _, _)| n.eq_ignore_ascii_case("ATTENDEE"))
        {
            if let Some(last) = scheduled.last_mut() {
                *last = true;
            }
        }
    }
    let mut events = scheduled.into_iter();
    let mut out = String::with_capacity(text.len() + 256);
    let mut depth = 0usize;
    let mut in_event = false;
    // Where the current event began in `out`, whether it has attendees and
    // an ORGANIZER line (written when it ends, where needed).
    let mut event_start = 0;
    let mut attendees = false;
    let mut has_organizer = false;
    for line in &all {
        let upper = line.text.to_ascii_uppercase();
        if upper.starts_with("BEGIN:") {
            depth += 1;
            if depth == 2 && upper.trim_end() == "BEGIN:VEVENT" {
                in_event = true;
                attendees = events.next().unwrap_or(false);
                has_organizer = false;
                out.push_str(line.raw);
                event_start = out.len();
                continue;
            }
        } else if upper.starts_with("END:") {
            if depth == 2 && in_event {
                if attendees && !has_organizer {
                    if let Some(organizer) = owned.organizer {
                        out.insert_str(event_start, &fold(&format!("ORGANIZER{organizer}"), eol));
                    }
                }
                in_event = false;
            }
            depth = depth.saturating_sub(1);
        } else if in_event && depth == 2 {
            if let Some((name, params, value)) = line.parts() {
                if name.eq_ignore_ascii_case("ATTENDEE") {
                    if let Some(answer) = (owned.room)(value) {
                        let mut kept: Vec<String> = params
                            .iter()
                            .filter(|p| {
                                let key = p.split('=').next().unwrap_or("");
                                !OWNED.iter().any(|o| o.eq_ignore_ascii_case(key))
                            })
                            .map(|p| (*p).to_owned())
                            .collect();
                        kept.push(format!("PARTSTAT={}", answer.partstat()));
                        kept.push("SCHEDULE-STATUS=2.0".to_owned());
                        if let RoomAnswer::Declined(code) = &answer {
                            kept.push(format!("X-YEYAK-CODE={code}"));
                        }
                        let rewritten = format!("{name};{}:{value}", kept.join(";"));
                        if rewritten == line.text {
                            out.push_str(line.raw);
                        } else {
                            out.push_str(&fold(&rewritten, eol));
                        }
                        continue;
                    }
                } else if name.eq_ignore_ascii_case("ORGANIZER") && attendees {
                    has_organizer = true;
                    if let Some(organizer) = owned.organizer {
                        let rewritten = format!("ORGANIZER{organizer}");
                        if rewritten != line.text {
                            out.push_str(&fold(&rewritten, eol));
                            continue;
                        }
                    }
                }
            }
        }
        out.push_str(line.raw);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(answer: RoomAnswer) -> impl Fn(&str) -> Option<RoomAnswer> {
        move |address: &str| address.to_ascii_lowercase().contains("room-").then(|| answer.clone())
    }

    const SENT: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//client//EN\r\nBEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\n\
        BEGIN:STANDARD\r\nDTSTART:19701025T030000\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n\
        BEGIN:VEVENT\r\nUID:e-1\r\nDTSTAMP:20300101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20300107T100000\r\n\
        DTEND;TZID=Europe/Berlin:20300107T110000\r\nSUMMARY:Planning\r\nDESCRIPTION:Bring the numbers\\, please\r\n\
        ATTENDEE;CN=\"Lee; Young\";ROLE=REQ-PARTICIPANT;X-CLIENT=1:mailto:lee@example.com\r\n\
        ATTENDEE;CUTYPE=ROOM;CN=\"Room A: 3F\";PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:room-a@rooms.example.com\r\n\
        X-CLIENT-THING;FOO=bar:baz\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nEND:VALARM\r\n\
        END:VEVENT\r\nEND:VCALENDAR\r\n";

    fn owned(answer: RoomAnswer) -> String {
        let room = room(answer);
        merge(SENT, &Owned { organizer: Some(";CN=Kim:mailto:kim@example.com"), room: &room })
    }

    #[test]
    fn only_what_the_server_owns_changes() {
        let merged = owned(RoomAnswer::Accepted);
        let expected = SENT
            .replace(
                "ATTENDEE;CUTYPE=ROOM;CN=\"Room A: 3F\";PARTSTAT=NEEDS-ACTION;RSVP=TRUE:mailto:room-a@rooms.example.com\r\n",
                &fold(
                    "ATTENDEE;CUTYPE=ROOM;CN=\"Room A: 3F\";RSVP=TRUE;PARTSTAT=ACCEPTED;SCHEDULE-STATUS=2.0:mailto:room-a@rooms.example.com",
                    "\r\n",
                ),
            )
            .replace("BEGIN:VEVENT\r\n", "BEGIN:VEVENT\r\nORGANIZER;CN=Kim:mailto:kim@example.com\r\n");
        assert_eq!(merged, expected);
        // The colleague's line, the description, the alarm, the client's own
        // properties and the time zone are byte for byte as sent.
        for kept in [
            "ATTENDEE;CN=\"Lee; Young\";ROLE=REQ-PARTICIPANT;X-CLIENT=1:mailto:lee@example.com\r\n",
            "DESCRIPTION:Bring the numbers\\, please\r\n",
            "X-CLIENT-THING;FOO=bar:baz\r\n",
            "TRIGGER:-PT15M\r\n",
            "TZOFFSETTO:+0100\r\n",
        ] {
            assert!(merged.contains(kept), "{kept}");
        }
    }

    #[test]
    fn merging_again_changes_nothing_and_a_decline_names_its_code() {
        let merged = owned(RoomAnswer::Declined("ROOM_TIME_TAKEN".into()));
        let unfolded = merged.replace("\r\n ", "");
        assert!(unfolded.contains("PARTSTAT=DECLINED;SCHEDULE-STATUS=2.0;X-YEYAK-CODE=ROOM_TIME_TAKEN:"), "{merged}");
        let room = room(RoomAnswer::Declined("ROOM_TIME_TAKEN".into()));
        let again = merge(&merged, &Owned { organizer: Some(";CN=Kim:mailto:kim@example.com"), room: &room });
        assert_eq!(again, merged, "a client sending back what it read changes nothing");
        let accepted =
            merge(&merged, &Owned { organizer: Some(";CN=Kim:mailto:kim@example.com"), room: &room_accepted() });
        assert!(!accepted.contains("X-YEYAK-CODE"), "an old code goes with its decline: {accepted}");
    }

    fn room_accepted() -> impl Fn(&str) -> Option<RoomAnswer> {
        room(RoomAnswer::Accepted)
    }

    #[test]
    fn an_event_without_attendees_gets_no_organizer_and_lf_text_stays_lf() {
        let kept = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nORGANIZER:mailto:me@example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let room = room_accepted();
        assert_eq!(
            merge(kept, &Owned { organizer: Some(":mailto:kim@example.com"), room: &room }),
            kept,
            "not scheduled"
        );
        let text =
            "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nUID:x\nDTSTART:20300107T100000Z\nEND:VEVENT\nEND:VCALENDAR\n";
        let room = room_accepted();
        assert_eq!(merge(text, &Owned { organizer: Some(":mailto:kim@example.com"), room: &room }), text);
        let todo = "BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:t\r\nATTENDEE:mailto:room-a@rooms.example.com\r\nEND:VTODO\r\nEND:VCALENDAR\r\n";
        assert_eq!(merge(todo, &Owned { organizer: None, room: &room }), todo, "only events are scheduled");
    }

    #[test]
    fn folded_lines_are_read_whole_and_long_ones_folded_again() {
        let text = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:x\r\nATTENDEE;CUTYPE=ROOM;CN=\"A very long room\r\n  name\":mailto:room-a@ro\r\n oms.example.com\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let room = room_accepted();
        let merged = merge(text, &Owned { organizer: None, room: &room });
        let unfolded = merged.replace("\r\n ", "");
        assert!(unfolded.contains("ATTENDEE;CUTYPE=ROOM;CN=\"A very long room name\";PARTSTAT=ACCEPTED;SCHEDULE-STATUS=2.0:mailto:room-a@rooms.example.com\r\n"), "{merged}");
        assert!(merged.lines().all(|l| l.trim_end_matches('\r').len() <= 75), "{merged}");
    }
}
