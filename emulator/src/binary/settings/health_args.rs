//! The flags of `cosmos-emulator health` (`probe.rs` runs the check),
//! beside the server's: the defaults follow the server's own variables.

use super::values::flag_host;

/// `cosmos-emulator health`'s flags; the defaults follow the server's own
/// variables, so that the same container environment points both at one port.
#[derive(Debug, clap::Args)]
pub struct HealthArgs {
    /// The health server's address [default: COSMOS_EMULATOR_HOST's, where
    /// 0.0.0.0 or :: means the loopback, else 127.0.0.1]
    #[arg(long, value_parser = flag_host)]
    pub host: Option<String>,
    /// The health server's port [default: COSMOS_EMULATOR_HEALTH_PORT's,
    /// else 8080]
    #[arg(long)]
    pub port: Option<u16>,
    /// The path to ask for: /ready, /alive or /status
    #[arg(long, default_value = "/ready", value_parser = request_path)]
    pub path: String,
}

/// An origin-form request target: `/` and visible ASCII.
fn request_path(text: &str) -> Result<String, String> {
    if text.starts_with('/') && text.bytes().all(|b| b.is_ascii_graphic()) {
        Ok(text.to_string())
    } else {
        Err("expected a path starting with /, such as /ready, without spaces".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_origin_form() {
        assert!(request_path("/ready").is_ok());
        assert!(request_path("/status?x=1").is_ok());
        for bad in ["ready", "/a b", "/a\r\nX: y", ""] {
            assert!(request_path(bad).is_err(), "{bad:?}");
        }
    }
}
