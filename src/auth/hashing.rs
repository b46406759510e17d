//! Password hashing under bounds (SPEC §13, §20). Argon2 runs in a few
//! slots off the async threads with no database connection held; callers
//! wait for a slot in a bounded queue and, beyond it, are told at once
//! (`Busy`, a 503). Sign-in attempts also take turns per address and per
//! username on this process, so a burst of parallel guesses is judged one
//! after another against the throttle instead of all against the count
//! from before the burst.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use tokio::sync::{OwnedMutexGuard, Semaphore};

/// Concurrent Argon2 computations per process: the machine's cores, not the
/// pool, bound sign-in work.
pub const HASHING_SLOTS: usize = 2;

/// Callers that may wait for a slot; one more is answered `Busy` at once.
pub const HASHING_QUEUE: usize = 32;

/// Argon2id with a random salt, as a PHC string. CPU-heavy: call it off the
/// async threads (`tokio::task::spawn_blocking`).
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default().hash_password(password.as_bytes(), &salt).expect("argon2 hashes any input").to_string()
}

pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
}

/// A hash of nothing in particular, verified against when the user does not
/// exist so that "unknown user" and "wrong password" take the same time.
static DUMMY_HASH: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| hash_password("not-a-password"));

/// The queue is full: answer 503 now rather than wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busy;

pub struct HashingGate {
    slots: Arc<Semaphore>,
    /// Callers holding a [`Place`] (hashing or waiting to).
    places: AtomicUsize,
    capacity: usize,
    /// One sign-in attempt at a time per key (`address:…`, `username:…`).
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl HashingGate {
    pub fn new(slots: usize, queue: usize) -> Self {
        HashingGate {
            slots: Arc::new(Semaphore::new(slots)),
            places: AtomicUsize::new(0),
            capacity: slots + queue,
            turns: Mutex::default(),
        }
    }

    /// A place in the queue, or `Busy` at once when it is full.
    pub fn enter(&self) -> Result<Place<'_>, Busy> {
        self.places
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < self.capacity).then_some(n + 1))
            .map(|_| Place { gate: self })
            .map_err(|_| Busy)
    }

    /// Hashes a new password (admin forms, password changes).
    pub async fn hash(&self, password: &str) -> Result<String, Busy> {
        Ok(self.enter()?.hash(password).await)
    }

    /// Waits until no other attempt on this process holds any of `keys`
    /// (always taken in the order given: address first, then username).
    /// An attempt dropped while it waits (the client went away) still
    /// forgets its keys: the partly built turn cleans up. Needs no place in
    /// the queue: an app password's attempt hashes nothing.
    pub async fn turn(&self, keys: Vec<String>) -> Turn<'_> {
        let mut turn = Turn { gate: self, keys: Vec::with_capacity(keys.len()), guards: Vec::new() };
        for key in keys {
            let lock = {
                let mut turns = self.turns.lock().expect("turn map");
                turns.entry(key.clone()).or_default().clone()
            };
            turn.keys.push(key);
            turn.guards.push(lock.lock_owned().await);
        }
        turn
    }
}

/// A caller's place in the queue; leaving it (drop) frees it.
pub struct Place<'a> {
    gate: &'a HashingGate,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.gate.places.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Place<'_> {
    /// The gate's [`HashingGate::turn`], for a caller holding a place.
    pub async fn turn(&self, keys: Vec<String>) -> Turn<'_> {
        self.gate.turn(keys).await
    }

    pub async fn hash(&self, password: &str) -> String {
        let _slot = self.gate.slots.acquire().await.expect("the hashing gate is never closed");
        let password = password.to_owned();
        tokio::task::spawn_blocking(move || hash_password(&password)).await.expect("hashing task")
    }

    /// Verifies in a slot; `None` (no such person) verifies against a dummy
    /// hash, so both answers take the same time.
    pub async fn verify(&self, hash: Option<String>, password: &str) -> bool {
        let _slot = self.gate.slots.acquire().await.expect("the hashing gate is never closed");
        let known = hash.is_some();
        let hash = hash.unwrap_or_else(|| DUMMY_HASH.clone());
        let password = password.to_owned();
        let ok = tokio::task::spawn_blocking(move || verify_password(&hash, &password)).await.unwrap_or(false);
        known && ok
    }
}

/// Held while one attempt is judged; others on the same keys wait.
pub struct Turn<'a> {
    gate: &'a HashingGate,
    keys: Vec<String>,
    guards: Vec<OwnedMutexGuard<()>>,
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.guards.clear();
        let mut turns = self.gate.turns.lock().expect("turn map");
        for key in &self.keys {
            // Only the map holds it: nobody waits, so the key is forgotten.
            if turns.get(key).is_some_and(|lock| Arc::strong_count(lock) == 1) {
                turns.remove(key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_round_trip() {
        let h = hash_password("비밀번호-123");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password(&h, "비밀번호-123"));
        assert!(!verify_password(&h, "wrong"));
        assert!(!verify_password("garbage", "x"));
    }

    #[tokio::test]
    async fn the_queue_is_bounded_and_turns_are_forgotten() {
        let gate = HashingGate::new(1, 1);
        let (a, b) = (gate.enter().unwrap(), gate.enter().unwrap());
        assert!(gate.enter().is_err(), "beyond the queue: busy at once");
        drop(a);
        let c = gate.enter().expect("a place came free");
        let turn = b.turn(vec!["address:1".into(), "username:kim".into()]).await;
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(20), c.turn(vec!["username:kim".into()]));
        assert!(waiting.await.is_err(), "the same username waits its turn");
        drop(turn);
        drop(c.turn(vec!["username:kim".into()]).await);
        assert!(gate.turns.lock().unwrap().is_empty());
    }
}
