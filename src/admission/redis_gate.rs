//! The Redis half of admission: a semaphore whose permits expire on their own
//! and a short in-flight lock per idempotency scope. Every call has a short
//! timeout and goes through the circuit breaker; any failure is reported as
//! `RedisUnavailable` and the caller falls back to PostgreSQL.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bb8_redis::bb8;
use bb8_redis::redis::aio::MultiplexedConnection;
use bb8_redis::redis::{self, RedisResult, Script};
use bb8_redis::RedisConnectionManager;
use sha2::{Digest, Sha256};

use super::breaker::Breaker;
use crate::idempotency::Scope;

/// Redis could not answer (error, timeout, or the breaker is open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedisUnavailable;

/// Settings of the Redis gate.
#[derive(Debug, Clone)]
pub struct RedisSettings {
    pub url: String,
    pub permits: u32,
    /// A permit's lifetime: a crashed holder's permit returns after this.
    pub permit_lease: Duration,
    /// Lifetime of an in-flight lock (a crashed holder's lock expires).
    pub inflight_ttl: Duration,
    /// Connect and command timeout.
    pub timeout: Duration,
    pub breaker_threshold: u32,
    pub breaker_open_for: Duration,
    /// Key prefix, so that tests and installations can share a server.
    pub prefix: String,
}

/// bb8-redis's manager, plus a way to tell bb8 that a connection failed:
/// a multiplexed connection to a Redis that went away never recovers, and
/// bb8-redis itself never reports one as broken.
struct TrackedManager(RedisConnectionManager);

struct Tracked {
    conn: MultiplexedConnection,
    broken: bool,
}

impl bb8::ManageConnection for TrackedManager {
    type Connection = Tracked;
    type Error = redis::RedisError;

    async fn connect(&self) -> Result<Tracked, redis::RedisError> {
        Ok(Tracked { conn: self.0.connect().await?, broken: false })
    }

    async fn is_valid(&self, conn: &mut Tracked) -> Result<(), redis::RedisError> {
        self.0.is_valid(&mut conn.conn).await
    }

    fn has_broken(&self, conn: &mut Tracked) -> bool {
        conn.broken
    }
}

struct Inner {
    pool: bb8::Pool<TrackedManager>,
    breaker: Breaker,
    settings: RedisSettings,
}

#[derive(Clone)]
pub struct RedisGate(Arc<Inner>);

/// Removes expired permits, then takes one if fewer than the limit are held.
/// Deadlines use the Redis server's clock, the same for every process.
const ACQUIRE: &str = r#"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return 1
end
return 0
"#;

/// Deletes a lock only if it still holds our token.
const RELEASE_LOCK: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

impl RedisGate {
    /// Builds the gate without connecting: the process boots with Redis away.
    pub fn new(settings: RedisSettings) -> Result<Self, String> {
        let manager = RedisConnectionManager::new(settings.url.as_str()).map_err(|e| format!("REDIS_URL: {e}"))?;
        let pool = bb8::Pool::builder()
            .max_size(16)
            .connection_timeout(settings.timeout)
            .test_on_check_out(false)
            .build_unchecked(TrackedManager(manager));
        let breaker = Breaker::new(settings.breaker_threshold, settings.breaker_open_for);
        Ok(RedisGate(Arc::new(Inner { pool, breaker, settings })))
    }

    fn key(&self, name: &str) -> String {
        format!("{}:{name}", self.0.settings.prefix)
    }

    /// Runs one Redis operation under the breaker and the timeout.
    async fn run<T, F, Fut>(&self, op: F) -> Result<T, RedisUnavailable>
    where
        F: FnOnce(MultiplexedConnection) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        if !self.0.breaker.allow() {
            return Err(RedisUnavailable);
        }
        let timeout = self.0.settings.timeout;
        let attempt = async {
            let mut pooled = tokio::time::timeout(timeout, self.0.pool.get()).await.ok()?.ok()?;
            match tokio::time::timeout(timeout, op(pooled.conn.clone())).await {
                Ok(Ok(value)) => Some(value),
                _ => {
                    // Never hand this connection out again.
                    pooled.broken = true;
                    None
                }
            }
        };
        match attempt.await {
            Some(value) => {
                self.0.breaker.success();
                Ok(value)
            }
            None => {
                self.0.breaker.failure();
                Err(RedisUnavailable)
            }
        }
    }

    /// One permit of `permits`, or `None` when all are held.
    pub async fn acquire_permit(&self) -> Result<Option<Permit>, RedisUnavailable> {
        let member = uuid::Uuid::new_v4().to_string();
        let key = self.key("permits");
        let s = &self.0.settings;
        let (limit, lease_ms) = (s.permits, s.permit_lease.as_millis() as u64);
        let m = member.clone();
        let got: i64 = self
            .run(|mut conn| async move {
                Script::new(ACQUIRE).key(key).arg(limit).arg(lease_ms).arg(m).invoke_async(&mut conn).await
            })
            .await?;
        Ok((got == 1).then(|| Permit { gate: Some(self.clone()), member }))
    }

    /// The in-flight lock of `scope`, or `None` when another request holds it.
    pub async fn lock_inflight(&self, scope: &Scope) -> Result<Option<InflightLock>, RedisUnavailable> {
        let key = self.key(&format!("inflight:{}", hex::encode(Sha256::digest(scope.lock_text().as_bytes()))));
        let token = uuid::Uuid::new_v4().to_string();
        let ttl_ms = self.0.settings.inflight_ttl.as_millis() as u64;
        let (k, t) = (key.clone(), token.clone());
        let set: Option<String> = self
            .run(|mut conn| async move {
                redis::cmd("SET").arg(k).arg(t).arg("NX").arg("PX").arg(ttl_ms).query_async(&mut conn).await
            })
            .await?;
        Ok(set.map(|_| InflightLock { gate: Some(self.clone()), key, token }))
    }

    /// PING within `within` (skipped while the breaker is open).
    pub async fn ping(&self, within: Duration) -> bool {
        if self.0.breaker.is_open() {
            return false;
        }
        let probe = self.run(|mut conn| async move { redis::cmd("PING").query_async::<String>(&mut conn).await });
        matches!(tokio::time::timeout(within, probe).await, Ok(Ok(_)))
    }

    /// Releases in the background (from `Drop`); a lost release only means the
    /// lease or TTL frees it later.
    fn release_later<F, Fut>(&self, op: F)
    where
        F: FnOnce(MultiplexedConnection) -> Fut + Send + 'static,
        Fut: Future<Output = RedisResult<i64>> + Send + 'static,
    {
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let gate = self.clone();
            handle.spawn(async move {
                let _ = gate.run(op).await;
            });
        }
    }
}

/// A held permit; released when dropped.
pub struct Permit {
    gate: Option<RedisGate>,
    member: String,
}

impl Permit {
    /// Drops the permit without releasing it, as a crashed process would.
    pub fn abandon(mut self) {
        self.gate = None;
    }

    /// Releases now (the normal path); `Drop` covers the others.
    pub async fn release(mut self) {
        if let Some(gate) = self.gate.take() {
            let (key, member) = (gate.key("permits"), std::mem::take(&mut self.member));
            let _: Result<i64, _> = gate
                .run(|mut conn| async move { redis::cmd("ZREM").arg(key).arg(member).query_async(&mut conn).await })
                .await;
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            let (key, member) = (gate.key("permits"), std::mem::take(&mut self.member));
            gate.release_later(move |mut conn| async move {
                redis::cmd("ZREM").arg(key).arg(member).query_async(&mut conn).await
            });
        }
    }
}

/// A held in-flight lock; released (if still ours) when dropped.
pub struct InflightLock {
    gate: Option<RedisGate>,
    key: String,
    token: String,
}

impl InflightLock {
    /// Releases now, so that a duplicate arriving after the response finds
    /// the stored record instead of this lock.
    pub async fn release(mut self) {
        if let Some(gate) = self.gate.take() {
            let (key, token) = (std::mem::take(&mut self.key), std::mem::take(&mut self.token));
            let _: Result<i64, _> =
                gate.run(|mut conn| async move {
                    Script::new(RELEASE_LOCK).key(key).arg(token).invoke_async(&mut conn).await
                })
                .await;
        }
    }
}

impl Drop for InflightLock {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            let (key, token) = (std::mem::take(&mut self.key), std::mem::take(&mut self.token));
            gate.release_later(move |mut conn| async move {
                Script::new(RELEASE_LOCK).key(key).arg(token).invoke_async(&mut conn).await
            });
        }
    }
}
