//! JSON routes of areas (SPEC §24): the list for every API key, changes for
//! admin keys, each a command of the pipeline.

use actix_web::http::{header, Method};
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::extract::{AdminCommand, ApiCaller, ApiJson};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::catalogue::areas::{self, Area, AreaPatch, AreaPatchBody, NewArea, NewAreaBody};
use crate::catalogue::commands::{CREATE_AREA, UPDATE_AREA};
use crate::catalogue::places::{self, Place};
use crate::catalogue::plans::{self, PlanImage, PlanInfo, ReplacePlan, REPLACE_PLAN};
use crate::catalogue::{CreateArea, PatchArea};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::rooms::domain::day_bounds;
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    use ErrorCode::*;
    api.route(
        Method::GET,
        "/areas",
        Op::new::<AreasReply>(Tag::Rooms, "listAreas", "areas with their time zones and working hours", 200),
        list_areas,
    )
    .route(
        Method::POST,
        "/areas",
        Op::new::<Area>(Tag::Rooms, "createArea", "add an area", 201)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<NewAreaBody>()
            .errors(&[AreaCodeTaken, InvalidTimeZone])
            .runs(&CREATE_AREA),
        create_area,
    )
    .route(
        Method::PATCH,
        "/areas/{code}",
        Op::new::<Area>(Tag::Rooms, "updateArea", "change an area", 200)
            .admin()
            .owner_optional()
            .idempotent(true)
            .body::<AreaPatchBody>()
            .errors(&[NotFound, InvalidTimeZone])
            .runs(&UPDATE_AREA),
        update_area,
    )
    .route(
        Method::PUT,
        "/areas/{code}/plan",
        Op::new::<PlanInfo>(
            Tag::Rooms,
            "replaceAreaPlan",
            "the area's floor plan: a PNG, JPEG or WebP image as the body (at most 5 MiB, 8000 x 8000 pixels)",
            200,
        )
        .admin()
        .owner_optional()
        .idempotent(false)
        .raw_body(&["image/png", "image/jpeg", "image/webp"])
        .errors(&[NotFound, InvalidImage])
        .runs(&REPLACE_PLAN),
        replace_plan,
    )
    .route(
        Method::GET,
        "/areas/{code}/plan/places",
        Op::new::<PlacesReply>(
            Tag::Rooms,
            "listPlanPlaces",
            "the placed rooms and desks of an area's plan on a date",
            200,
        )
        .query("date", "YYYY-MM-DD in the area's zone", true)
        .errors(&[NotFound]),
        list_places,
    );
}

/// `PUT /api/areas/{code}/plan`: the body, read up to one byte past the
/// limit (413), is decoded in full before the command stores it.
async fn replace_plan(
    state: web::Data<AppState>,
    req: HttpRequest,
    AdminCommand(cmd): AdminCommand,
    code: web::Path<String>,
    mut payload: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::malformed("body", e.to_string()))?;
        if body.len() + chunk.len() > plans::MAX_BYTES {
            return Err(plans::too_large());
        }
        body.extend_from_slice(&chunk);
    }
    let content_type = req.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let image = PlanImage::decode(content_type, body.to_vec())?;
    run(&state.pipeline, &cmd.principal, cmd.key, &ReplacePlan { area: code.into_inner(), image }).await
}

/// `GET /api/areas/{code}/plan/places`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PlacesReply {
    pub places: Vec<Place>,
}

#[derive(Debug, Deserialize)]
struct PlacesQuery {
    date: String,
}

async fn list_places(
    state: web::Data<AppState>,
    _: ApiCaller,
    code: web::Path<String>,
    query: web::Query<PlacesQuery>,
) -> Result<HttpResponse, ApiError> {
    let date = crate::day::parse_field("date", &query.date)?;
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let areas = areas::list(&mut conn, state.policy().timezone).await.map_err(DbError::from)?;
    let area = areas.into_iter().find(|a| a.code == *code).ok_or_else(|| ApiError::not_found("area"))?;
    let zone = area.time_zone.parse().unwrap_or(state.policy().timezone);
    let (from, to) = day_bounds(zone, date);
    let places = places::on_date(&mut conn, &area.code, date, from, to, None).await.map_err(DbError::from)?;
    Ok(HttpResponse::Ok().json(PlacesReply { places }))
}

/// `GET /api/areas`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AreasReply {
    pub areas: Vec<Area>,
}

async fn list_areas(state: web::Data<AppState>, _: ApiCaller) -> Result<HttpResponse, ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let areas = areas::list(&mut conn, state.policy().timezone).await.map_err(DbError::from)?;
    Ok(HttpResponse::Ok().json(AreasReply { areas }))
}

async fn create_area(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    ApiJson(body): ApiJson<NewAreaBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    run(&state.pipeline, &cmd.principal, Some(key), &CreateArea(NewArea::parse(body)?)).await
}

async fn update_area(
    state: web::Data<AppState>,
    AdminCommand(cmd): AdminCommand,
    code: web::Path<String>,
    ApiJson(body): ApiJson<AreaPatchBody>,
) -> Result<HttpResponse, ApiError> {
    let key = cmd.required_key()?;
    let command = PatchArea { code: code.into_inner(), patch: AreaPatch::parse(body)? };
    run(&state.pipeline, &cmd.principal, Some(key), &command).await
}
