//! `elicit serve` (being written).
