//! An admin's changes of accounts and keys (SPEC §13), and a person's own
//! language (SPEC §19), as commands, so the role is the pipeline's check
//! and not only the page's. None is run
//! with an idempotency key: a new key's secret must exist only in its one
//! answer, and the forms answer with the page, not a stored reply.
//! Passwords are hashed by the door before the command (no connection is
//! held while Argon2 runs); the command stores the hash.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::api_key::{Role as KeyRole, Tenant};
use super::keys::{self, KeyEntry, NewKey};
use super::staff;
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;
use crate::error::ApiError;

pub static SET_DISABLED: Operation = Operation::new("staff.set_disabled", &[Role::Admin]);
pub static RESET_PASSWORD: Operation = Operation::new("staff.reset_password", &[Role::Admin]);
pub static CREATE_KEY: Operation = Operation::new("key.create", &[Role::Admin]).creates();
pub static REVOKE_KEY: Operation = Operation::new("key.revoke", &[Role::Admin]);
pub static SET_LANGUAGE: Operation = Operation::new("staff.set_language", &[Role::Staff, Role::Admin]);
pub static SET_TIME_ZONE: Operation = Operation::new("staff.set_time_zone", &[Role::Staff, Role::Admin]);
pub static CHANGE_OWN_PASSWORD: Operation = Operation::new("staff.change_own_password", &[Role::Staff, Role::Admin]);

/// A person as a command answers: who was changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Person {
    pub id: i64,
    pub username: String,
}

impl From<staff::StaffUser> for Person {
    fn from(u: staff::StaffUser) -> Self {
        Person { id: u.id, username: u.username }
    }
}

/// Disables (ending every session and the calendar token) or enables a
/// person; `None` when there is no such person.
pub struct SetDisabled {
    pub id: i64,
    pub disabled: bool,
}

impl Command for SetDisabled {
    type Output = Option<Person>;

    fn operation(&self) -> &'static Operation {
        &SET_DISABLED
    }

    fn fingerprint(&self) -> Value {
        json!({ "id": self.id, "disabled": self.disabled })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Option<Person>, CommandError> {
        if self.disabled && ctx.principal.staff_id() == Some(self.id) {
            return Err(ApiError::malformed("id", "you cannot disable your own account").into());
        }
        Ok(staff::set_disabled_in(conn, self.id, self.disabled, ctx.now).await?.map(Person::from))
    }
}

/// Sets a person's password and ends their other sessions (`keep`: the
/// admin's own session when it is their own account); `false` when there
/// is no such person.
pub struct ResetPassword {
    pub id: i64,
    pub password_hash: String,
    pub keep_session: Option<String>,
}

impl Command for ResetPassword {
    type Output = bool;

    fn operation(&self) -> &'static Operation {
        &RESET_PASSWORD
    }

    fn fingerprint(&self) -> Value {
        json!({ "id": self.id })
    }

    async fn run(&self, conn: &mut Conn, _: &Ctx<'_>) -> Result<bool, CommandError> {
        Ok(staff::set_password_in(conn, self.id, &self.password_hash, self.keep_session.as_deref()).await?)
    }
}

pub struct CreateKey {
    pub tenant: Tenant,
    pub role: KeyRole,
    pub label: String,
}

impl Command for CreateKey {
    type Output = NewKey;

    fn operation(&self) -> &'static Operation {
        &CREATE_KEY
    }

    fn fingerprint(&self) -> Value {
        json!({ "tenant": self.tenant.as_str(), "role": keys::role_name(self.role), "label": self.label })
    }

    async fn run(&self, conn: &mut Conn, _: &Ctx<'_>) -> Result<NewKey, CommandError> {
        crate::text::ensure_plain("label", &self.label).map_err(CommandError::Invalid)?;
        if self.tenant.is_reserved() {
            return Err(ApiError::reserved_tenant(self.tenant.as_str()).into());
        }
        Ok(keys::create(conn, &self.tenant, self.role, &self.label).await?)
    }
}

/// Revokes a stored key; `None` when there is no such live key.
pub struct RevokeKey {
    pub id: i64,
}

impl Command for RevokeKey {
    type Output = Option<KeyEntry>;

    fn operation(&self) -> &'static Operation {
        &REVOKE_KEY
    }

    fn fingerprint(&self) -> Value {
        json!({ "id": self.id })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Option<KeyEntry>, CommandError> {
        Ok(keys::revoke(conn, self.id, ctx.now).await?)
    }
}

/// A person chooses the language of their pages and mail. Always their
/// own: the person is the principal's, never a field of the request.
pub struct SetLanguage {
    pub lang: crate::i18n::Lang,
}

impl Command for SetLanguage {
    type Output = bool;

    fn operation(&self) -> &'static Operation {
        &SET_LANGUAGE
    }

    fn fingerprint(&self) -> Value {
        json!({ "language": self.lang.tag() })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<bool, CommandError> {
        // An admin API key is nobody's account.
        let Some(id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(crate::error::ErrorCode::Forbidden, "only a person has a language").into());
        };
        Ok(staff::set_language(conn, id, Some(self.lang)).await?)
    }
}

/// A person chooses the zone their pages show times in beside an area's
/// (SPEC §24); `None` goes back to the installation's.
pub struct SetTimeZone {
    pub zone: Option<chrono_tz::Tz>,
}

impl Command for SetTimeZone {
    type Output = bool;

    fn operation(&self) -> &'static Operation {
        &SET_TIME_ZONE
    }

    fn fingerprint(&self) -> Value {
        json!({ "timeZone": self.zone.map(|z| z.name()) })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<bool, CommandError> {
        let Some(id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(crate::error::ErrorCode::Forbidden, "only a person has a time zone").into());
        };
        Ok(staff::set_time_zone(conn, id, self.zone).await?)
    }
}

/// A person's own new password (SPEC §13, `/account`): the door has checked
/// the current one (throttled like sign-ins) and hashed the new one; every
/// other session of theirs ends, `keep_session` (this one) stays. `false`
/// for a company account, which has no local password.
pub struct ChangeOwnPassword {
    pub password_hash: String,
    pub keep_session: Option<String>,
}

impl Command for ChangeOwnPassword {
    type Output = bool;

    fn operation(&self) -> &'static Operation {
        &CHANGE_OWN_PASSWORD
    }

    fn fingerprint(&self) -> Value {
        json!({ "ownPassword": true })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<bool, CommandError> {
        // An admin API key is nobody's account.
        let Some(id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(crate::error::ErrorCode::Forbidden, "only a person has a password").into());
        };
        Ok(staff::set_password_in(conn, id, &self.password_hash, self.keep_session.as_deref()).await?)
    }
}
