//! One elected sweeper across processes (seed 000): a session-level
//! advisory lock on a connection of its own, kept while the session lives
//! and given up on shutdown.

use diesel::sql_types::{BigInt, Bool};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;

use super::{Sweeper, LEADER_LOCK};
use crate::db::{self, Conn, DbError};

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// The leader gate's connection and whether its session holds the lock.
#[derive(Default)]
pub(super) struct Gate {
    conn: Option<Conn>,
    held: bool,
}

impl Sweeper {
    /// Whether this process holds the leader gate now, taking it if free.
    pub async fn try_lead(&self) -> Result<bool, DbError> {
        let mut gate = self.leader.lock().await;
        if gate.conn.is_none() {
            let conn = db::establish(&self.database_url).await.map_err(|e| DbError::Unavailable(e.to_string()))?;
            *gate = Gate { conn: Some(conn), held: false };
        }
        // While we hold it, a live session is proof enough (session locks
        // last as long as the session); taking it again would stack it.
        let sql = if gate.held { "SELECT $1 > 0 AS locked" } else { "SELECT pg_try_advisory_lock($1) AS locked" };
        let conn = gate.conn.as_mut().expect("connected above");
        match diesel::sql_query(sql).bind::<BigInt, _>(LEADER_LOCK).get_result::<Locked>(conn).await {
            Ok(row) => {
                gate.held = row.locked;
                Ok(row.locked)
            }
            Err(e) => {
                // A broken gate connection: drop it, and with it any lock.
                *gate = Gate::default();
                Err(DbError::from(e))
            }
        }
    }

    /// Gives up leadership (shutdown, or a test that moves the lead).
    pub async fn resign(&self) {
        *self.leader.lock().await = Gate::default();
    }

    /// Whether this process holds the leader gate (as last checked).
    pub async fn is_leader(&self) -> bool {
        self.leader.lock().await.held
    }
}
