//! `elicit-tui`: the terminal front-end of elicitd.

fn main() {}
