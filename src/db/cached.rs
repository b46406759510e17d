//! Prepared-statement caching for the statements diesel will not cache.
//!
//! diesel keeps a per-connection cache of prepared statements, but refuses
//! every `UPDATE` built with its DSL and every `sql_query` (their SQL *could*
//! vary from call to call). Uncached, each such statement costs an extra round
//! trip (Parse/Describe, then Bind/Execute) and a parse on the server, on
//! every request: a hold sends three of them. Our call sites build the same
//! SQL every time, so [`Cached`] marks them cacheable; the cache key is then
//! the SQL text plus bind types (the wrapper has no static query id), so two
//! different statements can never share an entry.
//!
//! `YEYAK_DB_CACHE_STATEMENTS=false` turns this off process-wide, to measure
//! what it buys (docs/PERFORMANCE.md).

use std::sync::atomic::{AtomicBool, Ordering};

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::QueryResult;

static ENABLED: AtomicBool = AtomicBool::new(true);

/// Turns caching of [`Cached`] statements on or off for this process.
pub fn set_enabled(enabled: bool) {
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// A statement whose SQL is the same on every call, safe to prepare once per connection.
#[derive(Debug, Clone, Copy)]
pub struct Cached<Q>(pub Q);

impl<Q: QueryFragment<Pg>> QueryFragment<Pg> for Cached<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }

    fn is_safe_to_cache_prepared(&self, _backend: &Pg) -> QueryResult<bool> {
        Ok(ENABLED.load(Ordering::Relaxed))
    }
}

impl<Q> QueryId for Cached<Q> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<Q: Query> Query for Cached<Q> {
    type SqlType = Q::SqlType;
}

/// `.cached()` on any statement.
pub trait CacheExt: Sized {
    fn cached(self) -> Cached<Self> {
        Cached(self)
    }
}

impl<Q> CacheExt for Q {}
