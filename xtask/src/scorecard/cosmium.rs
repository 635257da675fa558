//! cosmium (the Go module `github.com/pikami/cosmium`, a Cosmos DB
//! emulator written in Go) in the scorecard: built from the Go module proxy
//! at a pinned version, then run over HTTP and HTTPS like the npm peers.
//!
//! Two things differ from the npm peers. The proxy serves the pinned
//! version but refuses the module's version list, which `go install
//! MODULE/cmd/server@VERSION` reads (for deprecation notices) and fails on;
//! so the build is a throwaway module of our own that requires the
//! version, `go mod tidy`, then `go build`. And cosmium listens on every
//! interface (`:PORT`, whatever `-Host` says); servers here stay on
//! loopback, so it runs in a network namespace of its own (`unshare`), and
//! the suite joins that namespace (`nsenter`) to reach it on 127.0.0.1.

use super::{regenerate, suite_run, Run, STARTUP};
use crate::root;
use crate::server::Server;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The expectations name (`fixtures/expectations/cosmium.toml`).
pub const NAME: &str = "cosmium";
pub const MODULE: &str = "github.com/pikami/cosmium";
/// The newest release (later tags are release candidates).
pub const VERSION: &str = "v0.1.20";
/// The package of its server binary.
const PACKAGE: &str = "github.com/pikami/cosmium/cmd/server";
/// Its port in its own namespace: nothing else listens there.
const PORT: &str = "8081";

/// How the binary is built, for docs/scorecard.md.
pub fn install_command() -> String {
    format!(
        "a module requiring `{MODULE} {VERSION}`, `go mod tidy`, `go build -o cosmium {PACKAGE}` \
         (from the Go module proxy)"
    )
}

/// cosmium over HTTP then HTTPS; its list is regenerated after each run,
/// as a peer's is.
pub fn runs(suite: &Path, out: &Path) -> Result<Vec<Run>, String> {
    for tool in ["unshare", "nsenter"] {
        super::on_path(tool).ok_or_else(|| {
            format!(
                "{tool} (util-linux) is not on PATH: cosmium listens on every interface, \
                 so the scorecard runs it in a network namespace of its own"
            )
        })?;
    }
    let bin = install(&out.join(NAME))?;
    let list = root()
        .join("fixtures/expectations")
        .join(format!("{NAME}.toml"));
    let implementation = format!("cosmium {VERSION} (Go module proxy)");
    let mut runs = Vec::new();
    for (transport, tls) in [("HTTP", false), ("HTTPS", true)] {
        let lower = transport.to_lowercase();
        let server = start(&bin, tls, &out.join(format!("{NAME}-{lower}.log")))?;
        let options = super::peer_options(&list, NAME, tls);
        let flags = if tls { "" } else { " -DisableTls" };
        let run = suite_run(
            suite,
            &server.endpoint,
            options,
            &out.join(format!("{NAME}-{lower}")),
            implementation.clone(),
            transport,
            format!(
                "cosmium -Host 127.0.0.1 -Port {PORT}{flags} (in a network namespace of its own)"
            ),
            Some(server.pid()),
        )?;
        drop(server);
        regenerate(&list, &run, &implementation)?;
        runs.push(run);
    }
    Ok(runs)
}

/// Starts cosmium in a new network namespace (its loopback up) and waits
/// until it accepts connections there.
fn start(bin: &Path, tls: bool, log: &Path) -> Result<Server, String> {
    let mut command = Command::new("unshare");
    // A user namespace too, so that this needs no root where unprivileged
    // user namespaces are allowed; sh brings lo up and becomes cosmium, so
    // the child's pid is cosmium's (and names its namespace).
    command
        .args(["--user", "--map-root-user", "--net", "--", "sh", "-c"])
        .arg(r#"ip link set lo up && exec "$0" "$@""#)
        .arg(bin)
        .args(["-Host", "127.0.0.1", "-Port", PORT]);
    if !tls {
        command.arg("-DisableTls");
    }
    // Its first line, `... Listening and serving HTTP on :8081`, comes
    // before it listens: wait for a connection too.
    let server = Server::spawn(command, log, STARTUP)?;
    let started = Instant::now();
    loop {
        let probe = enter(server.pid())
            .args(["bash", "-c"])
            .arg(format!("exec 3<>/dev/tcp/127.0.0.1/{PORT}"))
            .stderr(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("cannot run nsenter: {e}"))?;
        if probe.success() {
            return Ok(server);
        }
        if started.elapsed() > STARTUP {
            return Err(format!(
                "cosmium did not accept connections within {STARTUP:?} (its log: {})",
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A command run in the network namespace of process `pid` (and its user
/// namespace, which owns it).
pub fn enter(pid: u32) -> Command {
    let mut command = Command::new("nsenter");
    command.args([
        "--target",
        &pid.to_string(),
        "--user",
        "--net",
        "--preserve-credentials",
        "--",
    ]);
    command
}

/// Builds cosmium into `dir/bin/cosmium`, unless that version is there.
fn install(dir: &Path) -> Result<PathBuf, String> {
    let bin = dir.join("bin/cosmium");
    let stamp = dir.join("bin/VERSION");
    if bin.is_file() && std::fs::read_to_string(&stamp).is_ok_and(|v| v.trim() == VERSION) {
        return Ok(bin);
    }
    let go = super::on_path("go").ok_or("go is not on PATH: cosmium builds with Go")?;
    let module = dir.join("module");
    std::fs::create_dir_all(&module).map_err(|e| e.to_string())?;
    let write = |name: &str, text: String| {
        std::fs::write(module.join(name), text).map_err(|e| format!("{name}: {e}"))
    };
    write(
        "go.mod",
        format!("module scorecard/cosmium\n\ngo 1.24\n\nrequire {MODULE} {VERSION}\n"),
    )?;
    // The import makes `go mod tidy` resolve the server's dependencies.
    write(
        "tools.go",
        format!("//go:build tools\n\npackage tools\n\nimport _ \"{PACKAGE}\"\n"),
    )?;
    eprintln!("xtask scorecard: building {MODULE} {VERSION} (go mod tidy, go build)");
    for args in [
        vec!["mod", "tidy"],
        vec!["build", "-o", "../bin/cosmium", PACKAGE],
    ] {
        let status = Command::new(&go)
            .args(&args)
            .current_dir(&module)
            .status()
            .map_err(|e| format!("cannot run go: {e}"))?;
        if !status.success() {
            return Err(format!(
                "go {} failed for {MODULE} {VERSION}",
                args.join(" ")
            ));
        }
    }
    std::fs::write(&stamp, VERSION).map_err(|e| e.to_string())?;
    Ok(bin)
}
