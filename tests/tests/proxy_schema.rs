//! Choices the schema subset cannot honour never reach the user through
//! `elicit proxy`: a number or integer with `oneOf` or `enum`, a string
//! with `anyOf`. Each is refused at once with -32602 naming the keyword,
//! instead of being shown as a free field that lets `5` through.

use elicit_tests::mcp::{Host, fake};
use elicit_tests::{Daemon, PrivateBus, TestFrontend};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn choices_outside_the_subset_are_refused_by_the_proxy_with_the_keyword_named() {
    let bus = PrivateBus::start();
    let _daemon = Daemon::start(&bus, "").await;
    let mut frontend = TestFrontend::register(&bus, "script", 0).await;
    let mut host = Host::proxy(bus.address(), &[], &fake(&[]));
    let cases = [
        (
            json!({"type": "number", "oneOf": [{"const": 1, "title": "one"}]}),
            "oneOf",
        ),
        (json!({"type": "integer", "enum": [1, 2]}), "enum"),
        (
            json!({"type": "string", "anyOf": [{"const": "a", "title": "A"}]}),
            "anyOf",
        ),
    ];
    for (id, (property, keyword)) in cases.into_iter().enumerate() {
        let params =
            json!({"message": "Pick", "requestedSchema": {"type": "object", "properties": {"n": property}}});
        host.call(
            id as i64,
            "tools/call",
            json!({"name": "form", "arguments": {"params": params}}),
        )
        .await;
        let asked = format!("e-{id}");
        let got = loop {
            let m = host.recv().await;
            if m["method"] == "test/got" && m["params"]["line"]["id"] == asked.as_str() {
                break m;
            }
        };
        let error = &got["params"]["line"]["error"];
        assert_eq!(error["code"], -32602, "{got}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("`{keyword}`")) && message.contains("unsupported-keyword"),
            "{message}"
        );
    }
    assert!(frontend.is_idle(), "the user never saw them");
}
