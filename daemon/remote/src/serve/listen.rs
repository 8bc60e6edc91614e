//! Where `elicit serve` listens (loopback TCP, or a Unix socket of mode
//! 0600), and who each accepted connection is from: the uid that owns
//! the client's socket, learnt as the connection is accepted, before any
//! byte of it is read ([`super::peer`]). The guard refuses the
//! connection's requests unless that uid is this process's own.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio_util::either::Either;

use super::ServeError;
use super::peer::{self, LookupError};

/// Where to listen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listen {
    /// A loopback address and port (0: any free one).
    Tcp(SocketAddr),
    /// A Unix socket at this path, made mode 0600.
    Unix(PathBuf),
}

impl Default for Listen {
    fn default() -> Self {
        Listen::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))
    }
}

impl FromStr for Listen {
    type Err = String;

    /// `unix:PATH`, `localhost:PORT` (127.0.0.1) or `IP:PORT`.
    fn from_str(text: &str) -> Result<Listen, String> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(format!("{text:?}: give the socket's path after unix:"));
            }
            return Ok(Listen::Unix(PathBuf::from(path)));
        }
        if let Some(port) = text.strip_prefix("localhost:") {
            let port: u16 = port.parse().map_err(|e| format!("bad port in {text:?}: {e}"))?;
            return Ok(Listen::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, port))));
        }
        text.parse()
            .map(Listen::Tcp)
            .map_err(|e| format!("{text:?} is neither IP:PORT (e.g. 127.0.0.1:8765) nor unix:PATH: {e}"))
    }
}

impl fmt::Display for Listen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Listen::Tcp(address) => write!(f, "{address}"),
            Listen::Unix(path) => write!(f, "unix:{}", path.display()),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Listen {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Listen, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Who a connection is from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Owner {
    /// The uid owning the client's socket.
    Uid(u32),
    /// The lookup failed for this connection (why).
    Unknown(String),
    /// Not looked up: the system cannot tell, and a bearer token guards
    /// the server instead.
    Unchecked,
}

/// An accepted connection's client, as the guard sees it.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Who owns the client's socket.
    pub owner: Owner,
}

impl Connected<IncomingStream<'_, Incoming>> for Peer {
    fn connect_info(stream: IncomingStream<'_, Incoming>) -> Peer {
        stream.remote_addr().clone()
    }
}

/// A bound listener: its connections come with their [`Peer`].
#[derive(Debug)]
pub struct Incoming {
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Tcp {
        listener: TcpListener,
        local: SocketAddr,
        /// Whether each connection's owner is looked up.
        check: bool,
    },
    Unix {
        listener: UnixListener,
        path: PathBuf,
    },
}

impl Incoming {
    /// Binds `listen`. Over TCP, the uid lookup is tried first on a
    /// connection of this process's own: where it cannot work, a server
    /// with no token would admit every local user, so it does not start
    /// (`token` says whether a bearer token is required).
    pub async fn bind(listen: &Listen, token: bool) -> Result<Incoming, ServeError> {
        match listen {
            Listen::Tcp(address) => {
                let bind_error = |source| ServeError::Bind {
                    address: listen.to_string(),
                    source,
                };
                let check = checks_owners(probe(address.ip()).await, peer::own_uid(), token)?;
                let listener = TcpListener::bind(address).await.map_err(bind_error)?;
                let local = listener.local_addr().map_err(bind_error)?;
                Ok(Incoming {
                    kind: Kind::Tcp {
                        listener,
                        local,
                        check,
                    },
                })
            }
            Listen::Unix(path) => Ok(Incoming {
                kind: Kind::Unix {
                    listener: bind_unix(path)?,
                    path: path.clone(),
                },
            }),
        }
    }

    /// The bound TCP address (the port chosen when 0 was asked for).
    pub fn tcp_address(&self) -> Option<SocketAddr> {
        match &self.kind {
            Kind::Tcp { local, .. } => Some(*local),
            Kind::Unix { .. } => None,
        }
    }

    /// The Unix socket's path.
    pub fn unix_path(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Tcp { .. } => None,
            Kind::Unix { path, .. } => Some(path),
        }
    }

    async fn accept_one(&mut self) -> std::io::Result<(Either<TcpStream, UnixStream>, Peer)> {
        match &mut self.kind {
            Kind::Tcp {
                listener,
                local,
                check,
            } => {
                let (stream, client) = listener.accept().await?;
                let owner = if *check {
                    match peer::tcp_owner(client, *local).await {
                        Ok(uid) => Owner::Uid(uid),
                        Err(error) => Owner::Unknown(error.to_string()),
                    }
                } else {
                    Owner::Unchecked
                };
                Ok((Either::Left(stream), Peer { owner }))
            }
            Kind::Unix { listener, .. } => {
                let (stream, _) = listener.accept().await?;
                let owner = match stream.peer_cred() {
                    Ok(credentials) => Owner::Uid(credentials.uid()),
                    Err(error) => Owner::Unknown(format!("SO_PEERCRED: {error}")),
                };
                Ok((Either::Right(stream), Peer { owner }))
            }
        }
    }
}

impl axum::serve::Listener for Incoming {
    type Io = Either<TcpStream, UnixStream>;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Peer) {
        loop {
            match self.accept_one().await {
                Ok(accepted) => return accepted,
                // A client that left before it was accepted.
                Err(error)
                    if matches!(
                        error.kind(),
                        std::io::ErrorKind::ConnectionAborted | std::io::ErrorKind::ConnectionReset
                    ) => {}
                // Out of descriptors, most likely: wait for some to close
                // rather than spin.
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Peer> {
        Ok(Peer {
            owner: Owner::Uid(peer::own_uid()),
        })
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if let Kind::Unix { path, .. } = &self.kind {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A connection of this process's own to a listener of its own on `ip`,
/// looked up as a client's would be.
async fn probe(ip: IpAddr) -> Result<u32, LookupError> {
    let failed = |e: std::io::Error| LookupError::Netlink(format!("a test connection on {ip}: {e}"));
    let listener = TcpListener::bind((ip, 0)).await.map_err(failed)?;
    let server = listener.local_addr().map_err(failed)?;
    let _client = TcpStream::connect(server).await.map_err(failed)?;
    let (_accepted, client) = listener.accept().await.map_err(failed)?;
    peer::tcp_owner(client, server).await
}

/// Whether TCP connections' owners are checked, from the probe's answer:
/// yes when it named this uid; else, with a token, no (the token alone
/// guards the server, with a warning); else the server must not start.
pub fn checks_owners(probe: Result<u32, LookupError>, own: u32, token: bool) -> Result<bool, ServeError> {
    let reason = match probe {
        Ok(uid) if uid == own => return Ok(true),
        Ok(uid) => {
            format!("the kernel names uid {uid} as the owner of a connection of this process (uid {own})")
        }
        Err(error) => error.to_string(),
    };
    if token {
        tracing::warn!(
            %reason,
            "cannot learn which user a TCP client runs as: only the bearer token keeps other local users out"
        );
        Ok(false)
    } else {
        Err(ServeError::NoPeerLookup(reason))
    }
}

/// Binds a Unix socket at `path`, mode 0600. A stale socket nothing
/// listens on is replaced; a live one, or a file that is not a socket,
/// is an error. Until the mode is set the socket has the umask's: the
/// peer-uid check on every connection covers that moment.
fn bind_unix(path: &Path) -> Result<UnixListener, ServeError> {
    let fail = |source| ServeError::Bind {
        address: format!("unix:{}", path.display()),
        source,
    };
    if let Ok(metadata) = std::fs::symlink_metadata(path) {
        if !metadata.file_type().is_socket() {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "the path exists and is not a socket",
            )));
        }
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(fail(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                "another server listens on it",
            )));
        }
        std::fs::remove_file(path).map_err(fail)?;
    }
    let listener = UnixListener::bind(path).map_err(fail)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(fail)?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses_parse() {
        assert_eq!(
            "unix:/run/x.sock".parse::<Listen>(),
            Ok(Listen::Unix("/run/x.sock".into()))
        );
        assert_eq!(
            "localhost:8765".parse::<Listen>(),
            Ok(Listen::Tcp("127.0.0.1:8765".parse().unwrap()))
        );
        assert_eq!(
            "[::1]:9".parse::<Listen>(),
            Ok(Listen::Tcp("[::1]:9".parse().unwrap()))
        );
        assert!("unix:".parse::<Listen>().is_err());
        assert!("example.com:80".parse::<Listen>().is_err());
    }

    #[test]
    fn owners_are_checked_only_where_the_lookup_works() {
        assert!(matches!(checks_owners(Ok(1000), 1000, false), Ok(true)));
        assert!(matches!(checks_owners(Ok(1000), 1000, true), Ok(true)));
        // A wrong answer is as bad as none.
        assert!(matches!(
            checks_owners(Ok(65534), 1000, false),
            Err(ServeError::NoPeerLookup(_))
        ));
        assert!(matches!(
            checks_owners(Err(LookupError::Unsupported), 1000, false),
            Err(ServeError::NoPeerLookup(_))
        ));
        // With a token, the server starts, the token its only guard.
        assert!(matches!(
            checks_owners(Err(LookupError::Unsupported), 1000, true),
            Ok(false)
        ));
        let refused = checks_owners(Err(LookupError::Unsupported), 1000, false)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("--require-token") && refused.contains("Linux only"),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn a_unix_socket_is_private_and_replaces_a_stale_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        let first = Incoming::bind(&Listen::Unix(path.clone()), false).await.unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // A live socket is not taken over.
        assert!(Incoming::bind(&Listen::Unix(path.clone()), false).await.is_err());
        // A stale one (its listener gone, the file left) is.
        let std_listener = std::os::unix::net::UnixListener::bind(dir.path().join("stale.sock")).unwrap();
        drop(std_listener);
        let stale = Incoming::bind(&Listen::Unix(dir.path().join("stale.sock")), false).await;
        assert!(stale.is_ok());
        drop(first);
        assert!(!path.exists(), "the socket goes with the server");
        std::fs::write(&path, "not a socket").unwrap();
        assert!(Incoming::bind(&Listen::Unix(path.clone()), false).await.is_err());
    }
}
