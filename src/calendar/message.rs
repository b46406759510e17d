//! iMIP messages made from a person's stored calendar object (SPEC §23,
//! RFC 6047, RFC 5546): who else the event invites, and the object as the
//! `METHOD:REQUEST` or `METHOD:CANCEL` a colleague's mail client files.
//! The event is sent as the person's app wrote it — their description,
//! their time zones — without their own alarms (`VALARM`s are the
//! organizer's reminders, not the guests').

use super::ics::Method;
use super::object::{fold, lines};

/// A colleague an event invites: an `ATTENDEE` that is no room, not the
/// organizer, and not one the client schedules itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guest {
    /// The mail address, lower case, without `mailto:`.
    pub address: String,
    /// `CN`, when given.
    pub name: Option<String>,
}

/// The address of a `mailto:` cal-address, lower case.
fn mail_address(value: &str) -> Option<String> {
    let value = value.trim();
    let rest = value.get(..7).filter(|p| p.eq_ignore_ascii_case("mailto:")).map(|_| &value[7..])?;
    (rest.contains('@') && !rest.contains(char::is_whitespace)).then(|| rest.to_ascii_lowercase())
}

fn param<'p>(params: &[&'p str], key: &str) -> Option<&'p str> {
    params.iter().find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.eq_ignore_ascii_case(key).then(|| v.trim_matches('"'))
    })
}

/// The guests of `text`'s events, each once, in order: every `ATTENDEE`
/// with a mail address that `is_room` does not claim, that is not
/// `organizer` (an address), and whose `SCHEDULE-AGENT` is absent or
/// `SERVER` (RFC 6638 §7.1: `CLIENT` and `NONE` mean yeyak sends nothing).
pub fn guests(text: &str, is_room: &dyn Fn(&str) -> bool, organizer: Option<&str>) -> Vec<Guest> {
    let mut out: Vec<Guest> = Vec::new();
    let mut depth = 0usize;
    let mut in_event = false;
    for line in lines(text) {
        let upper = line.text.to_ascii_uppercase();
        if upper.starts_with("BEGIN:") {
            depth += 1;
            in_event |= depth == 2 && upper.trim_end() == "BEGIN:VEVENT";
            continue;
        }
        if upper.starts_with("END:") {
            if depth == 2 {
                in_event = false;
            }
            depth = depth.saturating_sub(1);
            continue;
        }
        if !(in_event && depth == 2 && upper.starts_with("ATTENDEE")) {
            continue;
        }
        let Some((name, params, value)) = line.parts() else { continue };
        if !name.eq_ignore_ascii_case("ATTENDEE") || is_room(value) {
            continue;
        }
        let Some(address) = mail_address(value) else { continue };
        let agent = param(&params, "SCHEDULE-AGENT").unwrap_or("SERVER");
        if !agent.eq_ignore_ascii_case("SERVER")
            || organizer.is_some_and(|o| o.eq_ignore_ascii_case(&address))
            || out.iter().any(|g| g.address == address)
        {
            continue;
        }
        let cn = param(&params, "CN").map(str::to_owned).filter(|n| !n.is_empty());
        out.push(Guest { address, name: cn });
    }
    out
}

/// The first event's `SEQUENCE` (0 when it has none).
pub fn sequence(text: &str) -> u32 {
    let mut depth = 0usize;
    for line in lines(text) {
        let upper = line.text.to_ascii_uppercase();
        if upper.starts_with("BEGIN:") {
            depth += 1;
        } else if upper.starts_with("END:") {
            depth = depth.saturating_sub(1);
        } else if depth == 2 {
            if let Some((name, _, value)) = line.parts() {
                if name.eq_ignore_ascii_case("SEQUENCE") {
                    return value.trim().parse().unwrap_or(0);
                }
            }
        }
    }
    0
}

/// `text` as an iMIP message with `method`: `METHOD` set on the calendar,
/// `VALARM`s left out, and for a cancellation each event's `STATUS` is
/// `CANCELLED`. Every other line as stored.
pub fn as_message(text: &str, method: Method) -> String {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(text.len() + 64);
    let mut depth = 0usize;
    let mut in_alarm = 0usize;
    for line in lines(text) {
        let upper = line.text.to_ascii_uppercase();
        let upper = upper.trim_end();
        if upper.starts_with("BEGIN:") {
            depth += 1;
            if in_alarm > 0 || upper == "BEGIN:VALARM" {
                in_alarm += 1;
                continue;
            }
            out.push_str(line.raw);
            if depth == 1 {
                out.push_str(&fold(&format!("METHOD:{}", method.as_str()), eol));
            }
            continue;
        }
        if upper.starts_with("END:") {
            depth = depth.saturating_sub(1);
            if in_alarm > 0 {
                in_alarm -= 1;
                continue;
            }
            if depth == 1 && method == Method::Cancel && upper == "END:VEVENT" {
                out.push_str(&fold("STATUS:CANCELLED", eol));
            }
            out.push_str(line.raw);
            continue;
        }
        if in_alarm > 0 {
            continue;
        }
        let name = line.parts().map(|(n, _, _)| n.to_ascii_uppercase());
        match name.as_deref() {
            Some("METHOD") if depth == 1 => continue,
            Some("STATUS") if depth == 2 && method == Method::Cancel => continue,
            _ => out.push_str(line.raw),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVENT: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//app//EN\r\nBEGIN:VEVENT\r\nUID:u\r\n\
        STATUS:CONFIRMED\r\nORGANIZER;CN=Kim:mailto:kim@example.com\r\n\
        ATTENDEE;CN=Kim:mailto:KIM@example.com\r\n\
        ATTENDEE;CN=\"Lee, Young\";PARTSTAT=NEEDS-ACTION:mailto:Lee@Example.com\r\n\
        ATTENDEE;SCHEDULE-AGENT=CLIENT:mailto:park@example.com\r\n\
        ATTENDEE;CUTYPE=ROOM:mailto:room-a@yeyak.local\r\n\
        ATTENDEE:mailto:choi@example.com\r\nATTENDEE:mailto:lee@example.com\r\n\
        ATTENDEE:urn:uuid:x\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\n\
        END:VEVENT\r\nEND:VCALENDAR\r\n";

    #[test]
    fn guests_are_the_mail_attendees_yeyak_schedules() {
        let is_room = |a: &str| a.contains("room-");
        let got = guests(EVENT, &is_room, Some("kim@example.com"));
        assert_eq!(
            got,
            vec![
                Guest { address: "lee@example.com".into(), name: Some("Lee, Young".into()) },
                Guest { address: "choi@example.com".into(), name: None },
            ]
        );
    }

    #[test]
    fn a_message_carries_its_method_without_alarms() {
        let request = as_message(EVENT, Method::Request);
        assert!(request.starts_with("BEGIN:VCALENDAR\r\nMETHOD:REQUEST\r\nVERSION:2.0\r\n"), "{request}");
        assert!(!request.contains("VALARM") && request.contains("STATUS:CONFIRMED"), "{request}");
        assert_eq!(sequence(EVENT), 0);
        assert_eq!(sequence(&EVENT.replace("UID:u\r\n", "UID:u\r\nSEQUENCE:3\r\n")), 3);
        let cancel = as_message(&request, Method::Cancel);
        assert_eq!(cancel.matches("METHOD:").count(), 1, "{cancel}");
        assert!(cancel.contains("METHOD:CANCEL\r\n") && cancel.contains("STATUS:CANCELLED\r\nEND:VEVENT"), "{cancel}");
        assert!(!cancel.contains("STATUS:CONFIRMED"), "{cancel}");
    }
}
