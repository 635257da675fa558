//! The servers measured: the emulator, the bare HTTP server on the same
//! stack (the ceiling), and the peer emulator `@vercel/cosmosdb-server`
//! (node). Each prints `listening on URL` once it accepts connections.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Starts the peer with keep-alive on (its command line has no switch
/// for it and answers `connection: close`) on a free port, and prints
/// the line the bench waits for.
const PEER_SCRIPT: &str = r#"// Written by cosmos-bench: @vercel/cosmosdb-server with keep-alive.
const { createHttpServer, createHttpsServer } = require("@vercel/cosmosdb-server");
const tls = process.argv[2] !== "http";
const server = (tls ? createHttpsServer : createHttpServer)({ keepAlive: true });
server.listen(0, "127.0.0.1", () => {
  const scheme = tls ? "https" : "http";
  console.log(`listening on ${scheme}://127.0.0.1:${server.address().port}`);
});
"#;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Emulator,
    Bare,
    Peer,
}

/// How to start one target.
#[derive(Debug, Clone)]
pub struct Target {
    pub kind: Kind,
    pub name: &'static str,
    pub description: String,
    program: PathBuf,
    args: Vec<String>,
    log: PathBuf,
}

impl Target {
    /// A fresh command (stderr appended to the target's log).
    pub fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        match OpenOptions::new().create(true).append(true).open(&self.log) {
            Ok(log) => command.stderr(log),
            Err(_) => command.stderr(Stdio::null()),
        };
        command
    }

    /// The same target with `extra` arguments after its own, its stderr
    /// appended to `log`, under another description.
    pub fn with_args(&self, extra: &[String], description: String, log: &Path) -> Target {
        let mut target = self.clone();
        target.args.extend(extra.iter().cloned());
        target.description = description;
        target.log = log.to_path_buf();
        target
    }

    /// Whether it speaks the Cosmos protocol (the bare server does not).
    pub fn speaks_cosmos(&self) -> bool {
        self.kind != Kind::Bare
    }
}

/// The emulator's release binary with its test clock.
pub fn emulator(binary: &Path, logs: &Path) -> Target {
    Target {
        kind: Kind::Emulator,
        name: "emulator",
        description: "cosmos-emulator (release, HTTP, --clock manual)".into(),
        program: binary.to_path_buf(),
        args: ["--host", "127.0.0.1", "--port", "0", "--clock", "manual"]
            .map(String::from)
            .to_vec(),
        log: logs.join("emulator.log"),
    }
}

/// The bare server answering `body_bytes` bytes to every request, with
/// `headers` (`name: value`, the emulator's point-read headers; none with
/// `--bare-plain`).
pub fn bare(binary: &Path, body_bytes: usize, headers: &[String], logs: &Path) -> Target {
    let mut args = vec![
        "--port".into(),
        "0".into(),
        "--body-bytes".into(),
        body_bytes.to_string(),
    ];
    for header in headers {
        args.extend(["--header".into(), header.clone()]);
    }
    Target {
        kind: Kind::Bare,
        name: "bare",
        description: format!(
            "bare-server (axum on hyper and tokio, as the emulator; a fixed {body_bytes}-byte body{})",
            match headers.len() {
                0 => String::new(),
                n => format!(" and the emulator's {n} point-read headers, fixed"),
            }
        ),
        program: binary.to_path_buf(),
        args,
        log: logs.join("bare.log"),
    }
}

/// The peer installed under `dir` (`dir/node_modules/@vercel/cosmosdb-server`),
/// over HTTPS (its default) or HTTP; `Err` says why it cannot run.
pub fn peer(dir: &Path, tls: bool, logs: &Path) -> Result<Target, String> {
    let package = dir.join("node_modules/@vercel/cosmosdb-server/package.json");
    let version = std::fs::read_to_string(&package)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|json| json["version"].as_str().map(String::from))
        .ok_or_else(|| {
            format!(
                "@vercel/cosmosdb-server is not installed under {} (cargo xtask bench installs it with npm when node is present)",
                dir.display()
            )
        })?;
    let node = which("node").ok_or("node is not on PATH")?;
    let script = dir.join("peer.js");
    std::fs::write(&script, PEER_SCRIPT).map_err(|e| format!("{}: {e}", script.display()))?;
    let node_version = Command::new(&node)
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    Ok(Target {
        kind: Kind::Peer,
        name: "peer",
        description: format!(
            "@vercel/cosmosdb-server {version} on node {node_version} ({}, keep-alive)",
            if tls { "HTTPS, self-signed" } else { "HTTP" }
        ),
        program: node,
        args: vec![
            script.display().to_string(),
            if tls { "https" } else { "http" }.into(),
        ],
        log: logs.join("peer.log"),
    })
}

/// The first `name` on PATH.
pub fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|path| path.is_file())
}
