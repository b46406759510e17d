//! `GET /account/export` (SPEC §26): the signed-in person's own data as one
//! JSON document, streamed. Only the person themselves: a delegate signs in
//! as themselves and gets their own. Not an access record — it is not
//! another person's data.

use actix_web::{web, HttpResponse};

use crate::db::DbError;
use crate::privacy::export;
use crate::state::AppState;
use crate::web::{SignedIn, WebError};

pub async fn export_json(state: web::Data<AppState>, SignedIn(user): SignedIn) -> Result<HttpResponse, WebError> {
    let conn = state.pool.get_owned().await.map_err(DbError::from)?;
    let opened = export::open(conn, user.id).await?.ok_or_else(|| {
        WebError::message(actix_web::http::StatusCode::NOT_FOUND, "error-not-found-heading", "error-not-found")
    })?;
    Ok(crate::http::staff::download(opened))
}
