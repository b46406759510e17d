//! Capacity scenarios: holds on distinct resources and on one hot resource,
//! replays, waitlist hand-off chains.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{counted, resources, verdict, Row, ADMITTED, CLIENTS, SECONDS};
use crate::capture::ServerSample;
use crate::cpu::Meter;
use crate::fleet::Fleet;
use crate::load::{self, drive, Req, Run};
use crate::pgbench::Pgbench;

const HOLD_SQL: &str = include_str!("../sql/hold.sql");
const REPLAY_SQL: &str = include_str!("../sql/replay.sql");
const HANDOFF_SQL: &str = include_str!("../sql/handoff.sql");

/// Holds on one resource per client (a fresh resource each and keys of
/// their own, so the scenario can run several times on one fleet).
pub async fn holds_distinct(fleet: &Arc<Fleet>, clients: usize, sample: Option<&ServerSample>) -> Row {
    let tag = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let ids = Arc::new(resources(fleet, &format!("hd{tag}"), clients, 1_000_000).await);
    let (d, t) = (ids.clone(), tag.clone());
    let (run, statements, cpu) = counted(
        fleet,
        drive(fleet, clients, 100_000, SECONDS as f64, move |c, n| {
            Req::new(format!("/api/resources/{}/holds", d[c]), format!("owner-{c}"), format!("{t}-{c}-{n}"), json!({}))
        }),
    )
    .await;
    let pgb_clients = clients.min(ADMITTED);
    let (ceiling, ceiling_pg_cores, sent, stale) = match sample {
        Some(sample) => {
            let ids = resources(fleet, &format!("pd{tag}"), clients, 1_000_000).await;
            let script = format!("\\set rid :base + :client_id\n{HOLD_SQL}");
            let pgb = Pgbench::new(&fleet.db_url(), script, pgb_clients, SECONDS).var("base", ids[0]);
            let (stale, sent) = verdict(sample.get("hold"), &pgb.sample(1, &[]));
            let (tps, cores) = pgb.tps_and_cores();
            (Some(tps), Some(cores), Some(sent), stale)
        }
        None => (None, None, None, None),
    };
    Row {
        name: "holds on distinct resources".into(),
        clients,
        rate: run.per_second(201),
        unit: "holds/s",
        ceiling,
        ceiling_clients: sample.map(|_| pgb_clients),
        sent,
        stale,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        ceiling_pg_cores,
        notes: format!("{}; keys {tag}-<client>-<n>", run.statuses_text()),
        run,
    }
}

pub async fn holds_hot(fleet: &Arc<Fleet>, sample: &ServerSample) -> Row {
    let hot = resources(fleet, "hot", 1, 1_000_000).await[0];
    let (run, statements, cpu) = counted(
        fleet,
        drive(fleet, CLIENTS, 100_000, SECONDS as f64, move |c, n| {
            Req::new(format!("/api/resources/{hot}/holds"), format!("owner-{c}"), format!("hot-{c}-{n}"), json!({}))
        }),
    )
    .await;
    let pgb = resources(fleet, "pgb-hot", 1, 1_000_000).await[0];
    let script = format!("\\set rid :base\n{HOLD_SQL}");
    let pgb = Pgbench::new(&fleet.db_url(), script, ADMITTED, SECONDS).var("base", pgb);
    let (stale, sent) = verdict(sample.get("hold"), &pgb.sample(1, &[]));
    let (ceiling, cores) = pgb.tps_and_cores();
    let ceiling_pg_cores = Some(cores);
    Row {
        name: "holds on one hot resource".into(),
        clients: CLIENTS,
        rate: run.per_second(201),
        unit: "holds/s",
        ceiling: Some(ceiling),
        ceiling_clients: Some(ADMITTED),
        sent: Some(sent),
        stale,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        ceiling_pg_cores,
        notes: run.statuses_text(),
        run,
    }
}

/// Replays of holds stored before (same key, owner and body).
pub async fn replays(fleet: &Arc<Fleet>, sample: &ServerSample) -> Row {
    let ids = Arc::new(resources(fleet, "replay", CLIENTS, 1_000_000).await);
    let stored = 20;
    let d = ids.clone();
    let first = drive(fleet, CLIENTS, stored, 60.0, move |c, n| {
        Req::new(format!("/api/resources/{}/holds", d[c]), format!("owner-{c}"), format!("r-{c}-{n}"), json!({}))
    })
    .await;
    assert_eq!(first.count(201), CLIENTS * stored, "holds to replay were stored");
    let d = ids.clone();
    let (run, statements, cpu) = counted(
        fleet,
        drive(fleet, CLIENTS, 100_000, SECONDS as f64, move |c, n| {
            let key = format!("r-{c}-{}", n % stored);
            Req::new(format!("/api/resources/{}/holds", d[c]), format!("owner-{c}"), key, json!({}))
        }),
    )
    .await;
    fleet
        .sql(
            "INSERT INTO idempotency_record (tenant, operation, idempotency_key, fingerprint, state, owner_token,
                                             lease_expires_at, created_at, response_status, response_body, completed_at)
             SELECT 'pgb', 'hold.create', 'replay-' || g, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
                    'COMPLETED', gen_random_uuid(), now(), now(), 201, '{\"id\":1}', now()
               FROM generate_series(1, 1000) g",
        )
        .await;
    let pgb = Pgbench::new(&fleet.db_url(), REPLAY_SQL, ADMITTED, SECONDS);
    let (stale, sent) = verdict(sample.get("hold replay"), &pgb.sample(1, &[]));
    let (ceiling, cores) = pgb.tps_and_cores();
    let ceiling_pg_cores = Some(cores);
    Row {
        name: "replays of stored holds".into(),
        clients: CLIENTS,
        rate: run.per_second(201),
        unit: "replays/s",
        ceiling: Some(ceiling),
        ceiling_clients: Some(ADMITTED),
        sent: Some(sent),
        stale,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        ceiling_pg_cores,
        notes: run.statuses_text(),
        run,
    }
}

/// Waitlist hand-off chains: on each of `chains` resources of capacity 1 the
/// holder cancels, the first waiter reads its entry (to learn the offer) and
/// accepts; the new holder cancels next. Latency is the whole step.
pub async fn handoff_chains(fleet: &Arc<Fleet>, chains: usize, waiters: usize, sample: &ServerSample) -> Row {
    let ids = resources(fleet, "chain", chains, 1).await;
    // The first holder of every chain, then the queue (untimed set-up).
    let mut holders = Vec::new();
    for (c, id) in ids.iter().enumerate() {
        let base = fleet.base(c).to_string();
        let a = load::send(
            fleet,
            &base,
            &Req::new(format!("/api/resources/{id}/holds"), "h0", format!("h0-{c}"), json!({})),
        )
        .await;
        assert_eq!(a.status, 201, "first hold of chain {c}: {}", a.json());
        holders.push(("h0".to_string(), a.json()["id"].as_i64().unwrap()));
    }
    let per_chain = Arc::new(ids.clone());
    let d = per_chain.clone();
    let joined = drive(fleet, chains, waiters, 120.0, move |c, n| {
        Req::new(format!("/api/resources/{}/waitlist", d[c]), format!("w{c}-{n}"), format!("j{c}-{n}"), json!({}))
    })
    .await;
    assert_eq!(joined.count(201), chains * waiters, "every waiter joined: {}", joined.statuses_text());
    let entries = fleet.ids("SELECT id FROM waitlist_entry ORDER BY resource_id, sequence").await;

    let before = fleet.metric_sum("yeyak_db_statements_total").await;
    let meter = Meter::start();
    let started = Instant::now();
    let deadline = started + Duration::from_secs(SECONDS);
    let tasks: Vec<_> = holders
        .into_iter()
        .enumerate()
        .map(|(c, (mut owner, mut hold))| {
            let fleet = fleet.clone();
            let entries: Vec<i64> = entries[c * waiters..(c + 1) * waiters].to_vec();
            tokio::spawn(async move {
                let base = fleet.base(c).to_string();
                let mut steps = Vec::new();
                for (n, entry) in entries.iter().enumerate() {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let t0 = Instant::now();
                    let cancel =
                        Req::new(format!("/api/holds/{hold}/cancel"), owner.clone(), format!("x{c}-{n}"), json!({}));
                    let a = load::send(&fleet, &base, &cancel).await;
                    assert_eq!(a.status, 200, "cancel in chain {c}: {}", a.json());
                    let waiter = format!("w{c}-{n}");
                    let (s, e) = load::get(&fleet, &base, &format!("/api/waitlist/{entry}"), &waiter).await;
                    assert_eq!(s, 200, "entry {entry}: {e}");
                    let offer = e["offerId"].as_i64().unwrap_or_else(|| panic!("an offer for entry {entry}: {e}"));
                    let accept =
                        Req::new(format!("/api/offers/{offer}/accept"), waiter.clone(), format!("a{c}-{n}"), json!({}));
                    let a = load::send(&fleet, &base, &accept).await;
                    assert_eq!(a.status, 200, "accept in chain {c}: {}", a.json());
                    steps.push((200u16, t0.elapsed()));
                    owner = waiter;
                    hold = a.json()["holdId"].as_i64().unwrap();
                }
                steps
            })
        })
        .collect();
    let mut run = Run::default();
    for t in tasks {
        run.absorb(t.await.unwrap());
    }
    run.elapsed = started.elapsed();
    let cpu = meter.stop();
    let statements = (fleet.metric_sum("yeyak_db_statements_total").await - before) / run.total().max(1) as f64;

    // pgbench: a resource per client with a queue long enough for the run.
    fleet
        .sql(&format!(
            "BEGIN;
             INSERT INTO capacity_resource (code, name, capacity, occupied_count, last_sequence, waiting_count)
             SELECT 'pgb-chain-' || g, 'pgb-chain', 1, 1, 20000, 20000 FROM generate_series(1, {chains}) g;
             INSERT INTO capacity_hold (resource_id, owner_digest, state, quantity, policy_version, expires_at, created_at, updated_at)
             SELECT id, 'holder', 'CONFIRMED', 1, 1, NULL, now(), now() FROM capacity_resource WHERE name = 'pgb-chain';
             INSERT INTO waitlist_entry (resource_id, owner_digest, sequence, state, quantity, policy_version, created_at, updated_at)
             SELECT r.id, 'waiter-' || s, s, 'WAITING', 1, 1, now(), now()
               FROM capacity_resource r CROSS JOIN generate_series(1, 20000) s WHERE r.name = 'pgb-chain';
             COMMIT;"
        ))
        .await;
    let base = fleet.ids("SELECT min(id) AS id FROM capacity_resource WHERE name = 'pgb-chain'").await[0];
    let pgb = Pgbench::new(&fleet.db_url(), HANDOFF_SQL, chains, SECONDS).var("base", base);
    let (stale, sent) = verdict(sample.get("hand-off (cancel, then accept)"), &pgb.sample(1, &[]));
    let (ceiling, cores) = pgb.tps_and_cores();
    let ceiling_pg_cores = Some(cores);
    Row {
        name: format!("waitlist hand-off chains ({chains} chains)"),
        clients: chains,
        rate: run.total() as f64 / run.elapsed.as_secs_f64(),
        unit: "hand-offs/s",
        ceiling: Some(ceiling),
        ceiling_clients: Some(chains),
        sent: Some(sent),
        stale,
        statements_per_request: Some(statements / 3.0),
        cpu: Some(cpu),
        ceiling_pg_cores,
        notes: "one step = cancel + read entry + accept (3 requests); statements are per request".into(),
        run,
    }
}
