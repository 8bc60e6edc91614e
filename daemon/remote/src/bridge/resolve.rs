//! How the bridge's HTTP client finds a host: `localhost` and every name
//! under it are loopback without asking anyone (RFC 6761 §6.3, as curl and
//! browsers do), and every other name goes to the system's resolver.
//!
//! Without this, `elicit proxy --url http://localhost:PORT/mcp` depended on
//! `/etc/hosts`: a bare container or debootstrap root has none, and the
//! name went to DNS, which answered that no such host exists.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

/// The bridge's resolver: loopback for `localhost` names, the system's
/// `getaddrinfo` (on tokio's blocking pool) for the rest.
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalhostIsLoopback;

impl Resolve for LocalhostIsLoopback {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            if is_localhost(&host) {
                return Ok(Box::new(loopback().into_iter()) as Addrs);
            }
            // Port 0: the connector puts the URL's port in.
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

/// Whether `host` is `localhost` or a name under it, in any case, with or
/// without the root's trailing dot.
fn is_localhost(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

/// IPv4 first: a local server listens on 127.0.0.1 more often than on
/// `::1`, and the connector tries the first family first.
fn loopback() -> [SocketAddr; 2] {
    [
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        SocketAddr::from((Ipv6Addr::LOCALHOST, 0)),
    ]
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    async fn resolved(host: &str) -> Vec<SocketAddr> {
        let name = Name::from_str(host).expect("a host name");
        LocalhostIsLoopback
            .resolve(name)
            .await
            .expect("resolved")
            .collect()
    }

    #[test]
    fn localhost_names_are_the_names_under_localhost() {
        for host in [
            "localhost",
            "LocalHost",
            "localhost.",
            "mcp.localhost",
            "a.b.localhost.",
        ] {
            assert!(is_localhost(host), "{host}");
        }
        for host in [
            "localhost.example",
            "notlocalhost",
            "localhostx",
            "example.com",
            "127.0.0.1",
        ] {
            assert!(!is_localhost(host), "{host}");
        }
    }

    #[tokio::test]
    async fn localhost_is_loopback_without_the_system() {
        // The name below is not in any /etc/hosts: only the rule answers it.
        let expected = loopback().to_vec();
        assert_eq!(resolved("elicitd-test.localhost").await, expected);
        assert_eq!(resolved("LOCALHOST").await, expected);
    }

    #[tokio::test]
    async fn other_names_go_to_the_system() {
        // An address literal needs no DNS, and comes back as itself.
        let found = resolved("127.0.0.2").await;
        assert_eq!(found, vec![SocketAddr::from((Ipv4Addr::new(127, 0, 0, 2), 0))]);
    }
}
