//! Series that keep not showing up (SPEC §25): after `YEYAK_NO_SHOW_STRIKES`
//! consecutive no-show releases of one series — its occurrences in order of
//! start, moved ones included, no check-in between them nor since a restore
//! — the series' future occurrences are cancelled in the transaction of the
//! release that made the last strike. The series row is locked and stamped
//! `struck_at`, so a second process (or a second run) strikes it never
//! again; a restore clears the stamp and starts the count afresh.

use diesel::sql_types::{Array, Int4, Int8, Timestamptz};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::json;

use crate::command::{CommandError, Ctx, Principal};
use crate::db::Conn;
use crate::outbox::{self, Intent, Kind};
use crate::rooms::domain::Status;

/// Who the history names for a strike's cancellations.
pub const ACTOR: &str = "yeyak (no-shows)";

/// The outbox delivery id of a series' strike mail (SPEC §25): one per
/// series, so a second process's attempt sends nothing twice.
pub fn delivery_id(series: i64) -> String {
    format!("series-{series}-strikes")
}

#[derive(QueryableByName)]
struct Struck {
    #[diesel(sql_type = Int8)]
    id: i64,
}

/// Strikes, among `series` (those a release just touched), every series
/// whose last `policy.no_show_strikes` decided occurrences were all
/// released; cancels their future occurrences and mails the organizer.
/// Returns the struck series.
pub async fn after_release(conn: &mut Conn, series: &[i64], ctx: &Ctx<'_>) -> Result<Vec<i64>, CommandError> {
    let strikes = ctx.policy.no_show_strikes;
    if strikes == 0 || series.is_empty() {
        return Ok(Vec::new());
    }
    // Locked in id order (the order of every multi-row write); a second
    // process waits here and then finds `struck_at` set.
    let struck: Vec<Struck> = diesel::sql_query(
        "WITH locked AS (
             SELECT s.id, s.restored_at FROM booking_series s
              WHERE s.id = ANY($1) AND s.struck_at IS NULL
              ORDER BY s.id FOR UPDATE)
         SELECT l.id FROM locked l
          WHERE (SELECT count(*) = $2 AND bool_and(last.status = 'RELEASED')
                   FROM (SELECT r.status FROM reservation r
                          WHERE r.series_id = l.id
                            AND r.starts_at > coalesce(l.restored_at, '-infinity')
                            AND (r.status = 'RELEASED' OR r.checked_in_at IS NOT NULL)
                          ORDER BY r.starts_at DESC
                          LIMIT $2) last)
          ORDER BY l.id",
    )
    .bind::<Array<Int8>, _>(series)
    .bind::<Int4, _>(strikes as i32)
    .load(conn)
    .await?;
    let ids: Vec<i64> = struck.iter().map(|s| s.id).collect();
    if ids.is_empty() {
        return Ok(ids);
    }
    let future: Vec<Struck> = diesel::sql_query(
        "SELECT id FROM reservation
          WHERE series_id = ANY($1) AND starts_at > $2 AND status = ANY($3) ORDER BY id",
    )
    .bind::<Array<Int8>, _>(&ids)
    .bind::<Timestamptz, _>(ctx.now)
    .bind::<Array<diesel::sql_types::Text>, _>(Status::live_texts().to_vec())
    .load(conn)
    .await?;
    let actor = Principal::system(ACTOR);
    let as_yeyak = Ctx { principal: &actor, ..*ctx };
    let future: Vec<i64> = future.into_iter().map(|f| f.id).collect();
    crate::rooms::store::cancel_many(conn, &future, &as_yeyak, false).await?;
    diesel::sql_query(
        "UPDATE booking_series SET struck_at = $2, version = version + 1, updated_at = $2 WHERE id = ANY($1)",
    )
    .bind::<Array<Int8>, _>(&ids)
    .bind::<Timestamptz, _>(ctx.now)
    .execute(&mut *conn)
    .await?;
    mail(conn, &ids, ctx).await?;
    Ok(ids)
}

#[derive(QueryableByName)]
struct Organizer {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = diesel::sql_types::Text)]
    title: String,
    #[diesel(sql_type = Int8)]
    staff_id: i64,
    #[diesel(sql_type = Int8)]
    cancelled: i64,
}

/// The strike mail to each organizer with an address (`series.struck`):
/// the series, how many occurrences went, and the restore link.
async fn mail(conn: &mut Conn, ids: &[i64], ctx: &Ctx<'_>) -> Result<(), CommandError> {
    if !ctx.policy.mail {
        return Ok(());
    }
    let organizers: Vec<Organizer> = diesel::sql_query(
        "SELECT s.id, s.title, s.organizer_staff_id AS staff_id,
                (SELECT count(*) FROM reservation r
                  WHERE r.series_id = s.id AND r.status = 'CANCELLED' AND r.cancelled_at = s.struck_at) AS cancelled
           FROM booking_series s WHERE s.id = ANY($1) AND s.organizer_staff_id IS NOT NULL",
    )
    .bind::<Array<Int8>, _>(ids)
    .load(conn)
    .await?;
    let intents: Vec<(Intent, i64)> = organizers
        .into_iter()
        .map(|o| {
            let intent = Intent {
                delivery_id: delivery_id(o.id),
                kind: Kind::SeriesStruck,
                payload: json!({
                    "seriesId": o.id,
                    "title": o.title,
                    "strikes": ctx.policy.no_show_strikes,
                    "cancelled": o.cancelled,
                }),
            };
            (intent, o.staff_id)
        })
        .collect();
    outbox::enqueue_mail(conn, &intents, ctx.now).await?;
    Ok(())
}
