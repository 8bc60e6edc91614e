//! How much a rule may spend before it counts as failed.

use std::time::Duration;

/// Resource limits for rules; a rule that exceeds one fails, and a failed
/// rule means "ask the human".
///
/// Operations are the deterministic limit; the times catch what operations
/// do not count (a slow native call, a starved machine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Rhai operations per rule call (and per file's top level at load).
    pub max_operations: u64,
    /// Wall time per rule call.
    pub rule_time: Duration,
    /// Wall time for all rules of one decision together; rules not yet run
    /// when it is spent are skipped and the human is asked.
    pub decision_time: Duration,
    /// Nested function calls.
    pub max_call_levels: usize,
    /// Bytes of one string.
    pub max_string_size: usize,
    /// Items of one array (nested arrays count in full).
    pub max_array_size: usize,
    /// Entries of one object map (nested maps count in full).
    pub max_map_size: usize,
    /// Nesting of expressions, at top level and inside functions.
    pub max_expr_depth: usize,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_operations: 1_000_000,
            rule_time: Duration::from_millis(500),
            decision_time: Duration::from_secs(2),
            max_call_levels: 32,
            // Above the largest request elicit-proto lets through, so that
            // no request is too big for the rules that judge it.
            max_string_size: 1024 * 1024,
            max_array_size: 100_000,
            max_map_size: 100_000,
            max_expr_depth: 64,
        }
    }
}
