//! One asker-socket peer: its peer-to-peer connection, the bus connection
//! its calls are re-issued on, and the `Response` signals carried back.

use elicit_proto::dbus::{BROKER_PATH, BUS_NAME, Dict, SESSION_PREFIX};
use futures_util::StreamExt;
use tokio::net::UnixStream;
use zbus::connection::Builder;
use zbus::object_server::SignalEmitter;
use zbus::{AuthMechanism, Guid, MatchRule, MessageStream};

use super::objects::AskerBroker;
use crate::bus::{REFUSED_PATH, Refused, RequestIface};

/// Serves one peer until it hangs up.
pub(super) async fn serve_peer(stream: UnixStream, bus: Option<String>, cap: usize) {
    if let Err(error) = relay(stream, bus, cap).await {
        tracing::warn!(%error, "an asker-socket peer failed");
    }
}

async fn relay(stream: UnixStream, bus: Option<String>, cap: usize) -> zbus::Result<()> {
    let upstream = match &bus {
        Some(address) => Builder::address(address.as_str())?,
        None => Builder::session()?,
    }
    .build()
    .await?;
    // The peer's messages are bounded as the bus's are: one too large is
    // refused unread, naming its fields.
    let (read, write) = stream.into_split();
    let peer = Builder::socket(crate::bus::bounded_split(read, write, cap))
        .server(Guid::generate())?
        .p2p()
        .auth_mechanism(AuthMechanism::Anonymous)
        .serve_at(BROKER_PATH, AskerBroker::new(upstream.clone()).await?)?
        .serve_at(REFUSED_PATH, Refused)?
        .build()
        .await?;
    tracing::debug!(upstream = ?upstream.unique_name(), "an asker-socket peer connected");

    // Only the broker's own Response signals, to this peer's sessions.
    let rule = MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(BUS_NAME)?
        .interface("dev.elicitd.Request1")?
        .member("Response")?
        .path_namespace(SESSION_PREFIX)?
        .build();
    let mut responses = MessageStream::for_match_rule(rule, &upstream, Some(256)).await?;
    loop {
        tokio::select! {
            () = peer.closed() => break,
            message = responses.next() => {
                let Some(Ok(message)) = message else { break };
                let header = message.header();
                let Some(path) = header.path() else { continue };
                let Ok((action, content, details)) = message.body().deserialize::<(String, String, Dict)>() else {
                    continue;
                };
                let emitter = SignalEmitter::new(&peer, path.to_owned())?;
                RequestIface::response(&emitter, &action, &content, details).await?;
            }
        }
    }
    tracing::debug!(upstream = ?upstream.unique_name(), "an asker-socket peer left");
    upstream.close().await
}
