//! Where the real clients run: a network namespace of their own, with
//! podman's Docker API service (`podman system service`) listening on a
//! socket under the target directory.
//!
//! The namespace, because the clients publish ports on every interface
//! (Testcontainers for Python binds the emulator's 8081 to the host's 8081;
//! Node's module and compose files publish without an address): inside it
//! there is only a loopback interface, so nothing is reachable from outside
//! the machine and the fixed port 8081 cannot collide with an emulator
//! another task runs on the host. Every process of the clients' tests is
//! started in it with `nsenter --net` (the mount namespace stays the
//! host's, so podman sees its usual storage).
//!
//! Both are removed when dropped: the service stopped with SIGTERM (SIGKILL
//! if it lingers), the namespace deleted.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::podman::{output, shown};

/// A named network namespace with its loopback up.
pub struct Namespace {
    pub name: String,
}

impl Namespace {
    pub fn create() -> Result<Namespace, String> {
        let name = format!("cosmos-image-{}", std::process::id());
        // Left by an earlier run of this pid, if any.
        let _ = Command::new("ip").args(["netns", "delete", &name]).output();
        output(Command::new("ip").args(["netns", "add", &name]))
            .map_err(|e| format!("{e}\nthe clients' tests need root and iproute2 (`ip netns`)"))?;
        let namespace = Namespace { name };
        output(Command::new("ip").args(["-n", &namespace.name, "link", "set", "lo", "up"]))?;
        Ok(namespace)
    }

    /// `program` to be run inside the namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("nsenter");
        command
            .arg(format!("--net=/run/netns/{}", self.name))
            .arg("--")
            .arg(program);
        command
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "delete", &self.name])
            .output();
    }
}

/// `podman system service` on a socket, in the namespace.
pub struct Service {
    child: Child,
    pub socket: PathBuf,
}

impl Service {
    /// Starts it; returns once the socket answers `GET /_ping`.
    pub fn start(namespace: &Namespace, dir: &Path) -> Result<Service, String> {
        let socket = dir.join("podman.sock");
        let _ = std::fs::remove_file(&socket);
        let log = dir.join("podman-service.log");
        let log_file =
            std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut command = namespace.command("podman");
        command
            .args(["system", "service", "--time=0"])
            .arg(format!("unix://{}", socket.display()))
            .stdout(Stdio::null())
            .stderr(log_file);
        let what = shown(&command);
        let child = command
            .spawn()
            .map_err(|e| format!("{what}: cannot start it: {e}"))?;
        let mut service = Service { child, socket };
        let started = Instant::now();
        while !service.pings() {
            if let Ok(Some(status)) = service.child.try_wait() {
                return Err(format!(
                    "{what} exited ({status}); its log: {}",
                    log.display()
                ));
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(format!(
                    "{what}: no answer on {} within 30 s; its log: {}",
                    service.socket.display(),
                    log.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "   podman's Docker API on {} ({:.1} s)",
            service.socket.display(),
            started.elapsed().as_secs_f64()
        );
        Ok(service)
    }

    /// `unix:///…/podman.sock`, for DOCKER_HOST.
    pub fn docker_host(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    fn pings(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::os::unix::net::UnixStream::connect(&self.socket) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        if stream
            .write_all(b"GET /_ping HTTP/1.1\r\nHost: d\r\nConnection: close\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).is_ok() && &head[9..12] == b"200"
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        // nsenter execs podman: the pid is the service's own.
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                let _ = std::fs::remove_file(&self.socket);
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}
