//! The WebDAV properties of the door's resources (RFC 4918, RFC 3744,
//! RFC 6578, and `getctag` of calendarserver.org): what each resource is,
//! its name, owner and privileges, the reports it answers, and the
//! validators clients sync by.

use super::{Calendar, Described, Prop};
use crate::dav::path::{self, Resource};
use crate::dav::xml::{Node, CALDAV, CS, DAV};
use crate::dav::Door;

fn privileges(names: &[(&str, &str)]) -> Node {
    Node::dav("current-user-privilege-set")
        .with_all(names.iter().map(|(ns, n)| Node::dav("privilege").with(Node::new(ns, n))))
}

fn reports(names: &[(&str, &str)]) -> Node {
    Node::dav("supported-report-set").with_all(
        names.iter().map(|(ns, n)| Node::dav("supported-report").with(Node::dav("report").with(Node::new(ns, n)))),
    )
}

const READ: [(&str, &str); 3] = [(DAV, "read"), (DAV, "read-current-user-privilege-set"), (CALDAV, "read-free-busy")];

/// The value of a `DAV:` (or calendarserver) property of `d`, if it has one.
pub fn value(door: &Door<'_>, d: &Described, p: &Prop) -> Option<Node> {
    let me = &door.caller.username;
    let collection = || Node::dav("collection");
    match (p.ns.as_str(), p.name.as_str()) {
        (DAV, "current-user-principal") => {
            Some(Node::dav("current-user-principal").with(Node::href(path::person_href(me))))
        }
        (DAV, "principal-collection-set") => {
            Some(Node::dav("principal-collection-set").with(Node::href(Resource::Principals.href())))
        }
        (DAV, "resourcetype") => {
            let kinds: Vec<Node> = match d {
                Described::Member { .. } => vec![],
                Described::Person { .. } | Described::RoomPrincipal { .. } => {
                    vec![collection(), Node::dav("principal")]
                }
                Described::Calendar { .. } => vec![collection(), Node::caldav("calendar")],
                Described::Inbox { .. } => vec![collection(), Node::caldav("schedule-inbox")],
                Described::Outbox { .. } => vec![collection(), Node::caldav("schedule-outbox")],
                _ => vec![collection()],
            };
            Some(Node::dav("resourcetype").with_all(kinds))
        }
        (DAV, "displayname") => {
            let words = crate::i18n::I18n::new(door.lang);
            let name = match d {
                Described::Root => "yeyak".to_owned(),
                Described::Principals => words.t("dav-principals"),
                Described::RoomsHome => words.t("dav-rooms-home"),
                Described::Person { display_name, .. } => display_name.clone(),
                Described::RoomPrincipal { name, .. } => name.clone(),
                Described::Home { .. } => words.t("dav-home"),
                Described::Calendar { calendar: Calendar::Bookings { display_name, .. }, .. } => {
                    words.t1("dav-bookings", "person", display_name.as_str())
                }
                Described::Calendar { calendar: Calendar::Room { name, .. }, .. } => name.clone(),
                Described::Inbox { .. } => words.t("dav-inbox"),
                Described::Outbox { .. } => words.t("dav-outbox"),
                Described::Member { .. } => return None,
            };
            Some(Node::dav("displayname").with_text(name))
        }
        (DAV, "principal-URL") => match d {
            Described::Person { .. } | Described::RoomPrincipal { .. } => {
                Some(Node::dav("principal-URL").with(Node::href(d.href())))
            }
            _ => None,
        },
        (DAV, "owner") => match d {
            Described::Calendar { calendar: Calendar::Room { code, .. }, .. } => {
                Some(Node::dav("owner").with(Node::href(Resource::RoomPrincipal(code.clone()).href())))
            }
            Described::Calendar { .. }
            | Described::Home { .. }
            | Described::Inbox { .. }
            | Described::Outbox { .. } => Some(Node::dav("owner").with(Node::href(path::person_href(me)))),
            _ => None,
        },
        (DAV, "current-user-privilege-set") => Some(match d {
            Described::Calendar { calendar: Calendar::Bookings { .. }, .. } => privileges(&[
                (DAV, "read"),
                (DAV, "write"),
                (DAV, "write-content"),
                (DAV, "write-properties"),
                (DAV, "bind"),
                (DAV, "unbind"),
                (DAV, "read-current-user-privilege-set"),
                (CALDAV, "read-free-busy"),
            ]),
            Described::Member { .. } if matches!(d, Described::Member { href, .. } if href.starts_with("/dav/calendars/rooms/")) => {
                privileges(&READ)
            }
            Described::Member { .. } => privileges(&[(DAV, "read"), (DAV, "write"), (DAV, "write-content")]),
            Described::Outbox { .. } => privileges(&[
                (DAV, "read"),
                (DAV, "read-current-user-privilege-set"),
                (CALDAV, "schedule-send"),
                (CALDAV, "schedule-send-freebusy"),
            ]),
            _ => privileges(&READ),
        }),
        (DAV, "supported-report-set") => match d {
            Described::Calendar { calendar: Calendar::Bookings { .. }, .. } => {
                Some(reports(&[(CALDAV, "calendar-query"), (CALDAV, "calendar-multiget"), (DAV, "sync-collection")]))
            }
            Described::Calendar { .. } => Some(reports(&[
                (CALDAV, "calendar-query"),
                (CALDAV, "calendar-multiget"),
                (DAV, "sync-collection"),
                (CALDAV, "free-busy-query"),
            ])),
            Described::Principals => Some(reports(&[(DAV, "principal-property-search")])),
            _ => Some(reports(&[])),
        },
        (DAV, "sync-token") => match d {
            Described::Calendar { token, .. } => Some(Node::dav("sync-token").with_text(token.uri())),
            _ => None,
        },
        (CS, "getctag") => match d {
            Described::Calendar { token, .. } => Some(Node::new(CS, "getctag").with_text(token.0.to_string())),
            _ => None,
        },
        (DAV, "getetag") => match d {
            Described::Member { member, .. } => Some(Node::dav("getetag").with_text(member.etag.clone())),
            _ => None,
        },
        (DAV, "getcontenttype") => match d {
            Described::Member { .. } => {
                Some(Node::dav("getcontenttype").with_text("text/calendar; charset=utf-8; component=vevent"))
            }
            _ => None,
        },
        _ => None,
    }
}
