//! The local registries `cargo xtask package --test` installs from, each
//! started on a free loopback port and stopped when its guard is dropped
//! (on success, on an error, on a panic):
//! - pypiserver (PyPI, pinned), serving a directory of wheels, without its
//!   fallback to PyPI: a name it does not hold is a 404, so what pip gets
//!   from it by the name `cosmos-emulator` can only be ours;
//! - verdaccio (npm, pinned in `xtask/tools/verdaccio/`), anonymous publish
//!   for `cosmos-emulator` and `cosmos-emulator-*`, which it never looks up
//!   elsewhere; every other package (@azure/cosmos) through its proxy to the
//!   registry npm is configured with.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{copy_file, fresh_dir, read, step, write};
use crate::host::{self, venv_bin};
use crate::{root, target_dir};

/// pypiserver's version: the index the wheels are served from.
const PYPISERVER: &str = "pypiserver==2.4.2";

/// A registry process; stopped (killed and reaped) when dropped.
pub struct Service {
    name: &'static str,
    child: Child,
    /// `http://127.0.0.1:PORT`
    pub url: String,
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        eprintln!("xtask package: stopped {} ({})", self.name, self.url);
    }
}

impl Service {
    /// Starts `command` (which listens on 127.0.0.1:`port`), its output
    /// into `log`, and waits until `GET ready_path` answers 200.
    fn start(
        name: &'static str,
        mut command: Command,
        port: u16,
        ready_path: &str,
        log: &Path,
    ) -> Result<Service, String> {
        let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        // The guard first, so that every early return below stops it.
        let mut service = Service {
            name,
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let started = Instant::now();
        let deadline = started + Duration::from_secs(60);
        loop {
            if http_status(port, ready_path) == Some(200) {
                break;
            }
            let log_text = || read(log).unwrap_or_default();
            if let Ok(Some(status)) = service.child.try_wait() {
                return Err(format!(
                    "{name} exited ({status}) before it answered:\n{}",
                    log_text()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{name} did not answer GET {ready_path} on port {port} within 60 s:\n{}",
                    log_text()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!(
            "xtask package: {name} on {} (ready in {:.1} s, log {})",
            service.url,
            started.elapsed().as_secs_f64(),
            log.display()
        );
        Ok(service)
    }
}

/// A port free on the loopback interface now (the OS's pick).
fn free_port() -> Result<u16, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free loopback port: {e}"))
}

/// The status code of `GET path` on 127.0.0.1:`port`, if it answers.
fn http_status(port: u16, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    // One write: write! would send the pieces as they are formatted.
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nAccept: */*\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut head = [0u8; 32];
    let mut read = 0;
    while read < 12 {
        match stream.read(&mut head[read..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => read += n,
        }
    }
    let text = std::str::from_utf8(&head[..read]).ok()?;
    text.split_whitespace().nth(1)?.parse().ok()
}

/// pypiserver serving `packages` (wheels only, nothing else of ours), with
/// no fallback to PyPI. Installs it first (`target/package-tools/venv`).
pub fn pypiserver(packages: &Path) -> Result<Service, String> {
    let venv = tools_venv()?;
    let port = free_port()?;
    let mut command = Command::new(venv_bin(&venv, "pypi-server"));
    command
        .args(["run", "--host", "127.0.0.1", "--port"])
        .arg(port.to_string())
        .args(["--disable-fallback", "--hash-algo", "sha256"])
        .arg(packages);
    let log = target_dir().join("package-test").join("pypiserver.log");
    Service::start("pypiserver", command, port, "/simple/", &log)
}

/// The tools' virtualenv (pypiserver; its pip also runs `pip download` and
/// its python reads the wheels), made once and reused.
pub fn tools_venv() -> Result<PathBuf, String> {
    let venv = target_dir().join("package-tools").join("venv");
    if !venv_bin(&venv, "python").exists() {
        step(
            "create the tools' virtualenv (target/package-tools/venv)",
            &mut host::new_venv(&venv),
        )?;
    }
    if !venv_bin(&venv, "pypi-server").exists() {
        step(
            &format!("install the local package index: pip install {PYPISERVER}"),
            crate::pip_install(&venv_bin(&venv, "python")).arg(PYPISERVER),
        )?;
    }
    Ok(venv)
}

/// The npm registry the machine's npm is configured with (verdaccio's uplink).
fn configured_npm_registry() -> Result<String, String> {
    let out = host::npm()
        .args(["config", "get", "registry"])
        .output()
        .map_err(|e| format!("npm config get registry: {e}"))?;
    let url = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !url.starts_with("http") {
        return Err(format!("npm config get registry printed {url:?}"));
    }
    Ok(url)
}

/// verdaccio, from `xtask/tools/verdaccio/` (installed with `npm ci` into
/// `target/package-tools/verdaccio/` when its lockfile changed), with a
/// fresh storage and config under `target/package-test/registry/`.
pub fn verdaccio() -> Result<Service, String> {
    let tools = target_dir().join("package-tools").join("verdaccio");
    let sources = root().join("xtask/tools/verdaccio");
    let lock = read(&sources.join("package-lock.json"))?;
    let installed = tools.join("installed-package-lock.json");
    if read(&installed).ok().as_deref() != Some(lock.as_str())
        || !tools.join("node_modules/verdaccio/bin/verdaccio").exists()
    {
        fresh_dir(&tools)?;
        for file in ["package.json", "package-lock.json"] {
            copy_file(&sources.join(file), &tools.join(file))?;
        }
        step(
            "install the local npm registry: npm ci (xtask/tools/verdaccio: verdaccio 6.8.0)",
            host::npm()
                .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
                .current_dir(&tools),
        )?;
        write(&installed, &lock)?;
    }

    let dir = target_dir().join("package-test").join("registry");
    fresh_dir(&dir)?;
    let uplink = configured_npm_registry()?;
    let config = dir.join("config.yaml");
    write(&config, &verdaccio_config(&dir, &uplink))?;
    let port = free_port()?;
    let mut command = Command::new("node");
    command
        .arg(tools.join("node_modules/verdaccio/bin/verdaccio"))
        .arg("--config")
        .arg(&config)
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .current_dir(&dir);
    let service = Service::start("verdaccio", command, port, "/-/ping", &dir.join("log"))?;
    eprintln!("   its uplink for everything but cosmos-emulator*: {uplink}");
    Ok(service)
}

fn verdaccio_config(dir: &Path, uplink: &str) -> String {
    let storage = yaml_quoted(&dir.join("storage").to_string_lossy());
    let htpasswd = yaml_quoted(&dir.join("htpasswd").to_string_lossy());
    format!(
        "# Written by cargo xtask package --test (xtask/src/package/registry.rs).\n\
         storage: {storage}\n\
         auth:\n  htpasswd:\n    file: {htpasswd}\n    max_users: -1\n\
         uplinks:\n  npmjs:\n    url: {uplink}\n    timeout: 60s\n\
         packages:\n\
         \x20 # Ours: published here by the test, never looked up elsewhere.\n\
         \x20 'cosmos-emulator':\n    access: $all\n    publish: $anonymous\n\
         \x20 'cosmos-emulator-*':\n    access: $all\n    publish: $anonymous\n\
         \x20 # Everything else (the SDK, its dependencies) from the uplink.\n\
         \x20 '**':\n    access: $all\n    proxy: npmjs\n\
         log: {{ type: stdout, format: pretty, level: warn }}\n",
    )
}

/// A YAML single-quoted scalar: taken as written (a Windows path's `C:`
/// and backslashes too), with `'` doubled.
fn yaml_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_status_line_is_read_from_a_server() {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            // The whole head, however TCP delivers it.
            let mut request = Vec::new();
            let mut chunk = [0u8; 256];
            while !request.ends_with(b"\r\n\r\n") {
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "the request ended early: {request:?}");
                request.extend_from_slice(&chunk[..n]);
            }
            assert!(request.starts_with(b"GET /-/ping HTTP/1.0\r\n"));
            stream.write_all(b"HTTP/1.1 404 Not Found\r\n\r\n").unwrap();
        });
        assert_eq!(super::http_status(port, "/-/ping"), Some(404));
        server.join().unwrap();
    }

    #[test]
    fn the_config_keeps_ours_off_the_uplink() {
        let dir = std::path::Path::new("registry");
        let config = super::verdaccio_config(dir, "https://registry.npmjs.org/");
        let ours = config.split("'**'").next().unwrap();
        assert!(ours.contains("'cosmos-emulator':") && ours.contains("'cosmos-emulator-*':"));
        assert!(!ours.contains("proxy"), "{config}");
        let storage = dir.join("storage");
        assert!(config.contains(&format!("storage: '{}'\n", storage.display())));
    }

    #[test]
    fn a_windows_path_is_quoted_as_written() {
        assert_eq!(
            super::yaml_quoted(r"C:\a\it's\storage"),
            r"'C:\a\it''s\storage'"
        );
    }
}
