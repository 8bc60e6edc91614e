//! The daemon's bus connection, with every incoming message bounded
//! ([`super::bounded`]). zbus would connect by itself, but then reads each
//! message whole; so the daemon connects the socket and hands it over.

use tokio::net::UnixStream;
use zbus::address::transport::{Transport, UnixSocket};
use zbus::connection::socket::{BoxedSplit, ReadHalf, Split, WriteHalf};
use zbus::{Address, Connection};

use super::refused::{REFUSED_PATH, Refused};

/// The largest message read whole for `limits`: the largest request or
/// answer the limits let through, and 64 KiB for the rest of the call.
pub fn message_cap(limits: &elicit_proto::Limits) -> usize {
    limits
        .max_request_bytes
        .max(limits.max_answer_bytes)
        .saturating_add(64 * 1024)
}

/// The halves of a Unix stream as zbus takes them, reads bounded to `cap`.
pub fn bounded_split(
    read: tokio::net::unix::OwnedReadHalf,
    write: tokio::net::unix::OwnedWriteHalf,
    cap: usize,
) -> BoxedSplit {
    let read: Box<dyn ReadHalf> = Box::new(super::Bounded::new(read, cap));
    let write: Box<dyn WriteHalf> = Box::new(write);
    Split::new(read, write)
}

/// Connects to `address` (`None`: the session bus) with messages bounded
/// to `cap` bytes. Only Unix-socket addresses can be bounded; another
/// transport connects through zbus unbounded, with a warning.
pub async fn connect(address: Option<&str>, cap: usize) -> zbus::Result<Connection> {
    let parsed = match address {
        Some(address) => address.parse::<Address>()?,
        None => Address::session()?,
    };
    let stream = match parsed.transport() {
        Transport::Unix(unix) => match unix.path() {
            UnixSocket::File(path) => Some(UnixStream::connect(path).await?),
            UnixSocket::Abstract(name) => Some(connect_abstract(name.as_encoded_bytes())?),
            _ => None,
        },
        _ => None,
    };
    let builder = match stream {
        Some(stream) => {
            let (read, write) = stream.into_split();
            zbus::connection::Builder::socket(bounded_split(read, write, cap))
        }
        None => {
            tracing::warn!(address = %parsed, "not a Unix socket: incoming messages are not bounded");
            zbus::connection::Builder::address(parsed)?
        }
    };
    builder.serve_at(REFUSED_PATH, Refused)?.build().await
}

fn connect_abstract(name: &[u8]) -> std::io::Result<UnixStream> {
    use std::os::linux::net::SocketAddrExt;
    let address = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
    let stream = std::os::unix::net::UnixStream::connect_addr(&address)?;
    stream.set_nonblocking(true)?;
    UnixStream::from_std(stream)
}
