//! Which zone a page shows times in (SPEC §24): an area's rooms and
//! bookings in the area's zone, and where that is not the viewer's own
//! (`/account`, else `YEYAK_TIMEZONE`), the viewer's time beside it with
//! both zones named.

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::language::PageI18n;
use super::WebError;
use crate::auth::staff::StaffUser;
use crate::state::AppState;

/// The zone of the area a page shows (`asked`, else the first).
pub async fn area_zone(state: &AppState, asked: Option<&str>) -> Result<Tz, WebError> {
    let catalogue = state.catalogue.current().await?;
    Ok(catalogue.zone_of_area(&catalogue.shown_area(asked), state.policy().timezone))
}

/// The note a page shows when its area's zone is not the viewer's: both
/// zones named, with the time now in each.
pub fn note(state: &AppState, i18n: &PageI18n, user: &StaffUser, area_tz: Tz) -> Option<String> {
    let mine = user.zone(state.policy().timezone);
    if mine == area_tz {
        return None;
    }
    let now = state.clock.now();
    let at = |tz: Tz| now.with_timezone(&tz).format("%H:%M").to_string();
    let (area_now, my_now) = (at(area_tz), at(mine));
    Some(i18n.with(
        "zone-note",
        &[("area", &area_tz.name()), ("areaNow", &area_now), ("mine", &mine.name()), ("myNow", &my_now)],
    ))
}

/// `HH:MM–HH:MM` in `zone`, and when the viewer's zone is another, the
/// zone's name and the viewer's own times after it.
pub fn span(i18n: &PageI18n, start: DateTime<Utc>, end: DateTime<Utc>, zone: Tz, mine: Tz) -> String {
    let hm = |t: DateTime<Utc>, tz: Tz| t.with_timezone(&tz).format("%H:%M").to_string();
    let here = format!("{}–{}", hm(start, zone), hm(end, zone));
    if zone == mine {
        return here;
    }
    let yours = format!("{}–{}", hm(start, mine), hm(end, mine));
    i18n.with("zone-span", &[("time", &here), ("zone", &zone.name()), ("mine", &yours)])
}
