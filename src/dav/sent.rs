//! What a `PUT` into a person's collection sends (SPEC §23): an event,
//! which may invite rooms, or a to-do, stored like any object and booking
//! nothing (a `VJOURNAL` is refused by the event reader).

use chrono_tz::Tz;
use icalendar::parser::Component;

use super::invitation::{self, invalid, is, prop, Invitation, Refusal};
use crate::calendar::ics::read;

/// What a `PUT` into a person's collection holds (SPEC §23).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Object {
    /// An event, which may invite rooms.
    Event(Invitation),
    /// A to-do: stored and synced like any object; it books nothing.
    Todo { uid: String },
}

impl Object {
    pub fn uid(&self) -> &str {
        match self {
            Object::Event(inv) => &inv.uid,
            Object::Todo { uid } => uid,
        }
    }

    pub fn component(&self) -> &'static str {
        match self {
            Object::Event(_) => "VEVENT",
            Object::Todo { .. } => "VTODO",
        }
    }
}

/// Reads a `PUT` body into the event or to-do it holds (one kind, one UID).
pub fn read_object(text: &str, home: Tz, room_domain: &str) -> Result<Object, Refusal> {
    let unfolded = read::unfold(text);
    let roots = read::components(&unfolded).map_err(|e| invalid(e.reason()))?;
    let calendar = match roots.as_slice() {
        [one] if is(one.name.as_str(), "VCALENDAR") => one,
        _ => return Err(invalid("the body must be one VCALENDAR")),
    };
    let todos: Vec<&Component<'_>> = calendar.components.iter().filter(|c| is(c.name.as_str(), "VTODO")).collect();
    let has_event = calendar.components.iter().any(|c| is(c.name.as_str(), "VEVENT"));
    if todos.is_empty() || has_event {
        return invitation::read(text, home, room_domain).map(Object::Event);
    }
    let uid = prop(todos[0], "UID").map(|p| p.val.as_str().trim().to_owned()).unwrap_or_default();
    if uid.is_empty() || uid.len() > 255 || uid.chars().any(crate::text::is_forbidden) {
        return Err(invalid("the VTODO needs a UID of 1-255 plain characters"));
    }
    if todos.iter().any(|t| prop(t, "UID").is_none_or(|p| p.val.as_str().trim() != uid)) {
        return Err(invalid("every VTODO of one resource has the same UID"));
    }
    Ok(Object::Todo { uid })
}
