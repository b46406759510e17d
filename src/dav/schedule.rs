//! What a person's stored event tells others by mail (SPEC §23, iMIP, RFC
//! 6047), queued in the transaction that stores it: colleagues get the
//! event as a `METHOD:REQUEST` when it is new or changes time, rooms or
//! summary (a colleague added gets it anyway) and a `METHOD:CANCEL` when it
//! goes or they are taken off it; the organizer gets a `METHOD:REPLY` from
//! each room that declined a new or changed event. Each message is written
//! whole here (`mail::prepared`): a colleague who is a yeyak person reads
//! it in their language, anyone else in the organizer's.

use std::collections::HashMap;

use chrono::DateTime;
use diesel::sql_types::{Array, Int8, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::invitation::Invitation;
use super::sent::{self, Object};
use crate::calendar::address::{mailto, room, room_code};
use crate::calendar::ics::{reply, Method, Organizer, Reply, Room};
use crate::calendar::message::{as_message, guests, sequence, Guest};
use crate::command::{CommandError, Ctx};
use crate::db::Conn;
use crate::error::ApiError;
use crate::i18n::{I18n, Lang};
use crate::mail::prepared::Prepared;

/// One version of a stored object.
pub struct Version<'a> {
    pub text: &'a str,
    pub object: &'a Object,
    pub etag: &'a str,
}

impl<'a> Version<'a> {
    /// The event, unless it is a to-do.
    fn event(&self) -> Option<&'a Invitation> {
        match self.object {
            Object::Event(inv) => Some(inv),
            Object::Todo { .. } => None,
        }
    }

    /// The event while it still takes place.
    fn live(&self) -> Option<&'a Invitation> {
        self.event().filter(|inv| !inv.cancelled)
    }
}

/// A change of a person's object: what was stored, what is now (`None`:
/// deleted), and why its rooms declined it (`None`: they did not).
pub struct Told<'a> {
    pub staff_id: i64,
    pub room_domain: &'a str,
    /// What was stored before: its text and ETag (read here, and only when
    /// these messages are sent at all).
    pub before: Option<(&'a str, &'a str)>,
    pub after: Option<Version<'a>>,
    pub refused: Option<&'a ApiError>,
}

#[derive(QueryableByName)]
struct Person {
    #[diesel(sql_type = Text)]
    display_name: String,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    language: Option<String>,
}

#[derive(QueryableByName)]
struct Named {
    #[diesel(sql_type = Text)]
    code: String,
    #[diesel(sql_type = Text)]
    name: String,
    /// Its area's zone, the one mail writes the event's time in (SPEC §24).
    #[diesel(sql_type = Text)]
    time_zone: String,
}

/// Whether two versions ask the same of everyone: time, repetition, rooms
/// and summary (a description or an alarm changes nothing for the others).
fn asks_the_same(a: &Invitation, b: &Invitation) -> bool {
    let rooms = |inv: &Invitation| {
        let mut r: Vec<String> = inv.rooms.iter().map(|c| c.to_lowercase()).collect();
        r.sort();
        r
    };
    (a.starts_at, a.ends_at, &a.rrule, &a.exdates, &a.overrides, &a.summary)
        == (b.starts_at, b.ends_at, &b.rrule, &b.exdates, &b.overrides, &b.summary)
        && rooms(a) == rooms(b)
}

/// Queues what `told` tells others, in the caller's transaction.
pub async fn tell(conn: &mut Conn, ctx: &Ctx<'_>, told: &Told<'_>) -> Result<(), CommandError> {
    if !(ctx.policy.mail && ctx.policy.imip) {
        return Ok(());
    }
    let was = told.before.and_then(|(text, etag)| {
        Some((text, sent::read_object(text, ctx.policy.timezone, told.room_domain).ok()?, etag))
    });
    let previous: Option<Version<'_>> = was.as_ref().map(|(text, object, etag)| Version { text, object, etag });
    let before = previous.as_ref().and_then(|v| v.live().map(|inv| (v, inv)));
    let after = told.after.as_ref().and_then(|v| v.live().map(|inv| (v, inv)));
    if before.is_none() && after.is_none() {
        return Ok(());
    }
    let organizer: Person = diesel::sql_query("SELECT display_name, email, language FROM staff_user WHERE id = $1")
        .bind::<Int8, _>(told.staff_id)
        .get_result(conn)
        .await?;
    let own = organizer.email.as_deref().map(str::to_lowercase);
    let is_room = |address: &str| room_code(address, told.room_domain).is_some();
    let guests_of = |v: Option<(&Version<'_>, &Invitation)>| -> Vec<Guest> {
        v.map(|(v, _)| guests(v.text, &is_room, own.as_deref())).unwrap_or_default()
    };
    let (was, now) = (guests_of(before), guests_of(after));
    let changed = match (before, after) {
        (Some((_, b)), Some((_, a))) => !asks_the_same(b, a),
        _ => true,
    };
    let invited: Vec<&Guest> = match after {
        Some(_) => now.iter().filter(|g| changed || !was.iter().any(|w| w.address == g.address)).collect(),
        None => Vec::new(),
    };
    let dropped: Vec<&Guest> =
        was.iter().filter(|g| after.is_none() || !now.iter().any(|n| n.address == g.address)).collect();
    let replies = changed && after.is_some() && told.refused.is_some();
    if invited.is_empty() && dropped.is_empty() && !replies {
        return Ok(());
    }
    let addresses: Vec<String> = invited.iter().chain(&dropped).map(|g| g.address.clone()).collect();
    let languages = languages_of(conn, &addresses).await?;
    let codes: Vec<String> =
        [before, after].iter().flatten().flat_map(|(_, inv)| &inv.rooms).map(|c| c.to_lowercase()).collect();
    let rooms: Vec<Named> = diesel::sql_query(format!(
        "SELECT code, name, {} AS time_zone FROM room WHERE lower(code) = ANY($1) ORDER BY code",
        crate::catalogue::domain::ROOM_ZONE_SQL
    ))
    .bind::<Array<Text>, _>(&codes)
    .load(conn)
    .await?;
    let mut writer = Writer {
        rooms,
        ctx,
        organizer: &organizer,
        own_lang: lang_of(organizer.language.as_deref()),
        version: told.after.as_ref().or(previous.as_ref()).map_or("", |v| v.etag),
        staff_id: told.staff_id,
        rows: Vec::new(),
    };
    if let Some((v, inv)) = after {
        let calendar = as_message(v.text, Method::Request);
        for g in invited {
            writer.mail_guest(g, languages.get(&g.address).copied(), inv, &calendar, Method::Request);
        }
    }
    if let Some((v, inv)) = before {
        // A deleted or cancelled event is cancelled as it was last sent; an
        // attendee taken off a live one gets it as it was when invited.
        let text = match &told.after {
            Some(a) if after.is_none() => a.text,
            _ => v.text,
        };
        let calendar = as_message(text, Method::Cancel);
        for g in dropped {
            writer.mail_guest(g, languages.get(&g.address).copied(), inv, &calendar, Method::Cancel);
        }
    }
    if let (Some((v, inv)), Some(refused), true) = (after, told.refused, changed) {
        writer.replies(told.room_domain, v.text, inv, refused);
    }
    crate::outbox::enqueue_prepared(conn, &writer.rows, ctx.now).await?;
    Ok(())
}

fn lang_of(tag: Option<&str>) -> Lang {
    tag.and_then(Lang::parse_exact).unwrap_or_default()
}

/// The languages of the addresses that are yeyak people's.
async fn languages_of(conn: &mut Conn, addresses: &[String]) -> Result<HashMap<String, Lang>, CommandError> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Text)]
        email: String,
        #[diesel(sql_type = Nullable<Text>)]
        language: Option<String>,
    }
    if addresses.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT lower(email) AS email, language FROM staff_user WHERE lower(email) = ANY($1) AND disabled_at IS NULL",
    )
    .bind::<Array<Text>, _>(addresses)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.email, lang_of(r.language.as_deref()))).collect())
}

/// Writes the messages of one change.
struct Writer<'a> {
    /// The rooms the versions name (code, name).
    rooms: Vec<Named>,
    ctx: &'a Ctx<'a>,
    organizer: &'a Person,
    own_lang: Lang,
    /// The ETag of the version that caused them.
    version: &'a str,
    staff_id: i64,
    rows: Vec<(String, &'static str, Value)>,
}

impl Writer<'_> {
    /// A delivery id unique to this change, kind and recipient.
    fn id(&self, kind: &str, to: &str) -> String {
        let mut h = Sha256::new();
        for part in [&self.staff_id.to_string(), self.version, &self.ctx.now.timestamp_micros().to_string(), kind, to] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        format!("imip-{}", &hex::encode(h.finalize())[..32])
    }

    fn push(&mut self, kind: &'static str, p: Prepared) {
        let id = self.id(kind, &format!("{}|{}", p.from.as_deref().unwrap_or(""), p.to));
        self.rows.push((id, kind, serde_json::to_value(p).expect("a prepared message is JSON")));
    }

    /// The event's time in its first room's area's zone (named when it is
    /// not the installation's), else the installation's.
    fn when(&self, i18n: &I18n, inv: &Invitation) -> String {
        let home = self.ctx.policy.timezone;
        crate::mail::when_in(i18n, inv.starts_at, inv.ends_at, self.zone(inv), home)
    }

    fn zone(&self, inv: &Invitation) -> chrono_tz::Tz {
        self.rooms
            .iter()
            .find(|r| inv.rooms.iter().any(|c| c.eq_ignore_ascii_case(&r.code)))
            .and_then(|r| r.time_zone.parse().ok())
            .unwrap_or(self.ctx.policy.timezone)
    }

    /// The names of the event's rooms, as the catalogue writes them.
    fn names(&self, inv: &Invitation) -> Vec<String> {
        self.rooms
            .iter()
            .filter(|r| inv.rooms.iter().any(|c| c.eq_ignore_ascii_case(&r.code)))
            .map(|r| r.name.clone())
            .collect()
    }

    fn mail_guest(&mut self, g: &Guest, lang: Option<Lang>, inv: &Invitation, calendar: &str, method: Method) {
        let i18n = I18n::new(lang.unwrap_or(self.own_lang));
        let (tag, head, kind) = match method {
            Method::Cancel => ("imip-tag-cancel", "imip-head-cancel", "imip.cancel"),
            _ => ("imip-tag-request", "imip-head-request", "imip.request"),
        };
        let when = self.when(&i18n, inv);
        let title = inv.summary.replace(['\r', '\n'], " ");
        let name = g.name.clone().unwrap_or_else(|| g.address.clone());
        let rooms = self.names(inv).join(", ");
        let mut text = vec![
            i18n.t1("mail-greeting", "name", &name),
            String::new(),
            i18n.t1(head, "organizer", &self.organizer.display_name),
            String::new(),
            i18n.t1("mail-field-title", "title", &title),
        ];
        if !rooms.is_empty() {
            text.push(i18n.t1("mail-field-rooms", "rooms", &rooms));
        }
        text.extend([
            i18n.t1("mail-field-when", "when", &when),
            String::new(),
            i18n.t("mail-signature"),
            String::new(),
        ]);
        let p = Prepared {
            from: self.organizer.email.clone(),
            from_name: Some(self.organizer.display_name.clone()),
            to: g.address.clone(),
            to_name: g.name.clone(),
            subject: i18n.t3("mail-subject", "tag", i18n.t(tag), "title", &title, "when", &when),
            text: text.join("\n"),
            calendar: calendar.to_owned(),
            method: method.as_str().to_owned(),
        };
        self.push(kind, p);
    }

    /// One `METHOD:REPLY` per declining room to the organizer, when they
    /// have a mail address.
    fn replies(&mut self, domain: &str, text: &str, inv: &Invitation, refused: &ApiError) {
        let Some(email) = self.organizer.email.clone() else { return };
        let i18n = I18n::new(self.own_lang);
        let code = refused.code.name();
        let reason = crate::i18n::api::message(self.own_lang, &code, &refused.details, &refused.message)
            .unwrap_or_else(|| refused.message.clone());
        let first = refused.details["conflicts"][0]["startsAt"]
            .as_str()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|d| i18n.date_short(d.with_timezone(&self.zone(inv)).date_naive()));
        let title = inv.summary.replace(['\r', '\n'], " ");
        let when = self.when(&i18n, inv);
        let sequence = sequence(text);
        let organizer_address = mailto(&email);
        let rooms: Vec<&Named> =
            self.rooms.iter().filter(|r| inv.rooms.iter().any(|c| c.eq_ignore_ascii_case(&r.code))).collect();
        let mut out = Vec::new();
        for r in rooms {
            let mut body = vec![
                i18n.t1("mail-greeting", "name", &self.organizer.display_name),
                String::new(),
                i18n.t2("imip-head-declined", "room", &r.name, "title", &title),
                String::new(),
                i18n.t1("mail-field-when", "when", &when),
                i18n.t1("imip-reason", "reason", &reason),
            ];
            body.extend(first.iter().map(|d| i18n.t1("imip-first-refused", "date", d)));
            body.extend([String::new(), i18n.t("mail-signature"), String::new()]);
            let calendar = reply(&Reply {
                uid: &inv.uid,
                sequence,
                stamp: self.ctx.now,
                summary: &inv.summary,
                starts_at: inv.starts_at,
                ends_at: inv.ends_at,
                organizer: Organizer { name: &self.organizer.display_name, address: organizer_address.as_str().into() },
                room: Room::new(&r.code, &r.name, domain),
                partstat: "DECLINED",
                comment: &reason,
            });
            let p = Prepared {
                from: Some(room(&r.code, domain)),
                from_name: Some(r.name.clone()),
                to: email.clone(),
                to_name: Some(self.organizer.display_name.clone()),
                subject: i18n.t2("imip-subject-declined", "room", &r.name, "title", &title),
                text: body.join("\n"),
                calendar,
                method: Method::Reply.as_str().to_owned(),
            };
            out.push(p);
        }
        for p in out {
            self.push("imip.reply", p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn event(rooms: &[&str], summary: &str) -> Invitation {
        let t = DateTime::parse_from_rfc3339("2030-01-07T01:00:00Z").unwrap().with_timezone(&Utc);
        Invitation {
            uid: "u".into(),
            summary: summary.into(),
            starts_at: t,
            ends_at: t + chrono::Duration::hours(1),
            rooms: rooms.iter().map(|r| r.to_string()).collect(),
            rrule: None,
            exdates: Vec::new(),
            overrides: Vec::new(),
            cancelled: false,
            private: false,
        }
    }

    #[test]
    fn only_time_repetition_rooms_and_summary_ask_again() {
        let a = event(&["A", "b"], "Weekly");
        assert!(asks_the_same(&a, &event(&["B", "a"], "Weekly")));
        assert!(!asks_the_same(&a, &event(&["A"], "Weekly")));
        assert!(!asks_the_same(&a, &event(&["A", "B"], "Weekly!")));
        let mut later = a.clone();
        later.ends_at += chrono::Duration::minutes(30);
        assert!(!asks_the_same(&a, &later));
        let mut series = a.clone();
        series.rrule = Some("FREQ=WEEKLY;COUNT=3".into());
        assert!(!asks_the_same(&a, &series));
    }
}
