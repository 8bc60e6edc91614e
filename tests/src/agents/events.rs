//! JSON lines from a child process (the fake model's log of requests, a
//! scripted host's events), read in the background into a bounded queue.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStdout;
use tokio::sync::mpsc;

/// At most this many lines wait to be read: a test reads every one.
const QUEUE: usize = 4096;

/// The parsed lines of one process's standard output.
pub struct Events {
    lines: mpsc::Receiver<Value>,
    /// Every line read so far, for a failure's message.
    seen: Vec<Value>,
}

impl Events {
    /// Reads `stdout` until it ends; lines that are not JSON are kept as
    /// strings.
    pub fn read(stdout: ChildStdout) -> Events {
        let (sender, lines) = mpsc::channel(QUEUE);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(value).await.is_err() {
                    break;
                }
            }
        });
        Events {
            lines,
            seen: Vec::new(),
        }
    }

    /// The next line for which `wanted` holds, within `deadline`, skipping
    /// others; `None` when the process ended first.
    pub async fn next_where(
        &mut self,
        deadline: Duration,
        mut wanted: impl FnMut(&Value) -> bool,
    ) -> Option<Value> {
        let found = tokio::time::timeout(deadline, async {
            while let Some(line) = self.lines.recv().await {
                self.seen.push(line.clone());
                if wanted(&line) {
                    return Some(line);
                }
            }
            None
        })
        .await;
        found.unwrap_or(None)
    }

    /// Every line read so far, and those waiting to be read: all the
    /// process said, for a failure's message.
    pub fn seen(&mut self) -> &[Value] {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line);
        }
        &self.seen
    }
}
