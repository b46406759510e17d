//! The catalogue as pages read it: a snapshot of the active rooms, redrawn
//! from PostgreSQL when it is older than a second, so that a room added,
//! changed or retired through any process is shown by every process within
//! about that second, with no restart and no extra connection. A stale
//! snapshot still draws the page that finds it while one reload runs beside
//! it, so no page waits for a whole catalogue to load (at 5,000 rooms that
//! wait was the slowest page in a few hundred, docs/PERFORMANCE.md "Campus").
//! After this process changed the catalogue, its next page waits for the
//! new one. The snapshot only ever draws pages: every booking reads its
//! rooms afresh, under a share lock, inside its own transaction
//! (`store::lock_bookable`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use super::domain::RoomCatalog;
use super::store;
use crate::db::{DbError, Pool};

/// How old a snapshot may be before it is reloaded.
pub const MAX_AGE: Duration = Duration::from_secs(1);

struct Snapshot {
    /// When it was loaded; `None` until the first load and after a change
    /// made by this process.
    loaded: Option<Instant>,
    rooms: Arc<RoomCatalog>,
}

pub struct Catalogue {
    shared: Arc<Shared>,
}

struct Shared {
    pool: Pool,
    snapshot: RwLock<Snapshot>,
    /// One reload at a time.
    reloading: Arc<tokio::sync::Mutex<()>>,
    /// Bumped by `invalidate`: a reload that began before a change made
    /// here must not store what it read as fresh.
    generation: AtomicU64,
}

impl Catalogue {
    pub fn new(pool: Pool) -> Self {
        Catalogue {
            shared: Arc::new(Shared {
                pool,
                snapshot: RwLock::new(Snapshot { loaded: None, rooms: Arc::default() }),
                reloading: Arc::new(tokio::sync::Mutex::new(())),
                generation: AtomicU64::new(0),
            }),
        }
    }

    /// The current rooms. A stale snapshot is answered at once and reloaded
    /// in the background; with none (or after `invalidate`) this waits for
    /// the load. A failed reload keeps the last snapshot, so pages still
    /// draw while the database is away.
    pub async fn current(&self) -> Result<Arc<RoomCatalog>, DbError> {
        let shared = &self.shared;
        match shared.peek() {
            Some((rooms, true)) => Ok(rooms),
            Some((rooms, false)) => {
                if let Ok(one) = shared.reloading.clone().try_lock_owned() {
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        let _one = one;
                        if let Err(e) = shared.reload().await {
                            tracing::warn!(error = %e, "room catalogue reload failed; showing the last one");
                        }
                    });
                }
                Ok(rooms)
            }
            None => {
                let _one = shared.reloading.lock().await;
                match shared.peek() {
                    Some((rooms, _)) => Ok(rooms),
                    None => shared.reload().await,
                }
            }
        }
    }

    /// Forgets the snapshot after this process changed the catalogue.
    pub fn invalidate(&self) {
        let mut s = self.shared.snapshot.write().expect("catalogue lock");
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        s.loaded = None;
    }
}

impl Shared {
    /// The snapshot and whether it is fresh; `None` when there is none to show.
    fn peek(&self) -> Option<(Arc<RoomCatalog>, bool)> {
        let s = self.snapshot.read().expect("catalogue lock");
        s.loaded.map(|at| (s.rooms.clone(), at.elapsed() < MAX_AGE))
    }

    /// Loads the rooms and stores them, unless this process changed the
    /// catalogue meanwhile (then the next page loads again).
    async fn reload(&self) -> Result<Arc<RoomCatalog>, DbError> {
        let began = self.generation.load(Ordering::SeqCst);
        let mut conn = self.pool.get().await?;
        let rooms = Arc::new(RoomCatalog::new(store::list(&mut conn, false).await?));
        let mut s = self.snapshot.write().expect("catalogue lock");
        if self.generation.load(Ordering::SeqCst) == began {
            *s = Snapshot { loaded: Some(Instant::now()), rooms: rooms.clone() };
        }
        Ok(rooms)
    }
}
