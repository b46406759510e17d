//! Personal calendar tokens: `yc_{staff id}_{mac}`, where the MAC is keyed
//! by `YEYAK_SECRET_KEY` over the staff id and a generation counter kept on
//! the staff row. Nothing of the token is stored; rotating bumps the
//! generation, which ends the old token at once (every feed request
//! recomputes the MAC against the row as it is then).

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::command::{Command, CommandError, Ctx, Operation, Role};
use crate::db::schema::staff_user as staff;
use crate::db::Conn;
use crate::error::{ApiError, ErrorCode};

fn mac(secret: &[u8], id: i64, generation: i32) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("any key length");
    mac.update(b"calendar\x00");
    mac.update(&id.to_be_bytes());
    mac.update(&generation.to_be_bytes());
    mac
}

/// The token of a staff member at a generation.
pub fn token(secret: &[u8], id: i64, generation: i32) -> String {
    format!("yc_{id}_{}", hex::encode(mac(secret, id, generation).finalize().into_bytes()))
}

/// The person a token belongs to, if it is their current one and they are
/// not disabled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    /// The language the person chose: their feeds' words are in it.
    pub lang: crate::i18n::Lang,
}

/// The staff id a token names and its MAC, when it is shaped like a token.
pub fn parse(token: &str) -> Option<(i64, Vec<u8>)> {
    let (id, sent) = token.strip_prefix("yc_")?.split_once('_')?;
    Some((id.parse::<i64>().ok()?, hex::decode(sent).ok()?))
}

/// Whether `sent` is the MAC of person `id`'s token at `generation`.
pub fn verify(secret: &[u8], id: i64, generation: i32, sent: &[u8]) -> bool {
    mac(secret, id, generation).verify_slice(sent).is_ok()
}

pub async fn resolve(conn: &mut Conn, secret: &[u8], token: &str) -> QueryResult<Option<Holder>> {
    let Some((id, sent)) = parse(token) else { return Ok(None) };
    let row: Option<(String, String, i32, Option<String>)> = staff::table
        .find(id)
        .filter(staff::disabled_at.is_null())
        .select((staff::username, staff::display_name, staff::calendar_generation, staff::language))
        .first(conn)
        .await
        .optional()?;
    Ok(row.and_then(|(username, display_name, generation, language)| {
        let lang = language.as_deref().and_then(crate::i18n::Lang::parse_exact).unwrap_or_default();
        verify(secret, id, generation, &sent).then_some(Holder { id, username, display_name, lang })
    }))
}

/// The current generation of a person's token.
pub async fn generation(conn: &mut Conn, id: i64) -> QueryResult<i32> {
    staff::table.find(id).select(staff::calendar_generation).first(conn).await
}

/// A person's new feed address (SPEC §10, `/account`): the old one stops at
/// once. Answers the new generation.
pub struct RotateToken;

pub static ROTATE: Operation = Operation::new("calendar_token.rotate", &[Role::Staff, Role::Admin]);

impl Command for RotateToken {
    type Output = i32;

    fn operation(&self) -> &'static Operation {
        &ROTATE
    }

    fn fingerprint(&self) -> serde_json::Value {
        serde_json::json!({ "rotate": "calendarToken" })
    }

    async fn run(&self, conn: &mut Conn, ctx: &Ctx<'_>) -> Result<i32, CommandError> {
        // An admin API key is nobody's account.
        let Some(id) = ctx.principal.staff_id() else {
            return Err(ApiError::new(ErrorCode::Forbidden, "only a person has a calendar token").into());
        };
        Ok(rotate(conn, id).await?)
    }
}

/// Ends the current token and returns the new one's generation.
pub async fn rotate(conn: &mut Conn, id: i64) -> QueryResult<i32> {
    diesel::update(staff::table.find(id))
        .set(staff::calendar_generation.eq(staff::calendar_generation + 1))
        .returning(staff::calendar_generation)
        .get_result(conn)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_differ_by_person_generation_and_secret() {
        let t = token(b"k", 1, 1);
        assert!(t.starts_with("yc_1_"));
        assert_ne!(t, token(b"k", 1, 2));
        assert_ne!(t, token(b"k", 2, 1));
        assert_ne!(t, token(b"other", 1, 1));
        let (id, mac) = parse(&t).unwrap();
        assert!(id == 1 && verify(b"k", 1, 1, &mac) && !verify(b"k", 1, 2, &mac));
        assert!(parse("yc_x_00").is_none() && parse("yc_1_zz").is_none() && parse("1_00").is_none());
    }
}
