//! The performance report: `cargo bench --bench report`.
//!
//! Starts yeyak as real processes (the release binary) on fresh databases,
//! drives HTTP load from this process with bounded request counts and time,
//! runs pgbench with the same statements beside every write scenario (checked
//! at bench time against what PostgreSQL logs for one request of each kind,
//! `capture`; a stale script yields no ratio and fails the run), scales
//! out to 2 and 3 processes, measures the cost experiments, and writes
//! `target/bench/report.md` with SVG charts next to it.
//!
//! Needs PostgreSQL (`BENCH_PG`, default `postgres://postgres@127.0.0.1:5432`,
//! a superuser) with its log readable (`BENCH_PG_LOG`) and `pgbench`; Redis
//! on 127.0.0.1:6379 for the one Redis row (skipped without it).
//! `REPORT_PUBLISH=1` writes the report into `docs/PERFORMANCE.md`;
//! `REPORT_CAPTURE_ONLY=1` only captures the statements (`statements.md`).

mod capture;
mod chart;
mod cpu;
mod fleet;
mod load;
mod pgbench;
mod scale;
mod scenarios;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use fleet::{Fleet, Settings};
use load::{drive, Req};
use scenarios::{Row, ADMITTED, CLIENTS, SECONDS};

fn fmt_opt(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.digits$}"),
        _ => "–".into(),
    }
}

fn summary_table(md: &mut String, rows: &[&Row]) {
    md.push_str(
        "| scenario | clients | requests | rate | p50 ms | p90 ms | p99 ms | max ms | SQL ceiling (pgbench tps) | pgbench clients | HTTP / ceiling | statements per request (measured) | statements per transaction: request / script (logged) |\n",
    );
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in rows {
        let ratio = match &r.stale {
            Some(_) => "stale script".to_string(),
            None => fmt_opt(r.ratio(), 2),
        };
        let _ = writeln!(
            md,
            "| {} | {} | {} | {:.0} {} | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} | {} | {} |",
            r.name,
            r.clients,
            r.run.total(),
            r.rate,
            r.unit,
            r.run.ms(0.5),
            r.run.ms(0.9),
            r.run.ms(0.99),
            r.run.ms(1.0),
            fmt_opt(r.ceiling, 0),
            r.ceiling_clients.map(|c| c.to_string()).unwrap_or_else(|| "–".into()),
            ratio,
            fmt_opt(r.statements_per_request, 1),
            r.sent.as_deref().unwrap_or("–"),
        );
    }
}

fn command_output(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// The first three fields of `/proc/loadavg`.
fn loadavg() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().take(3).collect::<Vec<_>>().join(", ")
}

fn redis_reachable() -> bool {
    std::net::TcpStream::connect_timeout(&"127.0.0.1:6379".parse().unwrap(), std::time::Duration::from_millis(200))
        .is_ok()
}

/// `REPORT_PUBLISH=1`: the report becomes the "Latest report" section of
/// `docs/PERFORMANCE.md` (between its `LATEST` markers, headings one level
/// down), its charts and `statements.md` go to `docs/perf/`. That section is
/// only ever written this way.
fn publish(md: &str, out: &std::path::Path) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let doc_path = root.join("docs/PERFORMANCE.md");
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let start = "<!-- LATEST:start (generated from target/bench/report.md by REPORT_PUBLISH=1; do not edit) -->";
    let (head, rest) = doc.split_once("<!-- LATEST:start").expect("LATEST:start in docs/PERFORMANCE.md");
    let (_, tail) = rest.split_once("<!-- LATEST:end -->").expect("LATEST:end in docs/PERFORMANCE.md");
    let mut body = String::new();
    for (i, line) in md.lines().enumerate() {
        let line = if i == 0 {
            "## Latest report".to_string()
        } else if line.starts_with('#') {
            format!("#{line}")
        } else {
            line.replace("](statements.md)", "](perf/statements.md)")
        };
        let line = if line.starts_with("![") { line.replacen("](", "](perf/", 1) } else { line };
        body.push_str(&line);
        body.push('\n');
    }
    let doc = format!("{head}{start}\n{}\n<!-- LATEST:end -->{tail}", body.trim_end());
    std::fs::write(&doc_path, doc).unwrap();
    let perf = root.join("docs/perf");
    std::fs::create_dir_all(&perf).unwrap();
    for entry in std::fs::read_dir(out).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        if name.ends_with(".svg") || name == "statements.md" {
            std::fs::copy(entry.path(), perf.join(&name)).unwrap();
        }
    }
    println!("published: {}", doc_path.display());
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let started = Instant::now();
    let load_at_start = loadavg();
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0);
    let out = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench");
    std::fs::create_dir_all(&out).unwrap();
    let step = |what: &str| eprintln!("[{:>5.1} s] {what}", started.elapsed().as_secs_f64());

    // ---- what one request of each kind sends, from PostgreSQL's log
    step("statements per request, from PostgreSQL's log");
    capture::check_shapes();
    let sample = scenarios::sample::server_sample().await;
    std::fs::write(out.join("statements.md"), sample.text()).unwrap();
    if std::env::var("REPORT_CAPTURE_ONLY").is_ok() {
        println!("statements: {}", out.join("statements.md").display());
        return;
    }

    // ---- the main run: one process, every write scenario with its ceiling
    step("main fleet: one process");
    let seed_sql = Some(scenarios::rooms::ROOMS_SQL.to_string());
    let fleet = Arc::new(Fleet::start(&Settings { seed_sql, ..Settings::default() }).await);
    let pg_version = {
        let v = fleet.ids("SELECT current_setting('server_version_num')::int8 AS id").await[0];
        format!("{}.{}", v / 10000, v % 10000)
    };
    // Warm-up: connections, prepared statements, caches.
    drive(&fleet, CLIENTS, 20, 10.0, |c, n| {
        Req::new("/api/bookings", format!("warm{c}"), format!("warm-{c}-{n}"), {
            let start = chrono::DateTime::parse_from_rfc3339("2040-01-01T00:00:00Z").unwrap()
                + chrono::Duration::hours((c * 100 + n) as i64);
            json!({"title": "warm", "rooms": ["H64"], "startsAt": start.to_rfc3339(),
                   "endsAt": (start + chrono::Duration::minutes(30)).to_rfc3339()})
        })
    })
    .await;
    step("booking contention");
    let contention = scenarios::rooms::contention(&fleet, &sample).await;
    step("A+B / B+C races");
    let (races, losers) = scenarios::rooms::races(&fleet, &sample).await;
    step("bookings on distinct slots");
    let distinct = scenarios::rooms::distinct_bookings(&fleet, CLIENTS, Some(&sample)).await;
    step("holds on distinct resources");
    let holds = scenarios::capacity::holds_distinct(&fleet, CLIENTS, Some(&sample)).await;
    step("holds on one hot resource");
    let hot = scenarios::capacity::holds_hot(&fleet, &sample).await;
    step("replays");
    let replays = scenarios::capacity::replays(&fleet, &sample).await;
    step("waitlist hand-off chains");
    let chains = scenarios::capacity::handoff_chains(&fleet, 8, 300, &sample).await;
    let (main_broken, _) = fleet.consistency().await;
    if let Ok(fleet) = Arc::try_unwrap(fleet) {
        fleet.stop().await;
    }

    step("sweeper backlog drain");
    let drain_fleet = Arc::new(Fleet::start(&Settings { sweep_interval_ms: 250, ..Settings::default() }).await);
    let drain = scenarios::drain::drain(&drain_fleet, 500, &sample).await;
    if let Ok(f) = Arc::try_unwrap(drain_fleet) {
        f.stop().await;
    }

    // ---- scale out
    let mut scale_rows = Vec::new();
    for processes in 1..=3 {
        step(&format!("scale out: {processes} process(es)"));
        // The same 18 connections in all, so that only the process count changes.
        scale_rows.push(scale::scale_out(processes, 48, 18 / processes as u32).await);
    }

    // ---- costs: one setting changed per fleet, side by side in this run;
    // two rounds, alternating, since this machine is noisy
    let mut variants: Vec<(&str, Settings)> = vec![
        ("defaults (no checkout probe, hot statements prepared once, no Redis)", Settings::default()),
        (
            "`YEYAK_DB_VERIFY_CHECKOUT=true`: `SELECT 1` on every checkout",
            Settings::default().env("YEYAK_DB_VERIFY_CHECKOUT", "true"),
        ),
        (
            "`YEYAK_DB_CACHE_STATEMENTS=false`: diesel's own statement cache only",
            Settings::default().env("YEYAK_DB_CACHE_STATEMENTS", "false"),
        ),
    ];
    if redis_reachable() {
        let prefix = format!("bench-{}", uuid::Uuid::new_v4().simple());
        let redis = Settings::default().env("REDIS_URL", "redis://127.0.0.1:6379").env("YEYAK_REDIS_PREFIX", &prefix);
        variants.push(("Redis admission on (lock + permit in one script, release in one)", redis));
    }
    let mut costs: Vec<(String, Vec<Row>)> = variants.iter().map(|(l, _)| (l.to_string(), Vec::new())).collect();
    for round in 1..=2 {
        for (i, (label, settings)) in variants.iter().enumerate() {
            step(&format!("cost round {round}: {label}"));
            costs[i].1.push(scale::holds_with(settings.clone(), CLIENTS).await);
        }
    }
    let mut pools = Vec::new();
    for pool in [4u32, 8, 16, 32, 64] {
        step(&format!("pool size {pool}"));
        pools.push((pool, scale::holds_with(Settings { pool_size: pool, ..Settings::default() }, 64).await));
    }
    // ---- charts
    step("charts and report");
    let main_rows: Vec<&Row> = vec![&contention, &races, &distinct, &holds, &hot, &replays, &chains, &drain.row];
    let short = ["contention", "A+B/B+C", "distinct slots", "holds", "hot hold", "replays", "hand-offs", "drain"];
    let groups: Vec<String> = short.iter().map(|s| s.to_string()).collect();
    let latency_rows = &main_rows[..7];
    chart::bars(
        &out.join("latency.svg"),
        "HTTP latency per scenario (one process)",
        "milliseconds",
        &groups[..7],
        &[
            ("p50", latency_rows.iter().map(|r| r.run.ms(0.5)).collect()),
            ("p90", latency_rows.iter().map(|r| r.run.ms(0.9)).collect()),
            ("p99", latency_rows.iter().map(|r| r.run.ms(0.99)).collect()),
        ],
    );
    chart::bars(
        &out.join("throughput.svg"),
        "yeyak over HTTP vs pgbench with the same statements",
        "per second (unit per scenario, see table)",
        &groups,
        &[
            ("yeyak (HTTP)", main_rows.iter().map(|r| r.rate).collect()),
            ("SQL ceiling (pgbench)", main_rows.iter().map(|r| r.ceiling.unwrap_or(f64::NAN)).collect()),
        ],
    );
    chart::lines(
        &out.join("scale.svg"),
        "Throughput vs yeyak processes (one PostgreSQL, 48 clients, 18 connections)",
        "processes",
        "per second",
        &[
            ("holds/s", scale_rows.iter().map(|s| (s.processes as f64, s.holds.rate)).collect()),
            ("bookings/s", scale_rows.iter().map(|s| (s.processes as f64, s.bookings.rate)).collect()),
        ],
    );
    chart::lines(
        &out.join("drain.svg"),
        "Sweeper backlog drain: expired holds still HELD",
        "seconds since the backlog appeared",
        "holds",
        &[("expired holds left", drain.remaining.clone())],
    );
    chart::lines(
        &out.join("drain-load.svg"),
        "Holds/s of 8 clients around the drain (backlog at 0 s)",
        "seconds since the backlog appeared",
        "holds per second",
        &[("holds/s", drain.load.clone())],
    );
    let cost_groups: Vec<String> = ["defaults", "SELECT 1 per checkout", "diesel cache only", "Redis admission"]
        .iter()
        .take(costs.len())
        .map(|s| s.to_string())
        .collect();
    chart::bars(
        &out.join("costs.svg"),
        "Holds/s with one setting changed (32 clients, one process, two rounds)",
        "holds per second",
        &cost_groups,
        &[
            ("round 1", costs.iter().map(|(_, r)| r[0].rate).collect()),
            ("round 2", costs.iter().map(|(_, r)| r[1].rate).collect()),
        ],
    );
    chart::lines(
        &out.join("pool.svg"),
        "Holds/s vs pool size (64 clients, one process)",
        "YEYAK_DB_POOL_SIZE",
        "holds per second",
        &[("holds/s", pools.iter().map(|(p, r)| (*p as f64, r.rate)).collect())],
    );
    chart::lines(
        &out.join("pool-p99.svg"),
        "p99 latency vs pool size (64 clients, one process)",
        "YEYAK_DB_POOL_SIZE",
        "milliseconds",
        &[("p99", pools.iter().map(|(p, r)| (*p as f64, r.run.ms(0.99))).collect())],
    );

    // ---- report
    let stale: Vec<String> =
        main_rows.iter().filter_map(|r| r.stale.as_ref().map(|s| format!("{}: {s}", r.name))).collect();
    let mut md = String::new();
    let _ = writeln!(md, "# yeyak performance report\n");
    let _ = writeln!(
        md,
        "Generated by `cargo bench --bench report` at {} (commit {}), {} CPU cores, PostgreSQL {pg_version}; \
         took {:.0} s. yeyak runs as separate processes (release build), the HTTP clients and pgbench run on the \
         same machine, so every number shares the same cores. Load average (1, 5, 15 min) at the start {load_at_start}, \
         at the end {}: anything above what this run itself adds is other work on the machine (builds, tests) taking \
         the same cores. Compare figures within this report, not across runs.\n",
        chrono::Utc::now().format("%Y-%m-%d %H:%M UTC"),
        command_output("git", &["rev-parse", "--short", "HEAD"]),
        cores,
        // Only writing the file is left to do.
        started.elapsed().as_secs_f64(),
        loadavg(),
    );
    let _ = writeln!(md, "## Write scenarios and their SQL ceilings (one process, default settings: pool 16)\n");
    let _ = writeln!(
        md,
        "Each scenario runs at most {SECONDS} s. The ceiling is pgbench (`-M prepared -j 2`) running the statements \
         one request of that kind sends (`benches/report/sql/`) on the same database, with as many clients as yeyak \
         lets into PostgreSQL at once ({ADMITTED}: the bulkhead admits pool 16 less the background lane's 2; more \
         HTTP clients wait at the bulkhead), and in the same shape: the contention and A+B/B+C ceilings are barrier \
         rounds like the HTTP ones (every transaction of a round for one slot, started together, a fresh slot per \
         round), not a stream of random slots. Before each ceiling, PostgreSQL's log gives the statements of one \
         request (a fleet of its own with `log_statement = all`) and of one transaction of the script (the same \
         setting for that pgbench session); the last column counts them, and where their sequences differ the \
         ratio reads \"stale script\" and the run fails. The statements themselves: [statements.md](statements.md). Rates count successful commands, except the contention and race rows, which count every \
         answer (one 201 and nineteen 409s per round are all correct answers).\n"
    );
    summary_table(&mut md, &main_rows);
    md.push('\n');
    for r in &main_rows {
        let _ = writeln!(md, "- **{}**: {}; statuses {}", r.name, r.notes, r.run.statuses_text());
        if let Some(stale) = &r.stale {
            let _ = writeln!(md, "  - **{stale}**");
        }
    }
    let _ = writeln!(
        md,
        "\nA+B vs B+C: {} losers (409), p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms. Invariants broken after the main run: \
         {main_broken}.\n",
        losers.total(),
        losers.ms(0.5),
        losers.ms(0.99),
        losers.ms(1.0)
    );
    md.push_str("![latency](latency.svg)\n\n![throughput](throughput.svg)\n\n");
    let _ = writeln!(md, "### Where the CPU went\n");
    let _ = writeln!(
        md,
        "CPU time (user + system, from `/proc`) of every `postgres` process, every `yeyak` process and this load \
         generator while the HTTP load ran, as cores kept busy on average and as CPU milliseconds per request; and \
         of every `postgres` process while pgbench ran the ceiling (sampled every 100 ms so that its backends, which \
         exit with it, are counted; over pgbench's wall time, connections included). The machine has {cores} \
         cores. A unit is what the rate counts: a request, or for the chains a hand-off (cancel, read, accept: 3 \
         requests; pgbench's hand-off is the cancel and the accept). Since pgbench's rate is PostgreSQL's cores over \
         its CPU per transaction, HTTP / ceiling ≈ (a) × (b) (the meter and the rate time slightly different spans): (a) how much of the CPU PostgreSQL had under pgbench it \
         gets beside yeyak and the load generator, (b) how much more CPU PostgreSQL spends per unit over HTTP than \
         per pgbench transaction.\n"
    );
    md.push_str(
        "| scenario | PostgreSQL cores | yeyak cores | load client cores | PostgreSQL ms per unit | yeyak ms per unit | PostgreSQL cores under pgbench | PostgreSQL ms per pgbench transaction | PostgreSQL's cores, HTTP / pgbench (a) | PostgreSQL ms, pgbench / HTTP (b) | a × b | HTTP / ceiling |\n",
    );
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for r in main_rows.iter().filter(|r| r.cpu.is_some()) {
        let cpu = r.cpu.unwrap();
        let (pg, app, client) = cpu.cores();
        let n = r.run.total().max(1) as f64;
        let pg_ms = cpu.postgres * 1000.0 / n;
        let under = r.ceiling_pg_cores;
        let per_tx = under.zip(r.ceiling).map(|(c, t)| c * 1000.0 / t);
        let share = under.map(|u| pg / u);
        let work = per_tx.map(|t| t / pg_ms);
        let _ = writeln!(
            md,
            "| {} | {pg:.2} | {app:.2} | {client:.2} | {pg_ms:.2} | {:.2} | {} | {} | {} | {} | {} | {} |",
            r.name,
            cpu.yeyak * 1000.0 / n,
            fmt_opt(under, 2),
            fmt_opt(per_tx, 2),
            fmt_opt(share, 2),
            fmt_opt(work, 2),
            fmt_opt(share.zip(work).map(|(a, b)| a * b), 2),
            fmt_opt(r.ratio(), 2),
        );
    }
    md.push('\n');

    let _ = writeln!(md, "## Sweeper backlog drain\n");
    let _ = writeln!(
        md,
        "{} resources of capacity 4, all full of holds that expired a second ago and each with one waiter, appear in \
         one transaction while 8 clients keep taking holds elsewhere. Sweep interval 250 ms (default 2,000 ms), at \
         most 32 resources per tick, one transaction per resource, up to 4 resources at once. Drained in {:.1} s \
         ({:.0} resources/s); pgbench running the sweeper's per-resource transaction on 4 clients (as the sweeper \
         settles 4 at once), each resource once, without the 8 clients' load: {:.0} resources/s. Invariants broken \
         after the drain: {}.\n",
        drain.resources,
        drain.drain_secs,
        drain.row.rate,
        drain.row.ceiling.unwrap_or(f64::NAN),
        drain.broken
    );
    md.push_str("![drain](drain.svg)\n\n![drain load](drain-load.svg)\n\n");

    let _ = writeln!(md, "## Scale-out: processes on different ports over one PostgreSQL\n");
    let _ = writeln!(
        md,
        "48 clients spread round robin over the processes, 18 PostgreSQL connections in all (pool 18, 9, 6 per \
         process), {SECONDS} s of holds on distinct resources, \
         then {SECONDS} s of bookings on distinct slots. `sweeper leaders` is the sum of `yeyak_sweeper_leader` over \
         the processes (exactly one must lead); `invariants broken` is the consistency report after the load.\n"
    );
    md.push_str(
        "| processes | holds/s | vs 1 process | p99 ms | PostgreSQL / yeyak cores (holds) | bookings/s | vs 1 process | p99 ms | sweeper leaders | invariants broken |\n",
    );
    md.push_str("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    let (h1, b1) = (scale_rows[0].holds.rate, scale_rows[0].bookings.rate);
    for s in &scale_rows {
        let _ = writeln!(
            md,
            "| {} | {:.0} | {:.2} | {:.1} | {} | {:.0} | {:.2} | {:.1} | {} | {} |",
            s.processes,
            s.holds.rate,
            s.holds.rate / h1,
            s.holds.run.ms(0.99),
            s.holds.cpu.map(|c| format!("{:.2} / {:.2}", c.cores().0, c.cores().1)).unwrap_or_default(),
            s.bookings.rate,
            s.bookings.rate / b1,
            s.bookings.run.ms(0.99),
            s.leaders,
            s.broken
        );
    }
    md.push_str("\n![scale](scale.svg)\n\n");

    let _ = writeln!(md, "## Costs: one setting changed per fleet\n");
    let _ = writeln!(
        md,
        "Holds on distinct resources, {CLIENTS} clients, one process with pool 16, {SECONDS} s per fleet; every variant \
         twice, alternating (round 1 of all, then round 2), because this machine is noisy. What each change bought, \
         across runs too: `docs/PERFORMANCE.md`, \"What each change bought\".\n"
    );
    md.push_str(
        "| setting | holds/s (round 1, round 2) | mean vs defaults | p50 ms | p99 ms | statements per request |\n",
    );
    md.push_str("| --- | --- | --- | --- | --- | --- |\n");
    let mean = |rows: &[Row]| rows.iter().map(|r| r.rate).sum::<f64>() / rows.len() as f64;
    let base = mean(&costs[0].1);
    for (label, rows) in &costs {
        let _ = writeln!(
            md,
            "| {label} | {:.0}, {:.0} | {:.2} | {:.1} | {:.1} | {} |",
            rows[0].rate,
            rows[1].rate,
            mean(rows) / base,
            (rows[0].run.ms(0.5) + rows[1].run.ms(0.5)) / 2.0,
            (rows[0].run.ms(0.99) + rows[1].run.ms(0.99)) / 2.0,
            fmt_opt(rows[0].statements_per_request, 2)
        );
    }
    md.push_str("\n![costs](costs.svg)\n\n");
    md.push_str(
        "Pool size, 64 clients on one process:\n\n| pool | holds/s | p50 ms | p99 ms |\n| --- | --- | --- | --- |\n",
    );
    for (p, r) in &pools {
        let _ = writeln!(md, "| {p} | {:.0} | {:.1} | {:.1} |", r.rate, r.run.ms(0.5), r.run.ms(0.99));
    }
    md.push_str("\n![pool](pool.svg)\n\n![pool p99](pool-p99.svg)\n");

    let report = out.join("report.md");
    std::fs::write(&report, md).unwrap();
    println!("report: {}", report.display());
    if std::env::var("REPORT_PUBLISH").is_ok() && stale.is_empty() {
        publish(&std::fs::read_to_string(&report).unwrap(), &out);
    }
    assert!(
        stale.is_empty(),
        "pgbench scripts that no longer send what their request sends (no ratio printed):\n{}",
        stale.join("\n")
    );
}
