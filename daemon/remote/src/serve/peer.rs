//! Who is at the other end of a connection: the uid that owns the
//! client's socket. A Unix socket says it itself (`SO_PEERCRED`); for a
//! loopback TCP connection the kernel is asked over `NETLINK_SOCK_DIAG`
//! (an `inet_diag` request for the client's exact four-tuple, answered
//! with `idiag_uid`, the uid `ss -e` shows), on a non-blocking netlink
//! socket of the connection's own.

use std::net::SocketAddr;
use std::time::Duration;

/// How long the kernel may take to answer; it answers while the request
/// is sent, so this only bounds the impossible.
const PATIENCE: Duration = Duration::from_secs(1);

/// Why a connection's owner could not be learnt.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LookupError {
    /// The netlink socket could not be opened, or the exchange failed.
    #[error("NETLINK_SOCK_DIAG: {0}")]
    Netlink(String),
    /// The kernel knows no such connection (it closed meanwhile).
    #[error("the kernel knows no TCP socket {client} -> {server}")]
    NotFound {
        /// The client's address.
        client: SocketAddr,
        /// This server's.
        server: SocketAddr,
    },
    /// The answer is not an `inet_diag` message.
    #[error("NETLINK_SOCK_DIAG answered something else: {0}")]
    Malformed(String),
    /// There is no such lookup on this system.
    #[error("this system has no NETLINK_SOCK_DIAG (Linux only)")]
    Unsupported,
    /// The kernel took longer than [`PATIENCE`].
    #[error("NETLINK_SOCK_DIAG gave no answer within {} s", PATIENCE.as_secs())]
    Timeout,
}

/// The uid owning the client end of the loopback TCP connection from
/// `client` to `server` (this process's end is `server`).
pub async fn tcp_owner(client: SocketAddr, server: SocketAddr) -> Result<u32, LookupError> {
    tokio::time::timeout(PATIENCE, sock_diag::owner(client, server))
        .await
        .unwrap_or(Err(LookupError::Timeout))
}

/// This process's effective uid: the one the kernel records on the
/// sockets it creates, and so the one a client of the same user shows.
pub fn own_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

#[cfg(target_os = "linux")]
mod sock_diag {
    use std::net::SocketAddr;

    use netlink_packet_core::{NLM_F_REQUEST, NetlinkHeader, NetlinkMessage, NetlinkPayload};
    use netlink_packet_sock_diag::SockDiagMessage;
    use netlink_packet_sock_diag::constants::{AF_INET, AF_INET6, IPPROTO_TCP};
    use netlink_packet_sock_diag::inet::{ExtensionFlags, InetRequest, SocketId, StateFlags};
    use netlink_sys::protocols::NETLINK_SOCK_DIAG;
    use netlink_sys::{AsyncSocket, AsyncSocketExt, TokioSocket};

    use super::LookupError;

    /// One exact (not dump) request: the kernel finds the socket whose
    /// local end is `client` and whose remote end is `server`, which is
    /// the client's own socket.
    pub async fn owner(client: SocketAddr, server: SocketAddr) -> Result<u32, LookupError> {
        let netlink = |e: std::io::Error| LookupError::Netlink(e.to_string());
        let mut socket = TokioSocket::new(NETLINK_SOCK_DIAG).map_err(netlink)?;
        socket
            .socket_mut()
            .connect(&netlink_sys::SocketAddr::new(0, 0))
            .map_err(netlink)?;
        let request = request(client, server);
        let mut bytes = vec![0; request.buffer_len()];
        request.serialize(&mut bytes);
        socket.send(&bytes).await.map_err(netlink)?;
        let mut answer = Vec::with_capacity(8192);
        socket.recv(&mut answer).await.map_err(netlink)?;
        let message = NetlinkMessage::<SockDiagMessage>::deserialize(&answer)
            .map_err(|e| LookupError::Malformed(e.to_string()))?;
        match message.payload {
            NetlinkPayload::InnerMessage(SockDiagMessage::InetResponse(response)) => {
                let found = &response.header.socket_id;
                // An exact lookup answers for that socket only; checked
                // all the same, since the uid decides admission.
                if found.source_port != client.port() || found.destination_port != server.port() {
                    return Err(LookupError::Malformed(format!(
                        "asked for port {} -> {}, answered {} -> {}",
                        client.port(),
                        server.port(),
                        found.source_port,
                        found.destination_port
                    )));
                }
                Ok(response.header.uid)
            }
            NetlinkPayload::Error(error) if error.to_io().kind() == std::io::ErrorKind::NotFound => {
                Err(LookupError::NotFound { client, server })
            }
            NetlinkPayload::Error(error) => Err(LookupError::Netlink(error.to_io().to_string())),
            other => Err(LookupError::Malformed(format!(
                "a message of type {}",
                other.message_type()
            ))),
        }
    }

    fn request(client: SocketAddr, server: SocketAddr) -> NetlinkMessage<SockDiagMessage> {
        let family = if client.is_ipv4() { AF_INET } else { AF_INET6 };
        let socket_id = SocketId {
            source_port: client.port(),
            destination_port: server.port(),
            source_address: client.ip(),
            destination_address: server.ip(),
            interface_id: 0,
            // INET_DIAG_NOCOOKIE: match by the addresses alone.
            cookie: [0xff; 8],
        };
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST;
        let mut message = NetlinkMessage::new(
            header,
            SockDiagMessage::InetRequest(InetRequest {
                family,
                protocol: IPPROTO_TCP,
                extensions: ExtensionFlags::empty(),
                states: StateFlags::all(),
                socket_id,
            })
            .into(),
        );
        message.finalize();
        message
    }
}

#[cfg(not(target_os = "linux"))]
mod sock_diag {
    use std::net::SocketAddr;

    use super::LookupError;

    pub async fn owner(_client: SocketAddr, _server: SocketAddr) -> Result<u32, LookupError> {
        Err(LookupError::Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connection of this process's own: the kernel names this uid,
    /// for IPv4 and IPv6 loopback alike.
    #[tokio::test]
    async fn a_connection_of_our_own_is_ours() {
        for address in ["127.0.0.1:0", "[::1]:0"] {
            let Ok(listener) = tokio::net::TcpListener::bind(address).await else {
                // No IPv6 loopback on this host.
                continue;
            };
            let server = listener.local_addr().unwrap();
            let client = tokio::net::TcpStream::connect(server).await.unwrap();
            let (_accepted, peer) = listener.accept().await.unwrap();
            assert_eq!(peer, client.local_addr().unwrap());
            assert_eq!(tcp_owner(peer, server).await.unwrap(), own_uid(), "{address}");
        }
    }

    /// A four-tuple no socket has is not found, rather than someone's.
    #[tokio::test]
    async fn an_unknown_connection_is_not_found() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        let nobody: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let error = tcp_owner(nobody, server).await.unwrap_err();
        assert!(matches!(error, LookupError::NotFound { .. }), "{error}");
    }
}
