//! The archive loaded as a user loads it (`podman load -i`), into a
//! throwaway storage of its own (`--root` under the target directory): the
//! machine's images are left alone (loading into the storage that holds
//! the manifest list would replace its images' manifests, which podman 4.3
//! then cannot find), and what loads is the archive, not what the build
//! left. It must load under its name, for this machine's platform, with
//! its health check.

use std::path::Path;

use super::build::NAME;
use super::podman::{output, podman};

/// Loads `archive` into a fresh storage in `dir`; what loaded, as
/// `name (os/architecture)`.
pub fn check(archive: &Path, dir: &Path, version: &str) -> Result<String, String> {
    crate::package::fresh_dir(dir)?;
    let store = |command: &mut std::process::Command| {
        command
            .arg("--root")
            .arg(dir.join("root"))
            .arg("--runroot")
            .arg(dir.join("run"))
            // vfs: plain directories, nothing mounted to clean up.
            .args(["--storage-driver", "vfs"]);
    };
    let mut load = podman();
    store(&mut load);
    let said = output(load.args(["load", "--input"]).arg(archive))?;
    let name = format!("localhost/{NAME}:{version}");
    if !said.contains(&format!("Loaded image: {name}")) {
        return Err(format!(
            "podman load -i {} did not load {name}: {said}",
            archive.display()
        ));
    }
    let mut inspect = podman();
    store(&mut inspect);
    let facts = output(inspect.args([
        "image",
        "inspect",
        "--format",
        "{{.Os}}/{{.Architecture}} {{.Config.Healthcheck.Test}}",
        &name,
    ]))?;
    let facts = facts.trim().to_string();
    let result = if facts.ends_with("[CMD /cosmos-emulator health]") {
        Ok(format!("{name} ({facts})"))
    } else {
        Err(format!("{name} loaded without its health check: {facts}"))
    };
    let _ = std::fs::remove_dir_all(dir);
    result
}
