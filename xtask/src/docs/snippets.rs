//! Runs `docs/snippets/go/`, `docs/snippets/http/`, `docs/snippets/tls/` and `docs/snippets/resilience/`.
//!
//! `go/` as a reader of the Go quick start follows it: in a fresh directory,
//! `go mod init`, then `get.sh` (the `go get` the guide shows), then the
//! `_test.go` files copied there and `go test`, with the emulator just built
//! first on PATH (the tests start their own, on free ports).
//!
//! `http/`, `tls/` and `resilience/`: in a fresh
//! directory, the folder's `start.sh` (the command the guide shows) starts
//! `cosmos-emulator` on 127.0.0.1:8081, as a reader would; then every other
//! file of the folder is copied there and run in name order (`.py` with the SDK
//! virtualenv's python, `.mjs` with node and sdk-tests/js's packages, `.sh`
//! with bash -e; the Python and npm packages of this tree importable as
//! `cosmos_emulator` and `cosmos-emulator`), and each must exit 0. `docs/snippets/java/` is a Maven
//! project: copied whole to its fresh directory (so that Maven's output and
//! the trust store its `trust.sh` makes stay under the target directory),
//! the emulator started by its `start.sh`, its other `.sh` files run in name
//! order, then `mvn test` there.

use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{files_under, read};
use crate::server::Server;
use crate::{root, target_dir};

/// `python` is the SDK virtualenv's (`crate::sdk_venv::python`).
pub fn run_all(python: &Path) -> Result<(), String> {
    let js = root().join("sdk-tests/js");
    crate::npm_ci_unless_installed("docs", &js, "@azure/cosmos")?;
    let mut path = vec![
        target_dir().join("debug"),
        python.parent().unwrap().to_path_buf(),
    ];
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let path = std::env::join_paths(path).map_err(|e| e.to_string())?;

    run_go(&path)?;
    for folder in ["http", "tls", "resilience"] {
        let scratch = target_dir().join("docs-snippets").join(folder);
        let _ = std::fs::remove_dir_all(&scratch);
        std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
        #[cfg(unix)]
        link_node_modules(&js.join("node_modules"), &scratch.join("node_modules"))?;

        let source = root().join("docs/snippets").join(folder);
        let server = start_server(&source.join("start.sh"), &scratch, &path)?;
        eprintln!(
            "\n== xtask docs: snippets/{folder}/ against {}",
            server.endpoint
        );
        for file in files_under(&source)? {
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            if name == "start.sh" {
                continue;
            }
            let mut command = match file.extension().and_then(|e| e.to_str()) {
                Some("py") => {
                    // `import cosmos_emulator`: the package's source (its
                    // client needs nothing else), as if installed.
                    let mut python = Command::new(python);
                    python.env("PYTHONPATH", root().join("packages/python/src"));
                    python
                }
                Some("mjs") => Command::new("node"),
                Some("sh") => {
                    let mut bash = Command::new("bash");
                    bash.arg("-e");
                    bash
                }
                _ => {
                    return Err(format!(
                        "{}: no runner for this kind of file",
                        file.display()
                    ))
                }
            };
            // A copy beside node_modules: node resolves packages from the file's place.
            let copy = scratch.join(&name);
            std::fs::copy(&file, &copy).map_err(|e| format!("{}: {e}", file.display()))?;
            run_step((folder, &scratch, &path), &name, command.arg(&copy))?;
        }
        drop(server);
    }
    run_java(&path)
}

/// `scratch`'s `node_modules`: sdk-tests/js's packages (`installed`), each
/// linked, and the npm package of this tree as `cosmos-emulator` (the
/// recipes use its control client), as if installed.
#[cfg(unix)]
fn link_node_modules(installed: &Path, scratch: &Path) -> Result<(), String> {
    let failed = |e: std::io::Error| format!("node_modules in {}: {e}", scratch.display());
    std::fs::create_dir_all(scratch).map_err(failed)?;
    for entry in std::fs::read_dir(installed).map_err(failed)? {
        let entry = entry.map_err(failed)?;
        std::os::unix::fs::symlink(entry.path(), scratch.join(entry.file_name()))
            .map_err(failed)?;
    }
    let package = root().join("packages/npm/cosmos-emulator");
    std::os::unix::fs::symlink(package, scratch.join("cosmos-emulator")).map_err(failed)
}

/// `docs/snippets/java/`, as a reader follows the Java quick start.
fn run_java(path: &std::ffi::OsStr) -> Result<(), String> {
    let scratch = target_dir().join("docs-snippets").join("java");
    let _ = std::fs::remove_dir_all(&scratch);
    let source = root().join("docs/snippets/java");
    for file in files_under(&source)? {
        let relative = file.strip_prefix(&source).map_err(|e| e.to_string())?;
        let copy = scratch.join(relative);
        if let Some(parent) = copy.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::copy(&file, &copy).map_err(|e| format!("{}: {e}", file.display()))?;
    }
    let server = start_server(&source.join("start.sh"), &scratch, path)?;
    eprintln!(
        "\n== xtask docs: snippets/java/ against {}",
        server.endpoint
    );
    let mut scripts: Vec<_> = std::fs::read_dir(&scratch)
        .map_err(|e| format!("{}: {e}", scratch.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sh"))
        .filter(|p| p.file_name().is_some_and(|n| n != "start.sh"))
        .collect();
    scripts.sort();
    let mut steps: Vec<(String, Command)> = scripts
        .iter()
        .map(|script| {
            let mut bash = Command::new("bash");
            bash.arg("-e").arg(script);
            (script.file_name().unwrap().to_string_lossy().into(), bash)
        })
        .collect();
    let mut maven = Command::new("mvn");
    maven.args(["--batch-mode", "--no-transfer-progress", "test"]);
    steps.push(("mvn test".into(), maven));
    for (name, mut command) in steps {
        run_step(("java", &scratch, path), &name, &mut command)?;
    }
    drop(server);
    Ok(())
}

/// `docs/snippets/go/`: a module made as the guide says (`go mod init`,
/// `get.sh`), its tests copied in, `go test`; `path` puts the emulator
/// just built first.
fn run_go(path: &std::ffi::OsStr) -> Result<(), String> {
    let source = root().join("docs/snippets/go");
    let scratch = target_dir().join("docs-snippets").join("go");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    eprintln!("\n== xtask docs: snippets/go/ with go test");
    let run = |what: &str, command: &mut Command| run_step(("go", &scratch, path), what, command);
    run(
        "go mod init",
        Command::new("go").args(["mod", "init", "example.com/quickstart"]),
    )?;
    for file in files_under(&source)? {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if name == "get.sh" {
            run("get.sh", Command::new("bash").arg("-e").arg(&file))?;
        } else if name.ends_with("_test.go") {
            std::fs::copy(&file, scratch.join(&name))
                .map_err(|e| format!("{}: {e}", file.display()))?;
        } else {
            return Err(format!(
                "{}: no runner for this kind of file",
                file.display()
            ));
        }
    }
    run(
        "go test",
        Command::new("go").args(["test", "-count=1", "./..."]),
    )
}

/// Runs one step of a snippet folder (`folder`, copied into `scratch`, with
/// `path` as PATH): it must exit 0, or its output is the error.
fn run_step(
    (folder, scratch, path): (&str, &Path, &std::ffi::OsStr),
    name: &str,
    command: &mut Command,
) -> Result<(), String> {
    let output = command
        .current_dir(scratch)
        .env("PATH", path)
        .output()
        .map_err(|e| format!("docs/snippets/{folder}: {name}: cannot run: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "docs/snippets/{folder}: {name} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    eprintln!("   {name}: ok");
    Ok(())
}

/// The emulator a folder's `start.sh` starts (stopped when dropped), in
/// `dir`, its stderr in `dir/emulator.log`.
fn start_server(script: &Path, dir: &Path, path: &std::ffi::OsStr) -> Result<Server, String> {
    // The guide's command is one line without quotes: run it directly, so
    // that stopping the child stops the emulator itself.
    let text = read(script)?;
    let words: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect();
    let [program, args @ ..] = words.as_slice() else {
        return Err(format!("{}: no command", script.display()));
    };
    if TcpStream::connect(("127.0.0.1", 8081)).is_ok() {
        return Err("127.0.0.1:8081 is in use: the guide's examples need it free".into());
    }
    // With PATH set on the command, the program is looked up on that PATH.
    let mut command = Command::new(program);
    command.args(args).current_dir(dir).env("PATH", path);
    Server::spawn(command, &dir.join("emulator.log"), Duration::from_secs(30))
        .map_err(|e| format!("{}: {e}", script.display()))
}
