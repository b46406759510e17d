//! Who a CalDAV request comes from (SPEC §17): HTTP Basic with the staff
//! username and an app password (one keyed digest, looked up by index: no
//! Argon2 per request, which calendar apps send every minute), or for local
//! accounts their own password (Argon2 in the bounded hashing gate). Wrong
//! passwords are throttled like sign-ins (§13, §20: per address and per
//! username, a locked attempt checks nothing and is not counted); a request
//! without credentials is no failed sign-in, only a 401 challenge.

use actix_web::http::header;
use actix_web::HttpRequest;
use base64::Engine;

use crate::auth::app_password;
use crate::auth::staff;
use crate::auth::throttle;
use crate::command::Principal;
use crate::db::DbError;
use crate::state::AppState;

/// The signed-in person of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

impl Caller {
    /// The person as the pipeline sees them: the same principal (and so the
    /// same organizer digest) as their browser sign-in.
    pub fn principal(&self, secret: &[u8]) -> Principal {
        Principal::person(secret, self.id, &self.username, &self.display_name, self.is_admin)
    }
}

/// Why a request is not signed in.
#[derive(Debug)]
pub enum Denied {
    /// No (usable) credentials: a challenge, not a failure.
    Missing,
    /// A wrong username or password (counted).
    Wrong,
    /// Too many failures: refused unchecked for this many seconds.
    Throttled(u32),
    /// The password hashing queue is full.
    Busy,
    Db(DbError),
}

impl From<DbError> for Denied {
    fn from(e: DbError) -> Self {
        Denied::Db(e)
    }
}

impl From<diesel::result::Error> for Denied {
    fn from(e: diesel::result::Error) -> Self {
        Denied::Db(DbError::from(e))
    }
}

/// The username and password of a `Basic` header.
pub fn basic(req: &HttpRequest) -> Option<(String, String)> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

pub async fn authenticate(state: &AppState, req: &HttpRequest) -> Result<Caller, Denied> {
    let (username, password) = basic(req).ok_or(Denied::Missing)?;
    let now = state.clock.now();
    let well_formed = staff::valid_username(&username);
    let attempt = throttle::Attempt {
        username: well_formed.then_some(username.as_str()),
        address: state.transport.client_ip(req),
        known_device: false,
    };
    if password.starts_with(app_password::PREFIX) && well_formed {
        // SPEC §22: a correct, live app password is never refused by the
        // username's lock (anyone could set it off), only by the address's;
        // attempts of one address take turns on this process, so a parallel
        // burst is judged one after another against the count.
        let _turn = state.hashing.turn(attempt.address_turn().into_iter().collect()).await;
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        let address_only = throttle::Attempt { username: None, ..attempt };
        if let Some(until) = throttle::locked_until(&mut conn, &address_only, now).await? {
            return Err(Denied::Throttled(throttle::retry_after(until, now)));
        }
        // Checked and, when wrong, counted inside this address's turn: no
        // other attempt of the address is judged between the two.
        return match app_password::check(&mut conn, &state.secret, &username, &password, now).await? {
            Some(h) => {
                Ok(Caller { id: h.id, username: h.username, display_name: h.display_name, is_admin: h.is_admin })
            }
            None => {
                throttle::record_failure(&mut conn, &attempt, now).await?;
                Err(Denied::Wrong)
            }
        };
    }
    // A local account's own password: Argon2 in a bounded slot, one attempt
    // at a time per address and username, no connection held meanwhile.
    let place = state.hashing.enter().map_err(|_| Denied::Busy)?;
    let _turn = place.turn(attempt.turn_keys()).await;
    let found = {
        let mut conn = state.pool.get().await.map_err(DbError::from)?;
        if let Some(until) = throttle::locked_until(&mut conn, &attempt, now).await? {
            return Err(Denied::Throttled(throttle::retry_after(until, now)));
        }
        if !well_formed {
            throttle::record_failure(&mut conn, &attempt, now).await?;
            return Err(Denied::Wrong);
        }
        staff::lookup(&mut conn, &username).await?
    };
    let (user, hash) = found.map_or((None, None), |(u, h)| (Some(u), Some(h)));
    // `YEYAK_PASSWORD_LOGIN` narrows local passwords here as on `/login`
    // (SPEC §16); app passwords stay the way in for everyone.
    let ok = place.verify(hash, &password).await && state.password_login.allows(&username, &state.admin_user);
    let mut conn = state.pool.get().await.map_err(DbError::from)?;
    match user.filter(|_| ok) {
        Some(u) => Ok(Caller { id: u.id, username: u.username, display_name: u.display_name, is_admin: u.is_admin }),
        None => {
            throttle::record_failure(&mut conn, &attempt, now).await?;
            Err(Denied::Wrong)
        }
    }
}
