//! `/my`: the signed-in person's upcoming bookings and series, with links to
//! change them.

use super::language::PageI18n;
use super::pages::{self, nav, Nav};
use super::{html_response, principal, Csrf, SignedIn, WebError};
use crate::db::DbError;
use crate::state::AppState;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;

/// Most upcoming bookings listed.
const LIMIT: i64 = 200;

pub async fn my(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
) -> Result<HttpResponse, WebError> {
    let digest = principal(&state, &user).digest().clone();
    let now = state.clock.now();
    let (bookings, series) = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        let bookings = crate::rooms::booking::list_of_organizer(&mut conn, digest.as_str(), now, LIMIT).await?;
        let series = crate::series::store::of_organizer(&mut conn, digest.as_str(), now).await?;
        (bookings, series)
    };
    let tz = user.zone(state.policy().timezone);
    let i18n = PageI18n::of(&req);
    let bookings = bookings
        .into_iter()
        .map(|b| {
            // Each at its room's local time, and the viewer's beside it.
            let zone = b.zone(state.policy().timezone);
            MyBooking {
                day: i18n.date_short(b.starts_at.with_timezone(&zone).date_naive()),
                time: super::zones::span(&i18n, b.starts_at, b.ends_at, zone, tz),
                rooms: b.rooms.join("+"),
                status: super::words::status(&i18n, b.status),
                repeats: b.series_id.is_some(),
                id: b.id,
                title: b.title,
            }
        })
        .collect();
    let series = series
        .into_iter()
        .map(|s| MySeries {
            id: s.id,
            title: s.title,
            recurrence: s.recurrence,
            rooms: s.rooms.join("+"),
            ahead: s.ahead,
            next: s
                .next_start
                .map(|t| {
                    let t = t.with_timezone(&tz);
                    format!("{} {}", i18n.date_compact(t.date_naive()), t.format("%H:%M"))
                })
                .unwrap_or_default(),
            next_id: s.next_id,
        })
        .collect();
    let csrf = Csrf::for_render(&req, &state);
    let page = MyPage { i18n, nav: nav(&user, &csrf.token), bookings, series };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

pub struct MyBooking {
    pub id: i64,
    pub title: String,
    pub day: String,
    pub time: String,
    pub rooms: String,
    pub status: String,
    pub repeats: bool,
}

pub struct MySeries {
    pub id: i64,
    pub title: String,
    pub recurrence: String,
    pub rooms: String,
    pub ahead: i64,
    pub next: String,
    pub next_id: Option<i64>,
}

#[derive(Template)]
#[template(path = "my.html")]
pub struct MyPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub bookings: Vec<MyBooking>,
    pub series: Vec<MySeries>,
}
