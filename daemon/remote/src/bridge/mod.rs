//! `elicit proxy --url` (being written).
