//! Capacity resources: create, list, and lock (the first step of every hand-off).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::RunQueryDsl;

use super::domain::{NewResource, ResourceRow};
use crate::command::CommandError;
use crate::db::schema::capacity_resource as res;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

pub async fn list(conn: &mut Conn) -> QueryResult<Vec<ResourceRow>> {
    res::table.order(res::id).select(ResourceRow::as_select()).load(conn).await
}

pub async fn find(conn: &mut Conn, id: i64) -> QueryResult<Option<ResourceRow>> {
    res::table.find(id).select(ResourceRow::as_select()).first(conn).await.optional()
}

/// Locks the resource row: every transition that moves units between owners
/// takes this lock first, then reads holds, entries and offers (SPEC §3).
pub async fn lock(conn: &mut Conn, id: i64) -> Result<ResourceRow, CommandError> {
    res::table
        .find(id)
        .select(ResourceRow::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?
        .ok_or_else(|| ApiError::not_found("resource").into())
}

pub async fn create(conn: &mut Conn, new: &NewResource, now: DateTime<Utc>) -> Result<ResourceRow, CommandError> {
    let inserted = diesel::insert_into(res::table)
        .values((
            res::code.eq(&new.code),
            res::name.eq(&new.name),
            res::capacity.eq(new.capacity),
            res::timezone.eq(&new.timezone),
            res::policy_version.eq(new.policy_version),
            res::created_at.eq(now),
            res::updated_at.eq(now),
        ))
        .returning(ResourceRow::as_returning())
        .get_result(conn)
        .await;
    match inserted {
        Ok(row) => Ok(row),
        Err(DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info))
            if info.constraint_name() == Some("capacity_resource_code_key") =>
        {
            Err(ApiError::new(ErrorCode::ResourceCodeTaken, format!("a resource with code `{}` exists", new.code))
                .into())
        }
        Err(e) => Err(e.into()),
    }
}
