//! How the rooms of an event answer it (SPEC §23): what the event asks of
//! them, booked, moved or released through the JSON API's commands, each
//! inside a savepoint of the `PUT`'s transaction, so a room that cannot take
//! the event undoes only its booking and answers `DECLINED` with the API's
//! code. The rooms of one event are one booking (A+B books both, A+C
//! declines both); a series is asked as a whole, its `EXDATE`s and overrides
//! included.

use chrono::{DateTime, Utc};
use serde_json::json;

use super::invitation::Invitation;
use crate::calendar::object::RoomAnswer;
use crate::command::{Command, CommandError, Ctx};
use crate::db::{self, Conn, DbError};
use crate::error::{ApiError, ErrorCode};
use crate::rooms::booking::{self, Booking};
use crate::rooms::desks::When;
use crate::rooms::domain::{RequestedRooms, Status, TimeRange, Title};
use crate::rooms::store::{move_to, CancelBooking, CreateBooking, MoveBooking};
use crate::series::domain::Recurrence;
use crate::series::{CancelSeries, ChangeSeries, CreateSeries, OnConflict, SeriesChange};

/// What an event asks of its rooms, as valid values.
#[derive(Debug, Clone)]
pub struct Asked {
    pub rooms: RequestedRooms,
    pub title: Title,
    pub range: TimeRange,
    pub recurrence: Option<Recurrence>,
    /// `CLASS:PRIVATE` or `CONFIDENTIAL` (SPEC §26).
    pub private: bool,
}

/// What an event asks, as the `PUT` read it.
pub struct Request<'a> {
    /// `None` when it invites no room (or is cancelled, or a to-do); a
    /// refusal found before any booking (a time a room cannot hold) is the
    /// rooms' answer.
    pub asked: &'a Option<Result<Asked, ApiError>>,
    pub invitation: Option<&'a Invitation>,
    pub organizer_name: &'a Title,
}

/// What the event booked, and how its rooms answer.
pub struct Booked {
    pub reservation_id: Option<i64>,
    pub series_id: Option<i64>,
    pub answer: Option<RoomAnswer>,
    /// Why the rooms declined, as the JSON API would refuse it (its details
    /// name the dates and limits the reply mail names).
    pub refused: Option<ApiError>,
}

impl Booked {
    fn nothing() -> Self {
        Booked { reservation_id: None, series_id: None, answer: None, refused: None }
    }

    fn declined(err: &ApiError) -> Self {
        Booked {
            reservation_id: None,
            series_id: None,
            answer: Some(RoomAnswer::Declined(err.code.name())),
            refused: Some(err.clone()),
        }
    }
}

fn answer_of(status: Status) -> RoomAnswer {
    match status {
        Status::Pending => RoomAnswer::Tentative,
        Status::Confirmed | Status::Released => RoomAnswer::Accepted,
        Status::Cancelled | Status::Rejected => RoomAnswer::Declined(status.as_str().to_owned()),
    }
}

/// A refusal of a command run inside this one: `Some` when it is the
/// room's answer (the API's code), `None` for a database failure, which
/// ends the whole transaction (and a deadlock re-runs it).
fn refusal(e: &CommandError) -> Option<ApiError> {
    match e {
        CommandError::Reject(e) | CommandError::Invalid(e) => Some(e.clone()),
        CommandError::Db(DbError::RoomTimeTaken) => Some(ApiError::room_time_taken()),
        CommandError::Db(DbError::RoomBufferTaken) => Some(ApiError::room_buffer_taken()),
        CommandError::Db(DbError::DeskAlreadyBooked) => Some(DbError::DeskAlreadyBooked.into()),
        CommandError::Db(_) => None,
    }
}

/// Runs `work` in a savepoint: on a refusal it is undone and the refusal
/// answered; a database failure goes on up.
async fn attempt<T>(
    conn: &mut Conn,
    work: impl AsyncFnOnce(&mut Conn) -> Result<T, CommandError>,
) -> Result<Result<T, ApiError>, CommandError> {
    db::begin(conn).await?;
    let result = work(conn).await;
    match db::finish(conn, result).await {
        Ok(value) => Ok(Ok(value)),
        Err(e) => match refusal(&e) {
            Some(refused) => Ok(Err(refused)),
            None => Err(e),
        },
    }
}

impl Request<'_> {
    /// Books what the event asks for, given what it booked before.
    pub async fn book(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        before: (Option<i64>, Option<i64>),
    ) -> Result<Booked, CommandError> {
        let asked = match &self.asked {
            None => {
                release(conn, ctx, before).await?;
                return Ok(Booked::nothing());
            }
            Some(Err(refused)) => {
                release(conn, ctx, before).await?;
                return Ok(Booked::declined(refused));
            }
            Some(Ok(asked)) => asked,
        };
        let inv = self.invitation.expect("only events ask for rooms");
        match (before, &asked.recurrence) {
            ((Some(id), _), None) => {
                let current = booking::find(conn, id).await?;
                match current.filter(|b| b.status.is_live()) {
                    Some(b) => self.move_single(conn, ctx, b, asked).await,
                    None => self.create(conn, ctx, asked, inv).await,
                }
            }
            ((_, Some(series)), Some(recurrence)) => {
                let moved =
                    attempt(conn, async |conn| self.change_series(conn, ctx, series, asked, recurrence, inv).await)
                        .await?;
                match moved {
                    Ok(booked) => Ok(booked),
                    Err(refused) => {
                        release(conn, ctx, before).await?;
                        Ok(Booked::declined(&series_refusal(refused)))
                    }
                }
            }
            _ => {
                release(conn, ctx, before).await?;
                self.create(conn, ctx, asked, inv).await
            }
        }
    }

    async fn create(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        asked: &Asked,
        inv: &Invitation,
    ) -> Result<Booked, CommandError> {
        match &asked.recurrence {
            None => {
                let command = CreateBooking {
                    title: asked.title.clone(),
                    rooms: asked.rooms.clone(),
                    when: When::Range(asked.range),
                    organizer_name: self.organizer_name.clone(),
                    private: inv.private,
                };
                Ok(match attempt(conn, async |conn| command.run(conn, ctx).await).await? {
                    Ok(b) => Booked {
                        reservation_id: Some(b.id),
                        series_id: None,
                        answer: Some(answer_of(b.status)),
                        refused: None,
                    },
                    Err(refused) => Booked::declined(&refused),
                })
            }
            Some(recurrence) => {
                let made = attempt(conn, async |conn| self.create_in(conn, ctx, asked, recurrence, inv).await).await?;
                Ok(made.unwrap_or_else(|refused| Booked::declined(&series_refusal(refused))))
            }
        }
    }

    /// A booked single event that changed: moved (or given other rooms or
    /// another title) like `PATCH /api/bookings/{id}`; a room that cannot
    /// take the new time declines, and the old time is released.
    async fn move_single(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        b: Booking,
        asked: &Asked,
    ) -> Result<Booked, CommandError> {
        let same_rooms = asked.rooms.codes() == b.rooms.as_slice();
        if same_rooms && asked.range == b.time() && asked.title.as_str() == b.title && asked.private == b.private {
            return Ok(Booked {
                reservation_id: Some(b.id),
                series_id: None,
                answer: Some(answer_of(b.status)),
                refused: None,
            });
        }
        let change = move_to::Change {
            range: asked.range,
            title: (asked.title.as_str() != b.title).then(|| asked.title.clone()),
            expected_version: None,
            rooms: (!same_rooms).then(|| asked.rooms.clone()),
            private: (asked.private != b.private).then_some(asked.private),
        };
        let command = MoveBooking { id: b.id, change };
        match attempt(conn, async |conn| command.run(conn, ctx).await).await? {
            Ok(moved) => Ok(Booked {
                reservation_id: Some(moved.id),
                series_id: None,
                answer: Some(answer_of(moved.status)),
                refused: None,
            }),
            Err(refused) => {
                release(conn, ctx, (Some(b.id), None)).await?;
                Ok(Booked::declined(&refused))
            }
        }
    }

    /// A booked series that changed: the same rule, first day and rooms are
    /// retimed or retitled in place (`series.update`) with its exceptions;
    /// anything else is booked anew. Refused as a whole.
    async fn change_series(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        id: i64,
        asked: &Asked,
        recurrence: &Recurrence,
        inv: &Invitation,
    ) -> Result<Booked, CommandError> {
        let tz = ctx.policy.timezone;
        let Some(series) = crate::series::store::find(conn, id).await? else {
            return self.create_in(conn, ctx, asked, recurrence, inv).await;
        };
        let same_rule =
            Recurrence::parse(&series.recurrence, tz).is_ok_and(|stored| stored.rule() == recurrence.rule());
        let same_day =
            asked.range.starts_at().with_timezone(&tz).date_naive() == series.starts_at.with_timezone(&tz).date_naive();
        if !same_rule || !same_day || asked.rooms.codes() != series.rooms.as_slice() {
            CancelSeries { id, from: None }.run(conn, ctx).await?;
            return self.create_in(conn, ctx, asked, recurrence, inv).await;
        }
        let local = |t: DateTime<Utc>| t.with_timezone(&tz).time();
        let retimed = local(asked.range.starts_at()) != local(series.starts_at)
            || local(asked.range.ends_at()) != local(series.ends_at);
        let retitled = asked.title.as_str() != series.title;
        if retimed || retitled {
            let change = SeriesChange {
                title: retitled.then(|| asked.title.clone()),
                start_time: retimed.then(|| local(asked.range.starts_at())),
                end_time: retimed.then(|| local(asked.range.ends_at())),
                from: None,
            };
            ChangeSeries { id, change }.run(conn, ctx).await?;
        }
        let occurrences = crate::series::store::occurrences(conn, id).await?;
        apply_exceptions(conn, ctx, &occurrences, inv).await?;
        series_booked(conn, id).await
    }

    /// A new series inside the caller's savepoint (refused as a whole).
    async fn create_in(
        &self,
        conn: &mut Conn,
        ctx: &Ctx<'_>,
        asked: &Asked,
        recurrence: &Recurrence,
        inv: &Invitation,
    ) -> Result<Booked, CommandError> {
        let command = CreateSeries {
            title: asked.title.clone(),
            rooms: asked.rooms.clone(),
            first: asked.range,
            recurrence: recurrence.clone(),
            on_conflict: OnConflict::Fail,
            organizer_name: self.organizer_name.clone(),
            private: inv.private,
        };
        let created = command.run(conn, ctx).await?;
        apply_exceptions(conn, ctx, &created.created, inv).await?;
        series_booked(conn, created.series.id).await
    }
}

/// Any refusal inside a series is the whole series' (SPEC §23), with the
/// first refused date when the refusal names one.
fn series_refusal(refused: ApiError) -> ApiError {
    if refused.code == ErrorCode::SeriesConflict {
        return refused;
    }
    ApiError::worded(ErrorCode::SeriesConflict, json!({ "conflicts": [refused.details.as_ref().clone()] }))
}

/// A booked series and how its rooms answer (by its occurrences: pending
/// when any waits for approval).
async fn series_booked(conn: &mut Conn, id: i64) -> Result<Booked, CommandError> {
    let occurrences = crate::series::store::occurrences(conn, id).await?;
    let pending = occurrences.iter().any(|o| o.status == Status::Pending);
    let answer = if pending { RoomAnswer::Tentative } else { RoomAnswer::Accepted };
    Ok(Booked { reservation_id: None, series_id: Some(id), answer: Some(answer), refused: None })
}

/// The series' `EXDATE`s and cancelled overrides cancel their occurrences;
/// overrides with other times move theirs.
async fn apply_exceptions(
    conn: &mut Conn,
    ctx: &Ctx<'_>,
    occurrences: &[Booking],
    inv: &Invitation,
) -> Result<(), CommandError> {
    let live = |at: DateTime<Utc>| occurrences.iter().find(|o| o.occurrence_start == Some(at) && o.status.is_live());
    for at in &inv.exdates {
        if let Some(o) = live(*at) {
            CancelBooking { id: o.id, expected_version: None }.run(conn, ctx).await?;
        }
    }
    for o in &inv.overrides {
        let Some(current) = live(o.recurrence_id) else { continue };
        if o.cancelled {
            CancelBooking { id: current.id, expected_version: None }.run(conn, ctx).await?;
        } else if (o.starts_at, o.ends_at) != (current.starts_at, current.ends_at) {
            let change = move_to::Change {
                range: TimeRange::new(o.starts_at, o.ends_at)?,
                title: None,
                expected_version: None,
                rooms: None,
                private: None,
            };
            MoveBooking { id: current.id, change }.run(conn, ctx).await?;
        }
    }
    Ok(())
}

/// What an event booked before and no longer asks for: cancelled (a
/// series from now on), its time free again.
pub async fn release(conn: &mut Conn, ctx: &Ctx<'_>, before: (Option<i64>, Option<i64>)) -> Result<(), CommandError> {
    let live = match before {
        (Some(id), _) => booking::find(conn, id).await?.is_some_and(|b| b.status.is_live()),
        (_, Some(id)) => crate::series::store::occurrences(conn, id).await?.iter().any(|o| o.status.is_live()),
        _ => false,
    };
    match before {
        (Some(id), _) if live => drop(CancelBooking { id, expected_version: None }.run(conn, ctx).await?),
        (_, Some(id)) if live => drop(CancelSeries { id, from: Some(ctx.now) }.run(conn, ctx).await?),
        _ => {}
    }
    Ok(())
}
