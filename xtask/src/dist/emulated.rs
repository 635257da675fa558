//! A release binary run where it can run on this machine (natively, under
//! qemu-user, under wine) and checked from the outside: the conformance
//! suite against it (every case as its expectations list says), then a
//! Python SDK smoke test (`smoke.py`: create, TTL through the test clock,
//! query). What wine needs (a prefix, the `bcryptprimitives.dll` stand-in
//! of `wine/`) is made here, under the target directory: it belongs to the
//! harness, never to the shipped binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::targets::{Arch, Runner, Target};
use crate::server::Server;
use crate::{root, target_dir};

/// qemu and wine start slower than the binary itself; wine's first start
/// in a fresh prefix takes seconds.
const STARTUP: Duration = Duration::from_secs(120);

pub fn check(target: &Target, binary: &Path) -> Result<(), String> {
    let dir = target_dir().join("dist-run").join(target.triple);
    crate::package::fresh_dir(&dir)?;
    let runner =
        runner_here(target).ok_or_else(|| format!("{} does not run here", target.triple))?;
    let how = describe(runner);
    let mut command = command(runner, binary);
    if runner == Runner::Wine {
        let prefix = wine_prefix()?;
        command.env("WINEPREFIX", prefix).env("WINEDEBUG", "-all");
    }
    command.args(["--host", "127.0.0.1", "--port", "0", "--clock", "manual"]);
    let started = Instant::now();
    let server = Server::spawn(command, &dir.join("emulator.log"), STARTUP)?;
    eprintln!(
        "\n== xtask dist: {} ({how}) answers at {} after {:.2} s",
        target.triple,
        server.endpoint,
        started.elapsed().as_secs_f64()
    );

    let suite = crate::conformance_binary("dist")?;
    let started = Instant::now();
    crate::step(
        "dist",
        &format!("the conformance suite against {} ({how})", target.triple),
        Command::new(suite)
            .args([
                "--endpoint",
                &server.endpoint,
                "--expectations",
                "cosmos-emulator",
            ])
            .arg("--report-dir")
            .arg(dir.join("conformance"))
            .current_dir(root()),
    )?;
    eprintln!("   conformance: {:.1} s", started.elapsed().as_secs_f64());

    let python = crate::sdk_venv::python()?;
    let smoke = dir.join("smoke.py");
    std::fs::write(&smoke, include_str!("smoke.py"))
        .map_err(|e| format!("{}: {e}", smoke.display()))?;
    crate::step(
        "dist",
        &format!("the Python SDK smoke test against {}", target.triple),
        Command::new(python).arg(&smoke).arg(&server.endpoint),
    )?;
    drop(server);
    Ok(())
}

/// How this machine runs a target's binary, if it can: natively on the
/// target's own platform (the release workflow's runners; a static musl
/// binary on any Linux of its architecture), else as the table's `runner`
/// says when this is an x86-64 Linux machine. Never `Elsewhere`.
pub fn runner_here(target: &Target) -> Option<Runner> {
    let host_arch = match std::env::consts::ARCH {
        "x86_64" => Arch::X86_64,
        "aarch64" => Arch::Aarch64,
        _ => return None,
    };
    let host_os = match std::env::consts::OS {
        "linux" => "linux",
        "macos" => "darwin",
        "windows" => "win32",
        _ => return None,
    };
    if target.arch == host_arch && target.npm_os == host_os {
        // glibc builds need a glibc host; this process tells which it is.
        let host_musl = cfg!(target_env = "musl");
        if target.npm_libc != Some("glibc") || !host_musl {
            return Some(Runner::Native);
        }
    }
    if host_os != "linux" || host_arch != Arch::X86_64 {
        return None;
    }
    Some(target.runner).filter(|r| *r != Runner::Elsewhere)
}

fn command(runner: Runner, binary: &Path) -> Command {
    let mut command = match runner {
        Runner::Qemu { sysroot } => {
            let mut qemu = Command::new("qemu-aarch64-static");
            if let Some(sysroot) = sysroot {
                qemu.args(["-L", sysroot]);
            }
            qemu
        }
        Runner::Wine => Command::new("wine"),
        Runner::Native | Runner::Elsewhere => return Command::new(binary),
    };
    command.arg(binary);
    command
}

/// For messages: `native`, `qemu-user`, `wine`.
fn describe(runner: Runner) -> &'static str {
    match runner {
        Runner::Native => "native",
        Runner::Qemu { .. } => "qemu-user",
        Runner::Wine => "wine",
        Runner::Elsewhere => "elsewhere",
    }
}

/// A wine prefix under the target directory, initialised once, with the
/// stand-in DLL in its system32.
fn wine_prefix() -> Result<PathBuf, String> {
    let prefix = target_dir().join("dist-run").join("wine-prefix");
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.join("kernel32.dll").exists() {
        std::fs::create_dir_all(&prefix).map_err(|e| format!("{}: {e}", prefix.display()))?;
        crate::step(
            "dist",
            "make a wine prefix (wineboot --init)",
            Command::new("wineboot")
                .arg("--init")
                .env("WINEPREFIX", &prefix)
                .env("WINEDEBUG", "-all")
                .env("WINEDLLOVERRIDES", "mscoree,mshtml="),
        )?;
    }
    let shim = system32.join("bcryptprimitives.dll");
    let sources = root().join("xtask/src/dist/wine");
    crate::step(
        "dist",
        "build the harness's bcryptprimitives.dll (ProcessPrng over RtlGenRandom) for wine",
        Command::new("x86_64-w64-mingw32-gcc")
            .args(["-shared", "-O2", "-o"])
            .arg(&shim)
            .arg(sources.join("bcryptprimitives.c"))
            .arg(sources.join("bcryptprimitives.def"))
            .arg("-ladvapi32"),
    )?;
    Ok(prefix)
}
