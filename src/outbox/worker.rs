//! The delivery worker: claim due rows with a lease, send, settle. Every
//! process runs one; `SKIP LOCKED` and the lease let them share the work.
//! A pass sends its mail as wide as the SMTP pool and settles it in one
//! transaction (set-based for what was accepted), webhooks one after
//! another, each settled at once; [`DeliveryWorker::drain`] runs passes back to back while they
//! come back full, so a burst goes at the pool's pace (SPEC §18).

use std::sync::Arc;

use chrono::Duration;
use scoped_futures::ScopedFutureExt;
use serde::Serialize;
use uuid::Uuid;

use super::provider::{Provider, Providers, SendOutcome};
use super::store::{self, Claimed};
use super::RetryPolicy;
use crate::admission::{Bulkhead, Lane};
use crate::clock::Clock;
use crate::db::{self, DbError, Pool};

/// How long a claim keeps other workers away (SPEC §6).
pub const CLAIM_LEASE_SECONDS: i64 = 30;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeliverySummary {
    pub claimed: usize,
    pub delivered: usize,
    pub retried: usize,
    pub exhausted: usize,
    /// Settlements refused because another worker took the row over.
    pub stale: usize,
}

#[derive(Clone)]
pub struct DeliveryWorker {
    pub id: Uuid,
    pool: Pool,
    clock: Arc<dyn Clock>,
    providers: Providers,
    policy: RetryPolicy,
    bulkhead: Option<Arc<Bulkhead>>,
    metrics: Arc<crate::metrics::Metrics>,
    /// Where retried transactions are counted (the process's pool statistics).
    stats: Arc<db::DbStats>,
}

impl DeliveryWorker {
    pub fn new(pool: Pool, clock: Arc<dyn Clock>, provider: Provider) -> Self {
        DeliveryWorker {
            id: Uuid::new_v4(),
            pool,
            clock,
            providers: Providers { webhook: provider, mail: None },
            policy: RetryPolicy::default(),
            bulkhead: None,
            metrics: Arc::default(),
            stats: Arc::default(),
        }
    }

    /// Counts its retried transactions in the process's statistics.
    pub fn with_stats(mut self, stats: Arc<db::DbStats>) -> Self {
        self.stats = stats;
        self
    }

    /// Delivers `mail` rows with this provider (SMTP).
    pub fn with_mail(mut self, mail: Provider) -> Self {
        self.providers.mail = Some(mail);
        self
    }

    /// Records delivery latency in the application's metrics.
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Does its database work in the bulkhead's background lane.
    pub fn with_bulkhead(mut self, bulkhead: Arc<Bulkhead>) -> Self {
        self.bulkhead = Some(bulkhead);
        self
    }

    /// Claims up to `limit` due deliveries (without sending them).
    pub async fn claim(&self, limit: i64) -> Result<Vec<Claimed>, DbError> {
        let mut conn = self.pool.get().await?;
        Ok(store::claim(&mut conn, self.id, self.clock.now(), Duration::seconds(CLAIM_LEASE_SECONDS), limit).await?)
    }

    /// Sends one claimed delivery and settles it.
    pub async fn deliver(&self, n: &Claimed, summary: &mut DeliverySummary) -> Result<(), DbError> {
        summary.count(self.deliver_one(n).await?);
        Ok(())
    }

    /// Hands one delivery to its channel's provider.
    async fn send(&self, n: &Claimed) -> SendOutcome {
        match self.providers.send_to(&n.channel) {
            Some(provider) => provider.send(n).await,
            None => {
                SendOutcome::Retryable(format!("no provider for the {} channel (is YEYAK_SMTP_URL set?)", n.channel))
            }
        }
    }

    async fn send_keyed<'a>(&'a self, n: &'a Claimed) -> (&'a Claimed, SendOutcome) {
        (n, self.send(n).await)
    }

    /// Settles what a pass sent, in one transaction: the accepted ones with
    /// two set-based statements, each failure on its own (few).
    async fn settle_all(&self, sent: &[(&Claimed, SendOutcome)]) -> Result<Vec<Settled>, DbError> {
        if sent.is_empty() {
            return Ok(Vec::new());
        }
        let now = self.clock.now();
        // Re-run from the start on a deadlock, like every transaction of a command.
        let settled = db::transaction(&self.pool, &self.stats, |conn| {
            async move {
                let accepted: Vec<&Claimed> = sent
                    .iter()
                    .filter(|(_, o)| matches!(o, SendOutcome::Accepted | SendOutcome::Duplicate))
                    .map(|(n, _)| *n)
                    .collect();
                let applied = store::mark_delivered_all(conn, &accepted, self.id, now).await?;
                let mut out = Vec::with_capacity(sent.len());
                let mut attempts = Vec::with_capacity(accepted.len());
                for (n, outcome) in sent {
                    let recorded = match outcome {
                        SendOutcome::Accepted => "ACCEPTED",
                        SendOutcome::Duplicate => "DUPLICATE",
                        failed => {
                            out.push(match self.settle(conn, n, failed, now).await? {
                                (_, false) => Settled::Stale,
                                ("EXHAUSTED", true) => Settled::Exhausted,
                                _ => Settled::Retried,
                            });
                            continue;
                        }
                    };
                    let held = applied.iter().any(|(id, channel)| *id == n.delivery_id && *channel == n.channel);
                    attempts.push((*n, if held { recorded } else { "STALE" }));
                    out.push(if held { Settled::Delivered } else { Settled::Stale });
                }
                store::record_attempts(conn, &attempts, self.id, now).await?;
                Ok::<_, DbError>(out)
            }
            .scope_boxed()
        })
        .await?;
        // Counted once the transaction held, not once per attempt of it.
        for ((n, _), settled) in sent.iter().zip(&settled) {
            if *settled == Settled::Delivered {
                let waited = (now - n.created_at).num_milliseconds().max(0) as f64 / 1000.0;
                self.metrics.outbox_delivery.observe(waited);
            }
        }
        Ok(settled)
    }

    /// Sends and settles one delivery; says how it was settled.
    async fn deliver_one(&self, n: &Claimed) -> Result<Settled, DbError> {
        let outcome = self.send(n).await;
        let now = self.clock.now();
        let outcome = &outcome;
        let (label, applied) =
            db::transaction(&self.pool, &self.stats, |conn| self.settle(conn, n, outcome, now).scope_boxed()).await?;
        Ok(match (label, applied) {
            (_, false) => Settled::Stale,
            ("DELIVERED", true) => {
                let waited = (now - n.created_at).num_milliseconds().max(0) as f64 / 1000.0;
                self.metrics.outbox_delivery.observe(waited);
                Settled::Delivered
            }
            ("EXHAUSTED", true) => Settled::Exhausted,
            _ => Settled::Retried,
        })
    }

    async fn settle(
        &self,
        conn: &mut db::Conn,
        n: &Claimed,
        outcome: &SendOutcome,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(&'static str, bool), DbError> {
        let (recorded, detail) = match outcome {
            SendOutcome::Accepted => ("ACCEPTED", None),
            SendOutcome::Duplicate => ("DUPLICATE", None),
            SendOutcome::Retryable(e) => ("RETRYABLE", Some(e.as_str())),
            SendOutcome::Permanent(e) => ("PERMANENT", Some(e.as_str())),
        };
        let result = match outcome {
            SendOutcome::Accepted | SendOutcome::Duplicate => {
                ("DELIVERED", store::mark_delivered(conn, &n.delivery_id, &n.channel, self.id, now).await?)
            }
            SendOutcome::Retryable(e) | SendOutcome::Permanent(e) => {
                let permanent = matches!(outcome, SendOutcome::Permanent(_));
                let exhausted = permanent || n.attempt_count >= self.policy.max_attempts;
                let next = (!exhausted).then(|| now + self.policy.delay(n.attempt_count));
                let applied = store::mark_failed(conn, &n.delivery_id, &n.channel, self.id, next, e).await?;
                (if exhausted { "EXHAUSTED" } else { "PENDING" }, applied)
            }
        };
        let recorded = if result.1 { recorded } else { "STALE" };
        store::record_attempt(conn, n, self.id, now, recorded, detail).await?;
        Ok(result)
    }

    /// How many mail messages one pass sends at once: the SMTP pool's size.
    pub fn width(&self) -> usize {
        self.providers.mail.as_ref().map_or(1, Provider::concurrency)
    }

    /// One pass: claim, send and settle up to `limit` deliveries — mail as
    /// wide as the pool, webhooks one at a time, both at once.
    pub async fn run_once(&self, limit: i64) -> Result<DeliverySummary, DbError> {
        use futures_util::StreamExt;
        let _lane = match &self.bulkhead {
            Some(b) => b.enter(Lane::Background).await,
            None => None,
        };
        let claimed = self.claim(limit).await?;
        let mut summary = DeliverySummary { claimed: claimed.len(), ..Default::default() };
        let (mail, other): (Vec<&Claimed>, Vec<&Claimed>) = claimed.iter().partition(|n| n.channel == "mail");
        let width = self.width();
        let mail = async {
            let mut queue = mail.into_iter();
            let mut running = futures_util::stream::FuturesUnordered::new();
            for n in queue.by_ref().take(width) {
                running.push(self.send_keyed(n));
            }
            let mut sent = Vec::new();
            while let Some(done) = running.next().await {
                sent.push(done);
                if let Some(n) = queue.next() {
                    running.push(self.send_keyed(n));
                }
            }
            self.settle_all(&sent).await
        };
        let other = async {
            let mut settled = Vec::new();
            for n in other {
                settled.push(self.deliver_one(n).await?);
            }
            Ok::<_, DbError>(settled)
        };
        let (mail, other) = futures_util::future::join(mail, other).await;
        for settled in mail?.into_iter().chain(other?) {
            summary.count(settled);
        }
        Ok(summary)
    }

    /// Passes back to back while they come back full (at most `passes`):
    /// what the background loop runs on each poll.
    pub async fn drain(&self, limit: i64, passes: usize) -> Result<DeliverySummary, DbError> {
        let mut total = DeliverySummary::default();
        for _ in 0..passes.max(1) {
            let s = self.run_once(limit).await?;
            let full = s.claimed as i64 >= limit;
            total.add(&s);
            if !full {
                break;
            }
        }
        Ok(total)
    }
}

/// How one delivery was settled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Settled {
    Delivered,
    Retried,
    Exhausted,
    /// Another worker took the row over.
    Stale,
}

impl DeliverySummary {
    fn count(&mut self, s: Settled) {
        match s {
            Settled::Delivered => self.delivered += 1,
            Settled::Retried => self.retried += 1,
            Settled::Exhausted => self.exhausted += 1,
            Settled::Stale => self.stale += 1,
        }
    }

    fn add(&mut self, o: &DeliverySummary) {
        self.claimed += o.claimed;
        self.delivered += o.delivered;
        self.retried += o.retried;
        self.exhausted += o.exhausted;
        self.stale += o.stale;
    }
}
