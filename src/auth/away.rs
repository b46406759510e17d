//! Days a person is away (SPEC §28: `POST /account/away`, `from` and `to`
//! both inclusive): stored as data, so that others may book the desk
//! assigned to them on those days (`rooms::desks::ensure_may_take` reads
//! them inside the booking's transaction), and so that staff
//! administration can show them ([`of_people`], for `GET /api/admin/staff`'s
//! `away: [{from, to}]`).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::schema::staff_away;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

pub static ADD: Operation = Operation::new("staff.add_away", &[Role::Staff, Role::Admin]);

/// The longest absence one form may name (a year and a day).
pub const MAX_DAYS: i64 = 366;

/// `from` to `to`, both inclusive, `from` not after `to`, at most [`MAX_DAYS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AwaySpan {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

impl AwaySpan {
    pub fn parse(from: &str, to: &str) -> Result<Self, ApiError> {
        let from = crate::day::parse_field("from", from)?;
        let to = crate::day::parse_field("to", to)?;
        if to < from {
            return Err(ApiError::malformed("to", "must not be before `from`"));
        }
        if (to - from).num_days() >= MAX_DAYS {
            return Err(ApiError::malformed("to", format!("at most {MAX_DAYS} days at once")));
        }
        Ok(AwaySpan { from, to })
    }
}

/// The signed-in person is away from `span.from` to `span.to`.
pub struct AddAway {
    pub span: AwaySpan,
}

impl Command for AddAway {
    type Output = AwaySpan;

    fn operation(&self) -> &'static Operation {
        &ADD
    }

    fn fingerprint(&self) -> Value {
        json!({ "from": self.span.from, "to": self.span.to })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<AwaySpan, CommandError> {
        let Some(id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(ErrorCode::Forbidden, "only a person is away").into());
        };
        diesel::insert_into(staff_away::table)
            .values((
                staff_away::staff_id.eq(id),
                staff_away::from_date.eq(self.span.from),
                staff_away::to_date.eq(self.span.to),
                staff_away::created_at.eq(ctx.now),
            ))
            .on_conflict_do_nothing()
            .execute(conn)
            .await?;
        Ok(self.span)
    }
}

/// A person's away spans that end on or after `since`, in date order.
pub async fn of_person(conn: &mut Conn, staff_id: i64, since: NaiveDate) -> QueryResult<Vec<AwaySpan>> {
    Ok(of_people(conn, &[staff_id], since).await?.remove(&staff_id).unwrap_or_default())
}

/// Each of `staff_ids`' away spans that end on or after `since`, in date
/// order, in one statement: what `GET /api/admin/staff` shows as `away`.
pub async fn of_people(
    conn: &mut Conn,
    staff_ids: &[i64],
    since: NaiveDate,
) -> QueryResult<BTreeMap<i64, Vec<AwaySpan>>> {
    let rows: Vec<(i64, NaiveDate, NaiveDate)> = staff_away::table
        .filter(staff_away::staff_id.eq_any(staff_ids))
        .filter(staff_away::to_date.ge(since))
        .order((staff_away::staff_id, staff_away::from_date, staff_away::to_date))
        .select((staff_away::staff_id, staff_away::from_date, staff_away::to_date))
        .load(conn)
        .await?;
    let mut by_person: BTreeMap<i64, Vec<AwaySpan>> = BTreeMap::new();
    for (id, from, to) in rows {
        by_person.entry(id).or_default().push(AwaySpan { from, to });
    }
    Ok(by_person)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_runs_forwards_and_names_the_bad_field() {
        let s = AwaySpan::parse("2027-03-15", "2027-03-15").unwrap();
        assert_eq!(s.from, s.to);
        assert_eq!(AwaySpan::parse("2027-03-16", "2027-03-15").unwrap_err().details["field"], "to");
        assert_eq!(AwaySpan::parse("someday", "2027-03-15").unwrap_err().details["field"], "from");
        assert_eq!(AwaySpan::parse("2027-01-01", "2028-06-01").unwrap_err().details["field"], "to");
    }
}
