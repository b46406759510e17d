//! `/find`: a date, a time, seats and equipment → the rooms free for the
//! whole window, smallest sufficient first, each a link to the booking form
//! filled in. The same search as `GET /api/rooms/free`.

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use serde::Deserialize;

use super::day::{enc, today};
use super::form::{local_range, parse_date, parse_time};
use super::language::PageI18n;
use super::pages::refusal;
use super::pages::{self, nav, Nav};
use super::{html_response, Csrf, SignedIn, WebError};
use crate::catalogue::domain::{Equipment, SearchLimit};
use crate::db::DbError;
use crate::error::ApiError;
use crate::http::rooms::FreeQuery;
use crate::state::AppState;

#[derive(Debug, Default, Deserialize)]
pub struct FindQuery {
    date: Option<String>,
    start: Option<String>,
    end: Option<String>,
    capacity: Option<String>,
    equipment: Option<String>,
    area: Option<String>,
    limit: Option<String>,
}

pub async fn find(
    state: actix_web::web::Data<AppState>,
    req: HttpRequest,
    SignedIn(user): SignedIn,
    query: actix_web::web::Query<FindQuery>,
) -> Result<HttpResponse, WebError> {
    let q = query.into_inner();
    let catalogue = state.catalogue.current().await?;
    // Typed times are the asked area's, else the viewer's (SPEC §24).
    let area = q.area.as_deref().map(str::trim).filter(|a| !a.is_empty());
    let tz = match area {
        Some(a) => catalogue.zone_of_area(a, state.policy().timezone),
        None => user.zone(state.policy().timezone),
    };
    let asked = q.start.is_some() || q.end.is_some();
    let i18n = PageI18n::of(&req);
    let (results, message, status, capped) = if asked {
        match search(&state, &q, tz).await {
            Ok((rooms, limit)) => {
                let capped = (rooms.len() as i64 == limit.get()).then_some(limit.get());
                (Some(rooms), None, StatusCode::OK, capped)
            }
            Err(Found::Refused(err)) => (None, Some(refusal(&i18n, &err)), status_of(&err), None),
            Err(Found::Db(e)) => return Err(e.into()),
        }
    } else {
        (None, None, StatusCode::OK, None)
    };
    let csrf = Csrf::for_render(&req, &state);
    let page = FindPage {
        i18n,
        nav: nav(&user, &csrf.token),
        date: q.date.clone().unwrap_or_else(|| today(&state, tz).to_string()),
        start: q.start.clone().unwrap_or_default(),
        end: q.end.clone().unwrap_or_default(),
        capacity: q.capacity.clone().unwrap_or_default(),
        equipment: q.equipment.clone().unwrap_or_default(),
        area: q.area.clone().unwrap_or_default(),
        areas: catalogue.areas(),
        known_equipment: catalogue.equipment().join(", "),
        results,
        capped,
        message,
    };
    Ok(csrf.attach(html_response(status, pages::render(&page))))
}

enum Found {
    Refused(ApiError),
    Db(DbError),
}

impl From<ApiError> for Found {
    fn from(e: ApiError) -> Self {
        Found::Refused(e)
    }
}

fn status_of(err: &ApiError) -> StatusCode {
    super::form::status_of(err)
}

/// The rooms found, and the limit they were cut at (SPEC §27).
async fn search(state: &AppState, q: &FindQuery, tz: chrono_tz::Tz) -> Result<(Vec<FoundRoom>, SearchLimit), Found> {
    let date = parse_date(q.date.as_deref().unwrap_or_default())?;
    let (start, end) = (q.start.as_deref().unwrap_or_default(), q.end.as_deref().unwrap_or_default());
    let range = local_range(tz, date, parse_time("start", start)?, parse_time("end", end)?)?;
    FreeQuery::check(range.starts_at(), range.ends_at())?;
    let min_capacity = match q.capacity.as_deref().map(str::trim) {
        None | Some("") => 1,
        Some(raw) => raw
            .parse::<i32>()
            .ok()
            .filter(|c| (1..=crate::catalogue::domain::MAX_CAPACITY).contains(c))
            .ok_or_else(|| ApiError::malformed("capacity", "must be 1-10000"))?,
    };
    let equipment = Equipment::parse_list("equipment", q.equipment.as_deref().unwrap_or_default())?;
    let area = q.area.as_deref().map(str::trim).filter(|a| !a.is_empty());
    let limit = SearchLimit::parse("limit", q.limit.as_deref())?;
    let mut conn = state.pool.get().await.map_err(|e| Found::Db(e.into()))?;
    let rooms = crate::catalogue::store::free(
        &mut conn,
        range.starts_at(),
        range.ends_at(),
        min_capacity,
        &equipment.tags(),
        area,
        limit,
    )
    .await
    .map_err(|e| Found::Db(e.into()))?;
    let found = rooms
        .into_iter()
        .map(|r| {
            // Each room at its own local time, and the form filled in with it.
            let zone = r.zone();
            let (s, e) = (range.starts_at().with_timezone(&zone), range.ends_at().with_timezone(&zone));
            let (start, end) = (s.format("%H:%M"), e.format("%H:%M"));
            FoundRoom {
                local: (zone != tz).then(|| format!("{} {start}–{end} ({})", s.date_naive(), zone.name())),
                book: format!(
                    "/rooms?date={}&area={}&start={start}&end={end}&room={}#book",
                    s.date_naive(),
                    enc(&r.area),
                    enc(&r.code)
                ),
                code: r.code,
                name: r.name,
                area: r.area,
                capacity: r.capacity,
                equipment: r.equipment.join(", "),
            }
        })
        .collect();
    Ok((found, limit))
}

pub struct FoundRoom {
    pub code: String,
    pub name: String,
    pub area: String,
    pub capacity: i32,
    pub equipment: String,
    /// The asked time in the room's own zone, when that is another.
    pub local: Option<String>,
    /// The booking form, filled in.
    pub book: String,
}

#[derive(Template)]
#[template(path = "find.html")]
pub struct FindPage {
    pub i18n: PageI18n,
    pub nav: Option<Nav>,
    pub date: String,
    pub start: String,
    pub end: String,
    pub capacity: String,
    pub equipment: String,
    pub area: String,
    pub areas: Vec<String>,
    pub known_equipment: String,
    /// `None` before a search.
    pub results: Option<Vec<FoundRoom>>,
    /// The limit, when the search filled it: more rooms may be free.
    pub capped: Option<i64>,
    pub message: Option<String>,
}
