//! The check every command run by a delegate gets (SPEC §25), in its
//! transaction before its work: the delegation exists and the person is
//! enabled, the row held `FOR KEY SHARE` to the commit — so a removal (a
//! `DELETE` of the row) waits for the command in flight and bars the next.

use diesel::sql_types::Int8;
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;

use super::{CommandError, Principal};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

#[derive(QueryableByName)]
struct Held {
    #[diesel(sql_type = Int8)]
    #[allow(dead_code)]
    person: i64,
}

/// `NOT_ORGANIZER` unless the principal's delegation holds (nothing to
/// check for anyone acting as themselves).
pub async fn ensure_acting(conn: &mut Conn, principal: &Principal) -> Result<(), CommandError> {
    let (Some(behalf), Some(person)) = (principal.behalf(), principal.staff_id()) else { return Ok(()) };
    let held: Option<Held> = diesel::sql_query(
        "SELECT d.person FROM delegation d JOIN staff_user p ON p.id = d.person
          WHERE d.person = $1 AND d.delegate = $2 AND p.disabled_at IS NULL
            FOR KEY SHARE OF d",
    )
    .bind::<Int8, _>(person)
    .bind::<Int8, _>(behalf.delegate_id)
    .get_result(conn)
    .await
    .optional()?;
    match held {
        Some(_) => Ok(()),
        None => Err(ApiError::worded(ErrorCode::NotOrganizer, serde_json::json!({ "reason": "not_delegate" })).into()),
    }
}
