//! The booking form (SPEC §5, §9): one booking or a weekly series from the
//! day page's fields, through the same commands as the JSON API.

use crate::web::day::BookingForm;
use actix_web::{web, HttpRequest, HttpResponse};

use super::found::day_of;
use crate::auth::staff::StaffUser;
use crate::error::ApiError;
use crate::i18n::I18n;
use crate::rooms::booking::Booking;
use crate::rooms::desks::{DeskDay, Unit, When};
use crate::rooms::domain::{RequestedRooms, Title};
use crate::rooms::store::CreateBooking;
use crate::series::{CreateSeries, OnConflict};
use crate::state::AppState;
use crate::web::day::{self, room_choices, DayView};
use crate::web::form::{form_key, form_range, parse_date, status_of};
use crate::web::language::PageI18n;
use crate::web::pages::refusal;
use crate::web::{FormData, StaffForm, WebError};

/// What a booking form asked for: one booking or a series.
enum Booked {
    One(Booking),
    Series(crate::series::store::Created),
}

/// A desk's form (SPEC §28): `date` and `unit`, no start or end; the
/// title may be left empty (the desk's code).
async fn book_desk(state: &AppState, user: &StaffUser, form: &FormData) -> Result<Booked, ApiError> {
    let codes = form.all("rooms");
    let title = match form.get("title").trim() {
        "" => Title::parse(&codes.join("+"))?,
        t => Title::parse(t)?,
    };
    let when =
        When::Desk(DeskDay { date: parse_date(form.get("date"))?, unit: Unit::parse("unit", form.get("unit"))? });
    // For someone who named me (SPEC §25), private or not (SPEC §26), as rooms are.
    let (principal, organizer_name) = super::acting::for_form(state, user, form.get("for_username")).await?;
    let private = !form.get("private").is_empty();
    let command = CreateBooking { title, rooms: RequestedRooms::parse(&codes)?, when, organizer_name, private };
    Ok(Booked::One(state.pipeline.run(&principal, Some(form_key(form)?), &command).await?))
}

async fn book(state: &AppState, user: &StaffUser, form: &FormData) -> Result<Booked, ApiError> {
    if !form.get("unit").is_empty() {
        return book_desk(state, user, form).await;
    }
    let title = Title::parse(form.get("title"))?;
    let rooms = RequestedRooms::parse(&form.all("rooms"))?;
    let tz = state.zone_of_rooms(&form.all("rooms")).await;
    let range = form_range(tz, form)?;
    let key = form_key(form)?;
    // A checkbox: sent (any value) when ticked.
    let private = !form.get("private").is_empty();
    let (principal, organizer_name) = super::acting::for_form(state, user, form.get("for_username")).await?;
    match form.get("repeat") {
        "" | "none" => {
            let command = CreateBooking { title, rooms, when: When::Range(range), organizer_name, private };
            Ok(Booked::One(state.pipeline.run(&principal, Some(key), &command).await?))
        }
        repeat => {
            let until = parse_date(form.get("repeat_until"))
                .map_err(|_| ApiError::malformed("repeat_until", "must be YYYY-MM-DD"))?;
            let command = CreateSeries {
                title,
                rooms,
                first: range,
                recurrence: crate::series::domain::from_form(repeat, until, tz)?,
                on_conflict: if form.get("on_conflict") == "skip" { OnConflict::Skip } else { OnConflict::Fail },
                organizer_name,
                private,
            };
            Ok(Booked::Series(state.pipeline.run(&principal, Some(key), &command).await?))
        }
    }
}

/// The dates of a `SERIES_CONFLICT`, as people read them.
fn taken_dates(tz: chrono_tz::Tz, i18n: &I18n, err: &ApiError) -> Vec<String> {
    let at = |v: &serde_json::Value| {
        v.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()).map(|t| t.with_timezone(&tz))
    };
    err.details["conflicts"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|c| {
                    let (s, e) = (at(&c["startsAt"])?, at(&c["endsAt"])?);
                    Some(format!("{} {}–{}", i18n.date_short(s.date_naive()), s.format("%H:%M"), e.format("%H:%M")))
                })
                .collect()
        })
        .unwrap_or_default()
}

pub async fn create(
    state: web::Data<AppState>,
    req: HttpRequest,
    StaffForm { user, form }: StaffForm,
) -> Result<HttpResponse, WebError> {
    match book(&state, &user, &form).await {
        Ok(Booked::One(b)) => Err(WebError::Redirect(day_of(&state, &b, "booked").await)),
        Ok(Booked::Series(created)) => {
            let (first, series) = (created.created.first(), created.series.id);
            let target = match first {
                Some(b) => day_of(&state, b, "booked").await,
                None => "/rooms?booked=0".to_owned(),
            };
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            Err(WebError::Redirect(format!(
                "{path}&series={series}&created={}&skipped={}#{anchor}",
                created.created.len(),
                created.skipped.len()
            )))
        }
        Err(err) => {
            let tz = state.zone_of_rooms(&form.all("rooms")).await;
            let date = parse_date(form.get("date")).unwrap_or_else(|_| day::today(&state, tz));
            let catalogue = state.catalogue.current().await?;
            let shown = catalogue.shown_area(Some(form.get("area")));
            // A refused form gets a fresh key, so that the corrected one runs.
            let mut kept = BookingForm::blank(
                form.get("date").to_owned(),
                room_choices(&catalogue.in_area(&shown), &form.all("rooms")),
                shown.clone(),
            );
            kept.title = form.get("title").to_owned();
            kept.start = form.get("start").to_owned();
            kept.end = form.get("end").to_owned();
            kept.repeat = form.get("repeat").to_owned();
            kept.repeat_until = form.get("repeat_until").to_owned();
            kept.for_username = form.get("for_username").to_owned();
            kept.private = !form.get("private").is_empty();
            kept.unit = form.get("unit").to_owned();
            let i18n = PageI18n::of(&req);
            kept.conflicts = taken_dates(tz, &i18n, &err);
            let view = DayView {
                date,
                area: Some(shown),
                highlight: None,
                message: None,
                form_message: Some(refusal(&i18n, &err)),
                form: Some(kept),
                status: status_of(&err),
            };
            day::render_day(&state, &req, &user, view).await
        }
    }
}
