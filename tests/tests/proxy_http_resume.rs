//! `elicit proxy --url` when the network or the server fails under it: an
//! event stream dropped mid-form is resumed with `Last-Event-ID` and the
//! answer still arrives; a server that restarted (and so forgot the
//! session) gets a new session from the host's own `initialize`, and the
//! host's next request goes through as if nothing happened; a stream lost
//! for good withdraws the form it carried.

use elicit_tests::http::{Cutter, proxy_url, python_http_server_on};
use elicit_tests::mcp::{book_through, system, text_of};
use elicit_tests::{eventually, list_forms};
use serde_json::json;

fn book(id: i64) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "book", "arguments": {}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_dropped_mid_form_is_resumed_and_the_answer_arrives() {
    let Some(server) = python_http_server_on(0, &["--resumable"]).await else {
        return;
    };
    let mut network = Cutter::start(server.port).await;
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &network.url, &[]);
    host.initialize(json!({})).await;
    host.send(book(1)).await;
    let shown = frontend.next_show().await;
    // The POST's event stream (and the GET stream) go down while the
    // human is still looking at the form.
    assert!(network.cut().await >= 1, "a connection was open to cut");
    frontend
        .answer(&shown, "accept", json!({"seat": "3C", "count": 1}))
        .await
        .expect("accept");
    let (result, _) = host.response(json!(1)).await;
    assert!(
        text_of(&result).contains("booked 1 x 3C"),
        "the answer reached the server and its result came back on the resumed stream: {result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_gets_a_new_session_and_the_host_never_knows() {
    let Some(mut server) = python_http_server_on(0, &[]).await else {
        return;
    };
    let port = server.port;
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);
    host.initialize(json!({})).await;
    book_through(&mut host, &mut frontend, 1, "1A", 1).await;

    server.child.kill().await.expect("kill the server");
    drop(server);
    let _restarted = python_http_server_on(port, &[]).await.expect("the server again");
    // The request goes through on a new session.
    book_through(&mut host, &mut frontend, 2, "2B", 2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_gone_mid_form_fails_the_call_and_withdraws_the_form() {
    let Some(mut server) = python_http_server_on(0, &[]).await else {
        return;
    };
    let (bus, _daemon, mut frontend) = system().await;
    let mut host = proxy_url(bus.address(), &server.url, &[]);
    host.initialize(json!({})).await;
    host.send(book(1)).await;
    frontend.next_show().await;
    server.child.kill().await.expect("kill the server");
    let (result, _) = host.response(json!(1)).await;
    let message = result["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("event stream"),
        "the host learns why its call failed: {result}"
    );
    let conn = bus.connect().await;
    eventually("the lost stream's form to be withdrawn", || async {
        list_forms(&conn).await.is_empty()
    })
    .await;
}
