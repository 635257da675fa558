//! The build tools, from PyPI into one virtualenv under the target
//! directory (made once, reused): maturin drives every target's build and
//! packs its wheel; zig (the `ziglang` wheel) is its C compiler and linker
//! for Linux and macOS; auditwheel and twine check the wheels. Pinned, so
//! that a binary's glibc floor and a wheel's tag do not move with whatever
//! PyPI serves next.

use std::path::PathBuf;
use std::process::Command;

use crate::target_dir;

pub const PINS: &[&str] = &[
    "maturin==1.16.0",
    "ziglang==0.17.0",
    "auditwheel==6.8.2",
    "twine==7.0.0",
];

pub struct Tools {
    venv: PathBuf,
}

impl Tools {
    /// The virtualenv with the pinned tools, installed when missing.
    pub fn install() -> Result<Tools, String> {
        let venv = target_dir().join("dist-tools").join("venv");
        let tools = Tools { venv };
        if !tools.bin("python").exists() {
            crate::step(
                "dist",
                "create the tools' virtualenv (target/dist-tools/venv)",
                &mut crate::host::new_venv(&tools.venv),
            )?;
        }
        // Quick when the pinned versions are there already.
        crate::step(
            "dist",
            &format!("install the build tools: pip install {}", PINS.join(" ")),
            crate::pip_install(&tools.bin("python")).args(PINS),
        )?;
        Ok(tools)
    }

    /// A program of the virtualenv (in Scripts, as .exe, on Windows).
    pub fn bin(&self, program: &str) -> PathBuf {
        crate::host::venv_bin(&self.venv, program)
    }

    /// A command from the virtualenv, with its bin first on PATH (maturin
    /// finds zig as `python -m ziglang` there).
    pub fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin(program));
        command.env("PATH", self.path());
        command
    }

    fn path(&self) -> std::ffi::OsString {
        let mut paths = vec![self
            .bin("python")
            .parent()
            .map(PathBuf::from)
            .unwrap_or_default()];
        if let Some(path) = std::env::var_os("PATH") {
            paths.extend(std::env::split_paths(&path));
        }
        std::env::join_paths(paths).unwrap_or_default()
    }
}
