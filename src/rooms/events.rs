//! What a change of a booking leaves behind, in the change's transaction:
//! a history event (who, when, before and after) and a notification intent
//! in the outbox with a stable delivery id (`booking-{id}-v{version}-changed`,
//! `booking-{id}-released`). Every writer calls one of these, so no change can
//! skip its record or its notice.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::booking::Booking;
use super::domain::Status;
use crate::command::Ctx;
use crate::db::Conn;
use crate::history::{self, Action, Changes};
use crate::outbox::{self, Intent, Kind};

/// The notice of a booking's change for the outbox.
pub fn intent(b: &Booking, action: Action) -> Option<Intent> {
    let kind = match action {
        Action::Created | Action::Restored => Kind::BookingCreated,
        Action::Moved | Action::Retitled => Kind::BookingMoved,
        Action::Cancelled => Kind::BookingCancelled,
        Action::Approved => Kind::BookingApproved,
        Action::Rejected => Kind::BookingRejected,
        Action::Released => Kind::BookingReleased,
        // Nothing to tell the organizer who just checked in.
        Action::CheckedIn => return None,
    };
    let delivery_id = match action {
        Action::Released => format!("booking-{}-released", b.id),
        _ => format!("booking-{}-v{}-changed", b.id, b.version),
    };
    Some(Intent { delivery_id, kind, payload: payload(b, action) })
}

/// What receivers get: enough to show and file the booking, nothing secret.
pub fn payload(b: &Booking, action: Action) -> serde_json::Value {
    json!({
        "bookingId": b.id,
        "version": b.version,
        "action": action,
        "status": b.status,
        "title": b.title,
        "organizer": b.organizer,
        "organizerStaffId": b.organizer_staff_id,
        "bookedBy": b.booked_by,
        "rooms": b.rooms,
        "startsAt": b.starts_at,
        "endsAt": b.ends_at,
        "seriesId": b.series_id,
        // The zone of its rooms' area, in which mail shows its times (SPEC §24).
        "timeZone": b.time_zone,
    })
}

fn created_changes(b: &Booking) -> Changes {
    Changes::new()
        .set("title", &b.title)
        .set("rooms", &b.rooms)
        .set("startsAt", b.starts_at)
        .set("endsAt", b.ends_at)
        .set("status", b.status)
}

/// Writes the notices: to the webhook channel always, and by mail to
/// organizers with an email when mail is on. A booking that moved, went or
/// was shortened withdraws its pending reminder.
async fn enqueue(conn: &mut Conn, notices: Vec<(Intent, &Booking)>, ctx: &Ctx<'_>) -> diesel::QueryResult<()> {
    if notices.is_empty() {
        return Ok(());
    }
    let withdrawn: Vec<i64> =
        notices.iter().filter(|(i, _)| i.kind != Kind::BookingCreated).map(|(_, b)| b.id).collect();
    outbox::withdraw_reminders(conn, &withdrawn).await?;
    if ctx.policy.mail {
        let mut mail: Vec<(Intent, i64)> =
            notices.iter().filter_map(|(i, b)| b.organizer_staff_id.map(|s| (i.clone(), s))).collect();
        // A delegate's booking: they get the organizer's mail too (SPEC §25).
        mail.extend(notices.iter().filter_map(|(i, b)| {
            let delegate = b.booked_by_staff_id.filter(|d| Some(*d) != b.organizer_staff_id)?;
            Some((Intent { delivery_id: format!("{}-booked-by", i.delivery_id), ..i.clone() }, delegate))
        }));
        outbox::enqueue_mail(conn, &mail, ctx.now).await?;
    }
    // Created or moved inside the reminder window: its reminder at once, not
    // at the next sweep (only confirmed bookings of people with an email get one).
    if let Some(ahead) = ctx.policy.reminder_ahead {
        let soon: Vec<i64> = notices
            .iter()
            .filter(|(i, b)| i.kind != Kind::BookingCancelled && b.starts_at <= ctx.now + ahead)
            .map(|(_, b)| b.id)
            .collect();
        if !soon.is_empty() {
            outbox::reminders::enqueue(conn, ctx.now, ahead, Some(&soon)).await?;
        }
    }
    let intents: Vec<Intent> = notices.into_iter().map(|(i, _)| i).collect();
    outbox::enqueue_all(conn, &intents, ctx.now).await?;
    Ok(())
}

/// New bookings (one, or a series' occurrences).
pub async fn created(conn: &mut Conn, bookings: &[&Booking], ctx: &Ctx<'_>) -> diesel::QueryResult<()> {
    let events = bookings.iter().map(|b| (b.id, created_changes(b))).collect();
    history::record_many(conn, events, Action::Created, ctx.principal, ctx.now).await?;
    enqueue(conn, bookings.iter().filter_map(|b| intent(b, Action::Created).map(|i| (i, *b))).collect(), ctx).await
}

/// The fields a change touched.
fn diff(before: &Booking, after: &Booking) -> Changes {
    Changes::new()
        .diff("title", &before.title, &after.title)
        .diff("rooms", &before.rooms, &after.rooms)
        .diff("startsAt", before.starts_at, after.starts_at)
        .diff("endsAt", before.ends_at, after.ends_at)
        .diff("status", before.status, after.status)
        .diff("checkedInAt", before.checked_in_at, after.checked_in_at)
        .diff("private", before.private, after.private)
}

/// What kind of change turned `before` into `after`.
pub fn action_of(before: &Booking, after: &Booking) -> Action {
    if after.status == Status::Cancelled && before.status != Status::Cancelled {
        Action::Cancelled
    } else if after.checked_in_at.is_some() && before.checked_in_at.is_none() && before.starts_at == after.starts_at {
        Action::CheckedIn
    } else if before.starts_at != after.starts_at || before.ends_at != after.ends_at || before.rooms != after.rooms {
        Action::Moved
    } else {
        Action::Retitled
    }
}

/// One booking changed by a command (move, retitle, cancel, check-in).
pub async fn changed(conn: &mut Conn, before: &Booking, after: &Booking, ctx: &Ctx<'_>) -> diesel::QueryResult<()> {
    let action = action_of(before, after);
    history::record(conn, after.id, action, ctx.principal, diff(before, after), ctx.now).await?;
    enqueue(conn, intent(after, action).map(|i| (i, after)).into_iter().collect(), ctx).await
}

/// Many bookings changed the same way by one command.
pub async fn changed_many(
    conn: &mut Conn,
    pairs: &[(&Booking, &Booking)],
    action: Action,
    ctx: &Ctx<'_>,
) -> diesel::QueryResult<()> {
    let events = pairs.iter().map(|(b, a)| (a.id, diff(b, a))).collect();
    history::record_many(conn, events, action, ctx.principal, ctx.now).await?;
    enqueue(conn, pairs.iter().filter_map(|(_, a)| intent(a, action).map(|i| (i, *a))).collect(), ctx).await
}

/// An admin's approval or rejection, with the reason given.
pub async fn decided(
    conn: &mut Conn,
    before: &Booking,
    after: &Booking,
    reason: Option<&str>,
    ctx: &Ctx<'_>,
) -> diesel::QueryResult<()> {
    let action = if after.status == Status::Confirmed { Action::Approved } else { Action::Rejected };
    let mut changes = diff(before, after);
    if let Some(reason) = reason {
        changes = changes.set("reason", reason);
    }
    history::record(conn, after.id, action, ctx.principal, changes, ctx.now).await?;
    enqueue(conn, intent(after, action).map(|i| (i, after)).into_iter().collect(), ctx).await
}

/// No-shows released by the sweeper: `ends` holds each booking's end before.
pub async fn released(
    conn: &mut Conn,
    after: &[Booking],
    ends: &[(i64, DateTime<Utc>)],
    ctx: &Ctx<'_>,
) -> diesel::QueryResult<()> {
    let events = after
        .iter()
        .map(|a| {
            let old_end = ends.iter().find(|(id, _)| *id == a.id).map_or(a.ends_at, |(_, e)| *e);
            let changes = Changes::new()
                .diff("endsAt", old_end, a.ends_at)
                .diff("status", Status::Confirmed, a.status)
                .set("releasedAt", a.released_at);
            (a.id, changes)
        })
        .collect();
    history::record_many(conn, events, Action::Released, ctx.principal, ctx.now).await?;
    enqueue(conn, after.iter().filter_map(|a| intent(a, Action::Released).map(|i| (i, a))).collect(), ctx).await
}
