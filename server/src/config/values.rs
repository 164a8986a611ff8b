//! The value types of flags that the edge reads: trusted proxy ranges,
//! allowed origins, a rate limit. Parsed and checked here, when the flags
//! are read; `http/` uses them.

use std::net::IpAddr;
use std::str::FromStr;

/// A trusted proxy: one address or a CIDR range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyRange {
    network: IpAddr,
    prefix: u8,
}

impl ProxyRange {
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.network, canonical(ip)) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for ProxyRange {
    type Err = String;

    fn from_str(text: &str) -> Result<ProxyRange, String> {
        let text = text.trim();
        let bad = || format!("{text:?} is not an IP address or CIDR range (10.0.0.0/8, ::1)");
        let (address, prefix) = match text.split_once('/') {
            Some((address, prefix)) => (address, Some(prefix)),
            None => (text, None),
        };
        let network = canonical(address.parse::<IpAddr>().map_err(|_| bad())?);
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(prefix) => prefix
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(bad)?,
        };
        Ok(ProxyRange { network, prefix })
    }
}

/// IPv4-mapped IPv6 addresses as IPv4 (`::ffff:a.b.c.d`, a dual-stack
/// socket's view), so one client has one form.
pub fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

/// An origin allowed besides the server's own: `scheme://host[:port]`,
/// kept lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedOrigin(String);

impl AllowedOrigin {
    /// `scheme://host[:port]`, lowercase.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for AllowedOrigin {
    type Err = String;

    fn from_str(text: &str) -> Result<AllowedOrigin, String> {
        let origin = text.trim().trim_end_matches('/').to_ascii_lowercase();
        let valid = origin.split_once("://").is_some_and(|(scheme, authority)| {
            matches!(scheme, "http" | "https")
                && !authority.is_empty()
                && !authority.contains(['/', '?', '#', ' '])
        });
        if valid {
            Ok(AllowedOrigin(origin))
        } else {
            Err(format!(
                "{text:?} is not an origin (scheme://host[:port], e.g. https://chess.example.org)"
            ))
        }
    }
}

/// Refill speed and size of a bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    pub per_second: f64,
    pub burst: u32,
}

impl RateLimit {
    /// Whole seconds until an empty bucket has a token again (at least 1):
    /// the `Retry-After` of a 429.
    pub fn seconds_per_token(&self) -> u64 {
        let seconds = (1.0 / self.per_second).ceil();
        if seconds.is_finite() {
            seconds.clamp(1.0, 3600.0) as u64
        } else {
            3600
        }
    }
}
