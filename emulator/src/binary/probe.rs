//! `cosmos-emulator health`: asks the health server (`--health-port`,
//! `health.rs`) whether the emulator is ready, for a container's
//! `HEALTHCHECK`: the image is `FROM scratch`, with no curl or shell. One
//! `GET /ready` over plain HTTP/1.1, with the standard library alone (no
//! runtime to start), everything bounded by [`TIMEOUT`]: exit 0 on a 200,
//! 1 otherwise with a one-line reason on stderr, 2 for a bad flag or
//! variable.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream, ToSocketAddrs};
use std::process::ExitCode;
use std::time::Duration;

use crate::binary::settings::values::{host_name, HOST_ACCEPTED, PORT_ACCEPTED};
use crate::binary::settings::{
    Env, HealthArgs, Invalid, Var, COSMOS_EMULATOR_HEALTH_PORT, COSMOS_EMULATOR_HOST,
};

/// How long connecting, sending and reading may each take.
pub const TIMEOUT: Duration = Duration::from_secs(2);
/// The health server's port when neither `--port` nor the variable says.
const DEFAULT_PORT: u16 = 8080;

/// Runs the check; what `main` returns.
pub fn main(args: HealthArgs, env: Env) -> ExitCode {
    let target = match target(&args, env) {
        Ok(target) => target,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match check(&target, &args.path) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("unhealthy: GET http://{target}{}: {reason}", args.path);
            ExitCode::FAILURE
        }
    }
}

/// `host:port` from the flags, else the server's variables, else the defaults.
fn target(args: &HealthArgs, env: Env) -> Result<String, Invalid> {
    let host = match &args.host {
        Some(host) => host.clone(),
        None => match Var::read(env, COSMOS_EMULATOR_HOST)? {
            Some(v) => loopback_for(&v.parse(host_name, HOST_ACCEPTED)?),
            None => Ipv4Addr::LOCALHOST.to_string(),
        },
    };
    let port = match args.port {
        Some(port) => port,
        None => match Var::read(env, COSMOS_EMULATOR_HEALTH_PORT)? {
            Some(v) => match v.parse(|t| t.parse::<u16>().ok(), PORT_ACCEPTED)? {
                0 => return Err(v.invalid(
                    "0 has the server pick a free port, which this check cannot know: pass --port",
                )),
                port => port,
            },
            None => DEFAULT_PORT,
        },
    };
    Ok(match host.parse::<IpAddr>() {
        Ok(ip) => SocketAddr::new(ip, port).to_string(),
        Err(_) => format!("{host}:{port}"),
    })
}

/// A server listening on every address is reached on the loopback.
fn loopback_for(host: &str) -> String {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) if ip.is_unspecified() => Ipv4Addr::LOCALHOST.to_string(),
        Ok(IpAddr::V6(ip)) if ip.is_unspecified() => Ipv6Addr::LOCALHOST.to_string(),
        _ => host.to_string(),
    }
}

/// `Ok` when `GET path` answers 200; else why not.
fn check(target: &str, path: &str) -> Result<(), String> {
    let addresses: Vec<SocketAddr> = target
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {target}: {e}"))?
        .collect();
    let mut last = format!("{target} resolves to no address");
    for address in addresses {
        match ask(address, target, path) {
            Ok(()) => return Ok(()),
            Err(reason) => last = reason,
        }
    }
    Err(last)
}

fn ask(address: SocketAddr, target: &str, path: &str) -> Result<(), String> {
    let mut stream = TcpStream::connect_timeout(&address, TIMEOUT)
        .map_err(|e| format!("cannot connect to {address}: {e}"))?;
    stream
        .set_read_timeout(Some(TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(TIMEOUT)))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {target}\r\nUser-Agent: cosmos-emulator-health\r\n\
         Connection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send the request: {e}"))?;
    // The status line is all it takes; at most 1 KiB of it.
    let mut line = Vec::new();
    BufReader::new((&stream).take(1024))
        .read_until(b'\n', &mut line)
        .map_err(|e| format!("no answer: {e}"))?;
    let line = String::from_utf8_lossy(&line);
    let line = line.trim_end();
    let mut parts = line.splitn(3, ' ');
    match (parts.next(), parts.next()) {
        (Some(version), Some("200")) if version.starts_with("HTTP/1.") => Ok(()),
        (Some(version), Some(_)) if version.starts_with("HTTP/1.") => {
            Err(format!("answered {}", &line[version.len() + 1..]))
        }
        _ if line.is_empty() => Err("closed without an answer".into()),
        _ => Err(format!("not an HTTP answer: {line:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_on_every_address_is_asked_on_the_loopback() {
        assert_eq!(loopback_for("0.0.0.0"), "127.0.0.1");
        assert_eq!(loopback_for("::"), "::1");
        for other in ["127.0.0.1", "10.1.2.3", "::1", "cosmos"] {
            assert_eq!(loopback_for(other), other);
        }
    }
}
