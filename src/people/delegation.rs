//! Delegations (SPEC §25): a person names delegates, who book, change and
//! cancel for them. The rows decide, inside the command's transaction: a
//! delegate's command holds the delegation `FOR KEY SHARE`
//! (`command::behalf`), and a removal (a `DELETE`) waits for it, so a
//! removed delegate changes nothing after.

use diesel::prelude::*;
use diesel::sql_types::{Array, Int8, Text};
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};

use crate::command::CommandError;
use crate::db::schema::{delegation, staff_user};
use crate::db::{lower, Conn};
use crate::error::ApiError;

/// A person as a delegation names them.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Serialize, Deserialize)]
pub struct Person {
    pub id: i64,
    pub username: String,
    pub display_name: String,
}

const PERSON: (staff_user::id, staff_user::username, staff_user::display_name) =
    (staff_user::id, staff_user::username, staff_user::display_name);

/// An enabled person by username, any spelling (SPEC §25).
pub async fn find_enabled(conn: &mut Conn, username: &str) -> QueryResult<Option<Person>> {
    staff_user::table
        .filter(lower(staff_user::username).eq(username.to_lowercase()))
        .filter(staff_user::disabled_at.is_null())
        .select(PERSON)
        .first(conn)
        .await
        .optional()
}

/// The delegates `person` named, by username.
pub async fn delegates_of(conn: &mut Conn, person: i64) -> QueryResult<Vec<Person>> {
    delegation::table
        .inner_join(staff_user::table.on(staff_user::id.eq(delegation::delegate)))
        .filter(delegation::person.eq(person))
        .order(staff_user::username)
        .select(PERSON)
        .load(conn)
        .await
}

/// The enabled people who named `delegate`: whom they may book for.
pub async fn people_of(conn: &mut Conn, delegate: i64) -> QueryResult<Vec<Person>> {
    delegation::table
        .inner_join(staff_user::table.on(staff_user::id.eq(delegation::person)))
        .filter(delegation::delegate.eq(delegate))
        .filter(staff_user::disabled_at.is_null())
        .order(staff_user::username)
        .select(PERSON)
        .load(conn)
        .await
}

/// Whether `delegate` may act for `person` now (a door's read: which
/// principal to build; the command checks again in its transaction).
pub async fn is_delegate(conn: &mut Conn, person: i64, delegate: i64) -> QueryResult<bool> {
    diesel::select(diesel::dsl::exists(
        delegation::table.filter(delegation::person.eq(person)).filter(delegation::delegate.eq(delegate)),
    ))
    .get_result(conn)
    .await
}

/// The enabled people named by `usernames` (any spelling), each checked:
/// known, enabled, not `person` themselves. A refusal names `field`.
pub async fn resolve(
    conn: &mut Conn,
    person: i64,
    usernames: &[String],
    field: &str,
) -> Result<Vec<Person>, CommandError> {
    let keys: Vec<String> = usernames.iter().map(|u| u.trim().to_lowercase()).collect();
    let found: Vec<Person> = staff_user::table
        .filter(lower(staff_user::username).eq_any(&keys))
        .filter(staff_user::disabled_at.is_null())
        .select(PERSON)
        .load(conn)
        .await?;
    for key in &keys {
        if !found.iter().any(|p| p.username.to_lowercase() == *key) {
            return Err(ApiError::malformed(field, format!("no such person: {key}")).into());
        }
    }
    if found.iter().any(|p| p.id == person) {
        return Err(ApiError::malformed(field, "a person cannot be their own delegate").into());
    }
    Ok(found)
}

/// Adds `delegate` for `person` (nothing when already named).
pub async fn add(conn: &mut Conn, person: i64, delegate: i64) -> QueryResult<bool> {
    let added = diesel::insert_into(delegation::table)
        .values((delegation::person.eq(person), delegation::delegate.eq(delegate)))
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(added == 1)
}

/// Removes `delegate` for `person`; waits for their commands in flight.
pub async fn remove(conn: &mut Conn, person: i64, delegate: i64) -> QueryResult<bool> {
    let removed = diesel::delete(
        delegation::table.filter(delegation::person.eq(person)).filter(delegation::delegate.eq(delegate)),
    )
    .execute(conn)
    .await?;
    Ok(removed == 1)
}

/// Makes `person`'s delegates exactly `delegates`.
pub async fn replace(conn: &mut Conn, person: i64, delegates: &[i64]) -> QueryResult<()> {
    diesel::sql_query("DELETE FROM delegation WHERE person = $1 AND delegate <> ALL($2)")
        .bind::<Int8, _>(person)
        .bind::<Array<Int8>, _>(delegates)
        .execute(&mut *conn)
        .await?;
    diesel::sql_query(
        "INSERT INTO delegation (person, delegate) SELECT $1, d FROM unnest($2::int8[]) d ON CONFLICT DO NOTHING",
    )
    .bind::<Int8, _>(person)
    .bind::<Array<Int8>, _>(delegates)
    .execute(conn)
    .await?;
    Ok(())
}

/// Every person's delegates' usernames, for the staff list (one statement).
pub async fn all_delegates(conn: &mut Conn, people: &[i64]) -> QueryResult<Vec<(i64, Vec<String>)>> {
    #[derive(QueryableByName)]
    struct Row {
        #[diesel(sql_type = Int8)]
        person: i64,
        #[diesel(sql_type = Array<Text>)]
        delegates: Vec<String>,
    }
    let rows: Vec<Row> = diesel::sql_query(
        "SELECT d.person, array_agg(s.username ORDER BY s.username) AS delegates
           FROM delegation d JOIN staff_user s ON s.id = d.delegate
          WHERE d.person = ANY($1) GROUP BY d.person",
    )
    .bind::<Array<Int8>, _>(people)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.person, r.delegates)).collect())
}
