//! What a request and its pgbench script really send, read from PostgreSQL's
//! own statement log at bench time, so that a ceiling cannot go stale: the
//! report compares the two sequences of statements and prints no ratio when
//! they differ.
//!
//! The server's side runs on a fleet of its own whose database logs every
//! statement (`ALTER DATABASE … SET log_statement = 'all'`, before its
//! processes connect); pgbench's side is one transaction of the scenario's own
//! script on the scenario's database, with `-c log_statement=all` for that one
//! session (`PGOPTIONS`). Both need a superuser (as `BENCH_PG` is by default)
//! and the log file on this machine (`BENCH_PG_LOG`, default
//! `/var/log/postgresql/postgresql-15-main.log`, `log_line_prefix` with `[%p]`
//! and `%u@%d`, Debian's default).

use std::io::{Read, Seek, SeekFrom};

/// The server's log file.
pub fn log_path() -> String {
    std::env::var("BENCH_PG_LOG").unwrap_or_else(|_| "/var/log/postgresql/postgresql-15-main.log".into())
}

/// One statement PostgreSQL logged.
#[derive(Clone, Debug)]
pub struct Logged {
    pub pid: String,
    pub sql: String,
}

/// A reader of the log from a position on.
pub struct PgLog {
    path: String,
    offset: u64,
}

impl PgLog {
    /// From the end of the log as it is now. Panics when the log cannot be
    /// read: without it no ceiling can be checked.
    pub fn from_now() -> PgLog {
        let path = log_path();
        let offset = std::fs::metadata(&path)
            .unwrap_or_else(|e| panic!("PostgreSQL's log {path} (set BENCH_PG_LOG): {e}"))
            .len();
        PgLog { path, offset }
    }

    /// Statements of database `db` logged since the last call (or since
    /// [`PgLog::from_now`]).
    pub fn since(&mut self, db: &str) -> Vec<Logged> {
        // PostgreSQL writes each entry with one write(); give it a moment.
        std::thread::sleep(std::time::Duration::from_millis(150));
        let mut file = std::fs::File::open(&self.path).expect("log opens");
        let len = file.metadata().unwrap().len();
        if len < self.offset {
            self.offset = 0; // rotated
        }
        file.seek(SeekFrom::Start(self.offset)).unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        self.offset += bytes.len() as u64;
        parse(&String::from_utf8_lossy(&bytes), db)
    }
}

/// Entries `… [pid] user@db LOG:  statement: SQL` and `… execute name: SQL`,
/// with their tab-indented continuation lines.
fn parse(text: &str, db: &str) -> Vec<Logged> {
    let mut out: Vec<Logged> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('\t') {
            if open {
                let last = out.last_mut().unwrap();
                last.sql.push('\n');
                last.sql.push_str(rest);
            }
            continue;
        }
        open = false;
        let Some((head, message)) = line.split_once(" LOG:  ") else { continue };
        let Some(pid) = head.split_once(" [").and_then(|(_, r)| r.split_once(']')).map(|(p, _)| p.to_string()) else {
            continue;
        };
        if !head.ends_with(&format!("@{db}")) {
            continue;
        }
        let sql = if let Some(sql) = message.strip_prefix("statement: ") {
            sql
        } else if let Some(rest) = message.strip_prefix("execute ") {
            match rest.split_once(": ") {
                Some((_, sql)) => sql,
                None => continue,
            }
        } else {
            continue;
        };
        out.push(Logged { pid, sql: sql.to_string() });
        open = true;
    }
    out
}

/// The transactions (`BEGIN` … `COMMIT`/`ROLLBACK`) in the order they began,
/// each as its statements; statements outside a transaction are left out.
pub fn transactions(logged: &[Logged]) -> Vec<Vec<String>> {
    let mut open: Vec<(String, Vec<String>)> = Vec::new();
    let mut done: Vec<(usize, Vec<String>)> = Vec::new();
    let mut started = 0;
    let mut order: Vec<(String, usize)> = Vec::new();
    for l in logged {
        // pgbench sends the script's `;`, diesel does not.
        let sql = l.sql.trim().trim_end_matches(';').trim_end();
        let verb = sql.to_ascii_uppercase();
        if verb == "BEGIN" {
            open.retain(|(p, _)| *p != l.pid);
            open.push((l.pid.clone(), vec![sql.to_string()]));
            order.retain(|(p, _)| *p != l.pid);
            order.push((l.pid.clone(), started));
            started += 1;
            continue;
        }
        let Some(i) = open.iter().position(|(p, _)| *p == l.pid) else { continue };
        open[i].1.push(sql.to_string());
        if verb == "COMMIT" || verb == "ROLLBACK" {
            let (pid, statements) = open.remove(i);
            let n = order.iter().find(|(p, _)| *p == pid).map(|(_, n)| *n).unwrap_or(usize::MAX);
            done.push((n, statements));
        }
    }
    done.sort_by_key(|(n, _)| *n);
    done.into_iter().map(|(_, t)| t).collect()
}

/// What a statement does, without its values, column lists or aliases: the
/// tables it writes (`INSERT t`, `UPDATE t`, `DELETE t`, in order, CTEs
/// included) or else the first table it reads, and the row lock it takes.
/// `WITH ins AS (INSERT INTO t …) SELECT count(*) FROM ins` and
/// `INSERT INTO "t" …` are the same shape, as pgbench needs the former to
/// branch on what the latter did.
pub fn shape(sql: &str) -> String {
    let lower = sql.to_ascii_lowercase().replace('"', "");
    let tokens: Vec<&str> =
        lower.split(|c: char| c.is_whitespace() || "(),;".contains(c)).filter(|t| !t.is_empty()).collect();
    match tokens.first().copied() {
        Some("begin") => return "BEGIN".into(),
        Some("commit") => return "COMMIT".into(),
        Some("savepoint") => return "SAVEPOINT".into(),
        Some("release") => return "RELEASE SAVEPOINT".into(),
        Some("rollback") if tokens.get(1) == Some(&"to") => return "ROLLBACK TO SAVEPOINT".into(),
        Some("rollback") => return "ROLLBACK".into(),
        _ => {}
    }
    let table = |t: &str| t.rsplit('.').next().unwrap_or(t).to_string();
    let mut writes = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let prev = if i > 0 { tokens[i - 1] } else { "" };
        match *t {
            "insert" if tokens.get(i + 1) == Some(&"into") => {
                if let Some(x) = tokens.get(i + 2) {
                    writes.push(format!("INSERT {}", table(x)));
                }
            }
            "update" if prev != "for" && prev != "do" && prev != "key" => {
                if let Some(x) = tokens.get(i + 1) {
                    writes.push(format!("UPDATE {}", table(x)));
                }
            }
            "delete" if tokens.get(i + 1) == Some(&"from") => {
                if let Some(x) = tokens.get(i + 2) {
                    writes.push(format!("DELETE {}", table(x)));
                }
            }
            _ => {}
        }
    }
    let lock = if lower.contains("for no key update") {
        " FOR NO KEY UPDATE"
    } else if lower.contains("for update") {
        " FOR UPDATE"
    } else if lower.contains("for key share") {
        " FOR KEY SHARE"
    } else if lower.contains("for share") {
        " FOR SHARE"
    } else {
        ""
    };
    if !writes.is_empty() {
        return format!("{}{lock}", writes.join(" + "));
    }
    let from = tokens.iter().position(|t| *t == "from").and_then(|i| tokens.get(i + 1)).map(|t| table(t));
    format!("SELECT {}{lock}", from.unwrap_or_else(|| "-".into()))
}

/// The shapes of the statements of some transactions.
pub fn shapes(transactions: &[Vec<String>]) -> Vec<Vec<String>> {
    transactions.iter().map(|t| t.iter().map(|s| shape(s)).collect()).collect()
}

/// `None` when the script sends what the server sends, transaction by
/// transaction and statement by statement; else what differs.
pub fn compare(server: &[Vec<String>], script: &[Vec<String>]) -> Option<String> {
    let (a, b) = (shapes(server), shapes(script));
    if a == b {
        return None;
    }
    let count = |t: &[Vec<String>]| t.iter().map(|x| x.len().to_string()).collect::<Vec<_>>().join(" + ");
    let mut diff = String::new();
    'outer: for (i, (x, y)) in a.iter().zip(b.iter()).enumerate() {
        for (j, (s, t)) in x.iter().zip(y.iter()).enumerate() {
            if s != t {
                diff = format!("transaction {}, statement {}: server `{s}`, script `{t}`", i + 1, j + 1);
                break 'outer;
            }
        }
        if x.len() != y.len() {
            let k = x.len().min(y.len());
            diff = format!(
                "transaction {}, statement {}: server `{}`, script `{}`",
                i + 1,
                k + 1,
                x.get(k).map(String::as_str).unwrap_or("(end)"),
                y.get(k).map(String::as_str).unwrap_or("(end)")
            );
            break;
        }
    }
    if diff.is_empty() {
        diff = format!("{} transactions on the server, {} in the script", a.len(), b.len());
    }
    Some(format!("stale script: server {} statements, script {}; {diff}", count(&a), count(&b)))
}

/// The normaliser on known statements (run at the start of the report: a
/// broken normaliser would call every script stale, or none).
pub fn check_shapes() {
    {
        assert_eq!(
            shape("INSERT INTO \"reservation_room\" (\"a\") VALUES ($1) ON CONFLICT DO NOTHING"),
            "INSERT reservation_room"
        );
        assert_eq!(
            shape("WITH ins AS (INSERT INTO reservation_room (a) VALUES (1) ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) AS won FROM ins"),
            "INSERT reservation_room"
        );
        assert_eq!(
            shape("SELECT r.code FROM room r WHERE r.code = ANY($1) FOR KEY SHARE OF r"),
            "SELECT room FOR KEY SHARE"
        );
        assert_eq!(
            shape("SELECT a FROM capacity_hold WHERE id = 1 LIMIT 1 FOR UPDATE"),
            "SELECT capacity_hold FOR UPDATE"
        );
        assert_eq!(shape("UPDATE \"idempotency_record\" SET \"state\" = $1"), "UPDATE idempotency_record");
        assert_eq!(shape("RELEASE SAVEPOINT diesel_savepoint_1"), "RELEASE SAVEPOINT");
    }
    // And the comparison: a statement missing, one of another shape, a
    // transaction missing are all stale; the same statements with other
    // values and column lists are not.
    let t = |v: &[&str]| vec![v.iter().map(|s| s.to_string()).collect::<Vec<_>>()];
    let server = t(&["BEGIN", "INSERT INTO \"booking_event\" (a) VALUES ($1)", "COMMIT"]);
    assert!(compare(&server, &t(&["BEGIN", "INSERT INTO booking_event (a, b) VALUES (1, 2)", "COMMIT"])).is_none());
    assert!(compare(&server, &t(&["BEGIN", "COMMIT"])).is_some());
    assert!(compare(&server, &t(&["BEGIN", "INSERT INTO notification_outbox (a) VALUES (1)", "COMMIT"])).is_some());
    assert!(compare(&server, &[]).is_some());
}

/// The transactions one request of each kind sends, captured from the log of
/// a fleet of its own (default settings but for a long sweep interval, so
/// that only the requests' transactions run).
pub struct ServerSample {
    pub kinds: Vec<(&'static str, Vec<Vec<String>>)>,
}

impl ServerSample {
    pub fn get(&self, kind: &str) -> &[Vec<String>] {
        &self.kinds.iter().find(|(k, _)| *k == kind).unwrap_or_else(|| panic!("sample of {kind}")).1
    }

    /// Every captured statement, for a reader (`target/bench/statements.md`).
    pub fn text(&self) -> String {
        let mut out = String::from("# Statements per request, captured from PostgreSQL's log at bench time\n\n");
        for (kind, txs) in &self.kinds {
            out.push_str(&format!("## {kind}\n\n"));
            for (i, t) in txs.iter().enumerate() {
                out.push_str(&format!("transaction {} ({} statements):\n\n```sql\n", i + 1, t.len()));
                for s in t {
                    out.push_str(&format!("{s};\n"));
                }
                out.push_str("```\n\n");
            }
        }
        out
    }
}
