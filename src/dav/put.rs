//! A calendar app's `PUT` and `DELETE` in a person's `bookings/` (SPEC §23),
//! each one command: in one transaction the object is stored as sent (with
//! yeyak's own fields written in, `calendar::object`) and its rooms answer
//! it (`dav::answer`: booked, moved or released through the JSON API's
//! commands); the `PUT` succeeds whether or not they could be booked.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::answer::{self, Asked, Request};
use super::invitation::Invitation;
use super::objects::{self, Put};
use super::schedule::{self, Told, Version};
use super::sent::Object;
use crate::calendar::object::{self, Owned};
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::booking::{self};
use crate::rooms::domain::Title;

pub static PUT: Operation = Operation::new("calendar_object.put", &[Role::Staff, Role::Admin]);
pub static DELETE: Operation = Operation::new("calendar_object.delete", &[Role::Staff, Role::Admin]);

/// A `PUT` of one object.
pub struct StoreObject {
    pub name: String,
    pub object: Object,
    /// The body as sent.
    pub body: String,
    /// What its rooms are asked for: `None` when it invites no room (or is
    /// cancelled, or a to-do); a refusal found before any booking (a time a
    /// room cannot hold) is the rooms' answer.
    pub asked: Option<Result<Asked, ApiError>>,
    pub organizer_name: Title,
    /// `ORGANIZER`'s parameters and address (`;CN=…:mailto:…`).
    pub organizer: String,
    /// `If-None-Match: *`: only a new object.
    pub only_new: bool,
    /// `If-Match`: only over this version.
    pub if_match: Option<String>,
    pub room_domain: String,
    /// The booking or series a default name (`booking-7.ics`) names: a
    /// booking made through another door, which a first `PUT` at that name
    /// adopts instead of booking again (when the person organizes it).
    pub adopt: (Option<i64>, Option<i64>),
}

/// What a `PUT` did.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stored {
    /// 201 (`true`) or 204, with the ETag when the stored bytes are those sent.
    Done { created: bool, etag: Option<String> },
    /// 412: `If-None-Match: *` met an object, or `If-Match` another version.
    PreconditionFailed,
    /// 409 `CALDAV:no-uid-conflict`: the UID is another live object's.
    UidConflict { name: String },
}

/// An ETag of stored bytes: strong, a digest of them.
pub fn etag_of(body: &str) -> String {
    format!("\"{}\"", &hex::encode(Sha256::digest(body.as_bytes()))[..32])
}

impl StoreObject {
    /// [`StoreObject::adopt`], when the person organizes what it names.
    async fn adopted(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<(Option<i64>, Option<i64>), CommandError> {
        let digest = ctx.principal.digest();
        Ok(match self.adopt {
            (Some(id), _) => match booking::find(conn, id).await? {
                Some(b) if b.organizer_digest == digest.as_str() && b.series_id.is_none() => (Some(id), None),
                _ => (None, None),
            },
            (_, Some(id)) => match crate::series::store::find(conn, id).await? {
                Some(s) if s.organizer_digest == digest.as_str() => (None, Some(id)),
                _ => (None, None),
            },
            _ => (None, None),
        })
    }

    fn invitation(&self) -> Option<&Invitation> {
        match &self.object {
            Object::Event(inv) => Some(inv),
            Object::Todo { .. } => None,
        }
    }
}

impl Command for StoreObject {
    type Output = Stored;

    fn operation(&self) -> &'static Operation {
        &PUT
    }

    fn fingerprint(&self) -> Value {
        json!({ "name": self.name, "body": etag_of(&self.body) })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Stored, CommandError> {
        let Some(staff_id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(ErrorCode::Forbidden, "only a person has calendars").into());
        };
        let existing = objects::lock_by_name(conn, staff_id, &self.name).await?;
        let live = existing.as_ref().filter(|e| e.is_live());
        if self.only_new && live.is_some_and(|e| e.body.is_some()) {
            return Ok(Stored::PreconditionFailed);
        }
        if let Some(want) = &self.if_match {
            let current = live.and_then(|e| e.etag.as_deref());
            if !want.split(',').any(|t| t.trim() == "*" && current.is_some() || Some(t.trim()) == current) {
                return Ok(Stored::PreconditionFailed);
            }
        }
        if let Some(e) = live.filter(|e| e.uid != self.object.uid()) {
            let _ = e;
            return Ok(Stored::UidConflict { name: self.name.clone() });
        }
        let before = match live {
            Some(e) => (e.reservation_id, e.series_id),
            None => self.adopted(conn, ctx).await?,
        };
        let request =
            Request { asked: &self.asked, invitation: self.invitation(), organizer_name: &self.organizer_name };
        let booked = request.book(conn, ctx, before).await?;
        let answer = booked.answer.clone();
        let is_room = |address: &str| crate::calendar::address::room_code(address, &self.room_domain).is_some();
        let room = |address: &str| is_room(address).then(|| answer.clone()).flatten();
        let organizer = matches!(self.object, Object::Event(_)).then_some(self.organizer.as_str());
        let merged = object::merge(&self.body, &Owned { organizer, room: &room });
        let etag = etag_of(&merged);
        let unchanged = live.is_some_and(|e| {
            e.etag.as_deref() == Some(etag.as_str())
                && (e.reservation_id, e.series_id) == (booked.reservation_id, booked.series_id)
        });
        let created = live.is_none_or(|e| e.body.is_none());
        if !unchanged {
            let (starts_at, ends_at) = match self.invitation() {
                Some(inv) if inv.rrule.is_some() => (Some(inv.starts_at), None),
                Some(inv) => (Some(inv.starts_at), Some(inv.ends_at.max(inv.starts_at))),
                None => (None, None),
            };
            let put = Put {
                staff_id,
                name: &self.name,
                uid: self.object.uid(),
                component: self.object.component(),
                body: &merged,
                etag: &etag,
                reservation_id: booked.reservation_id,
                series_id: booked.series_id,
                starts_at,
                ends_at,
                now: ctx.now,
            };
            if objects::store(conn, &put).await?.is_none() {
                // Another live object took this UID: undo every booking above.
                return Err(ApiError::new(ErrorCode::UidConflict, "this UID is another event's").into());
            }
            let told = Told {
                staff_id,
                room_domain: &self.room_domain,
                before: live.and_then(|e| Some((e.body.as_deref()?, e.etag.as_deref()?))),
                after: Some(Version { text: &merged, object: &self.object, etag: &etag }),
                refused: booked.refused.as_ref(),
            };
            schedule::tell(conn, ctx, &told).await?;
        }
        let etag = (merged == self.body).then_some(etag);
        Ok(Stored::Done { created, etag })
    }
}

/// A `DELETE` of a stored object: what it booked is cancelled, the object
/// becomes a tombstone.
pub struct DeleteObject {
    pub name: String,
    pub if_match: Option<String>,
    pub room_domain: String,
}

impl Command for DeleteObject {
    /// `None`: no such object; `Some(false)`: `If-Match` failed.
    type Output = Option<bool>;

    fn operation(&self) -> &'static Operation {
        &DELETE
    }

    fn fingerprint(&self) -> Value {
        json!({ "name": self.name })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Option<bool>, CommandError> {
        let Some(staff_id) = ctx.principal.staff_id() else { return Ok(None) };
        let Some(found) = objects::lock_by_name(conn, staff_id, &self.name).await? else { return Ok(None) };
        if !found.is_live() || found.body.is_none() {
            return Ok(None);
        }
        if let Some(want) = &self.if_match {
            if !want.split(',').any(|t| t.trim() == "*" || Some(t.trim()) == found.etag.as_deref()) {
                return Ok(Some(false));
            }
        }
        answer::release(conn, ctx, (found.reservation_id, found.series_id)).await?;
        objects::bury(conn, found.id, ctx.now).await?;
        let before = found.body.as_deref().zip(found.etag.as_deref());
        let told = Told { staff_id, room_domain: &self.room_domain, before, after: None, refused: None };
        schedule::tell(conn, ctx, &told).await?;
        Ok(Some(true))
    }
}
