//! The floor plan of an area (SPEC §28): `/areas/{code}/plan?date=` draws
//! the plan image with an SVG layer of links, one per placed room or desk,
//! each saying its state in words and by shape (never by colour alone,
//! WCAG 1.4.1), and lists the same places below it, so the page works
//! without JavaScript and at 375 px. `/areas/{code}/plan.img` serves the
//! image itself. Two statements per render however many places: the plan's
//! size, and the places with their states.

use actix_web::http::{header, StatusCode};
use actix_web::{web, HttpRequest, HttpResponse};
use askama::Template;
use chrono::NaiveDate;
use serde::Deserialize;

use super::admin::areas::{path_segment, query_value};
use super::language::PageI18n;
use super::pages::{self, nav, Nav};
use super::{html_response, Csrf, SignedIn, WebError};
use crate::catalogue::areas::{self, Area};
use crate::catalogue::places::{self, Place, PlaceState};
use crate::catalogue::plans;
use crate::db::DbError;
use crate::state::AppState;

/// The plan drawn when an area has no image yet: marks on a blank sheet.
const BLANK: (i32, i32) = (1000, 700);

#[derive(Debug, Deserialize)]
pub struct PlanQuery {
    date: Option<String>,
}

fn not_found() -> WebError {
    WebError::message(StatusCode::NOT_FOUND, "areas-not-found-heading", "areas-not-found")
}

async fn find_area(state: &AppState, code: &str) -> Result<Area, WebError> {
    let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
    let list = areas::list(&mut conn, state.policy().timezone).await?;
    list.into_iter().find(|a| a.code == code).ok_or_else(not_found)
}

/// `GET /areas/{code}/plan.img`: the image as uploaded, with its own type,
/// `nosniff`, and its tag, so a browser asks again cheaply (304).
pub async fn plan_image(
    state: web::Data<AppState>,
    req: HttpRequest,
    _: SignedIn,
    code: web::Path<String>,
) -> Result<HttpResponse, WebError> {
    let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
    let plan = plans::image(&mut conn, &code).await?.ok_or_else(not_found)?;
    let etag = format!("\"{}\"", plan.etag);
    let held = req.headers().get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok());
    let fresh = held.is_some_and(|h| h.split(',').any(|t| t.trim() == etag));
    let mut res = if fresh { HttpResponse::NotModified() } else { HttpResponse::Ok() };
    res.insert_header((header::ETAG, etag))
        .insert_header((header::CACHE_CONTROL, "private, no-cache"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    if fresh {
        return Ok(res.finish());
    }
    Ok(res.content_type(plan.content_type).body(plan.image))
}

/// One place as the page draws it.
pub struct Mark {
    pub code: String,
    pub name: String,
    /// Catalogue key of its kind ("desk", "room").
    pub kind: &'static str,
    /// `free`, `booked`, … : the shape's symbol and the class.
    pub state: &'static str,
    /// Catalogue key of the state's word.
    pub state_key: String,
    /// Centre on the plan, in its pixels.
    pub cx: i64,
    pub cy: i64,
    /// Where the link goes: the filled booking form when it may be booked.
    pub href: String,
    pub bookable: bool,
}

/// The day page's booking form, filled in for `place` (a desk's whole day,
/// a room's date), or the day page itself when it cannot be booked.
fn link(area: &str, date: NaiveDate, place: &Place) -> String {
    let base = format!("/rooms?area={}&date={date}", query_value(area));
    match (place.state.bookable(), place.kind.is_desk()) {
        (true, true) => format!("{base}&room={}&unit=day#book", query_value(&place.code)),
        (true, false) => format!("{base}&room={}&start=#book", query_value(&place.code)),
        (false, _) => base,
    }
}

pub fn marks(area: &str, date: NaiveDate, places: &[Place], (w, h): (i32, i32)) -> Vec<Mark> {
    places
        .iter()
        .map(|p| Mark {
            code: p.code.clone(),
            name: p.name.clone(),
            kind: if p.kind.is_desk() { "plan-kind-desk" } else { "plan-kind-room" },
            state: p.state.as_str(),
            state_key: format!("plan-state-{}", p.state.as_str()),
            cx: (p.x * f64::from(w)).round() as i64,
            cy: (p.y * f64::from(h)).round() as i64,
            href: link(area, date, p),
            bookable: p.state.bookable(),
        })
        .collect()
}

/// Each state with its catalogue key, for the legend.
pub const STATES: [PlaceState; 5] =
    [PlaceState::Free, PlaceState::Away, PlaceState::Yours, PlaceState::Booked, PlaceState::Assigned];

/// `GET /areas/{code}/plan?date=`.
pub async fn plan_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    code: web::Path<String>,
    query: web::Query<PlanQuery>,
) -> Result<HttpResponse, WebError> {
    let area = find_area(&state, &code).await?;
    let zone: chrono_tz::Tz = area.time_zone.parse().unwrap_or(state.policy().timezone);
    let today = state.clock.now().with_timezone(&zone).date_naive();
    let date = query.date.as_deref().and_then(|d| crate::day::parse_field("date", d).ok()).unwrap_or(today);
    let (from, to) = crate::rooms::domain::day_bounds(zone, date);
    let looker = super::principal(&state, &user);
    let (info, places) = {
        let mut conn = state.read_pool.get().await.map_err(DbError::from)?;
        let info = plans::info(&mut conn, &area.code).await?;
        let places = places::on_date(&mut conn, &area.code, date, from, to, Some(looker.digest().as_str())).await?;
        (info, places)
    };
    let size = info.as_ref().map_or(BLANK, |i| (i.width, i.height));
    let csrf = Csrf::for_render(&req, &state);
    let i18n = PageI18n::of(&req);
    let path = path_segment(&area.code);
    let page = PlanPage {
        date_label: i18n.date(date),
        i18n,
        nav: nav(&user, &csrf.token),
        is_admin: user.is_admin,
        name: area.name.clone(),
        date: date.to_string(),
        prev: date.pred_opt().unwrap_or(date).to_string(),
        next: date.succ_opt().unwrap_or(date).to_string(),
        image: info.as_ref().map(|i| format!("/areas/{path}/plan.img?v={}", i.etag)),
        width: size.0,
        height: size.1,
        mark: i64::from((size.0.max(size.1) / 70).max(8)),
        marks: marks(&area.code, date, &places, size),
        path,
        states: STATES.iter().map(|s| (s.as_str(), format!("plan-state-{}", s.as_str()))).collect(),
    };
    Ok(csrf.attach(html_response(StatusCode::OK, pages::render(&page))))
}

#[derive(Template)]
#[template(path = "plan.html")]
pub struct PlanPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub is_admin: bool,
    pub name: String,
    /// The area's code as one path segment.
    pub path: String,
    pub date: String,
    pub date_label: String,
    pub prev: String,
    pub next: String,
    /// The image's address (a new one with each image), if the area has one.
    pub image: Option<String>,
    pub width: i32,
    pub height: i32,
    /// A mark's half size, in the plan's pixels.
    pub mark: i64,
    pub marks: Vec<Mark>,
    /// Each state and its word's key, for the legend.
    pub states: Vec<(&'static str, String)>,
}
