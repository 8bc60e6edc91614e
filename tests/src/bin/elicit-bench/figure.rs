//! A measured figure, its floor, and the table and JSON they print as.
//!
//! The JSON report is one object keyed by each figure's [`key`], a slug of
//! its name: two runs compare by key (`jq '.brokered_1_session.ratio_p50'`),
//! so a figure's name is its identity and is not reworded lightly.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Latencies (or any durations) of one figure.
pub struct Figure {
    /// What was measured.
    pub name: String,
    /// One duration per sample.
    pub samples: Vec<Duration>,
}

impl Figure {
    /// A figure from samples measured elsewhere.
    pub fn new(name: impl Into<String>, samples: Vec<Duration>) -> Figure {
        Figure {
            name: name.into(),
            samples,
        }
    }

    /// The `p` quantile (0.0–1.0), nearest rank.
    pub fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort();
        let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
        sorted.get(index).copied().unwrap_or_default()
    }

    /// The median.
    pub fn p50(&self) -> Duration {
        self.percentile(0.5)
    }
}

/// Times `run` `n` times after a few untimed warm-up rounds.
pub async fn time(name: impl Into<String>, n: usize, mut run: impl AsyncFnMut()) -> Figure {
    for _ in 0..(n / 10).max(3) {
        run().await;
    }
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        run().await;
        samples.push(started.elapsed());
    }
    Figure::new(name, samples)
}

/// Milliseconds, as the table prints them.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// How a figure compares with its floor.
pub enum Compare {
    /// The figure is itself a floor.
    Floor,
    /// Lower is better: ratio = p50 / floor.
    Latency {
        /// The floor's name.
        floor: String,
        /// The floor's value.
        value: Duration,
        /// The goal, as a ratio, if the issue sets one.
        goal: Option<f64>,
    },
}

/// One row of the report: a figure, or a plain value with a unit.
pub enum Row {
    /// A timed figure and its floor.
    Timed(Figure, Compare),
    /// A single measured value (MB/s, MB, wake-ups/s …) against its floor
    /// value in the same unit; ratio = value / floor.
    Value {
        /// What was measured.
        name: String,
        /// Its unit.
        unit: &'static str,
        /// The measurement.
        value: f64,
        /// The floor's name and value, if any.
        floor: Option<(String, f64)>,
        /// The goal, in words.
        goal: String,
    },
}

impl Row {
    /// A figure compared with a floor latency; `goal` is the highest
    /// acceptable ratio of p50 to it.
    pub fn latency(figure: Figure, floor: &str, value: Duration, goal: Option<f64>) -> Row {
        Row::Timed(
            figure,
            Compare::Latency {
                floor: floor.to_owned(),
                value,
                goal,
            },
        )
    }
}

/// A figure's key in the JSON report: its name in lower case, every run of
/// other characters than ASCII letters and digits one `_` (`×` is `x`).
pub fn key(name: &str) -> String {
    let mut key = String::with_capacity(name.len());
    for c in name.chars().map(|c| if c == '×' { 'x' } else { c }) {
        if c.is_ascii_alphanumeric() {
            key.push(c.to_ascii_lowercase());
        } else if !key.is_empty() && !key.ends_with('_') {
            key.push('_');
        }
    }
    key.trim_end_matches('_').to_owned()
}

/// Prints the table and returns the JSON report, keyed by [`key`]; two
/// figures of one key would make the report ambiguous, so that panics.
pub fn report(rows: &[Row]) -> Value {
    println!(
        "{:<44} {:>10} {:>10}   {:<26} {:>10} {:>7}  goal",
        "figure", "p50", "p99", "floor", "floor", "ratio"
    );
    let mut out = serde_json::Map::new();
    let mut push = |name: &str, entry: Value| {
        let previous = out.insert(key(name), entry);
        assert!(previous.is_none(), "two figures have the key {:?}", key(name));
    };
    for row in rows {
        match row {
            Row::Timed(figure, compare) => {
                let (p50, p99) = (figure.p50(), figure.percentile(0.99));
                let (floor_name, floor_ms, ratio, goal) = match compare {
                    Compare::Floor => ("(floor)".to_owned(), ms(p50), 1.0, None),
                    Compare::Latency { floor, value, goal } => (
                        floor.clone(),
                        ms(*value),
                        ms(p50) / ms(*value).max(f64::EPSILON),
                        *goal,
                    ),
                };
                let verdict = goal.map(|g| verdict(ratio <= g, &format!("≤ {g}×")));
                println!(
                    "{:<44} {:>7.3} ms {:>7.3} ms   {:<26} {:>7.3} ms {:>7.2}  {}",
                    figure.name,
                    ms(p50),
                    ms(p99),
                    floor_name,
                    floor_ms,
                    ratio,
                    verdict.clone().unwrap_or_default()
                );
                push(
                    &figure.name,
                    json!({
                        "figure": figure.name, "samples": figure.samples.len(),
                        "p50_ms": ms(p50), "p99_ms": ms(p99),
                        "floor": floor_name, "floor_ms": floor_ms, "ratio_p50": ratio,
                        "goal_ratio": goal, "goal_met": goal.map(|g| ratio <= g),
                    }),
                );
            }
            Row::Value {
                name,
                unit,
                value,
                floor,
                goal,
            } => {
                let (floor_name, floor_value, ratio) = match floor {
                    // A floor of 0 (an idle bus daemon that never woke)
                    // gives no ratio.
                    Some((n, v)) if *v > 0.0 => (n.clone(), *v, value / v),
                    Some((n, v)) => (n.clone(), *v, f64::NAN),
                    None => ("(none)".to_owned(), 0.0, 0.0),
                };
                println!(
                    "{:<44} {:>7.2} {:<2} {:>10}   {:<26} {:>10.2} {:>7.2}  {}",
                    name, value, unit, "", floor_name, floor_value, ratio, goal
                );
                push(
                    name,
                    json!({
                        "figure": name, "unit": unit, "value": value,
                        "floor": floor_name, "floor_value": floor_value, "ratio": ratio, "goal": goal,
                    }),
                );
            }
        }
    }
    Value::Object(out)
}

/// "ok" or "MISSED" beside a goal.
pub fn verdict(met: bool, goal: &str) -> String {
    format!("{} {goal}", if met { "ok" } else { "MISSED" })
}

#[cfg(test)]
mod tests {
    use super::key;

    #[test]
    fn keys_are_slugs_of_names() {
        assert_eq!(key("brokered, 1 session"), "brokered_1_session");
        assert_eq!(
            key("enqueue 1000 sessions × 10 forms"),
            "enqueue_1000_sessions_x_10_forms"
        );
        assert_eq!(
            key("brokered, 1 session (sync = process-crash)"),
            "brokered_1_session_sync_process_crash"
        );
        assert_eq!(
            key("floor: D-Bus round trip (Peer.Ping)"),
            "floor_d_bus_round_trip_peer_ping"
        );
    }
}
