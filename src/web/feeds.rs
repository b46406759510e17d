//! Feeds: `GET /ical/me.ics?token=…` (the person's bookings) and
//! `GET /ical/rooms/{code}.ics?token=…` (a room's; any active staff member's
//! token opens any room feed), 30 days back to 365 days ahead, cancelled
//! bookings included as `STATUS:CANCELLED`; a wrong token is 404. And
//! `GET /bookings/{id}.ics` for a signed-in person. Feeds show a booking's
//! title, time, rooms and organizer — what the room page shows
//! (`calendar::feed` reads them, `calendar::ics` writes them).
//!
//! Calendar apps poll: every answer carries a strong `ETag` and
//! `Last-Modified`, and a copy that still holds gets 304 with no body,
//! decided by one statement (token, room and the feed's change counters)
//! without reading a booking (SPEC §18).

use actix_web::http::header::{self, HttpDate};
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::calendar::feed::{self, Feed, Site, Validators, Window};
use crate::calendar::token;
use crate::db::DbError;
use crate::i18n::{I18n, Lang};
use crate::state::AppState;
use crate::web::language::PageI18n;
use crate::web::{SignedIn, WebError};

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/ical/me.ics", web::get().to(me))
        .route("/ical/rooms/{file}", web::get().to(room))
        .route("/bookings/{file:[0-9]+\\.ics}", web::get().to(one))
        .route("/account/export.ics", web::get().to(export));
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

fn not_found() -> WebError {
    WebError::message(actix_web::http::StatusCode::NOT_FOUND, "feed-not-found-heading", "feed-not-found")
}

/// Where the events point, their words in `lang` (the reader's).
fn site(state: &AppState, lang: Lang) -> Site<'_> {
    Site { host: &state.calendar_host, room_domain: &state.room_mail_domain, base: &state.public_base, lang }
}

/// The client's copy, from `If-None-Match` and `If-Modified-Since`.
fn still_hold(req: &HttpRequest, v: &Validators) -> bool {
    let inm = req.headers().get(header::IF_NONE_MATCH).and_then(|h| h.to_str().ok());
    let ims = req
        .headers()
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<HttpDate>().ok())
        .map(|d| DateTime::<Utc>::from(std::time::SystemTime::from(d)));
    v.still_hold(inm, ims)
}

/// 304, or 200 with `body()`'s text, carrying the validators either way.
/// Calendars may keep a copy but ask again each time (`no-cache`), never
/// in a shared cache (`private`: the address holds a token).
fn answer(req: &HttpRequest, v: &Validators, download: Option<String>, body: impl FnOnce() -> String) -> HttpResponse {
    let stamp = HttpDate::from(std::time::SystemTime::from(v.last_modified));
    let holds = still_hold(req, v);
    let mut res = if holds { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    res.insert_header((header::ETAG, v.etag.as_str()))
        .insert_header((header::LAST_MODIFIED, stamp))
        .insert_header((header::CACHE_CONTROL, "private, no-cache"));
    if holds {
        return res.finish();
    }
    res.content_type("text/calendar; charset=utf-8");
    if let Some(file) = download {
        res.insert_header((header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")));
    }
    res.body(body())
}

pub async fn me(
    state: web::Data<AppState>,
    req: HttpRequest,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, WebError> {
    let (id, mac) = token::parse(query.token.as_deref().unwrap_or_default()).ok_or_else(not_found)?;
    // The person's counters are keyed by staff id: no digest before the
    // token holds (it is the rows' filter only).
    let opened = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        feed::open(&mut conn, id, Feed::Person { staff_id: id, digest: "" }).await?.ok_or_else(not_found)?
    };
    if !token::verify(&state.secret, id, opened.calendar_generation, &mac) {
        return Err(not_found());
    }
    let name = I18n::new(opened.lang()).t1("ics-calendar-mine", "name", &opened.display_name);
    let window = Window::at(state.clock.now());
    let site = site(&state, opened.lang());
    let v = Validators::of_feed(opened.counters(), &window, &name, &site);
    if still_hold(&req, &v) {
        return Ok(answer(&req, &v, None, String::new));
    }
    let digest = crate::auth::OwnerDigest::of_staff(&state.secret, &opened.username);
    let feed = Feed::Person { staff_id: id, digest: digest.as_str() };
    let (v, rows) = read(&state, &site, feed, &window, &name).await?;
    Ok(answer(&req, &v, None, || feed::render(&name, &rows, &site)))
}

pub async fn room(
    state: web::Data<AppState>,
    req: HttpRequest,
    file: web::Path<String>,
    query: web::Query<TokenQuery>,
) -> Result<HttpResponse, WebError> {
    let code = file.strip_suffix(".ics").ok_or_else(not_found)?;
    let (id, mac) = token::parse(query.token.as_deref().unwrap_or_default()).ok_or_else(not_found)?;
    let opened = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        feed::open(&mut conn, id, Feed::Room(code)).await?.ok_or_else(not_found)?
    };
    if !token::verify(&state.secret, id, opened.calendar_generation, &mac) {
        return Err(not_found());
    }
    let (Some(code), Some(name)) = (opened.room_code.as_deref(), opened.room_name.as_deref()) else {
        return Err(not_found());
    };
    let window = Window::at(state.clock.now());
    let site = site(&state, opened.lang());
    let v = Validators::of_feed(opened.counters(), &window, name, &site);
    if still_hold(&req, &v) {
        return Ok(answer(&req, &v, None, String::new));
    }
    let (v, rows) = read(&state, &site, Feed::Room(code), &window, name).await?;
    // Colleagues read a room feed: private bookings but the reader's own
    // are their label (SPEC §26).
    let reader = crate::auth::OwnerDigest::of_staff(&state.secret, &opened.username);
    let label = crate::i18n::I18n::new(site.lang).t("private-booking");
    let rows: Vec<feed::Row> = rows.into_iter().map(|r| r.shown_to(reader.as_str(), &label)).collect();
    Ok(answer(&req, &v, None, || feed::render(name, &rows, &site)))
}

/// The feed's rows with the validators of exactly those rows: its counters
/// are read again on the same connection first (a standby may lag the
/// primary that answered [`feed::open`]), so an ETag never names changes
/// the rows do not show.
async fn read(
    state: &AppState,
    site: &Site<'_>,
    feed: Feed<'_>,
    window: &Window,
    name: &str,
) -> Result<(Validators, Vec<feed::Row>), WebError> {
    let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
    let counters = feed::counters(&mut conn, feed).await?;
    let rows = feed::rows(&mut conn, feed, window).await?;
    Ok((Validators::of_feed(counters, window, name, site), rows))
}

pub async fn one(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    file: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let id: i64 = file.strip_suffix(".ics").and_then(|i| i.parse().ok()).ok_or_else(not_found)?;
    let (row, counters) = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        feed::one(&mut conn, id).await?.ok_or_else(|| {
            WebError::message(actix_web::http::StatusCode::NOT_FOUND, "booking-not-found-heading", "booking-not-found")
        })?
    };
    let site = site(&state, PageI18n::of(&req).lang());
    let reader = crate::web::bookings::page_reader(&state, &user, &req).await?;
    let row = if reader.sees(row.private, &row.organizer_digest) {
        row
    } else {
        row.shown_to("", &PageI18n::of(&req).t("private-booking"))
    };
    let v = feed::validators_of_one(&row, counters, &site);
    let file = format!("booking-{id}.ics");
    Ok(answer(&req, &v, Some(file), || {
        crate::calendar::ics::calendar(&row.title, None, [&row.event(&site)], site.lang)
    }))
}

/// `GET /account/export.ics` (SPEC §26): every booking the signed-in person
/// organizes, of any date (cancelled ones as `STATUS:CANCELLED`), written
/// by the feed's writer as one download.
pub async fn export(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
) -> Result<HttpResponse, WebError> {
    let site = site(&state, PageI18n::of(&req).lang());
    let digest = crate::auth::OwnerDigest::of_staff(&state.secret, &user.username);
    let feed = Feed::Person { staff_id: user.id, digest: digest.as_str() };
    let rows = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        feed::rows(&mut conn, feed, &Window::everything()).await?
    };
    let name = I18n::new(site.lang).t1("ics-calendar-mine", "name", &user.display_name);
    Ok(HttpResponse::Ok()
        .content_type("text/calendar; charset=utf-8")
        .insert_header((header::CONTENT_DISPOSITION, "attachment; filename=\"yeyak-export.ics\""))
        .insert_header((header::CACHE_CONTROL, "private, no-store"))
        .body(feed::render(&name, &rows, &site)))
}
