//! Booking scenarios: contention on one room, A+B against B+C, distinct slots.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::{counted, verdict, Row, ADMITTED, SECONDS};
use crate::capture::ServerSample;
use crate::fleet::Fleet;
use crate::load::{drive, race, Req, Run};
use crate::pgbench::Pgbench;

const BOOKING_SQL: &str = include_str!("../sql/booking.sql");
const BOOKING2_SQL: &str = include_str!("../sql/booking2.sql");
/// The slot of a barrier round: a fresh one per round (`step` 1), or one
/// slot throughout (`step` 0, for the logged sample of a winner and a loser).
const ROUND_SLOT: &str = "\\set slot :slot_base + :round * :step\n";

pub fn booking(rooms: &[&str], hour: i64) -> serde_json::Value {
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
pub async fn contention(fleet: &Arc<Fleet>, sample: &ServerSample) -> Row {
    let rooms = ["HC"];
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
    // The same shape: 10 rounds of 20 transactions for one room and slot,
    // started together (a slot of its own per round).
    let script = format!("{ROUND_SLOT}{}", BOOKING_SQL.replace(":room", "'PC'"));
    let pgb = Pgbench::new(&fleet.db_url(), script, 20, SECONDS).var("slot_base", 0).var("step", 1);
    let script = pgb.sample(2, &[("slot_base", 100), ("step", 0)]);
    let server = [sample.get("booking (one room)"), sample.get("booking, slot taken (one room)")].concat();
    let (stale, sent) = verdict(&server, &script);
    let ceiling = pgb.rounds(10).await;
    Row {
        name: "booking contention (20 at once, one room)".into(),
        clients: 20,
        rate: run.answers_per_second(),
        unit: "answers/s",
        ceiling: Some(ceiling),
        ceiling_clients: Some(20),
        sent: Some(sent),
        stale,
        statements_per_request: Some(statements),
        cpu: None,
        ceiling_pg_cores: None,
        notes: format!(
            "rounds other than 1 × 201 + 19 × 409: {bad_rounds}; slowest {:.1} ms; pgbench: 10 rounds of 20 \
             transactions for one slot started together (yeyak's bulkhead lets {ADMITTED} of the 20 into the \
             database at once, the rest wait for a permit); statements: winner + loser",
            run.ms(1.0)
        ),
        run,
    }
}

/// A+B against B+C at the same instant; the loser's latency is the point.
pub async fn races(fleet: &Arc<Fleet>, sample: &ServerSample) -> (Row, Run) {
    let (ab, bc) = (["A", "B"], ["B", "C"]);
    let (mut all, mut losers) = (Run::default(), Run::default());
    let mut bad = 0;
    let mut elapsed = Duration::ZERO;
    let before = fleet.metric_sum("yeyak_db_statements_total").await;
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
    let statements = (fleet.metric_sum("yeyak_db_statements_total").await - before) / all.total() as f64;
    // The same shape: 100 trials of one A+B and one B+C transaction for one
    // slot, started together; client 0 (or `flip`) books QA+QB, the other QB+QC.
    let script = format!("{ROUND_SLOT}{BOOKING2_SQL}");
    let pgb = Pgbench::new(&fleet.db_url(), script, 2, SECONDS).var("flip", 0).var("slot_base", 0).var("step", 1);
    let fixed = |flip| [("slot_base", 200), ("step", 0), ("flip", flip)];
    let script = [pgb.sample(1, &fixed(0)), pgb.sample(1, &fixed(1))].concat();
    let server = [sample.get("booking (A+B)"), sample.get("booking, slot taken (B+C)")].concat();
    let (stale, sent) = verdict(&server, &script);
    let ceiling = pgb.rounds(100).await;
    let row = Row {
        name: "A+B vs B+C races (pairs at once)".into(),
        clients: 2,
        rate: all.answers_per_second(),
        unit: "answers/s",
        ceiling: Some(ceiling),
        ceiling_clients: Some(2),
        sent: Some(sent),
        stale,
        statements_per_request: Some(statements),
        cpu: None,
        ceiling_pg_cores: None,
        notes: format!(
            "trials other than 201 + 409: {bad}; loser p50 {:.1} ms, max {:.1} ms; pgbench: 100 pairs started \
             together, one slot each; statements: A+B winner + B+C loser",
            losers.ms(0.5),
            losers.ms(1.0)
        ),
        run: all,
    };
    (row, losers)
}

/// Every client books its own room, hour after hour: no conflicts.
pub async fn distinct_bookings(fleet: &Arc<Fleet>, clients: usize, sample: Option<&ServerSample>) -> Row {
    let with_ceiling = sample.is_some();
    let (run, statements, cpu) = counted(
        fleet,
        drive(fleet, clients, 100_000, SECONDS as f64, |c, n| {
            let room = format!("H{:02}", c % 64 + 1);
            Req::new("/api/bookings", format!("u{c}"), format!("d{c}-{n}"), booking(&[&room], n as i64))
        }),
    )
    .await;
    assert!(run.count(201) > 0, "bookings succeed: {}", run.statuses_text());
    let script = format!(
        "\\set slot random(1, 100000000)\n{}",
        BOOKING_SQL.replace(":room", "('P' || lpad((:client_id % 64 + 1)::text, 2, '0'))")
    );
    let pgb_clients = clients.min(ADMITTED);
    let pgb = Pgbench::new(&fleet.db_url(), script, pgb_clients, SECONDS);
    let (ceiling, ceiling_pg_cores, sent, stale) = if with_ceiling {
        let (stale, sent) = verdict(sample.map(|s| s.get("booking (one room)")).unwrap_or(&[]), &pgb.sample(1, &[]));
        let (tps, cores) = pgb.tps_and_cores();
        (Some(tps), Some(cores), Some(sent), stale)
    } else {
        (None, None, None, None)
    };
    Row {
        name: "bookings on distinct slots".into(),
        clients,
        rate: run.per_second(201),
        unit: "bookings/s",
        ceiling,
        ceiling_clients: with_ceiling.then_some(pgb_clients),
        sent,
        stale,
        statements_per_request: Some(statements),
        cpu: Some(cpu),
        ceiling_pg_cores,
        notes: run.statuses_text(),
        run,
    }
}
