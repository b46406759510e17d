//! The CalDAV properties of the door's resources (RFC 4791, RFC 6638):
//! calendar data and what a calendar holds, and the scheduling addresses
//! of people and rooms.

use super::Described;
use crate::calendar::address;
use crate::dav::path::{self, Resource};
use crate::dav::xml::{Node, CALDAV};
use crate::dav::Door;

/// The value of a `CALDAV:` property of `d`, if it has one.
pub fn value(door: &Door<'_>, d: &Described, name: &str) -> Option<Node> {
    let me = &door.caller.username;
    let node = |ns: &str, name: &str| Node::new(ns, name);
    match (CALDAV, name) {
        (CALDAV, "calendar-data") => match d {
            Described::Member { data: Some(data), .. } => Some(node(CALDAV, "calendar-data").with_text(data.clone())),
            _ => None,
        },
        (CALDAV, "supported-calendar-component-set") => match d {
            Described::Calendar { .. } => {
                Some(node(CALDAV, "supported-calendar-component-set").with(node(CALDAV, "comp").attr("name", "VEVENT")))
            }
            Described::Inbox { .. } | Described::Outbox { .. } => Some(
                node(CALDAV, "supported-calendar-component-set")
                    .with(node(CALDAV, "comp").attr("name", "VEVENT"))
                    .with(node(CALDAV, "comp").attr("name", "VFREEBUSY")),
            ),
            _ => None,
        },
        (CALDAV, "supported-calendar-data") => match d {
            Described::Calendar { .. } => Some(
                node(CALDAV, "supported-calendar-data")
                    .with(node(CALDAV, "calendar-data").attr("content-type", "text/calendar").attr("version", "2.0")),
            ),
            _ => None,
        },
        (CALDAV, "max-resource-size") => match d {
            Described::Calendar { .. } => {
                Some(node(CALDAV, "max-resource-size").with_text(crate::dav::BODY_LIMIT.to_string()))
            }
            _ => None,
        },
        (CALDAV, "calendar-home-set") => match d {
            Described::Person { username, .. } => {
                Some(node(CALDAV, "calendar-home-set").with(Node::href(Resource::Home(username.clone()).href())))
            }
            _ => None,
        },
        (CALDAV, "calendar-user-address-set") => {
            let mut hrefs = Vec::new();
            match d {
                Described::Person { email, .. } => {
                    if let Some(email) = email {
                        hrefs.push(address::mailto(email));
                    }
                }
                Described::RoomPrincipal { code, .. } => {
                    hrefs.push(address::room_uri(code, &door.state.room_mail_domain))
                }
                _ => return None,
            }
            hrefs.push(d.href());
            Some(node(CALDAV, "calendar-user-address-set").with_all(hrefs.into_iter().map(Node::href)))
        }
        (CALDAV, "calendar-user-type") => match d {
            Described::Person { .. } => Some(node(CALDAV, "calendar-user-type").with_text("INDIVIDUAL")),
            Described::RoomPrincipal { .. } => Some(node(CALDAV, "calendar-user-type").with_text("ROOM")),
            _ => None,
        },
        (CALDAV, "schedule-inbox-URL") => match d {
            Described::Person { username, .. } if username == me => {
                Some(node(CALDAV, "schedule-inbox-URL").with(Node::href(Resource::Inbox(username.clone()).href())))
            }
            _ => None,
        },
        (CALDAV, "schedule-outbox-URL") => match d {
            Described::Person { username, .. } if username == me => {
                Some(node(CALDAV, "schedule-outbox-URL").with(Node::href(Resource::Outbox(username.clone()).href())))
            }
            _ => None,
        },
        (CALDAV, "schedule-default-calendar-URL") => match d {
            Described::Inbox { username } => {
                Some(node(CALDAV, "schedule-default-calendar-URL").with(Node::href(path::bookings_href(username))))
            }
            _ => None,
        },
        _ => None,
    }
}
