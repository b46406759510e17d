//! A person's delegates (`/account`) and an admin's changes of a person
//! (`/admin/staff`, `PATCH /api/admin/staff/{username}`) as commands: the
//! same work whichever door, in one transaction (SPEC §25).

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::delegation;
use super::directory::{self, StaffRecord};
use crate::auth::staff;
use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};
use crate::i18n::Lang;

pub static CREATE_STAFF: Operation = Operation::new("staff.create", &[Role::Admin]).creates();
pub static ADD_DELEGATE: Operation = Operation::new("staff.add_delegate", &[Role::Staff, Role::Admin]);
pub static REMOVE_DELEGATE: Operation = Operation::new("staff.remove_delegate", &[Role::Staff, Role::Admin]);
pub static UPDATE_STAFF: Operation = Operation::new("staff.update", &[Role::Admin]);

/// The person a command of one's own account acts on: the signed-in
/// person themselves, never a delegate acting for them.
fn own_account(ctx: &Ctx<'_>) -> Result<i64, CommandError> {
    match (ctx.principal.staff_id(), ctx.principal.behalf()) {
        (Some(id), None) => Ok(id),
        _ => Err(ApiError::new(ErrorCode::Forbidden, "only a person names their own delegates").into()),
    }
}

/// Names `username` as one's delegate (SPEC §25, `POST /account/delegates`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddDelegate {
    pub username: String,
}

impl Command for AddDelegate {
    type Output = delegation::Person;

    fn operation(&self) -> &'static Operation {
        &ADD_DELEGATE
    }

    fn fingerprint(&self) -> Value {
        json!({ "delegate": self.username.to_lowercase() })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<delegation::Person, CommandError> {
        let me = own_account(ctx)?;
        let found = delegation::resolve(conn, me, std::slice::from_ref(&self.username), "username").await?;
        let delegate = found.into_iter().next().ok_or_else(ApiError::internal)?;
        delegation::add(conn, me, delegate.id).await?;
        Ok(delegate)
    }
}

/// Removes one's delegate; `None` when they were not one.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoveDelegate {
    pub username: String,
}

impl Command for RemoveDelegate {
    type Output = Option<delegation::Person>;

    fn operation(&self) -> &'static Operation {
        &REMOVE_DELEGATE
    }

    fn fingerprint(&self) -> Value {
        json!({ "delegate": self.username.to_lowercase() })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<Option<delegation::Person>, CommandError> {
        let me = own_account(ctx)?;
        // A disabled delegate is removable too: any spelling, enabled or not.
        let Some(person) = directory::any_person(conn, &self.username).await? else { return Ok(None) };
        Ok(delegation::remove(conn, me, person.id).await?.then_some(person))
    }
}

/// An admin's change of one person: each given field, all in one
/// transaction (`PATCH /api/admin/staff/{username}`, the staff page).
#[derive(Debug, Clone, Default)]
pub struct UpdateStaff {
    pub username: String,
    pub display_name: Option<String>,
    /// `Some(None)` clears the address.
    pub email: Option<Option<String>>,
    pub admin: Option<bool>,
    pub disabled: Option<bool>,
    pub language: Option<Lang>,
    /// `Some(None)`: the installation's zone.
    pub time_zone: Option<Option<chrono_tz::Tz>>,
    pub delegates: Option<Vec<String>>,
}

impl Command for UpdateStaff {
    type Output = StaffRecord;

    fn operation(&self) -> &'static Operation {
        &UPDATE_STAFF
    }

    fn fingerprint(&self) -> Value {
        json!({
            "username": self.username.to_lowercase(),
            "displayName": self.display_name,
            "email": self.email,
            "admin": self.admin,
            "disabled": self.disabled,
            "language": self.language.map(Lang::tag),
            "timeZone": self.time_zone.map(|z| z.map(|z| z.name())),
            "delegates": self.delegates,
        })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<StaffRecord, CommandError> {
        let id = directory::lock(conn, &self.username).await?.ok_or_else(|| ApiError::not_found("person"))?;
        let own = ctx.principal.staff_id() == Some(id);
        if own && (self.disabled == Some(true) || self.admin == Some(false)) {
            return Err(ApiError::malformed(
                if self.disabled == Some(true) { "disabled" } else { "admin" },
                "you cannot lock yourself out",
            )
            .into());
        }
        if let Some(name) = &self.display_name {
            crate::text::ensure_plain("displayName", name).map_err(CommandError::Invalid)?;
            if name.trim().is_empty() || name.chars().count() > 100 {
                return Err(ApiError::malformed("displayName", "1 to 100 characters").into());
            }
        }
        if let Some(Some(email)) = &self.email {
            if directory::parse_email(email).is_err() {
                return Err(ApiError::malformed("email", "an address like name@example.com").into());
            }
        }
        directory::set_profile(
            conn,
            id,
            self.display_name.as_deref(),
            self.email.as_ref().map(Option::as_deref),
            self.admin,
        )
        .await?;
        if let Some(lang) = self.language {
            staff::set_language(conn, id, Some(lang)).await?;
        }
        if let Some(zone) = self.time_zone {
            staff::set_time_zone(conn, id, zone).await?;
        }
        if let Some(disabled) = self.disabled {
            staff::set_disabled_in(conn, id, disabled, ctx.now).await?;
        }
        if let Some(names) = &self.delegates {
            let found = delegation::resolve(conn, id, names, "delegates").await?;
            let ids: Vec<i64> = found.iter().map(|p| p.id).collect();
            delegation::replace(conn, id, &ids).await?;
        }
        directory::record_of(conn, id, ctx.now.date_naive()).await?.ok_or_else(|| ApiError::internal().into())
    }
}

/// A new local account (`/admin/staff`, `POST /api/admin/staff`);
/// `USERNAME_TAKEN` when the username is taken in any spelling.
pub struct CreateStaff {
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub password_hash: String,
    pub is_admin: bool,
    pub language: Option<crate::i18n::Lang>,
}

impl Command for CreateStaff {
    type Output = StaffRecord;

    fn operation(&self) -> &'static Operation {
        &CREATE_STAFF
    }

    fn fingerprint(&self) -> Value {
        json!({
            "username": self.username,
            "displayName": self.display_name,
            "email": self.email,
            "isAdmin": self.is_admin,
            "language": self.language.map(crate::i18n::Lang::tag),
        })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<StaffRecord, CommandError> {
        // Every door's guard: a display name is shown in pages, feeds and mail.
        crate::text::ensure_plain("displayName", &self.display_name).map_err(CommandError::Invalid)?;
        if self.username.to_ascii_lowercase().starts_with(crate::privacy::erase::ERASED_PREFIX) {
            return Err(ApiError::malformed("username", "erased- names are kept for erased people").into());
        }
        let (u, d, e) = (&self.username, &self.display_name, self.email.as_deref());
        let Some(created) = staff::create(conn, u, d, e, &self.password_hash, self.is_admin).await? else {
            return Err(ApiError::new(crate::error::ErrorCode::UsernameTaken, "a person with this username exists")
                .with_details(json!({ "field": "username" }))
                .into());
        };
        if self.language.is_some() {
            staff::set_language(conn, created.id, self.language).await?;
        }
        directory::record_of(conn, created.id, ctx.now.date_naive()).await?.ok_or_else(|| ApiError::internal().into())
    }
}
