//! A minimal MCP client over Streamable HTTP that authorizes through
//! `elicit_remote::auth`, for the conformance suite's `auth/*` scenarios
//! until `elicit proxy --url` runs them:
//!
//! ```text
//! conformance client --scenario auth/metadata-default \
//!     --command "cargo run -q -p elicit-remote --example auth_probe --"
//! ```
//!
//! It initializes, lists the tools and calls the first one, answering
//! every 401 or 403 through [`Auth`]. The suite's pre-registered client
//! comes from `MCP_CONFORMANCE_CONTEXT`. The authorization URL is fetched
//! unattended (the suite's server grants at once) unless `--broker` is
//! given, which asks the user through elicitd instead.

use std::process::ExitCode;

use elicit_remote::auth::{Auth, AuthConfig, Consent, Secret, StoreChoice};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};
use url::Url;

/// The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects.
const CIMD: &str = "https://conformance-test.local/client-metadata.json";

/// How many times one request is sent again after a challenge.
const RETRIES: usize = 5;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("auth_probe: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let broker = args.iter().any(|a| a == "--broker");
    let url = args.last().ok_or("usage: auth_probe [--broker] URL")?;
    let url = Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().map_err(|e| e.to_string())?;

    let mut config = AuthConfig {
        consent: if broker {
            Consent::Broker
        } else {
            Consent::Unattended
        },
        store: StoreChoice::Memory,
        ..AuthConfig::default()
    };
    config.identity.metadata_document = Url::parse(CIMD).ok();
    if let Ok(context) = std::env::var("MCP_CONFORMANCE_CONTEXT")
        && let Ok(context) = serde_json::from_str::<Value>(&context)
    {
        config.identity.client_id = context["client_id"].as_str().map(str::to_owned);
        config.identity.client_secret = context["client_secret"].as_str().map(Secret::new);
    }
    let auth = Auth::new(http.clone(), url.clone(), config);
    auth.set_host("auth_probe");
    let mut client = Client {
        http,
        url,
        auth,
        session: None,
        next_id: 0,
    };
    let init = client
        .request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "auth_probe", "version": "0.1.0"}
            }),
        )
        .await?;
    eprintln!("auth_probe: initialized with {}", init["result"]["serverInfo"]);
    client.notify("notifications/initialized").await?;
    let tools = client.request("tools/list", json!({})).await?;
    if let Some(name) = tools["result"]["tools"][0]["name"].as_str() {
        let called = client
            .request("tools/call", json!({"name": name, "arguments": {}}))
            .await?;
        eprintln!("auth_probe: {name} answered {}", called["result"]);
    }
    Ok(())
}

struct Client {
    http: reqwest::Client,
    url: Url,
    auth: Auth,
    session: Option<HeaderValue>,
    next_id: u64,
}

impl Client {
    async fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        let answer = self.post(&message).await?;
        if answer.get("error").is_some() {
            return Err(format!("{method} failed: {}", answer["error"]));
        }
        Ok(answer)
    }

    async fn notify(&mut self, method: &str) -> Result<(), String> {
        self.post(&json!({"jsonrpc": "2.0", "method": method}))
            .await
            .map(|_| ())
    }

    /// POSTs `message`, answering challenges, and returns the JSON-RPC
    /// response (`null` for a notification's 202).
    async fn post(&mut self, message: &Value) -> Result<Value, String> {
        for _ in 0..=RETRIES {
            let mut request = self
                .http
                .post(self.url.as_str())
                .header(ACCEPT, "application/json, text/event-stream")
                .header(CONTENT_TYPE, "application/json")
                .body(message.to_string());
            if let Some(session) = &self.session {
                request = request.header("mcp-session-id", session);
            }
            if let Some(authorization) = self.auth.header().await.map_err(|e| e.to_string())? {
                request = request.header(reqwest::header::AUTHORIZATION, authorization);
            }
            let response = request.send().await.map_err(|e| e.to_string())?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                eprintln!("auth_probe: {} answered {status}", message["method"]);
                self.auth
                    .challenged(status, response.headers())
                    .await
                    .map_err(|e| e.to_string())?;
                continue;
            }
            if !status.is_success() {
                return Err(format!("{} answered HTTP {status}", message["method"]));
            }
            if let Some(session) = response.headers().get("mcp-session-id") {
                self.session = Some(session.clone());
            }
            let text = response.text().await.map_err(|e| e.to_string())?;
            return Ok(parse(&text));
        }
        Err(format!(
            "{} still refused after {RETRIES} authorizations",
            message["method"]
        ))
    }
}

/// A JSON body, or the last `data:` of an SSE one.
fn parse(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .next_back()
        .unwrap_or(Value::Null)
}
