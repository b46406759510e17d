//! The catalogue as pages read it: a snapshot of the active rooms, reloaded
//! from PostgreSQL when it is older than a second, so that a room added,
//! changed or retired through any process is shown by every process within
//! that second, with no restart and no extra connection. The snapshot only
//! ever draws pages: every booking reads its rooms afresh, under a share
//! lock, inside its own transaction (`store::lock_bookable`).

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::domain::RoomCatalog;
use super::store;
use crate::db::{DbError, Pool};

/// How old a snapshot may be before it is reloaded.
pub const MAX_AGE: Duration = Duration::from_secs(1);

struct Snapshot {
    loaded: Option<Instant>,
    rooms: Arc<RoomCatalog>,
}

pub struct Catalogue {
    pool: Pool,
    snapshot: RwLock<Snapshot>,
    /// One reload at a time; the others use the snapshot they find.
    reloading: tokio::sync::Mutex<()>,
}

impl Catalogue {
    pub fn new(pool: Pool) -> Self {
        Catalogue {
            pool,
            snapshot: RwLock::new(Snapshot { loaded: None, rooms: Arc::default() }),
            reloading: tokio::sync::Mutex::new(()),
        }
    }

    fn fresh(&self) -> Option<Arc<RoomCatalog>> {
        let s = self.snapshot.read().expect("catalogue lock");
        s.loaded.filter(|at| at.elapsed() < MAX_AGE).map(|_| s.rooms.clone())
    }

    /// The current rooms; reloads a stale snapshot (a failed reload keeps
    /// the last one, so pages still draw while the database is away).
    pub async fn current(&self) -> Result<Arc<RoomCatalog>, DbError> {
        if let Some(rooms) = self.fresh() {
            return Ok(rooms);
        }
        let _one = self.reloading.lock().await;
        if let Some(rooms) = self.fresh() {
            return Ok(rooms);
        }
        let loaded = async {
            let mut conn = self.pool.get().await?;
            Ok::<_, DbError>(store::list(&mut conn, false).await?)
        }
        .await;
        let mut s = self.snapshot.write().expect("catalogue lock");
        match loaded {
            Ok(rooms) => {
                *s = Snapshot { loaded: Some(Instant::now()), rooms: Arc::new(RoomCatalog::new(rooms)) };
                Ok(s.rooms.clone())
            }
            Err(e) if s.loaded.is_some() => {
                tracing::warn!(error = %e, "room catalogue reload failed; showing the last one");
                Ok(s.rooms.clone())
            }
            Err(e) => Err(e),
        }
    }

    /// Forgets the snapshot after this process changed the catalogue.
    pub fn invalidate(&self) {
        self.snapshot.write().expect("catalogue lock").loaded = None;
    }
}
