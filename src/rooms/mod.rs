//! Meeting-room bookings (seed 002, SPEC §2, §7.2): rules in `domain`, SQL in
//! `store`, JSON routes in `http`.

pub mod domain;
pub mod http;
pub mod service;
pub mod store;

use diesel::prelude::*;
use diesel_async::RunQueryDsl;

use crate::db::{schema::room, Conn};
use domain::{Room, RoomCatalog};

/// Loads the rooms once at start-up; they change only by migration.
pub async fn load_catalog(conn: &mut Conn) -> QueryResult<RoomCatalog> {
    let rooms = room::table
        .order(room::position)
        .select((room::code, room::name, room::position))
        .load::<(String, String, i32)>(conn)
        .await?;
    Ok(RoomCatalog::new(rooms.into_iter().map(|(code, name, position)| Room { code, name, position }).collect()))
}
