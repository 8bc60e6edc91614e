//! Where `Elicit` requests are parsed: off the tokio workers, one at a
//! time per connection, and a bounded number at once in all.
//!
//! A request's check costs what its sender chose (patterns to compile,
//! defaults to match: milliseconds a form). Done on a tokio worker, as it
//! once was, four connections sending such forms in a loop held both
//! workers of a two-core machine, and a `Pending` read waited seconds
//! behind them. Here a parse runs on the blocking pool, at most
//! [`parallel`] at once, leaving a core for the driver and every other
//! call; and a connection waits for its own previous parse before it
//! joins the queue, so with the queue fair (tokio's semaphore is FIFO) a
//! flooding connection delays another's `Elicit` by at most one parse per
//! flooding connection, however many calls it sends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use elicit_proto::{Elicitation, Error, Limits};
use tokio::sync::Semaphore;

use crate::store::RequestText;

/// Parses running at once: all cores but one, and at least one.
fn parallel() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get().saturating_sub(1))
        .max(1)
}

/// The gate every `Elicit` parse passes.
#[derive(Debug)]
pub struct Parses {
    /// Parses running at once, across all connections.
    all: Arc<Semaphore>,
    /// One parse at a time per connection, by unique bus name.
    per_caller: Mutex<HashMap<String, Arc<Semaphore>>>,
}

impl Default for Parses {
    fn default() -> Self {
        Parses {
            all: Arc::new(Semaphore::new(parallel())),
            per_caller: Mutex::default(),
        }
    }
}

impl Parses {
    /// Checks `text` against `limits` for connection `caller`, in turn.
    pub async fn parse(
        &self,
        caller: &str,
        text: &str,
        limits: &Limits,
    ) -> Result<(Elicitation, RequestText), Error> {
        let own = self
            .per_caller
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(caller.to_owned())
            .or_insert_with(|| Arc::new(Semaphore::new(1)))
            .clone();
        // Neither semaphore is ever closed.
        let _own = own.acquire_owned().await.map_err(|_| stopping())?;
        let _slot = self.all.clone().acquire_owned().await.map_err(|_| stopping())?;
        let (text, limits) = (text.to_owned(), limits.clone());
        tokio::task::spawn_blocking(move || {
            let request = Elicitation::parse_str(&text, &limits)?;
            let text = RequestText::new(&text).map_err(|e| Error::BadArgument(e.to_string()))?;
            Ok((request, text))
        })
        .await
        .map_err(|_| stopping())?
    }

    /// Connection `caller` left the bus.
    pub fn forget(&self, caller: &str) {
        self.per_caller
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(caller);
    }
}

fn stopping() -> Error {
    Error::Stopping("the parse of the request was cut short as the daemon ended".into())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const FORM: &str = r#"{"message":"m","requestedSchema":{"type":"object","properties":{"a":{"type":"string","pattern":"^.{1,150}$"}}}}"#;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_connection_parses_one_request_at_a_time() {
        let parses = Arc::new(Parses::default());
        let mut calls = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let parses = parses.clone();
            calls.spawn(async move { parses.parse(":1.1", FORM, &Limits::default()).await.map(|_| ()) });
        }
        // While they run, the connection's gate is taken by one of them
        // and the rest wait on it, not on the shared queue.
        while let Some(done) = tokio::time::timeout(Duration::from_secs(60), calls.join_next())
            .await
            .expect("parses end")
        {
            done.expect("joined").expect("parsed");
        }
        parses.forget(":1.1");
        assert!(parses.per_caller.lock().expect("lock").is_empty());
    }

    #[tokio::test]
    async fn refusals_name_what_is_wrong() {
        let parses = Parses::default();
        let error = parses
            .parse(":1.1", r#"{"message": 1}"#, &Limits::default())
            .await
            .expect_err("bad");
        assert!(matches!(error, Error::InvalidRequest(_)), "{error}");
    }
}
