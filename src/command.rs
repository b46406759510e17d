//! The one shape of every command, whoever sends it: who acts (and for
//! whom), the operation, the idempotency key and the parsed payload that make
//! the scope and fingerprint, and the work that runs inside the command's
//! transaction. JSON routes and browser forms both build an [`Acting`] and
//! call [`Acting::run`]; a new command route costs its parsing and one call.

use chrono::{DateTime, Utc};
use scoped_futures::{ScopedBoxFuture, ScopedFutureExt};
use serde::Serialize;

use crate::auth::api_key::Tenant;
use crate::auth::OwnerDigest;
use crate::db::Conn;
use crate::error::ApiError;
use crate::idempotency::{run_command, CommandError, Fingerprint, IdempotencyKey, Outcome, Scope, StoredResponse};
use crate::state::AppState;

/// Who runs a command.
#[derive(Debug, Clone)]
pub struct Acting {
    /// Idempotency scopes are per tenant (browser forms use `staff`).
    pub tenant: Tenant,
    /// Keyed digest of the person acted for: decides ownership and is part
    /// of every fingerprint.
    pub digest: OwnerDigest,
    pub is_admin: bool,
    /// Shown in a booking's history as who made the change.
    pub name: String,
    /// The signed-in staff member, when the command comes from a browser.
    pub staff_id: Option<i64>,
}

impl Acting {
    /// Runs `command` once per (tenant, operation, key) in one transaction
    /// with its stored answer; answers `status` with the command's JSON, or
    /// its stored rejection. Without a key the command simply runs.
    pub async fn run<'a, T, P, F>(
        &self,
        state: &AppState,
        operation: &'static str,
        key: Option<IdempotencyKey>,
        payload: &P,
        status: u16,
        command: F,
    ) -> Result<Outcome, ApiError>
    where
        T: Serialize + Send + 'a,
        P: Serialize,
        F: for<'r> Fn(&'r mut Conn, DateTime<Utc>) -> ScopedBoxFuture<'a, 'r, Result<T, CommandError>>
            + Send
            + Sync
            + 'a,
    {
        let guard = key.map(|key| {
            let fingerprint = Fingerprint::compute(operation, payload, &self.digest);
            (Scope { tenant: self.tenant.clone(), operation, key }, fingerprint)
        });
        let command = &command;
        run_command(&state.runner(), guard, move |conn, now| {
            async move { Ok(StoredResponse::json(status, &command(conn, now).await?)) }.scope_boxed()
        })
        .await
    }
}

/// What the fingerprint of a command on one existing thing covers.
#[derive(Serialize)]
pub struct On<'a, I: Serialize, T: Serialize + ?Sized> {
    pub id: I,
    pub change: &'a T,
}
