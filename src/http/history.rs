//! `GET /api/bookings/{id}/history`.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use schemars::JsonSchema;
use serde::Serialize;

use crate::db::DbError;
use crate::error::{ApiError, ErrorCode};
use crate::history::Event;
use crate::http::extract::ApiCaller;
use crate::http::openapi::{Api, Op, Tag};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    api.route(
        Method::GET,
        "/bookings/{id}/history",
        Op::new::<HistoryReply>(Tag::Bookings, "getBookingHistory", "every change of a booking, oldest first", 200)
            .errors(&[ErrorCode::NotFound]),
        history,
    );
}

#[derive(Serialize, JsonSchema)]
#[schemars(rename = "BookingHistory")]
pub struct HistoryReply {
    events: Vec<Event>,
}

async fn history(
    state: web::Data<AppState>,
    ApiCaller(caller): ApiCaller,
    req: HttpRequest,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let Some(booking) = crate::rooms::booking::find(&mut conn, id).await.map_err(DbError::from)? else {
        return Err(ApiError::not_found("booking"));
    };
    let events = crate::history::list(&mut conn, id).await.map_err(DbError::from)?;
    drop(conn);
    // An admin key reading a person's booking history (SPEC §26).
    if caller.is_admin() {
        if let Some(person) = booking.organizer_staff_id {
            let actor = crate::http::access_log::key_actor(&caller);
            crate::http::access_log::note(&state, &req, &actor, crate::privacy::Kind::History, Some(person), 1).await?;
        }
    }
    Ok(HttpResponse::Ok().json(HistoryReply { events }))
}
