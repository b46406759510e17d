//! The Redis half of admission: a semaphore whose permits expire on their own
//! and a short in-flight lock per idempotency scope. Every call has a short
//! timeout and goes through the circuit breaker; any failure is reported as
//! `RedisUnavailable` and the caller falls back to PostgreSQL.

use std::future::Future;
use std::sync::{Arc, LazyLock};
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

/// One round trip to enter: the scope's in-flight lock (when a scope is
/// given; -1 if another request holds it), then a permit if fewer than the
/// limit are held (1), else the lock is given back (0). Expired permits are
/// removed first; deadlines use the Redis server's clock, the same for every
/// process.
static ENTER: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
if KEYS[2] and not redis.call('SET', KEYS[2], ARGV[4], 'NX', 'PX', tonumber(ARGV[5])) then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
  return 1
end
if KEYS[2] then redis.call('DEL', KEYS[2]) end
return 0
"#,
    )
});

/// One round trip to leave: the permit, and the lock only if it still holds
/// our token (it may have expired and been taken by a retry).
static LEAVE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r#"
redis.call('ZREM', KEYS[1], ARGV[1])
if KEYS[2] and redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return 1
"#,
    )
});

/// What [`RedisGate::enter`] found.
pub enum Entry {
    /// A permit (and the scope's lock) is ours until the pass is dropped or left.
    Admitted(Pass),
    /// Another request holds this scope's in-flight lock.
    InProgress,
    /// Every permit is held.
    NoPermit,
}

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

    /// Keys carry the prefix as a hash tag, so that every key of one script
    /// lives in the same Redis Cluster slot.
    fn key(&self, name: &str) -> String {
        format!("{{{}}}:{name}", self.0.settings.prefix)
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

    /// Takes a permit and, with a scope, the scope's in-flight lock, in one
    /// round trip.
    pub async fn enter(&self, scope: Option<&Scope>) -> Result<Entry, RedisUnavailable> {
        let s = &self.0.settings;
        let mut pass = Pass {
            gate: None,
            permits_key: self.key("permits"),
            member: uuid::Uuid::new_v4().to_string(),
            lock: scope.map(|scope| {
                let digest = hex::encode(Sha256::digest(scope.lock_text().as_bytes()));
                (self.key(&format!("inflight:{digest}")), uuid::Uuid::new_v4().to_string())
            }),
        };
        let mut call = ENTER.key(&pass.permits_key);
        if let Some((key, _)) = &pass.lock {
            call.key(key);
        }
        call.arg(s.permits).arg(s.permit_lease.as_millis() as u64).arg(&pass.member);
        if let Some((_, token)) = &pass.lock {
            call.arg(token).arg(s.inflight_ttl.as_millis() as u64);
        }
        let got: i64 = self.run(|mut conn| async move { call.invoke_async(&mut conn).await }).await?;
        Ok(match got {
            1 => {
                pass.gate = Some(self.clone());
                Entry::Admitted(pass)
            }
            -1 => Entry::InProgress,
            _ => Entry::NoPermit,
        })
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

/// A held permit and in-flight lock; released by [`Pass::leave`] or, on
/// every other path (error, panic), when dropped.
pub struct Pass {
    gate: Option<RedisGate>,
    permits_key: String,
    member: String,
    /// The lock's key and our token.
    lock: Option<(String, String)>,
}

impl Pass {
    /// Drops the pass without releasing it, as a crashed process would.
    pub fn abandon(mut self) {
        self.gate = None;
    }

    /// Releases now (the normal path), before the response is sent, so that a
    /// duplicate arriving after the response finds the stored record.
    pub async fn leave(mut self) {
        if let Some(gate) = self.gate.take() {
            let call = self.leave_call();
            let _: Result<i64, _> = gate.run(|mut conn| async move { call.invoke_async(&mut conn).await }).await;
        }
    }

    fn leave_call(&self) -> redis::ScriptInvocation<'static> {
        let mut call = LEAVE.key(&self.permits_key);
        if let Some((key, _)) = &self.lock {
            call.key(key);
        }
        call.arg(&self.member);
        if let Some((_, token)) = &self.lock {
            call.arg(token);
        }
        call
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        if let Some(gate) = self.gate.take() {
            let call = self.leave_call();
            gate.release_later(move |mut conn| async move { call.invoke_async(&mut conn).await });
        }
    }
}
