//! Where the CPU of a crowded figure goes: each process's CPU time over
//! the figure's rounds, a form (or round trip) at a time. On a CPU-bound
//! machine the 64-session figure is this sum spread over the cores, so
//! these rows say which process a ratio's excess is in.

use std::time::{Duration, Instant};

use crate::figure::Row;
use crate::procfs::cpu_time_of;

/// The storage thread's name (set in `daemon/src/store.rs`).
const STORAGE_THREAD: &str = "elicitd-storage";

/// The storage thread's row.
const STORAGE_PART: &str = "elicitd storage thread";

/// The processes a brokered form crosses, by pid.
#[derive(Clone, Copy)]
pub struct Processes {
    /// `elicitd`.
    pub daemon: u32,
    /// The private bus's `dbus-daemon`.
    pub bus: u32,
}

/// CPU time used so far, by part, and when it was read.
#[derive(Clone, Copy)]
pub struct Split {
    storage: Duration,
    daemon: Duration,
    bus: Duration,
    bench: Duration,
    read_at: Instant,
}

/// What a figure's rounds cost: each part's CPU a form, and how many
/// cores the parts kept busy on average while the rounds ran (the machine
/// is CPU-bound when that is its number of cores).
#[derive(Clone, Copy)]
pub struct Spent {
    each: Split,
    busy_cores: f64,
}

impl Split {
    /// Each part's CPU time up to now.
    pub fn now(processes: Processes) -> Split {
        Split {
            storage: cpu_time_of(processes.daemon, |name| name == STORAGE_THREAD),
            daemon: cpu_time_of(processes.daemon, |name| name != STORAGE_THREAD),
            bus: cpu_time_of(processes.bus, |_| true),
            bench: cpu_time_of(std::process::id(), |_| true),
            read_at: Instant::now(),
        }
    }

    /// What each part used since `before`, divided over `count` forms.
    pub fn per(self, before: Split, count: usize) -> Spent {
        let used = Split {
            storage: self.storage.saturating_sub(before.storage),
            daemon: self.daemon.saturating_sub(before.daemon),
            bus: self.bus.saturating_sub(before.bus),
            bench: self.bench.saturating_sub(before.bench),
            read_at: self.read_at,
        };
        let all: Duration = used.parts().iter().map(|(_, part)| *part).sum();
        let wall = self.read_at.duration_since(before.read_at).as_secs_f64();
        let busy_cores = if wall > 0.0 { all.as_secs_f64() / wall } else { 0.0 };
        let count = count.max(1) as u32;
        let each = Split {
            storage: used.storage / count,
            daemon: used.daemon / count,
            bus: used.bus / count,
            bench: used.bench / count,
            read_at: self.read_at,
        };
        Spent { each, busy_cores }
    }

    fn parts(&self) -> [(&'static str, Duration); 4] {
        [
            (STORAGE_PART, self.storage),
            ("elicitd other threads", self.daemon),
            ("bus daemon", self.bus),
            ("bench (clients, front-end)", self.bench),
        ]
    }
}

/// One row per part and one for the sum: a brokered form's CPU against
/// two round trips' (the floor's two crowded round trips) in the same part.
pub fn rows(forms: Spent, round_trips: Spent) -> Vec<Row> {
    let (form, round_trip) = (forms.each, round_trips.each);
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mut rows = Vec::new();
    let (mut form_sum, mut floor_sum) = (Duration::ZERO, Duration::ZERO);
    for ((part, used), (_, floor)) in form.parts().into_iter().zip(round_trip.parts()) {
        form_sum += used;
        floor_sum += floor * 2;
        // The floor writes nothing, so the storage thread has no floor of
        // its own: only the sum compares it.
        let floor = (part != STORAGE_PART).then(|| ("2 crowded RT, same part".to_owned(), micros(floor * 2)));
        rows.push(Row::Value {
            name: format!("64-session CPU a form: {part}"),
            unit: "µs",
            value: micros(used),
            floor,
            goal: String::new(),
        });
    }
    rows.push(Row::Value {
        name: "64-session CPU a form: all".into(),
        unit: "µs",
        value: micros(form_sum),
        floor: Some(("2 crowded RT, all".into(), micros(floor_sum))),
        goal: String::new(),
    });
    rows.push(Row::Value {
        name: "64-session cores busy".into(),
        unit: "",
        value: forms.busy_cores,
        floor: Some(("crowded RT".into(), round_trips.busy_cores)),
        goal: format!("of {} cores", cores()),
    });
    rows
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
