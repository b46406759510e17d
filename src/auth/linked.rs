//! Accounts of people who sign in with the company's identity (SPEC §16).
//! A sign-in is linked to its account by (issuer, subject) — OpenID's
//! `iss`/`sub`, or the directory entry — through `staff_identity`, never by
//! email or username. The first sign-in creates the account under a free
//! username (`kim`, else `kim-2`, `kim-3`, … — the unique constraint
//! decides, so a local account of that name is never taken over); every
//! sign-in brings the name, email and admin right up to date, and starts
//! the session, in one transaction. A person disabled in yeyak stays
//! refused, whatever the company says.
//!
//! This is the sign-in itself, like the password sign-in beside it, not a
//! pipeline command: nobody is signed in yet to be its principal, and it
//! is not replayed.

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use super::staff::{self, StaffUser, NO_PASSWORD};
use crate::db::schema::{staff_identity as link, staff_user as account};
use crate::db::{Conn, DbError};

/// Where a company account signs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Oidc,
    Ldap,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Oidc => "oidc",
            Source::Ldap => "ldap",
        }
    }
}

/// Longest username base: room for `-N` within the 64 characters allowed.
const BASE_CHARS: usize = 56;
/// Display names are 1–100 characters (as on `/admin/staff`).
const NAME_CHARS: usize = 100;

/// A person the company vouched for, in yeyak's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompanyPerson {
    pub source: Source,
    pub issuer: String,
    pub subject: String,
    /// The username the account is created under when free (`valid_username`).
    pub username: String,
    pub display_name: String,
    pub email: Option<String>,
    pub is_admin: bool,
}

impl CompanyPerson {
    /// Usernames from `preferred_username`, else the email's local part
    /// (what a username may not hold becomes `-`); the display name from
    /// `name`, else the username; an email only when it looks like one.
    pub fn new(
        source: Source,
        issuer: &str,
        subject: &str,
        preferred_username: Option<&str>,
        name: Option<&str>,
        email: Option<&str>,
        is_admin: bool,
    ) -> CompanyPerson {
        let email = email.map(str::trim).filter(|e| plausible_email(e));
        let username = username_base(preferred_username.or(email).unwrap_or(""));
        let name: String = name.unwrap_or("").chars().filter(|c| !crate::text::is_forbidden(*c)).collect();
        let name = name.trim();
        let display_name = if name.is_empty() { username.clone() } else { name.chars().take(NAME_CHARS).collect() };
        CompanyPerson {
            source,
            issuer: issuer.to_owned(),
            subject: subject.to_owned(),
            username,
            display_name,
            email: email.map(str::to_owned),
            is_admin,
        }
    }
}

fn plausible_email(e: &str) -> bool {
    (3..=254).contains(&e.len())
        && e.split_once('@').is_some_and(|(l, d)| !l.is_empty() && !d.is_empty() && !d.contains('@'))
        && !e.chars().any(|c| c.is_whitespace() || crate::text::is_forbidden(c))
}

/// `Kim.Lee@corp.example` → `Kim.Lee`; `김 철수` → `user`.
fn username_base(raw: &str) -> String {
    let local = raw.split('@').next().unwrap_or("");
    let mapped: String = local
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '-' })
        .take(BASE_CHARS)
        .collect();
    let trimmed = mapped.trim_matches('-');
    if trimmed.is_empty() {
        "user".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// How a company sign-in ends.
#[derive(Debug)]
pub enum Outcome {
    /// Signed in: the session token for the cookie.
    SignedIn { user: StaffUser, session: String },
    /// The linked account is disabled in yeyak: no session.
    Disabled,
}

/// Links, creates or updates the account and starts its session, in one
/// transaction. `id_token` is kept with the session (OpenID sign-out).
pub async fn sign_in(
    conn: &mut Conn,
    person: &CompanyPerson,
    id_token: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Outcome, DbError> {
    crate::db::begin(conn).await?;
    let result = sign_in_in(conn, person, id_token, now).await;
    let result = match result {
        // Refused: nothing changes, not even the name.
        Ok(Outcome::Disabled) => crate::db::finish(conn, Err(Refusal::Disabled)).await,
        other => crate::db::finish(conn, other.map_err(Refusal::Db)).await,
    };
    match result {
        Ok(outcome) => Ok(outcome),
        Err(Refusal::Disabled) => Ok(Outcome::Disabled),
        Err(Refusal::Db(e)) => Err(DbError::from(e)),
    }
}

enum Refusal {
    Disabled,
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for Refusal {
    fn from(e: diesel::result::Error) -> Self {
        Refusal::Db(e)
    }
}

enum CreateError {
    /// A concurrent first sign-in of the same person linked first.
    Raced,
    Db(diesel::result::Error),
}

impl From<diesel::result::Error> for CreateError {
    fn from(e: diesel::result::Error) -> Self {
        CreateError::Db(e)
    }
}

async fn sign_in_in(
    conn: &mut Conn,
    person: &CompanyPerson,
    id_token: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Outcome, diesel::result::Error> {
    let user = match update_linked(conn, person).await? {
        Some(found) => found,
        None => {
            // In a savepoint: when another sign-in of this person links
            // first, the account made here goes and theirs is updated.
            crate::db::begin(conn).await?;
            let created = create_linked(conn, person).await;
            match crate::db::finish(conn, created).await {
                Ok(user) => (user, false),
                Err(CreateError::Raced) => update_linked(conn, person).await?.expect("the other sign-in linked it"),
                Err(CreateError::Db(e)) => return Err(e),
            }
        }
    };
    let (user, disabled) = user;
    if disabled {
        return Ok(Outcome::Disabled);
    }
    let session = staff::start_session_with(conn, user.id, id_token, now).await?;
    Ok(Outcome::SignedIn { user, session })
}

/// The linked account brought up to date, with whether it is disabled.
async fn update_linked(conn: &mut Conn, p: &CompanyPerson) -> QueryResult<Option<(StaffUser, bool)>> {
    let linked =
        link::table.filter(link::issuer.eq(&p.issuer)).filter(link::subject.eq(&p.subject)).select(link::user_id);
    diesel::update(account::table.filter(account::id.eq_any(linked)))
        .set((account::display_name.eq(&p.display_name), account::email.eq(&p.email), account::is_admin.eq(p.is_admin)))
        .returning((staff::COLUMNS, account::disabled_at.is_not_null()))
        .get_result(conn)
        .await
        .optional()
}

/// A new account under the first free username, and its link.
async fn create_linked(conn: &mut Conn, p: &CompanyPerson) -> Result<StaffUser, CreateError> {
    let mut n = 1u32;
    let user = loop {
        let username = if n == 1 { p.username.clone() } else { format!("{}-{n}", p.username) };
        let made: Option<StaffUser> = diesel::insert_into(account::table)
            .values((
                account::username.eq(&username),
                account::display_name.eq(&p.display_name),
                account::email.eq(&p.email),
                account::password_hash.eq(NO_PASSWORD),
                account::is_admin.eq(p.is_admin),
                account::source.eq(p.source.as_str()),
            ))
            // The constraint decides who has a name, never a read before.
            .on_conflict_do_nothing()
            .returning(staff::COLUMNS)
            .get_result(&mut *conn)
            .await
            .optional()?;
        match made {
            Some(user) => break user,
            None => n += 1,
        }
    };
    let linked = diesel::insert_into(link::table)
        .values((link::user_id.eq(user.id), link::issuer.eq(&p.issuer), link::subject.eq(&p.subject)))
        .on_conflict((link::issuer, link::subject))
        .do_nothing()
        .execute(&mut *conn)
        .await?;
    if linked == 0 {
        return Err(CreateError::Raced);
    }
    Ok(user)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usernames_and_names_come_from_the_claims() {
        let p = |u: Option<&str>, n: Option<&str>, e: Option<&str>| {
            CompanyPerson::new(Source::Oidc, "https://id", "s", u, n, e, false)
        };
        assert_eq!(p(Some("kim"), Some("김 철수"), None).username, "kim");
        assert_eq!(p(Some("Kim.Lee@corp.example"), None, None).username, "Kim.Lee");
        assert_eq!(p(None, None, Some("lee@corp.example")).username, "lee");
        assert_eq!(p(Some("김철수"), None, None).username, "user");
        assert_eq!(p(Some("a b+c"), None, None).username, "a-b-c");
        assert!(staff::valid_username(&p(Some(&"x".repeat(200)), None, None).username));
        let named = p(Some("kim"), Some("김\n철수"), Some("not an email"));
        assert_eq!((named.display_name.as_str(), named.email), ("김철수", None));
        assert_eq!(p(Some("kim"), None, None).display_name, "kim");
    }
}
