//! `POST /api/admin/outbox/{deliveryId}/redrive`: give an EXHAUSTED delivery
//! a fresh attempt budget.

use actix_web::{web, HttpResponse};
use serde_json::json;

use super::store;
use crate::db::{self, DbError};
use crate::error::{ApiError, ErrorCode};
use crate::http::extract::AdminCaller;
use crate::state::AppState;

#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Redriven {
    delivery_id: String,
    status: &'static str,
}

pub async fn redrive(
    state: web::Data<AppState>,
    _: AdminCaller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let mut pooled = state.pool.get().await.map_err(DbError::from)?;
    let conn: &mut db::Conn = &mut pooled;
    db::begin(conn).await.map_err(DbError::from)?;
    let result = store::redrive(conn, &id, state.clock.now()).await;
    let before = db::finish(conn, result).await.map_err(DbError::from)?;
    let exhausted = before.iter().any(|s| s == "EXHAUSTED");
    match before.first().map(String::as_str) {
        None => Err(ApiError::not_found("delivery")),
        Some(_) if exhausted => {
            Ok(HttpResponse::Ok().json(Redriven { delivery_id: id.into_inner(), status: "PENDING" }))
        }
        Some(other) => Err(ApiError::new(
            ErrorCode::InvalidState,
            format!("only EXHAUSTED deliveries can be re-driven, this one is {other}"),
        )
        .with_details(json!({ "state": other }))),
    }
}
