//! HTTP load: closed-loop clients with a request and a time budget, and
//! barrier races. Client `c` always talks to process `c % processes`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::Barrier;

use crate::fleet::{Fleet, KEY};

/// One API command: path, owner, idempotency key, body.
pub struct Req {
    pub path: String,
    pub owner: String,
    pub key: String,
    pub body: Value,
}

impl Req {
    pub fn new(path: impl Into<String>, owner: impl Into<String>, key: impl Into<String>, body: Value) -> Req {
        Req { path: path.into(), owner: owner.into(), key: key.into(), body }
    }
}

/// Outcome of one request.
pub struct Answer {
    pub status: u16,
    pub latency: Duration,
    pub done_at: Instant,
    bytes: actix_web::web::Bytes,
}

impl Answer {
    /// The body as JSON, parsed only when a scenario needs it (parsing every
    /// answer would cost the load generator CPU the server needs).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or(Value::Null)
    }
}

pub async fn send(fleet: &Fleet, base: &str, req: &Req) -> Answer {
    let started = Instant::now();
    let res = fleet
        .client
        .post(format!("{base}{}", req.path))
        .bearer_auth(KEY)
        .header("X-Reservation-Owner", &req.owner)
        .header("Idempotency-Key", &req.key)
        .json(&req.body)
        .send()
        .await
        .expect("request sent");
    let status = res.status().as_u16();
    let bytes = res.bytes().await.unwrap_or_default();
    let latency = started.elapsed();
    Answer { status, latency, done_at: Instant::now(), bytes }
}

/// Every answer of a scenario.
#[derive(Default)]
pub struct Run {
    pub statuses: BTreeMap<u16, usize>,
    pub elapsed: Duration,
    /// Sorted.
    pub latencies: Vec<Duration>,
}

impl Run {
    pub fn count(&self, status: u16) -> usize {
        self.statuses.get(&status).copied().unwrap_or(0)
    }

    pub fn total(&self) -> usize {
        self.latencies.len()
    }

    /// Answers with `status` per second of the run.
    pub fn per_second(&self, status: u16) -> f64 {
        self.count(status) as f64 / self.elapsed.as_secs_f64()
    }

    /// All answers per second.
    pub fn answers_per_second(&self) -> f64 {
        self.total() as f64 / self.elapsed.as_secs_f64()
    }

    /// The `q` quantile (0..=1) in milliseconds.
    pub fn ms(&self, q: f64) -> f64 {
        quantile_ms(&self.latencies, q)
    }

    pub fn statuses_text(&self) -> String {
        self.statuses.iter().map(|(s, n)| format!("{n} × {s}")).collect::<Vec<_>>().join(", ")
    }

    pub fn absorb(&mut self, answers: impl IntoIterator<Item = (u16, Duration)>) {
        for (status, latency) in answers {
            *self.statuses.entry(status).or_default() += 1;
            self.latencies.push(latency);
        }
        self.latencies.sort();
    }
}

pub fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize].as_secs_f64() * 1000.0
}

/// `clients` tasks, each sending requests one after another until `secs`
/// seconds or `per_client` requests are used up; `target(client, n)` is
/// request `n` of `client`.
pub async fn drive<F>(fleet: &Arc<Fleet>, clients: usize, per_client: usize, secs: f64, target: F) -> Run
where
    F: Fn(usize, usize) -> Req + Send + Sync + 'static,
{
    let target = Arc::new(target);
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..clients)
        .map(|c| {
            let (fleet, target) = (fleet.clone(), target.clone());
            tokio::spawn(async move {
                let base = fleet.base(c).to_string();
                let mut out = Vec::new();
                for n in 0..per_client {
                    if Instant::now() >= deadline {
                        break;
                    }
                    let a = send(&fleet, &base, &target(c, n)).await;
                    out.push((a.status, a.latency));
                }
                out
            })
        })
        .collect();
    let mut run = Run::default();
    for t in tasks {
        run.absorb(t.await.unwrap());
    }
    run.elapsed = started.elapsed();
    run
}

/// Sends every request at the same instant (a barrier); answers in order.
/// Request `i` goes to process `i % processes`.
pub async fn race(fleet: &Arc<Fleet>, reqs: Vec<Req>) -> Vec<Answer> {
    let barrier = Arc::new(Barrier::new(reqs.len()));
    let tasks: Vec<_> = reqs
        .into_iter()
        .enumerate()
        .map(|(i, req)| {
            let (fleet, barrier) = (fleet.clone(), barrier.clone());
            tokio::spawn(async move {
                let base = fleet.base(i).to_string();
                barrier.wait().await;
                send(&fleet, &base, &req).await
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// GET as `owner`, as JSON.
pub async fn get(fleet: &Fleet, base: &str, path: &str, owner: &str) -> (u16, Value) {
    let res = fleet
        .client
        .get(format!("{base}{path}"))
        .bearer_auth(KEY)
        .header("X-Reservation-Owner", owner)
        .send()
        .await
        .expect("request sent");
    let status = res.status().as_u16();
    (status, res.json().await.unwrap_or(Value::Null))
}
