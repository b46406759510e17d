//! JSON routes of holiday calendars (SPEC §24): the list for every API key;
//! creating a calendar and replacing its days for admin keys. The days come
//! as JSON or as a public-holiday `.ics` file (`Content-Type: text/calendar`).

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Serialize;

use super::extract::{AdminCommand, ApiCaller, ApiJson};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::catalogue::commands::{CREATE_HOLIDAY_CALENDAR, REPLACE_HOLIDAYS};
use crate::catalogue::holidays::{self, Days, DaysBody, HolidayCalendar, NewCalendar, NewCalendarBody};
use crate::catalogue::{CreateHolidayCalendar, ReplaceHolidays};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::state::AppState;

/// The largest `.ics` or JSON body of days (a country's holidays for ten
/// years are about 60 KiB as published).
pub const DAYS_LIMIT: usize = 1024 * 1024;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    api.route(
        Method::GET,
        "/holiday-calendars",
        Op::new::<HolidayCalendarsReply>(Tag::Rooms, "listHolidayCalendars", "holiday calendars with their days", 200),
        list_calendars,
    )
    .route(
        Method::POST,
        "/holiday-calendars",
        Op::new::<HolidayCalendar>(Tag::Rooms, "createHolidayCalendar", "add a holiday calendar", 201)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<NewCalendarBody>()
            .errors(&[HolidayCalendarCodeTaken])
            .runs(&CREATE_HOLIDAY_CALENDAR),
        create_calendar,
    )
    .route(
        Method::PUT,
        "/holiday-calendars/{code}/days",
        Op::new::<HolidayCalendar>(
            Tag::Rooms,
            "replaceHolidays",
            "replace a calendar's days: JSON, or a text/calendar file of all-day events",
            200,
        )
        .admin()
        .owner_optional()
        .idempotent(false)
        .body::<DaysBody>()
        .errors(&[NotFound])
        .runs(&REPLACE_HOLIDAYS),
        replace_days,
    );
}

/// `GET /api/holiday-calendars`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct HolidayCalendarsReply {
    pub calendars: Vec<HolidayCalendar>,
}

async fn list_calendars(state: web::Data<AppState>, _: ApiCaller) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let calendars = holidays::list(&mut conn).await.map_err(DbError::from)?;
    Ok(HttpResponse::Ok().json(HolidayCalendarsReply { calendars }))
}

async fn create_calendar(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    ApiJson(body): ApiJson<NewCalendarBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    run(&state.pipeline, &cmd.principal, Some(key), &CreateHolidayCalendar(NewCalendar::parse(body)?)).await
}

async fn replace_days(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminCommand(cmd): AdminCommand,
    code: web::Path<String>,
    mut payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let too_large =
        || ApiError::new(ErrorCode::PayloadTooLarge, format!("the body must be at most {DAYS_LIMIT} bytes"));
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::malformed("body", e.to_string()))?;
        if body.len() + chunk.len() > DAYS_LIMIT {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    let text = std::str::from_utf8(&body).map_err(|_| ApiError::malformed("body", "is not valid UTF-8"))?;
    let essence = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_default();
    let days = match essence.as_str() {
        "text/calendar" => Days::from_ics(text)?,
        "application/json" => {
            if body.len() > super::extract::JSON_LIMIT {
                return Err(ApiError::new(
                    ErrorCode::PayloadTooLarge,
                    format!("a JSON body must be at most {} bytes", super::extract::JSON_LIMIT),
                ));
            }
            let de = &mut serde_json::Deserializer::from_str(text);
            let parsed: DaysBody =
                serde_path_to_error::deserialize(de).map_err(|e| ApiError::malformed("days", e.inner().to_string()))?;
            Days::from_json(parsed)?
        }
        _ => {
            return Err(ApiError::new(
                ErrorCode::UnsupportedMediaType,
                "the body must be `application/json` or `text/calendar`",
            ))
        }
    };
    let command = ReplaceHolidays { code: code.into_inner(), days };
    run(&state.pipeline, &cmd.principal, cmd.key, &command).await
}
