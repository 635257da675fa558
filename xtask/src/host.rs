//! How this machine names the programs xtask runs, and the other places
//! where Unix and Windows (the release workflow's Windows runner) differ:
//! a virtualenv's `bin/x` or `Scripts\x.exe`, `npm` or `npm.cmd`, `python3`
//! or `python`, `/dev/null` or `nul`, the system's directories for a plain
//! PATH, the executable bit.
//!
//! Each difference is a method of [`Os`], which takes the OS as a value,
//! so that both branches are tested on any machine; [`Os::HERE`] is the
//! only `cfg!` and the free functions below apply it (`make_executable`
//! alone is two `#[cfg]` versions: only Unix has the API).

use std::ffi::OsString;
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

    /// The null device, as Python's `os.devnull` names it (pip reads no
    /// configuration file when PIP_CONFIG_FILE is exactly that).
    pub fn devnull(self) -> &'static str {
        match self {
            Os::Unix => "/dev/null",
            Os::Windows => "nul",
        }
    }

    /// The directories of a PATH that holds `first`, then only the
    /// system's own programs (no Rust toolchain, nothing a developer added):
    /// `/usr/local/bin`, `/usr/bin`, `/bin`; on Windows `System32` and the
    /// Windows directory (`system_root`, `%SystemRoot%`).
    pub fn plain_path(self, first: &Path, system_root: Option<&Path>) -> Vec<PathBuf> {
        let mut dirs = vec![first.to_path_buf()];
        match self {
            Os::Unix => dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from)),
            Os::Windows => {
                let root = system_root.unwrap_or(Path::new(r"C:\Windows"));
                dirs.push(root.join("System32"));
                dirs.push(root.to_path_buf());
            }
        }
        dirs
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

/// A PATH of `first` and the system's directories (see [`Os::plain_path`]).
pub fn plain_path(first: &Path) -> Result<OsString, String> {
    let root = std::env::var_os("SystemRoot").map(PathBuf::from);
    std::env::join_paths(Os::HERE.plain_path(first, root.as_deref()))
        .map_err(|e| format!("a PATH with {}: {e}", first.display()))
}

/// Whether two paths name the same file (what a program found on PATH
/// is): compared as the file system resolves them, so that neither a
/// symbolic link nor Windows' case-insensitive names (`.EXE` from PATHEXT)
/// tell them apart.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Marks a file executable (rwxr-xr-x). Windows has no such bit: nothing
/// to do there (and what npm packs there carries none either).
#[cfg(unix)]
pub fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(not(unix))]
pub fn make_executable(_path: &Path) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Os;
    use std::path::{Path, PathBuf};

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
        assert_eq!(
            (Os::Unix.python3(), Os::Unix.npm(), Os::Unix.devnull()),
            ("python3", "npm", "/dev/null")
        );
        assert_eq!(
            (
                Os::Windows.python3(),
                Os::Windows.npm(),
                Os::Windows.devnull()
            ),
            ("python", "npm.cmd", "nul")
        );
        assert_eq!(Os::Windows.exe("cosmos-emulator"), "cosmos-emulator.exe");
        assert_eq!(Os::Unix.exe("cosmos-emulator"), "cosmos-emulator");
    }

    #[test]
    fn a_plain_path_has_the_system_directories_after_the_first() {
        let first = Path::new("venv/bin");
        assert_eq!(
            Os::Unix.plain_path(first, None),
            ["venv/bin", "/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from)
        );
        let root = Path::new("D:/Win");
        assert_eq!(
            Os::Windows.plain_path(first, Some(root)),
            vec![
                first.to_path_buf(),
                root.join("System32"),
                root.to_path_buf()
            ]
        );
        let default = Os::Windows.plain_path(first, None);
        assert_eq!(default[2], PathBuf::from(r"C:\Windows"));
    }

    #[test]
    fn this_machine_is_one_of_them() {
        assert_eq!(Os::HERE == Os::Windows, cfg!(windows));
        let here = std::env::temp_dir();
        assert!(super::same_file(&here, &here.join(".")));
        assert!(!super::same_file(&here, &here.join("no-such-file")));
    }
}
