//! How this machine names the programs xtask runs, and the other places
//! where Unix and Windows (the release workflow's Windows runner) differ:
//! a virtualenv's `bin/x` or `Scripts\x.exe`, `npm` or `npm.cmd`, `python3`
//! or `python`.
//!
//! Each difference is a method of [`Os`], which takes the OS as a value,
//! so that both branches are tested on any machine; [`Os::HERE`] is the
//! only `cfg!` and the free functions below apply it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The two conventions xtask knows (macOS is a Unix here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Os {
    Unix,
    Windows,
}

impl Os {
    /// This machine's.
    pub const HERE: Os = if cfg!(windows) { Os::Windows } else { Os::Unix };

    /// A program's file name: `name`, or `name.exe` on Windows.
    pub fn exe(self, name: &str) -> String {
        match self {
            Os::Unix => name.to_string(),
            Os::Windows => format!("{name}.exe"),
        }
    }

    /// The directory of a virtualenv's programs (its python, pip, console
    /// scripts and the scripts of the wheels installed into it).
    pub fn venv_scripts(self, venv: &Path) -> PathBuf {
        match self {
            Os::Unix => venv.join("bin"),
            Os::Windows => venv.join("Scripts"),
        }
    }

    /// A program of a virtualenv: `bin/name`, or `Scripts\name.exe`.
    pub fn venv_bin(self, venv: &Path, program: &str) -> PathBuf {
        self.venv_scripts(venv).join(self.exe(program))
    }

    /// The Python 3 on PATH that makes the virtualenvs: `python3` (PEP
    /// 394), or `python` on Windows, where neither python.org's installer
    /// nor actions/setup-python provides a `python3.exe`.
    pub fn python3(self) -> &'static str {
        match self {
            Os::Unix => "python3",
            Os::Windows => "python",
        }
    }

    /// npm: on Windows the batch file `npm.cmd` (Command adds `.exe` to a
    /// bare name, never `.cmd`, and runs a `.cmd` through cmd.exe with its
    /// own escaping since Rust 1.77).
    pub fn npm(self) -> &'static str {
        match self {
            Os::Unix => "npm",
            Os::Windows => "npm.cmd",
        }
    }
}

/// A program of a virtualenv on this machine (see [`Os::venv_bin`]).
pub fn venv_bin(venv: &Path, program: &str) -> PathBuf {
    Os::HERE.venv_bin(venv, program)
}

/// `python3 -m venv <venv>` with this machine's Python 3.
pub fn new_venv(venv: &Path) -> Command {
    let mut command = Command::new(Os::HERE.python3());
    command.args(["-m", "venv"]).arg(venv);
    command
}

/// npm, by the name this machine runs it under.
pub fn npm() -> Command {
    Command::new(Os::HERE.npm())
}

#[cfg(test)]
mod tests {
    use super::Os;
    use std::path::Path;

    #[test]
    fn a_virtualenvs_programs() {
        let venv = Path::new("venv");
        assert_eq!(Os::Unix.venv_bin(venv, "python"), venv.join("bin/python"));
        assert_eq!(
            Os::Unix.venv_bin(venv, "cosmos-emulator"),
            venv.join("bin").join("cosmos-emulator")
        );
        assert_eq!(
            Os::Windows.venv_bin(venv, "python"),
            venv.join("Scripts").join("python.exe")
        );
        assert_eq!(
            Os::Windows.venv_bin(venv, "pypi-server"),
            venv.join("Scripts").join("pypi-server.exe")
        );
        assert_eq!(Os::Windows.venv_scripts(venv), venv.join("Scripts"));
    }

    #[test]
    fn the_programs_names() {
        assert_eq!((Os::Unix.python3(), Os::Unix.npm()), ("python3", "npm"));
        assert_eq!(
            (Os::Windows.python3(), Os::Windows.npm()),
            ("python", "npm.cmd")
        );
        assert_eq!(Os::Windows.exe("cosmos-emulator"), "cosmos-emulator.exe");
        assert_eq!(Os::Unix.exe("cosmos-emulator"), "cosmos-emulator");
    }

    #[test]
    fn this_machine_is_one_of_them() {
        assert_eq!(Os::HERE == Os::Windows, cfg!(windows));
    }
}
