//! The sweeper draining a backlog while the API is under load.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{resources, verdict, Row, SECONDS};
use crate::capture::ServerSample;
use crate::fleet::Fleet;
use crate::load::{self, Req, Run};
use crate::pgbench::Pgbench;

const SWEEP_SQL: &str = include_str!("../sql/sweep.sql");

/// The backlog of the drain scenario: `resources` resources of capacity 4,
/// each full of holds that expired a second ago and with one waiter.
pub fn backlog_sql(name: &str, resources: usize) -> String {
    format!(
        "BEGIN;
         INSERT INTO capacity_resource (code, name, capacity, occupied_count, revision, last_sequence, waiting_count)
         SELECT '{name}-' || g, '{name}', 4, 4, 4, 1, 1 FROM generate_series(1, {resources}) g;
         INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
         SELECT r.id, 'expired', 'HELD', 1, 1, now() - interval '1 second' - (h || ' milliseconds')::interval, now(), now()
           FROM capacity_resource r CROSS JOIN generate_series(1, 4) h WHERE r.name = '{name}';
         INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
         SELECT id, 'waiter', 1, 'WAITING', 1, 1, now(), now() FROM capacity_resource WHERE name = '{name}';
         COMMIT;"
    )
}

pub struct Drain {
    pub row: Row,
    /// (seconds since the backlog appeared, expired holds still HELD).
    pub remaining: Vec<(f64, f64)>,
    /// (second, holds/s of the load clients).
    pub load: Vec<(f64, f64)>,
    pub drain_secs: f64,
    pub resources: usize,
    pub broken: i64,
}

/// The sweeper draining a backlog that appears at once, while 8 clients
/// keep taking holds; the ceiling is pgbench running the sweeper's
/// per-resource transaction on as many connections as the sweeper settles
/// resources at once (`PARALLEL`, 4). It runs without the 8 load clients:
/// the ceiling is the database alone, the HTTP side pays for the load.
pub async fn drain(fleet: &Arc<Fleet>, resources_n: usize, sample: &ServerSample) -> Drain {
    let load_ids = Arc::new(resources(fleet, "drain-load", 8, 1_000_000).await);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Instant::now();
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let (fleet, stop, ids) = (fleet.clone(), stop.clone(), load_ids.clone());
            tokio::spawn(async move {
                let base = fleet.base(c).to_string();
                let mut done = Vec::new();
                let mut n = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let req = Req::new(
                        format!("/api/resources/{}/holds", ids[c]),
                        format!("l{c}"),
                        format!("l{c}-{n}"),
                        json!({}),
                    );
                    let a = load::send(&fleet, &base, &req).await;
                    done.push((a.status, a.latency, a.done_at));
                    n += 1;
                }
                done
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let backlog_at = Instant::now();
    fleet.sql(&backlog_sql("backlog", resources_n)).await;
    let mut remaining = Vec::new();
    let drained_at = loop {
        let left = fleet
            .ids("SELECT count(*) AS id FROM capacity_hold WHERE owner_digest = 'expired' AND state = 'HELD'")
            .await[0];
        remaining.push((backlog_at.elapsed().as_secs_f64(), left as f64));
        if left == 0 {
            break Instant::now();
        }
        assert!(backlog_at.elapsed() < Duration::from_secs(180), "backlog drained within 180 s");
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut answers = Vec::new();
    for c in clients {
        answers.extend(c.await.unwrap());
    }
    let (broken, _) = fleet.consistency().await;
    let mut run = Run::default();
    run.absorb(answers.iter().filter(|a| a.2 >= backlog_at && a.2 <= drained_at).map(|a| (a.0, a.1)));
    run.elapsed = drained_at - backlog_at;
    let mut load = Vec::new();
    // Whole seconds only: a partial last second would read as a drop.
    let total = started.elapsed().as_secs_f64().floor() as usize;
    for s in 0..total {
        let n = answers.iter().filter(|a| a.0 == 201 && (a.2 - started).as_secs() as usize == s).count();
        load.push((s as f64 - (backlog_at - started).as_secs_f64(), n as f64));
    }
    let drain_secs = (drained_at - backlog_at).as_secs_f64();

    // The fleet's sweeper would sweep pgbench's backlog too.
    fleet.halt();
    // One resource more than the backlog: the first is the logged sample.
    fleet.sql(&format!("{} CREATE SEQUENCE pgb_sweep;", backlog_sql("pgb-backlog", resources_n + 1))).await;
    let base = fleet.ids("SELECT min(id) AS id FROM capacity_resource WHERE name = 'pgb-backlog'").await[0];
    // Four clients, as the sweeper's per-resource path settles four at a
    // time; each takes a quarter of the backlog from the sequence.
    const SWEEPER_PARALLEL: usize = 4;
    let pgb = Pgbench::new(&fleet.db_url(), SWEEP_SQL, SWEEPER_PARALLEL, SECONDS)
        .transactions(resources_n.div_ceil(SWEEPER_PARALLEL))
        .var("base", base);
    let (stale, sent) = verdict(sample.get("sweeper, one resource of the backlog"), &pgb.sample(1, &[]));
    let ceiling = pgb.tps();
    Drain {
        row: Row {
            name: format!("sweeper backlog drain ({resources_n} resources, {} holds)", resources_n * 4),
            clients: 8,
            rate: resources_n as f64 / drain_secs,
            unit: "resources swept/s",
            ceiling: Some(ceiling),
            ceiling_clients: Some(SWEEPER_PARALLEL),
            sent: Some(sent),
            stale,
            statements_per_request: None,
            cpu: None,
            ceiling_pg_cores: None,
            notes: format!("latency = the 8 load clients' holds during the drain ({})", run.statuses_text()),
            run,
        },
        remaining,
        load,
        drain_secs,
        resources: resources_n,
        broken,
    }
}
