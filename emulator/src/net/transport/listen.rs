//! Binding the addresses a host names. `localhost` is both loopbacks,
//! `127.0.0.1` and `::1`, on one port: clients resolve `localhost` to
//! either first (Node and Go may try `::1` first, Java and Python
//! `127.0.0.1`), and none must meet a refused connection. With port 0 the
//! kernel picks IPv4's, and IPv6 takes the same; if it is taken there, both
//! try again. A machine without IPv6 listens on `127.0.0.1` alone. Any
//! other host (an address, `0.0.0.0`, a name) binds what it names, once.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};

/// The host name that stands for both loopbacks.
pub const LOCALHOST: &str = "localhost";

/// How many free ports to try for both loopbacks before giving up.
const ATTEMPTS: usize = 20;

/// Whether `host` is `localhost` (any case): listened on as both loopbacks,
/// and printed by name.
pub fn is_localhost(host: &str) -> bool {
    host.eq_ignore_ascii_case(LOCALHOST)
}

/// The listeners for `host:port`, non-blocking (for tokio), the IPv4 one
/// first.
pub fn bind_host(host: &str, port: u16) -> io::Result<Vec<TcpListener>> {
    if !is_localhost(host) {
        return Ok(vec![nonblocking(TcpListener::bind((host, port))?)?]);
    }
    for _ in 0..ATTEMPTS {
        let v4 = TcpListener::bind((Ipv4Addr::LOCALHOST, port))?;
        let chosen = v4.local_addr()?.port();
        match TcpListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, chosen))) {
            Ok(v6) => return Ok(vec![nonblocking(v4)?, nonblocking(v6)?]),
            // The kernel's free IPv4 port is someone's on IPv6: another.
            Err(e) if e.kind() == io::ErrorKind::AddrInUse && port == 0 => continue,
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("port {port} is in use on ::1 (localhost's IPv6 address): {e}"),
                ))
            }
            // No IPv6 on this machine (a container without it): IPv4 alone.
            Err(e) => {
                tracing::debug!(error = %e, "no ::1: listening on 127.0.0.1 alone");
                return Ok(vec![nonblocking(v4)?]);
            }
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AddrInUse,
        format!("no port free on both 127.0.0.1 and ::1 after {ATTEMPTS} tries"),
    ))
}

/// `scheme://host:port` for clients: `localhost` by name, else the address
/// bound (an IPv6 one in brackets).
pub fn url(scheme: &str, host: &str, bound: SocketAddr) -> String {
    if is_localhost(host) {
        format!("{scheme}://{LOCALHOST}:{}", bound.port())
    } else {
        format!("{scheme}://{bound}")
    }
}

/// Binds `addresses` again, as [`bind_host`] bound them (a region brought
/// back up listens where it did), or none.
pub fn bind_again(addresses: &[SocketAddr]) -> io::Result<Vec<TcpListener>> {
    addresses
        .iter()
        .map(|address| nonblocking(TcpListener::bind(address)?))
        .collect()
}

fn nonblocking(listener: TcpListener) -> io::Result<TcpListener> {
    listener.set_nonblocking(true)?;
    Ok(listener)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localhost_is_both_loopbacks_on_one_port() {
        let bound = bind_host("LocalHost", 0).unwrap();
        let addrs: Vec<SocketAddr> = bound.iter().map(|l| l.local_addr().unwrap()).collect();
        assert_eq!(addrs[0].ip(), Ipv4Addr::LOCALHOST);
        if let Some(v6) = addrs.get(1) {
            assert_eq!(v6.ip(), Ipv6Addr::LOCALHOST);
            assert_eq!(v6.port(), addrs[0].port());
        }
        for addr in &addrs {
            std::net::TcpStream::connect(addr).expect("each address accepts");
        }
        assert_eq!(
            url("http", "localhost", addrs[0]),
            format!("http://localhost:{}", addrs[0].port())
        );
        // A port taken on IPv6 is refused when asked for, not half-served.
        if let Some(v6) = addrs.get(1) {
            drop(bound);
            let squatter = TcpListener::bind(v6).unwrap();
            let error = bind_host("localhost", v6.port()).unwrap_err();
            assert!(error.to_string().contains("::1"), "{error}");
            drop(squatter);
        }
    }

    #[test]
    fn an_address_binds_once_and_prints_itself() {
        let bound = bind_host("127.0.0.1", 0).unwrap();
        assert_eq!(bound.len(), 1);
        let addr = bound[0].local_addr().unwrap();
        assert_eq!(url("https", "127.0.0.1", addr), format!("https://{addr}"));
        let v6: SocketAddr = "[::1]:8081".parse().unwrap();
        assert_eq!(url("http", "::1", v6), "http://[::1]:8081");
    }
}
