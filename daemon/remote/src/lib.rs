//! Streamable HTTP for `elicit`: remote MCP servers reached from a stdio
//! host, and a loopback endpoint for hosts configured with a URL.
//!
//! * [`bridge`] — `elicit proxy --url`: the client side of Streamable HTTP
//!   under a relay of `elicit-proxy`, so elicitations are brokered exactly
//!   as over stdio;
//! * [`serve`] — `elicit serve`: the server side, on loopback, in front of
//!   an upstream URL or a stdio command;
//! * [`auth`] — MCP authorization (OAuth 2.1 with PKCE), with the user's
//!   consent asked through the broker and tokens kept in the Secret
//!   Service.
//!
//! Every HTTP, SSE and OAuth format is parsed by a well-kept crate
//! (`reqwest`, `sse-stream`, `axum`, `oauth2`); this crate only decides.

pub mod auth;
pub mod bridge;
mod lines;
pub mod serve;
