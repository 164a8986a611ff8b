//! Who the client is: the address every per-client limit is keyed by.
//!
//! By default the client is the TCP peer. Behind a reverse proxy every
//! peer is the proxy, so `--trusted-proxy` lists the proxies (addresses or
//! CIDR ranges) whose `Forwarded` / `X-Forwarded-For` headers are believed.
//! Those headers are read only when the peer is a listed proxy: anyone else
//! could write anything in them. The chain is walked from the right (the
//! hop nearest to us), skipping trusted proxies; the first address that is
//! not one is the client. A client cannot forge its way past a proxy that
//! appends what it saw.
//!
//! An IPv6 client is keyed by its /64 network: one host usually has a whole
//! /64 to pick addresses from, so keying by full address would let it
//! escape every limit.

use std::net::{IpAddr, Ipv6Addr};

use axum::extract::{ConnectInfo, Request};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;

use crate::config::values::{canonical, ProxyRange};
use crate::http::rate_limit::Connection;

/// The listed proxies.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<ProxyRange>);

impl TrustedProxies {
    pub fn new(ranges: Vec<ProxyRange>) -> TrustedProxies {
        TrustedProxies(ranges)
    }

    pub fn contains(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|range| range.contains(ip))
    }

    /// The client behind `peer`, given the request's headers.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.contains(peer) {
            return peer;
        }
        let chain = forwarded_chain(headers);
        let mut client = peer;
        for hop in chain.iter().rev() {
            let Some(hop) = hop else {
                // Garbage in the chain: believe nothing beyond it.
                break;
            };
            client = *hop;
            if !self.contains(*hop) {
                break;
            }
        }
        client
    }
}

/// The addresses a request went through, oldest first, from `Forwarded`
/// (RFC 7239) when present, else from `X-Forwarded-For`. `None` is a hop
/// that is not an address (`unknown`, an obfuscated name, garbage).
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&str> = headers
        .get_all("forwarded")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|value| value.split(','))
            .map(|element| {
                element
                    .split(';')
                    .filter_map(|pair| pair.split_once('='))
                    .find(|(name, _)| name.trim().eq_ignore_ascii_case("for"))
                    .and_then(|(_, value)| parse_node(value))
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(parse_node)
        .collect()
}

/// An address as proxies write it: `1.2.3.4`, `1.2.3.4:80`, `"[::1]:80"`,
/// `::1`.
fn parse_node(text: &str) -> Option<IpAddr> {
    let text = text.trim().trim_matches('"');
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, _) = rest.split_once(']')?;
        return inside.parse::<IpAddr>().ok().map(canonical);
    }
    let (host, port) = text.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// The key of a client for limits: its IPv4 address, or its IPv6 /64.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & (u128::MAX << 64);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}

/// The client of a request (after trusted proxies), keyed for limits.
/// Put in the request's extensions by [`resolve_client`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientIp(pub IpAddr);

/// Middleware: finds the request's client and records it as [`ClientIp`].
pub async fn resolve_client(
    trusted: axum::extract::State<TrustedProxies>,
    ConnectInfo(connection): ConnectInfo<Connection>,
    mut request: Request,
    next: Next,
) -> Response {
    let client = trusted.client(connection.remote.ip(), request.headers());
    request
        .extensions_mut()
        .insert(ClientIp(client_key(client)));
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(*name, HeaderValue::from_static(value));
        }
        headers
    }

    #[test]
    fn ranges() {
        let range: ProxyRange = "10.1.0.0/16".parse().unwrap();
        assert!(range.contains(ip("10.1.200.3")));
        assert!(range.contains(ip("::ffff:10.1.0.1")));
        assert!(!range.contains(ip("10.2.0.1")));
        let all: ProxyRange = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("192.0.2.1")));
        assert!(!all.contains(ip("::2")));
        let one: ProxyRange = "::1".parse().unwrap();
        assert!(one.contains(ip("::1")) && !one.contains(ip("::2")));
        for bad in ["", "10.0.0.0/33", "::/129", "host", "10.0.0.0/x", "1.2.3"] {
            assert!(bad.parse::<ProxyRange>().is_err(), "{bad}");
        }
    }

    #[test]
    fn forwarded_headers_are_read_only_from_trusted_peers() {
        let trusted = TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]);
        let xff = headers(&[("x-forwarded-for", "203.0.113.9, 10.0.0.7")]);
        // A trusted proxy chain: the first untrusted hop from the right.
        assert_eq!(trusted.client(ip("10.0.0.1"), &xff), ip("203.0.113.9"));
        // The same header from anyone else is ignored.
        assert_eq!(trusted.client(ip("198.51.100.1"), &xff), ip("198.51.100.1"));
        // A forged left part does not help: the proxy appended the truth.
        let forged = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.9")]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &forged), ip("203.0.113.9"));
        // RFC 7239, with quotes, brackets and ports, wins over XFF.
        let forwarded = headers(&[
            (
                "forwarded",
                "for=192.0.2.60;proto=http, for=\"[2001:db8::17]:4711\"",
            ),
            ("x-forwarded-for", "203.0.113.9"),
        ]);
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &forwarded),
            ip("2001:db8::17")
        );
        // Garbage stops the walk at the last address we can trust.
        let garbage = headers(&[("x-forwarded-for", "203.0.113.9, nonsense")]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &garbage), ip("10.0.0.1"));
        // No header: the proxy itself.
        assert_eq!(
            trusted.client(ip("10.0.0.1"), &HeaderMap::new()),
            ip("10.0.0.1")
        );
    }

    #[test]
    fn ipv6_clients_are_keyed_by_their_64() {
        assert_eq!(
            client_key(ip("2001:db8:1:2:aaaa::1")),
            client_key(ip("2001:db8:1:2:bbbb::9"))
        );
        assert_ne!(
            client_key(ip("2001:db8:1:2::1")),
            client_key(ip("2001:db8:1:3::1"))
        );
        assert_eq!(client_key(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
    }
}
