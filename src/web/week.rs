//! `/rooms/week?date=&area=`: the rooms of one area × the seven days (Monday
//! to Sunday) of the week that holds the date, each booking with its time
//! and title. One bookings statement per render.

use super::day::AreaLink;
use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::{Datelike, Duration, NaiveDate};
use serde::Deserialize;

use super::day::{area_links, enc, today};
use super::form::parse_date;
use super::language::PageI18n;
use super::pages::{self, nav, Nav};
use super::{html_response, Csrf, SignedIn, WebError};
use crate::db::DbError;
use crate::state::AppState;

#[derive(Debug, Deserialize)]
pub struct WeekQuery {
    date: Option<String>,
    area: Option<String>,
}

pub async fn week(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    query: web::Query<WeekQuery>,
) -> Result<HttpResponse, WebError> {
    let tz = super::zones::area_zone(&state, query.area.as_deref()).await?;
    let date = query.date.as_deref().and_then(|d| parse_date(d).ok()).unwrap_or_else(|| today(&state, tz));
    let monday = date - Duration::days(i64::from(date.weekday().num_days_from_monday()));
    let days: Vec<NaiveDate> = (0..7).map(|i| monday + Duration::days(i)).collect();
    let catalogue = state.catalogue.current().await?;
    let area = catalogue.shown_area(query.area.as_deref());
    let rooms = catalogue.in_area(&area);
    let codes: Vec<String> = rooms.iter().map(|r| r.code.clone()).collect();
    let (from, _) = crate::rooms::domain::day_bounds(tz, monday);
    let (_, to) = crate::rooms::domain::day_bounds(tz, days[6]);
    let bookings = {
        let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
        crate::rooms::booking::list_in_rooms(&mut conn, from, to, &codes).await?
    };
    let label = PageI18n::of(&req).t("private-booking");
    let bookings = super::bookings::page_reader(&state, &user, &req).await?.show_all(bookings, &label);
    let mut rows: Vec<WeekRow> = rooms
        .iter()
        .map(|r| WeekRow {
            code: r.code.clone(),
            name: r.name.clone(),
            capacity: r.capacity,
            cells: days.iter().map(|d| WeekCell { date: d.to_string(), entries: Vec::new() }).collect(),
        })
        .collect();
    for b in &bookings {
        let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
        for row in rows.iter_mut().filter(|row| b.rooms.contains(&row.code)) {
            for (i, day) in days.iter().enumerate() {
                // On every day the booking touches (most touch one).
                if s.date_naive() <= *day
                    && (e.date_naive() > *day || (e.date_naive() == *day && e.time() > chrono::NaiveTime::MIN))
                {
                    row.cells[i].entries.push(WeekEntry {
                        id: b.id,
                        time: format!("{}–{}", s.format("%H:%M"), e.format("%H:%M")),
                        title: b.title.clone(),
                        pending: b.status == crate::rooms::domain::Status::Pending,
                    });
                }
            }
        }
    }
    let today = today(&state, tz);
    let csrf = Csrf::for_render(&req, &state);
    let q = enc(&area);
    let i18n = PageI18n::of(&req);
    let page = WeekPage {
        zone_note: super::zones::note(&state, &i18n, &user, tz),
        nav: nav(&user, &csrf.token),
        label: i18n.week(monday, days[6]),
        days: days.iter().map(|d| (d.to_string(), i18n.day_in_week(*d), *d == today)).collect(),
        i18n,
        prev: format!("/rooms/week?date={}&area={q}", monday - Duration::days(7)),
        next: format!("/rooms/week?date={}&area={q}", monday + Duration::days(7)),
        this_week: format!("/rooms/week?date={today}&area={q}"),
        areas: area_links(&catalogue, &area, |a| format!("/rooms/week?date={monday}&area={}", enc(a))),
        area_q: q,
        area,
        rows,
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

pub struct WeekEntry {
    pub id: i64,
    pub time: String,
    pub title: String,
    pub pending: bool,
}

pub struct WeekCell {
    pub date: String,
    pub entries: Vec<WeekEntry>,
}

pub struct WeekRow {
    pub code: String,
    pub name: String,
    pub capacity: i32,
    pub cells: Vec<WeekCell>,
}

#[derive(Template)]
#[template(path = "week.html")]
pub struct WeekPage {
    /// Both zones, when the area's is not the viewer's.
    pub zone_note: Option<String>,
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub label: String,
    /// (date, label, is today) of Monday to Sunday.
    pub days: Vec<(String, String, bool)>,
    pub prev: String,
    pub next: String,
    pub this_week: String,
    pub areas: Vec<AreaLink>,
    pub area: String,
    pub area_q: String,
    pub rows: Vec<WeekRow>,
}
