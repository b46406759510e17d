//! A booking as the booking pages find and describe it: loaded or 404,
//! whether the signed-in person may change it, its time in words, and the
//! day page that shows it.

use actix_web::http::StatusCode;

use crate::db::DbError;
use crate::i18n::I18n;
use crate::rooms::booking::{self as store, Booking};
use crate::state::AppState;
use crate::web::day::enc;
use crate::web::WebError;

/// The area a booking's rooms are in (for the page it returns to).
pub(super) async fn area_of(state: &AppState, b: &Booking) -> String {
    let catalogue = state.catalogue.current().await.ok();
    catalogue
        .as_ref()
        .and_then(|c| b.rooms.first().and_then(|code| c.get(code)).map(|r| r.area.clone()))
        .unwrap_or_default()
}

/// The day page of a booking, scrolled to it.
pub(super) async fn day_of(state: &AppState, b: &Booking, flag: &str) -> String {
    let date = b.starts_at.with_timezone(&b.zone(state.policy().timezone)).date_naive();
    let area = enc(&area_of(state, b).await);
    format!("/rooms?date={date}&area={area}&{flag}={id}#booking-{id}", id = b.id)
}

pub async fn load(state: &AppState, id: i64) -> Result<Booking, WebError> {
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    store::find(&mut conn, id)
        .await?
        .ok_or_else(|| WebError::message(StatusCode::NOT_FOUND, "booking-not-found-heading", "booking-not-found"))
}

/// The booking's date and times in its area's zone; where `viewer` (the
/// reader's zone) is another, that zone named and the reader's times after.
pub fn time_label(state: &AppState, i18n: &I18n, b: &Booking, viewer: Option<chrono_tz::Tz>) -> String {
    let tz = b.zone(state.policy().timezone);
    let (s, e) = (b.starts_at.with_timezone(&tz), b.ends_at.with_timezone(&tz));
    let here = format!("{} {}–{}", i18n.date_compact(s.date_naive()), s.format("%H:%M"), e.format("%H:%M"));
    match viewer.filter(|v| *v != tz) {
        None => here,
        Some(v) => {
            let (vs, ve) = (b.starts_at.with_timezone(&v), b.ends_at.with_timezone(&v));
            let yours = format!("{} {}–{}", i18n.date_compact(vs.date_naive()), vs.format("%H:%M"), ve.format("%H:%M"));
            i18n.with("zone-span", &[("time", &here), ("zone", &tz.name()), ("mine", &yours)])
        }
    }
}
