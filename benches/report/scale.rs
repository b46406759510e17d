//! Horizontal scale: 1, 2 and 3 processes on different ports over one
//! database, the load spread over them; and the cost experiments, each a
//! fleet of its own with one setting changed.

use std::sync::Arc;

use crate::fleet::{Fleet, Settings};
use crate::scenarios::capacity::holds_distinct;
use crate::scenarios::rooms::distinct_bookings;
use crate::scenarios::Row;

pub struct ScaleRow {
    pub processes: usize,
    pub holds: Row,
    pub bookings: Row,
    pub leaders: f64,
    pub broken: i64,
}

/// One fleet of `processes`, holds then bookings from `clients` clients
/// spread round robin, then the invariants and the sweeper leaders.
pub async fn scale_out(processes: usize, clients: usize, pool_size: u32) -> ScaleRow {
    let seed_sql = Some(crate::scenarios::rooms::ROOMS_SQL.to_string());
    let fleet = Arc::new(Fleet::start(&Settings { processes, pool_size, seed_sql, ..Settings::default() }).await);
    // Let every process run at least one sweeper tick (default 2 s), so that
    // the gate has been tried by all of them.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let holds = holds_distinct(&fleet, clients, None).await;
    let bookings = distinct_bookings(&fleet, clients, None).await;
    let leaders = fleet.metric_sum("yeyak_sweeper_leader").await;
    let (broken, _) = fleet.consistency().await;
    if let Ok(fleet) = Arc::try_unwrap(fleet) {
        fleet.stop().await;
    }
    ScaleRow { processes, holds, bookings, leaders, broken }
}

/// Holds on distinct resources with `settings` on a fresh fleet.
pub async fn holds_with(settings: Settings, clients: usize) -> Row {
    let fleet = Arc::new(Fleet::start(&settings).await);
    let row = holds_distinct(&fleet, clients, None).await;
    if let Ok(fleet) = Arc::try_unwrap(fleet) {
        fleet.stop().await;
    }
    row
}
