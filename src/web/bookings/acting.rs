//! Whom a person's booking form acts as (SPEC §25): themselves, or the
//! person who named them a delegate — on the booking form by
//! `for_username`, on an existing booking by its organizer. The door only
//! picks the principal; the command checks the delegation in its
//! transaction, so a delegation removed in between changes nothing.

use crate::auth::staff::StaffUser;
use crate::command::Principal;
use crate::db::DbError;
use crate::error::ApiError;
use crate::people::delegation;
use crate::rooms::booking::Booking;
use crate::rooms::domain::Title;
use crate::rooms::privacy::Reader;
use crate::state::AppState;
use crate::web::principal;
use actix_web::HttpRequest;

fn delegate_for(state: &AppState, user: &StaffUser, person: &delegation::Person) -> Principal {
    let delegate = (user.id, user.display_name.as_str());
    Principal::for_person(&state.secret, delegate, (person.id, &person.username, &person.display_name))
}

/// The principal and organizer name of a booking form: `for_username`
/// empty (or one's own) books for oneself; another enabled person's name
/// books for them; anyone else is a 400 naming `for_username`.
pub async fn for_form(state: &AppState, user: &StaffUser, for_username: &str) -> Result<(Principal, Title), ApiError> {
    let wanted = for_username.trim();
    if wanted.is_empty() || wanted.eq_ignore_ascii_case(&user.username) {
        return Ok((principal(state, user), Title::parse_field("organizerName", &user.display_name)?));
    }
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let person = delegation::find_enabled(&mut conn, wanted)
        .await
        .map_err(DbError::from)?
        .ok_or_else(|| ApiError::malformed("for_username", "no such person"))?;
    Ok((delegate_for(state, user, &person), Title::parse_field("organizerName", &person.display_name)?))
}

/// The principal a person changes `b` as: its organizer's, when they are
/// the organizer's delegate; else their own (and the organizer rule decides).
pub async fn for_booking(state: &AppState, user: &StaffUser, b: &Booking) -> Result<Principal, ApiError> {
    let own = principal(state, user);
    let Some(organizer) = b.organizer_staff_id.filter(|o| *o != user.id) else { return Ok(own) };
    if crate::rooms::access::may_change(&own, &b.organizer_digest) {
        return Ok(own);
    }
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    if !delegation::is_delegate(&mut conn, organizer, user.id).await.map_err(DbError::from)? {
        return Ok(own);
    }
    let person = crate::people::directory::person(&mut conn, organizer).await.map_err(DbError::from)?;
    Ok(person.map(|p| delegate_for(state, user, &p)).unwrap_or(own))
}

/// [`for_booking`] of booking `id` (oneself when there is no such booking:
/// the command then says so).
pub async fn for_booking_id(state: &AppState, user: &StaffUser, id: i64) -> Result<Principal, ApiError> {
    let found = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        crate::rooms::booking::find(&mut conn, id).await.map_err(DbError::from)?
    };
    match found {
        Some(b) => for_booking(state, user, &b).await,
        None => Ok(principal(state, user)),
    }
}

/// The principal a person restores series `id` as: its organizer's when
/// they are the organizer's delegate, else their own.
pub async fn for_series(state: &AppState, user: &StaffUser, id: i64) -> Result<Principal, ApiError> {
    let own = principal(state, user);
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    let organizer = crate::series::store::organizer_staff_id(&mut conn, id).await.map_err(DbError::from)?;
    let Some(organizer) = organizer.filter(|o| *o != user.id) else { return Ok(own) };
    if !delegation::is_delegate(&mut conn, organizer, user.id).await.map_err(DbError::from)? {
        return Ok(own);
    }
    let person = crate::people::directory::person(&mut conn, organizer).await.map_err(DbError::from)?;
    Ok(person.map(|p| delegate_for(state, user, &p)).unwrap_or(own))
}

/// Who reads a signed-in page (SPEC §26): an admin sees every booking; a
/// person their own private bookings and those of the people who named
/// them a delegate (looked up only when their session says there are any).
pub async fn page_reader(state: &AppState, user: &StaffUser, req: &HttpRequest) -> Result<Reader, DbError> {
    let named = actix_web::HttpMessage::extensions(req).get::<crate::web::NamedDelegate>().is_some_and(|n| n.0);
    let also = if named && !user.is_admin {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        delegation::people_of(&mut conn, user.id)
            .await?
            .into_iter()
            .map(|p| crate::auth::OwnerDigest::of_staff(&state.secret, &p.username).as_str().to_owned())
            .collect()
    } else {
        Vec::new()
    };
    Ok(Reader::of(&principal(state, user), also))
}
