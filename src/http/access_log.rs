//! `GET /api/admin/access-log?from=…&to=…` (SPEC §26), and [`note`], the one
//! way a JSON route records that an admin viewed other people's personal data.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use schemars::JsonSchema;
use serde::Serialize;

use super::extract::AdminCaller;
use super::extract::RangeQuery;
use super::openapi::{Api, Op, Tag};
use crate::auth::Caller;
use crate::db::DbError;
use crate::error::ApiError;
use crate::privacy::access::{self, Access, AccessRecord, Actor, Kind};
use crate::state::AppState;

pub fn routes(api: &mut Api) {
    api.route(
        Method::GET,
        "/admin/access-log",
        Op::new::<AccessLog>(
            Tag::Admin,
            "listAccessRecords",
            "access records of a range of local dates, newest first (at most 5000)",
            200,
        )
        .admin()
        .query("from", "first local date, YYYY-MM-DD (default: four weeks before `to`)", false)
        .query("to", "last local date, YYYY-MM-DD, inclusive (default: today)", false),
        list,
    );
}

/// An admin key as an access record names it.
pub fn key_actor(caller: &Caller) -> Actor {
    Actor::Key { tenant: caller.tenant.as_str().to_owned() }
}

/// Records that `actor` viewed `kind` (one statement, before the answer).
pub async fn note(
    state: &AppState,
    req: &HttpRequest,
    actor: &Actor,
    kind: Kind,
    subject: Option<i64>,
    people: usize,
) -> Result<(), ApiError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let address = state.transport.client_ip(req);
    access::record(&mut conn, &Access { actor, kind, subject, people, address }).await?;
    Ok(())
}

#[derive(Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessLog {
    /// First local date of the range.
    from: String,
    /// Last local date of the range (inclusive).
    to: String,
    records: Vec<AccessRecord>,
    /// More records than the 5000 listed fell in the range: ask for a narrower one.
    truncated: bool,
}

async fn list(state: web::Data<AppState>, _: AdminCaller, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let period = RangeQuery::of(&req).period(&state)?;
    let (from, to) = access::instants(period.from(), period.to(), state.policy().timezone);
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let (records, truncated) = access::list(&mut conn, from, to).await?;
    Ok(HttpResponse::Ok().json(AccessLog {
        from: period.from().to_string(),
        to: period.to().to_string(),
        records,
        truncated,
    }))
}
