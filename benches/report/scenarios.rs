//! The write scenarios of the report, each over HTTP on a running fleet and
//! then its SQL ceiling (pgbench, same statements, same concurrency) on the
//! same database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::cpu::{Meter, Share};
use crate::fleet::Fleet;
use crate::load::{self, drive, race, Req, Run};
use crate::pgbench::Pgbench;

/// Seconds of each timed HTTP scenario and of each pgbench run.
pub const SECONDS: u64 = 5;
pub const CLIENTS: usize = 32;

const BOOKING_SQL: &str = include_str!("sql/booking.sql");
const BOOKING2_SQL: &str = include_str!("sql/booking2.sql");
const HOLD_SQL: &str = include_str!("sql/hold.sql");
const REPLAY_SQL: &str = include_str!("sql/replay.sql");
const HANDOFF_SQL: &str = include_str!("sql/handoff.sql");
const SWEEP_SQL: &str = include_str!("sql/sweep.sql");

/// One line of the summary: what was measured and against which ceiling.
pub struct Row {
    pub name: String,
    pub clients: usize,
    pub run: Run,
    /// The rate compared with the ceiling, and what it counts.
    pub rate: f64,
    pub unit: &'static str,
    pub ceiling: Option<f64>,
    pub statements_per_request: Option<f64>,
    /// Where the CPU went while the HTTP load ran.
    pub cpu: Option<Share>,
    pub notes: String,
}

impl Row {
    pub fn ratio(&self) -> Option<f64> {
        self.ceiling.map(|c| self.rate / c)
    }
}

/// Statements the fleet sent while `work` ran, per request it made, and the
/// CPU time it took.
async fn counted<F: std::future::Future<Output = Run>>(fleet: &Fleet, work: F) -> (Run, f64, Share) {
    let before = fleet.metric_sum("yeyak_db_statements_total").await;
    let meter = Meter::start();
    let run = work.await;
    let cpu = meter.stop();
    let after = fleet.metric_sum("yeyak_db_statements_total").await;
    let per = (after - before) / run.total().max(1) as f64;
    (run, per, cpu)
}

fn booking(rooms: &[String], hour: i64) -> serde_json::Value {
    let start = chrono::DateTime::parse_from_rfc3339("2032-01-01T00:00:00Z").unwrap() + chrono::Duration::hours(hour);
    let end = start + chrono::Duration::hours(1);
    json!({"title": "bench", "rooms": rooms, "startsAt": start.to_rfc3339(), "endsAt": end.to_rfc3339()})
}

/// Rooms for the benchmark (HTTP and pgbench use rooms of their own), as
/// seed SQL for [`crate::fleet::Settings`].
pub const ROOMS_SQL: &str = "INSERT INTO room (code, name, position)
     SELECT c, c, 100 + row_number() OVER () FROM (
       SELECT 'H' || lpad(g::text, 2, '0') AS c FROM generate_series(1, 64) g
       UNION ALL SELECT 'P' || lpad(g::text, 2, '0') FROM generate_series(1, 64) g
       UNION ALL VALUES ('HC'), ('PC'), ('QA'), ('QB'), ('QC')) r";

/// 10 rounds of 20 requests for one room and hour at the same instant.
pub async fn contention(fleet: &Arc<Fleet>) -> Row {
    let rooms = vec!["HC".to_string()];
    let mut run = Run::default();
    let mut bad_rounds = 0;
    let mut elapsed = Duration::ZERO;
    let before = fleet.metric_sum("yeyak_db_statements_total").await;
    for round in 0..10 {
        let body = booking(&rooms, round);
        let reqs = (0..20).map(|i| Req::new("/api/bookings", format!("u{i}"), format!("c{round}-{i}"), body.clone()));
        let started = Instant::now();
        let answers = race(fleet, reqs.collect()).await;
        elapsed += started.elapsed();
        let created = answers.iter().filter(|a| a.status == 201).count();
        let taken = answers.iter().filter(|a| a.status == 409).count();
        if created != 1 || taken != 19 {
            bad_rounds += 1;
        }
        run.absorb(answers.iter().map(|a| (a.status, a.latency)));
    }
    run.elapsed = elapsed;
    assert_eq!(run.count(201), 10, "one booking per round: {}", run.statuses_text());
    let statements = (fleet.metric_sum("yeyak_db_statements_total").await - before) / run.total() as f64;
    let script = format!("\\set slot random(1, 50)\n{}", BOOKING_SQL.replace(":room", "'PC'"));
    let ceiling = Pgbench::new(&fleet.db_url(), script, 20, SECONDS).tps();
    Row {
        name: "booking contention (20 at once, one room)".into(),
        clients: 20,
        rate: run.answers_per_second(),
        unit: "answers/s",
        ceiling: Some(ceiling),
        statements_per_request: Some(statements),
        cpu: None,
        notes: format!("rounds other than 1 × 201 + 19 × 409: {bad_rounds}; slowest {:.1} ms", run.ms(1.0)),
        run,
    }
}

/// A+B against B+C at the same instant; the loser's latency is the point.
pub async fn races(fleet: &Arc<Fleet>) -> (Row, Run) {
    let (ab, bc) = (vec!["A".to_string(), "B".to_string()], vec!["B".to_string(), "C".to_string()]);
    let (mut all, mut losers) = (Run::default(), Run::default());
    let mut bad = 0;
    let mut elapsed = Duration::ZERO;
    for trial in 0..100 {
        let reqs = vec![
            Req::new("/api/bookings", "ab", format!("ab-{trial}"), booking(&ab, 1000 + trial)),
            Req::new("/api/bookings", "bc", format!("bc-{trial}"), booking(&bc, 1000 + trial)),
        ];
        let started = Instant::now();
        let answers = race(fleet, reqs).await;
        elapsed += started.elapsed();
        let mut statuses: Vec<u16> = answers.iter().map(|a| a.status).collect();
        statuses.sort();
        if statuses != [201, 409] {
            bad += 1;
        }
        all.absorb(answers.iter().map(|a| (a.status, a.latency)));
        losers.absorb(answers.iter().filter(|a| a.status == 409).map(|a| (a.status, a.latency)));
    }
    all.elapsed = elapsed;
    let script = |r1: &str, r2: &str| {
        format!("\\set slot random(1, 20)\n{}", BOOKING2_SQL.replace(":room1", r1).replace(":room2", r2))
    };
    let ceiling =
        Pgbench::new(&fleet.db_url(), script("'QA'", "'QB'"), 2, SECONDS).and_script(script("'QB'", "'QC'")).tps();
    let row = Row {
        name: "A+B vs B+C races (pairs at once)".into(),
        clients: 2,
        rate: all.answers_per_second(),
        unit: "answers/s",
        ceiling: Some(ceiling),
        statements_per_request: None,
        cpu: None,
        notes: format!(
            "trials other than 201 + 409: {bad}; loser p50 {:.1} ms, max {:.1} ms",
            losers.ms(0.5),
            losers.ms(1.0)
        ),
        run: all,
    };
    (row, losers)
}

/// Every client books its own room, hour after hour: no conflicts.
pub async fn distinct_bookings(fleet: &Arc<Fleet>, clients: usize, with_ceiling: bool) -> Row {
    let (run, statements, cpu) = counted(
        fleet,
        drive(fleet, clients, 100_000, SECONDS as f64, |c, n| {
            let room = vec![format!("H{:02}", c % 64 + 1)];
            Req::new("/api/bookings", format!("u{c}"), format!("d{c}-{n}"), booking(&room, n as i64))
        }),
    )
    .await;
    assert!(run.count(201) > 0, "bookings succeed: {}", run.statuses_text());
    let script = format!(
        "\\set slot random(1, 100000000)\n{}",
        BOOKING_SQL.replace(":room", "('P' || lpad((:client_id % 64 + 1)::text, 2, '0'))")
    );
    let ceiling = with_ceiling.then(|| Pgbench::new(&fleet.db_url(), script, clients, SECONDS).tps());
    Row {
        name: "bookings on distinct slots".into(),
        clients,
        rate: run.per_second(201),
        unit: "bookings/s",
        ceiling,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        notes: run.statuses_text(),
        run,
    }
}

/// Resources `<prefix>-1..=n` of `capacity`; their ids in order.
pub async fn resources(fleet: &Fleet, prefix: &str, n: usize, capacity: i64) -> Vec<i64> {
    fleet
        .sql(&format!(
            "INSERT INTO capacity_resource (code, name, capacity)
             SELECT '{prefix}-' || g, '{prefix}', {capacity} FROM generate_series(1, {n}) g"
        ))
        .await;
    fleet.ids(&format!("SELECT id FROM capacity_resource WHERE name = '{prefix}' ORDER BY id")).await
}

/// Holds on one resource per client; returns the row and how many holds
/// each client stored (for the replay scenario).
pub async fn holds_distinct(fleet: &Arc<Fleet>, clients: usize, with_ceiling: bool) -> Row {
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
    let ceiling = if with_ceiling {
        let pgb = resources(fleet, &format!("pd{tag}"), clients, 1_000_000).await;
        let script = format!("\\set rid :base + :client_id\n{HOLD_SQL}");
        Some(Pgbench::new(&fleet.db_url(), script, clients, SECONDS).var("base", pgb[0]).tps())
    } else {
        None
    };
    Row {
        name: "holds on distinct resources".into(),
        clients,
        rate: run.per_second(201),
        unit: "holds/s",
        ceiling,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        notes: format!("{}; keys {tag}-<client>-<n>", run.statuses_text()),
        run,
    }
}

pub async fn holds_hot(fleet: &Arc<Fleet>) -> Row {
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
    let ceiling = Pgbench::new(&fleet.db_url(), script, CLIENTS, SECONDS).var("base", pgb).tps();
    Row {
        name: "holds on one hot resource".into(),
        clients: CLIENTS,
        rate: run.per_second(201),
        unit: "holds/s",
        ceiling: Some(ceiling),
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        notes: run.statuses_text(),
        run,
    }
}

/// Replays of holds stored before (same key, owner and body).
pub async fn replays(fleet: &Arc<Fleet>) -> Row {
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
    let ceiling = Pgbench::new(&fleet.db_url(), REPLAY_SQL, CLIENTS, SECONDS).tps();
    Row {
        name: "replays of stored holds".into(),
        clients: CLIENTS,
        rate: run.per_second(201),
        unit: "replays/s",
        ceiling: Some(ceiling),
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        notes: run.statuses_text(),
        run,
    }
}

/// Waitlist hand-off chains: on each of `chains` resources of capacity 1 the
/// holder cancels, the first waiter reads its entry (to learn the offer) and
/// accepts; the new holder cancels next. Latency is the whole step.
pub async fn handoff_chains(fleet: &Arc<Fleet>, chains: usize, waiters: usize) -> Row {
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
        assert_eq!(a.status, 201, "first hold of chain {c}: {}", a.body);
        holders.push(("h0".to_string(), a.body["id"].as_i64().unwrap()));
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
                    assert_eq!(a.status, 200, "cancel in chain {c}: {}", a.body);
                    let waiter = format!("w{c}-{n}");
                    let (s, e) = load::get(&fleet, &base, &format!("/api/waitlist/{entry}"), &waiter).await;
                    assert_eq!(s, 200, "entry {entry}: {e}");
                    let offer = e["offerId"].as_i64().unwrap_or_else(|| panic!("an offer for entry {entry}: {e}"));
                    let accept =
                        Req::new(format!("/api/offers/{offer}/accept"), waiter.clone(), format!("a{c}-{n}"), json!({}));
                    let a = load::send(&fleet, &base, &accept).await;
                    assert_eq!(a.status, 200, "accept in chain {c}: {}", a.body);
                    steps.push((200u16, t0.elapsed()));
                    owner = waiter;
                    hold = a.body["holdId"].as_i64().unwrap();
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
    let ceiling = Pgbench::new(&fleet.db_url(), HANDOFF_SQL, chains, SECONDS).var("base", base).tps();
    Row {
        name: format!("waitlist hand-off chains ({chains} chains)"),
        clients: chains,
        rate: run.total() as f64 / run.elapsed.as_secs_f64(),
        unit: "hand-offs/s",
        ceiling: Some(ceiling),
        statements_per_request: Some(statements / 3.0),
        cpu: Some(cpu),
        notes: "one step = cancel + read entry + accept (3 requests); statements are per request".into(),
        run,
    }
}

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
/// per-resource transaction one at a time, as the sweeper does.
pub async fn drain(fleet: &Arc<Fleet>, resources_n: usize) -> Drain {
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
    fleet.sql(&format!("{} CREATE SEQUENCE pgb_sweep;", backlog_sql("pgb-backlog", resources_n))).await;
    let base = fleet.ids("SELECT min(id) AS id FROM capacity_resource WHERE name = 'pgb-backlog'").await[0];
    let ceiling =
        Pgbench::new(&fleet.db_url(), SWEEP_SQL, 1, SECONDS).transactions(resources_n).var("base", base).tps();
    Drain {
        row: Row {
            name: format!("sweeper backlog drain ({resources_n} resources, {} holds)", resources_n * 4),
            clients: 8,
            rate: resources_n as f64 / drain_secs,
            unit: "resources swept/s",
            ceiling: Some(ceiling),
            statements_per_request: None,
            cpu: None,
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
