//! The elicitd broker and the `elicit` command's building blocks.
