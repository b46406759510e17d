//! Feeds: `GET /ical/me.ics?token=…` (the person's bookings) and
//! `GET /ical/rooms/{code}.ics?token=…` (a room's; any active staff member's
//! token opens any room feed), 30 days back to 365 days ahead, cancelled
//! bookings included as `STATUS:CANCELLED`; a wrong token is 404. And
//! `GET /bookings/{id}.ics` for a signed-in person. Feeds show a booking's
//! title, time, rooms and organizer display name — what the room page shows.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Duration, Utc};
use diesel::sql_types::{Array, Int8, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use serde::Deserialize;

use crate::calendar::ics::{self, People};
use crate::calendar::token;
use crate::db::cached::CacheExt;
use crate::db::{Conn, DbError};
use crate::i18n::{I18n, Lang};
use crate::rooms::booking::{Booking, BOOKING_COLUMNS};
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::{SignedIn, WebError};

const BACK_DAYS: i64 = 30;
const AHEAD_DAYS: i64 = 365;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/ical/me.ics", web::get().to(me))
        .route("/ical/rooms/{file}", web::get().to(room))
        .route("/bookings/{file:[0-9]+\\.ics}", web::get().to(one));
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn not_found() -> WebError {
    WebError::message(actix_web::http::StatusCode::NOT_FOUND, "feed-not-found-heading", "feed-not-found")
}

/// Bookings in the feed window, every status, for a person or rooms.
async fn feed(
    conn: &mut Conn,
    now: DateTime<Utc>,
    staff: Option<(i64, &str)>,
    rooms: Option<&[String]>,
) -> diesel::QueryResult<Vec<Booking>> {
    diesel::sql_query(format!(
        "{BOOKING_COLUMNS}
          WHERE r.ends_at > $1 AND r.starts_at < $2
            AND ($3::int8 IS NULL OR r.organizer_staff_id = $3 OR r.organizer_digest = $4)
            AND ($5::text[] IS NULL OR EXISTS (SELECT 1 FROM reservation_room x WHERE x.reservation_id = r.id AND x.room = ANY($5)))
          GROUP BY r.id
          ORDER BY r.starts_at, r.id"
    ))
    .bind::<Timestamptz, _>(now - Duration::days(BACK_DAYS))
    .bind::<Timestamptz, _>(now + Duration::days(AHEAD_DAYS))
    .bind::<Nullable<Int8>, _>(staff.map(|s| s.0))
    .bind::<Text, _>(staff.map_or("", |s| s.1))
    .bind::<Nullable<Array<Text>>, _>(rooms)
    .cached()
    .load(conn)
    .await
}

/// `text/calendar` of `bookings`, its words in `lang`.
async fn respond(
    state: &AppState,
    lang: Lang,
    name: &str,
    bookings: &[Booking],
    download: Option<String>,
) -> Result<HttpResponse, WebError> {
    let catalogue = state.catalogue.current().await?;
    let host = state.calendar_host.as_str();
    let events = bookings
        .iter()
        .map(|b| {
            let rooms: Vec<&str> =
                b.rooms.iter().map(|c| catalogue.get(c).map_or(c.as_str(), |r| r.name.as_str())).collect();
            ics::event(&ics::Entry::from(b), host, &rooms.join(" + "), &People { lang, ..People::default() })
        })
        .collect();
    let mut res = HttpResponse::Ok();
    res.content_type("text/calendar; charset=utf-8").insert_header((header::CACHE_CONTROL, "no-store"));
    if let Some(file) = download {
        res.insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")));
    }
    Ok(res.body(ics::calendar(name, None, events)))
}

async fn holder(state: &AppState, token: Option<&str>) -> Result<token::Holder, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    token::resolve(&mut conn, &state.secret, token.unwrap_or_default()).await?.ok_or_else(not_found)
}

pub async fn me(state: web::Data<AppState>, query: web::Query<TokenQuery>) -> Result<HttpResponse, WebError> {
    let person = holder(&state, query.token.as_deref()).await?;
    let digest = crate::auth::OwnerDigest::of_staff(&state.secret, &person.username);
    let bookings = {
        let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
        feed(&mut conn, state.clock.now(), Some((person.id, digest.as_str())), None).await?
    };
    let name = I18n::new(person.lang).t1("ics-calendar-mine", "name", &person.display_name);
    respond(&state, person.lang, &name, &bookings, None).await
}

pub async fn room(
    state: web::Data<AppState>,
    file: web::Path<String>,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, WebError> {
    let code = file.strip_suffix(".ics").ok_or_else(not_found)?.to_owned();
    let person = holder(&state, query.token.as_deref()).await?;
    let room = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        crate::catalogue::store::find(&mut conn, &code).await?.ok_or_else(not_found)?
    };
    let bookings = {
        let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
        feed(&mut conn, state.clock.now(), None, Some(std::slice::from_ref(&room.code))).await?
    };
    respond(&state, person.lang, &room.name, &bookings, None).await
}

pub async fn one(
    state: web::Data<AppState>,
    req: actix_web::HttpRequest,
    SignedIn(_): SignedIn,
    file: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let id: i64 = file.strip_suffix(".ics").and_then(|i| i.parse().ok()).ok_or_else(not_found)?;
    let b = crate::web::bookings::load(&state, id).await?;
    let lang = PageI18n::of(&req).lang();
    respond(&state, lang, &b.title.clone(), std::slice::from_ref(&b), Some(format!("booking-{id}.ics"))).await
}
