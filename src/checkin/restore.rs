//! `series.restore` (SPEC §25): the organizer (or their delegate, or an
//! admin) takes back a series the sweeper struck for no-shows. In one
//! transaction, each occurrence the strike cancelled that is still ahead is
//! rebooked where its rooms' time is still free — the exclusion constraint
//! decides, one savepoint per occurrence — and the others are listed.

use chrono::{DateTime, Utc};
use diesel::sql_types::{Int8, Nullable, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::{self, Conn, DbError};
use crate::error::{ApiError, ErrorCode};
use crate::history::Action;
use crate::rooms::booking::{find_many, Booking};
use crate::rooms::{access, events};

pub static RESTORE: Operation = Operation::new("series.restore", &[Role::Staff, Role::Admin]);

#[derive(Debug, Clone, Copy)]
pub struct RestoreSeries {
    pub id: i64,
}

/// What a restore did: the occurrences booked again, and those whose time
/// was taken meanwhile (or whose room was retired).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Restored {
    pub series_id: i64,
    pub restored: Vec<Booking>,
    pub not_restored: Vec<Booking>,
}

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Text)]
    organizer_digest: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    struck_at: Option<DateTime<Utc>>,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = Int8)]
    id: i64,
}

impl Command for RestoreSeries {
    type Output = Restored;

    fn operation(&self) -> &'static Operation {
        &RESTORE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "restore": self.id })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Restored, CommandError> {
        let locked: Option<Locked> =
            diesel::sql_query("SELECT organizer_digest, struck_at FROM booking_series WHERE id = $1 FOR UPDATE")
                .bind::<Int8, _>(self.id)
                .get_result(conn)
                .await
                .optional()?;
        let Some(series) = locked else { return Err(ApiError::not_found("series").into()) };
        if !access::may_change(ctx.principal, &series.organizer_digest) {
            return Err(access::not_organizer().into());
        }
        let Some(struck_at) = series.struck_at else {
            return Err(ApiError::worded(ErrorCode::SeriesNotStruck, serde_json::json!({ "seriesId": self.id })).into());
        };
        // The occurrences the strike cancelled that are still ahead, locked.
        let cancelled: Vec<Id> = diesel::sql_query(
            "SELECT id FROM reservation
              WHERE series_id = $1 AND status = 'CANCELLED' AND cancelled_at = $2 AND starts_at > $3
              ORDER BY id FOR UPDATE",
        )
        .bind::<Int8, _>(self.id)
        .bind::<Timestamptz, _>(struck_at)
        .bind::<Timestamptz, _>(ctx.now)
        .load(conn)
        .await?;
        let ids: Vec<i64> = cancelled.iter().map(|c| c.id).collect();
        let before = find_many(conn, &ids).await?;
        let mut back = Vec::new();
        for id in &ids {
            db::begin(conn).await?;
            let attempt = rebook(conn, *id, ctx.now).await;
            match db::finish(conn, attempt).await {
                Ok(true) => back.push(*id),
                Ok(false) | Err(DbError::RoomTimeTaken | DbError::RoomBufferTaken) => {}
                Err(other) => return Err(other.into()),
            }
        }
        diesel::sql_query(
            "UPDATE booking_series SET struck_at = NULL, restored_at = $2, version = version + 1, updated_at = $2
              WHERE id = $1",
        )
        .bind::<Int8, _>(self.id)
        .bind::<Timestamptz, _>(ctx.now)
        .execute(&mut *conn)
        .await?;
        let after = find_many(conn, &back).await?;
        let pairs: Vec<(&Booking, &Booking)> =
            after.iter().filter_map(|a| before.iter().find(|b| b.id == a.id).map(|b| (b, a))).collect();
        events::changed_many(conn, &pairs, Action::Restored, ctx).await?;
        let not_restored = before.into_iter().filter(|b| !back.contains(&b.id)).collect();
        Ok(Restored { series_id: self.id, restored: after, not_restored })
    }
}

/// Books one cancelled occurrence again: confirmed, its room rows active
/// (the exclusion constraints judge them); `false` when a room is retired.
async fn rebook(conn: &mut Conn, id: i64, now: DateTime<Utc>) -> Result<bool, DbError> {
    #[derive(QueryableByName)]
    struct Retired {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        retired: bool,
    }
    let room: Retired = diesel::sql_query(
        "SELECT EXISTS (SELECT 1 FROM reservation_room rr JOIN room m ON m.code = rr.room
                         WHERE rr.reservation_id = $1 AND NOT m.active) AS retired",
    )
    .bind::<Int8, _>(id)
    .get_result(conn)
    .await?;
    if room.retired {
        return Ok(false);
    }
    diesel::sql_query(
        "UPDATE reservation SET status = 'CONFIRMED', cancelled_at = NULL, version = version + 1, updated_at = $2
          WHERE id = $1",
    )
    .bind::<Int8, _>(id)
    .bind::<Timestamptz, _>(now)
    .execute(&mut *conn)
    .await?;
    diesel::sql_query("UPDATE reservation_room SET active = true WHERE reservation_id = $1")
        .bind::<Int8, _>(id)
        .execute(conn)
        .await?;
    Ok(true)
}

/// The occurrences a strike cancelled that are still ahead (the restore
/// page's list); none when the series is not struck.
pub async fn struck_occurrences(conn: &mut Conn, id: i64, now: DateTime<Utc>) -> Result<Vec<Booking>, DbError> {
    let ids: Vec<Id> = diesel::sql_query(
        "SELECT r.id FROM reservation r JOIN booking_series s ON s.id = r.series_id
          WHERE s.id = $1 AND r.status = 'CANCELLED' AND r.cancelled_at = s.struck_at AND r.starts_at > $2
          ORDER BY r.starts_at",
    )
    .bind::<Int8, _>(id)
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    let ids: Vec<i64> = ids.into_iter().map(|i| i.id).collect();
    Ok(find_many(conn, &ids).await?)
}
