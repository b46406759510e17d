//! JSON routes of areas (SPEC §24): the list for every API key, changes for
//! admin keys, each a command of the pipeline.

use actix_web::http::Method;
use actix_web::{web, HttpResponse};
use schemars::JsonSchema;
use serde::Serialize;

use super::extract::{AdminCommand, ApiCaller, ApiJson};
use super::openapi::{Api, Op, Tag};
use super::run;
use crate::catalogue::areas::{self, Area, AreaPatch, AreaPatchBody, NewArea, NewAreaBody};
use crate::catalogue::commands::{CREATE_AREA, UPDATE_AREA};
use crate::catalogue::{CreateArea, PatchArea};
use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
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
    );
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
