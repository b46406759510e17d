//! Erase (SPEC §26): a person who left, made anonymous in one transaction.
//! The account row stays, renamed `erased-{id}` and disabled, because past
//! bookings, history and access records point at it; everything that says
//! who they were goes. Past bookings keep their rooms and times, so every
//! report of the time before the erase gives the same numbers; they lose
//! their title and organizer name ([`ANONYMOUS`]), and their history keeps
//! no title. Future bookings are cancelled, so their rooms are free at once.

use std::net::IpAddr;

use diesel::sql_types::{Array, Bool, Int8, Nullable, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::RunQueryDsl;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::access::{self, Access, Actor, Kind};
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::{I18n, Lang};
use crate::rooms::domain::Status;

pub static ERASE_STAFF: Operation = Operation::new("staff.erase", &[Role::Admin]);

/// What an anonymised booking keeps for its title and organizer name: no
/// words in any language, so every reader shows the same dash.
pub const ANONYMOUS: &str = "—";

/// The display name of an erased person, which history entries naming
/// them read too: the spec's Korean words, stored once (`erased-person`).
pub fn erased_name() -> String {
    I18n::new(Lang::Ko).t("erased-person")
}

/// The username prefix erased accounts take; new accounts may not.
pub const ERASED_PREFIX: &str = "erased-";

/// `POST /api/admin/staff/{username}/erase`, `POST /admin/staff/{username}/erase`.
#[derive(Debug, Clone)]
pub struct EraseStaff {
    pub username: String,
    /// Who erases, for the access record the erase is.
    pub actor: Actor,
    pub address: Option<IpAddr>,
}

/// The answer: the account's new name and what the erase changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Erased {
    /// `erased-{n}`.
    pub username: String,
    /// Future bookings cancelled.
    pub cancelled: i64,
    /// Bookings (past and cancelled) that lost title and organizer name.
    pub anonymised: i64,
    /// Mail deliveries to or from them purged.
    pub mail_purged: i64,
}

#[derive(QueryableByName)]
struct Person {
    #[diesel(sql_type = Int8)]
    id: i64,
    #[diesel(sql_type = Nullable<Text>)]
    email: Option<String>,
    #[diesel(sql_type = Bool)]
    erased: bool,
    #[diesel(sql_type = Bool)]
    break_glass: bool,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = Int8)]
    id: i64,
}

impl Command for EraseStaff {
    type Output = Erased;

    fn operation(&self) -> &'static Operation {
        &ERASE_STAFF
    }

    fn fingerprint(&self) -> Value {
        json!({ "username": self.username.to_lowercase() })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Erased, CommandError> {
        // The account row first, locked: a second erase waits, then finds it erased.
        let person: Option<Person> = diesel::sql_query(
            "SELECT id, email, erased_at IS NOT NULL AS erased,
                    configured_password_hash IS NOT NULL AS break_glass
               FROM staff_user WHERE lower(username) = lower($1) FOR UPDATE",
        )
        .bind::<Text, _>(&self.username)
        .get_result(conn)
        .await
        .optional()?;
        let person = person.ok_or_else(|| ApiError::not_found("person"))?;
        if person.erased {
            return Err(ApiError::worded(ErrorCode::AlreadyErased, json!({ "username": self.username })).into());
        }
        // Refusals of who is named, not of a state: nothing is kept for a replay.
        if person.break_glass {
            let refused = ApiError::worded(ErrorCode::BreakGlassAccount, json!({ "username": self.username }));
            return Err(CommandError::Invalid(refused));
        }
        if ctx.principal.staff_id() == Some(person.id) {
            return Err(CommandError::Invalid(ApiError::malformed("username", "you cannot erase yourself")));
        }
        let id = person.id;
        let mail_purged = purge_mail(conn, person.email.as_deref()).await?;
        anonymise_account(conn, id, ctx).await?;
        let anonymised = anonymise_bookings(conn, id, ctx).await?;
        let future: Vec<Id> = diesel::sql_query(
            "SELECT id FROM reservation
              WHERE organizer_staff_id = $1 AND starts_at > $2 AND status = ANY($3) ORDER BY id",
        )
        .bind::<Int8, _>(id)
        .bind::<Timestamptz, _>(ctx.now)
        .bind::<Array<Text>, _>(Status::live_texts().to_vec())
        .load(conn)
        .await?;
        let future: Vec<i64> = future.into_iter().map(|f| f.id).collect();
        // Cancelled by the admin who erases; the notices carry no title now,
        // and none goes to the erased person (their address is gone).
        let cancelled = crate::rooms::store::cancel_many(conn, &future, ctx, false).await?.len() as i64;
        rename_in_history(conn, id).await?;
        access::record(
            conn,
            &Access { actor: &self.actor, kind: Kind::Erase, subject: Some(id), people: 1, address: self.address },
        )
        .await?;
        Ok(Erased { username: format!("{ERASED_PREFIX}{id}"), cancelled, anonymised, mail_purged })
    }
}

/// Mail to or from the person, sent or not; its attempts go with it (ON
/// DELETE CASCADE). Other notices about their bookings lose title and
/// organizer name with the bookings, in [`anonymise_sql`].
async fn purge_mail(conn: &mut Conn, email: Option<&str>) -> Result<i64, CommandError> {
    let Some(email) = email else { return Ok(0) };
    let purged = diesel::sql_query(
        "DELETE FROM notification_outbox
          WHERE channel = 'mail' AND (lower(payload ->> 'to') = lower($1) OR lower(payload ->> 'from') = lower($1))",
    )
    .bind::<Text, _>(email)
    .execute(&mut *conn)
    .await?;
    Ok(purged as i64)
}

/// The account row anonymised and disabled; everything else of theirs gone.
async fn anonymise_account(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<(), CommandError> {
    diesel::sql_query(
        "DELETE FROM staff_login_throttle WHERE lower(username) = (SELECT lower(username) FROM staff_user WHERE id = $1)",
    )
    .bind::<Int8, _>(id)
    .execute(&mut *conn)
    .await?;
    diesel::sql_query(
        "UPDATE staff_user
            SET username = $2 || id, display_name = $3, email = NULL, password_hash = $5,
                configured_password_hash = NULL, is_admin = false, language = NULL, time_zone = NULL,
                last_sign_in_at = NULL, disabled_at = coalesce(disabled_at, $4),
                calendar_generation = calendar_generation + 1, erased_at = $4
          WHERE id = $1",
    )
    .bind::<Int8, _>(id)
    .bind::<Text, _>(ERASED_PREFIX)
    .bind::<Text, _>(&erased_name())
    .bind::<Timestamptz, _>(ctx.now)
    .bind::<Text, _>(crate::auth::staff::NO_PASSWORD)
    .execute(&mut *conn)
    .await?;
    // What only says who they were, or lets anyone act as them.
    for statement in [
        "DELETE FROM staff_session WHERE user_id = $1",
        "DELETE FROM staff_identity WHERE user_id = $1",
        "DELETE FROM app_password WHERE staff_id = $1",
        "DELETE FROM delegation WHERE person = $1 OR delegate = $1",
        "DELETE FROM staff_away WHERE staff_id = $1",
        "DELETE FROM dav_event WHERE staff_id = $1",
        "UPDATE room SET assigned_to = NULL WHERE assigned_to = $1",
        "UPDATE room_display_token SET created_by = NULL WHERE created_by = $1",
    ] {
        diesel::sql_query(statement).bind::<Int8, _>(id).execute(&mut *conn).await?;
    }
    Ok(())
}

/// Every booking and series they organize loses title, organizer name and
/// (through the digest) its tie to whoever takes their old username; their
/// history's before/after values lose titles.
async fn anonymise_bookings(conn: &mut Conn, id: i64, ctx: &Ctx<'_>) -> Result<i64, CommandError> {
    let digest = format!("{ERASED_PREFIX}{id}");
    let named: Count = diesel::sql_query(anonymise_sql("organizer_staff_id = $1"))
        .bind::<Int8, _>(id)
        .bind::<Text, _>(ANONYMOUS)
        .bind::<Timestamptz, _>(ctx.now)
        .get_result(conn)
        .await?;
    diesel::sql_query(
        "UPDATE reservation SET organizer_digest = $2 WHERE organizer_staff_id = $1 AND organizer_digest <> $2",
    )
    .bind::<Int8, _>(id)
    .bind::<Text, _>(&digest)
    .execute(&mut *conn)
    .await?;
    diesel::sql_query(
        "UPDATE booking_series
            SET title = $2, organizer_name = $2, organizer_digest = $3, anonymised_at = coalesce(anonymised_at, $4)
          WHERE organizer_staff_id = $1",
    )
    .bind::<Int8, _>(id)
    .bind::<Text, _>(ANONYMOUS)
    .bind::<Text, _>(&digest)
    .bind::<Timestamptz, _>(ctx.now)
    .execute(&mut *conn)
    .await?;
    Ok(named.n)
}

/// The statement that anonymises the reservations `filter` picks, the
/// titles in their history and the notices about them (webhooks, mail to
/// others), counting those still named: `$2` is
/// [`ANONYMOUS`], `$3` the instant; the filter binds `$1` (and more).
pub(crate) fn anonymise_sql(filter: &str) -> String {
    format!(
        "WITH done AS (
             UPDATE reservation SET title = $2, organizer_name = $2, anonymised_at = $3
              WHERE {filter} AND anonymised_at IS NULL RETURNING id),
         history AS (
             UPDATE booking_event SET changes = changes - 'title' - 'organizer' - 'attendees'
              WHERE reservation_id IN (SELECT id FROM done)
                AND changes ?| array['title', 'organizer', 'attendees'] RETURNING 1),
         notices AS (
             UPDATE notification_outbox
                SET payload = payload || jsonb_build_object('title', $2::text, 'organizer', $2::text)
              WHERE payload -> 'bookingId' IN (SELECT to_jsonb(id) FROM done) AND payload ? 'title' RETURNING 1)
         SELECT count(*) AS n FROM done"
    )
}

#[derive(QueryableByName)]
pub(crate) struct Count {
    #[diesel(sql_type = Int8)]
    pub n: i64,
}

/// History entries naming them, as the actor or the person acted for.
/// One pass over the history, which has no index by account: an erase is rare.
async fn rename_in_history(conn: &mut Conn, id: i64) -> Result<(), CommandError> {
    diesel::sql_query(
        "UPDATE booking_event
            SET actor = CASE WHEN actor_staff_id = $1 THEN $2 ELSE actor END,
                actor_for = CASE WHEN actor_for_staff_id = $1 THEN $2 ELSE actor_for END
          WHERE actor_staff_id = $1 OR actor_for_staff_id = $1",
    )
    .bind::<Int8, _>(id)
    .bind::<Text, _>(&erased_name())
    .execute(&mut *conn)
    .await?;
    Ok(())
}
