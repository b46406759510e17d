//! `booking.approve` and `booking.reject` (SPEC §12): an admin confirms a
//! PENDING booking, or refuses it and its time is free at once.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde::Serialize;

use super::{deactivate_copies, invalid_state, lock_for};
use crate::command::{Command, CommandError, Ctx, On, Operation, Role};
use crate::db::schema::reservation;
use crate::db::Conn;
use crate::error::ApiError;
use crate::rooms::access::Act;
use crate::rooms::booking::{find, Booking};
use crate::rooms::domain::Status;
use crate::rooms::events;

pub static APPROVE: Operation = Operation::new("booking.approve", &[Role::Admin]);
pub static REJECT: Operation = Operation::new("booking.reject", &[Role::Admin]);

/// Longest reason an admin may give.
const REASON_CHARS: usize = 500;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub approve: bool,
    /// Shown to the organizer and kept in the history.
    pub reason: Option<String>,
}

impl Decision {
    /// A decision with its reason: blank is none, else at most 500 characters.
    pub fn parse(approve: bool, reason: Option<&str>) -> Result<Decision, ApiError> {
        let reason = match reason.map(str::trim) {
            None | Some("") => None,
            Some(r) if r.chars().count() > REASON_CHARS => {
                return Err(ApiError::malformed("reason", format!("must be at most {REASON_CHARS} characters")))
            }
            Some(r) => Some(r.to_owned()),
        };
        Ok(Decision { approve, reason })
    }
}

#[derive(Debug, Clone)]
pub struct DecideBooking {
    pub id: i64,
    pub decision: Decision,
}

impl Command for DecideBooking {
    type Output = Booking;

    fn operation(&self) -> &'static Operation {
        if self.decision.approve {
            &APPROVE
        } else {
            &REJECT
        }
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::to_value(On { id: self.id, change: &self.decision }).unwrap_or_default()
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Booking, CommandError> {
        let (id, approve, reason) = (self.id, self.decision.approve, self.decision.reason.as_deref());
        let before = lock_for(conn, id, ctx.principal, Act::Change, None).await?;
        if before.status != Status::Pending {
            return Err(invalid_state(before.status).into());
        }
        let status = if approve { Status::Confirmed } else { Status::Rejected };
        diesel::update(reservation::table.find(id))
            .set((
                reservation::status.eq(status.as_str()),
                reservation::decided_at.eq(ctx.now),
                reservation::decision_reason.eq(reason),
                reservation::version.eq(reservation::version + 1),
                reservation::updated_at.eq(ctx.now),
            ))
            .execute(conn)
            .await?;
        if !approve {
            deactivate_copies(conn, &[id]).await?;
        }
        let after = find(conn, id).await?.ok_or_else(ApiError::internal)?;
        events::decided(conn, &before, &after, reason, ctx).await?;
        Ok(after)
    }
}
