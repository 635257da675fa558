//! The Python wheels `cosmos-emulator` (packages/python), one per target,
//! as `cargo xtask dist` built them with maturin (`bin` bindings) and
//! checked them (auditwheel, twine). Here:
//! - `check`: each wheel holds exactly one script,
//!   `cosmos_emulator-<v>.data/scripts/cosmos-emulator` (`.exe` in the
//!   win_amd64 one), executable where that matters, and it is the target's
//!   release binary byte for byte;
//! - `test`: pypiserver serves all of them; `pip download --platform` must
//!   pick each platform's own wheel from it; a fresh virtualenv installs
//!   `cosmos-emulator` by name from it (nothing else from it, nothing of
//!   ours from PyPI) and runs packages/python/tests; then the quick start,
//!   as a reader follows it, beside the wheels.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{copy_file, fresh_dir, output, registry, same_binary, snippet, timed, Artifact, Build};
use crate::host::{self, venv_bin, Os};
use crate::{root, target_dir};

fn package_dir() -> PathBuf {
    root().join("packages/python")
}

/// A virtualenv, and commands that run in it as a Python user's would:
/// its programs first on PATH, then only the system's (no Rust toolchain,
/// no ~/.cargo/bin), no cargo or rustup variables, no binary named by the
/// environment.
struct User {
    venv: PathBuf,
    path: OsString,
}

impl User {
    /// The virtualenv at `venv`, made with this machine's Python 3 unless
    /// it is there already.
    fn new(venv: &Path, what: &str) -> Result<User, String> {
        if !venv_bin(venv, "python").exists() {
            timed(what, &mut host::new_venv(venv))?;
        }
        Ok(User {
            venv: venv.to_path_buf(),
            path: host::plain_path(&Os::HERE.venv_scripts(venv))?,
        })
    }

    /// A program of the virtualenv (`Scripts\name.exe` on Windows).
    fn bin(&self, program: &str) -> PathBuf {
        venv_bin(&self.venv, program)
    }

    /// `program` (a path, or a name looked up on this PATH) as the user.
    fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new(program);
        command.env("PATH", &self.path);
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("CARGO") || name.starts_with("RUSTUP") || name.starts_with("RUST_")
            {
                command.env_remove(name.as_ref());
            }
        }
        command
            .env_remove("COSMOS_EMULATOR_BINARY")
            .env_remove("PYTHONPATH")
            .env_remove("VIRTUAL_ENV");
        command
    }

    /// The virtualenv's python.
    fn python(&self) -> Command {
        self.command(self.bin("python"))
    }

    /// `python -m pip install --quiet` of the virtualenv.
    fn pip_install(&self) -> Command {
        let mut pip = self.python();
        pip.args(crate::PIP_INSTALL);
        pip
    }
}

/// No index, find-links or extra index from the environment: pip sees only
/// the index the command names.
fn only_the_named_index(command: &mut Command) -> &mut Command {
    command
        .env_remove("PIP_INDEX_URL")
        .env_remove("PIP_EXTRA_INDEX_URL")
        .env_remove("PIP_FIND_LINKS")
        .env_remove("PIP_NO_INDEX")
        .env("PIP_CONFIG_FILE", Os::HERE.devnull())
}

/// The member names of a wheel, the Unix mode and the SHA-256 of each,
/// read by the standard library's zipfile (no zip crate in the tree).
const LIST_WHEEL: &str = "\
import hashlib, json, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    print(json.dumps([
        {'name': i.filename, 'mode': i.external_attr >> 16,
         'sha256': hashlib.sha256(wheel.read(i)).hexdigest()}
        for i in wheel.infolist()
    ]))
";

fn list(wheel: &Path) -> Result<Vec<serde_json::Value>, String> {
    let python = venv_bin(&registry::tools_venv()?, "python");
    let listing = Command::new(&python)
        .args(["-c", LIST_WHEEL])
        .arg(wheel)
        .output()
        .map_err(|e| format!("python: {e}"))?;
    if !listing.status.success() {
        return Err(format!(
            "cannot read {}: {}",
            wheel.display(),
            String::from_utf8_lossy(&listing.stderr)
        ));
    }
    serde_json::from_slice(&listing.stdout)
        .map_err(|e| format!("{}: the listing is not JSON: {e}", wheel.display()))
}

/// Every wheel's layout: its one script is the target's binary, under the
/// name the module looks for on that platform. A wheel whose module is not
/// this tree's (built before a change to packages/python/src) is noted
/// here; `--test` refuses to test this tree's suite against it.
pub fn check(build: &Build) -> Result<(), String> {
    for artifact in &build.artifacts {
        let wheel = &artifact.wheel;
        let members = list(wheel)?;
        check_members(artifact, &build.version, &members)
            .map_err(|e| format!("{}: {e}", wheel.display()))?;
        eprintln!(
            "   {}: {} files; its script {} is the release binary",
            wheel.file_name().unwrap_or_default().to_string_lossy(),
            members.len(),
            script_name(artifact, &build.version)
        );
        let stale = differs_from_the_tree(&members)?;
        if !stale.is_empty() {
            eprintln!(
                "   note: its module is not this tree's ({}); cargo xtask dist --target {} builds it again",
                stale.join(", "),
                artifact.target.triple
            );
        }
    }
    Ok(())
}

/// The module's files (`cosmos_emulator/...`) that differ between the
/// wheel and packages/python/src, or are in only one of them.
fn differs_from_the_tree(members: &[serde_json::Value]) -> Result<Vec<String>, String> {
    let source = package_dir().join("src");
    let mut in_tree = Vec::new();
    let module = source.join("cosmos_emulator");
    for entry in std::fs::read_dir(&module).map_err(|e| format!("{}: {e}", module.display()))? {
        let entry = entry.map_err(|e| format!("{}: {e}", module.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() && !name.ends_with(".pyc") {
            in_tree.push(format!("cosmos_emulator/{name}"));
        }
    }
    let mut differ = Vec::new();
    for name in &in_tree {
        let member = members.iter().find(|m| m["name"] == name.as_str());
        let digests = super::text_digests(&source.join(name))?;
        match member {
            None => differ.push(format!("{name} not in the wheel")),
            Some(m) if !digests.iter().any(|d| m["sha256"].as_str() == Some(d)) => {
                differ.push(format!("{name} differs"))
            }
            Some(_) => {}
        }
    }
    for m in members {
        let name = m["name"].as_str().unwrap_or_default();
        if name.starts_with("cosmos_emulator/") && !in_tree.iter().any(|t| t == name) {
            differ.push(format!("{name} not in the tree"));
        }
    }
    differ.sort();
    Ok(differ)
}

/// `cosmos_emulator-<v>.data/scripts/cosmos-emulator[.exe]`
fn script_name(artifact: &Artifact, version: &str) -> String {
    format!(
        "cosmos_emulator-{version}.data/scripts/{}",
        artifact.target.binary_name()
    )
}

fn check_members(
    artifact: &Artifact,
    version: &str,
    members: &[serde_json::Value],
) -> Result<(), String> {
    let name = |m: &serde_json::Value| m["name"].as_str().unwrap_or_default().to_string();
    let scripts: Vec<&serde_json::Value> = members
        .iter()
        .filter(|m| name(m).contains(".data/scripts/"))
        .collect();
    let expected = script_name(artifact, version);
    let [script] = scripts.as_slice() else {
        return Err(format!(
            "expected one script, {expected}; found {:?}",
            scripts.iter().map(|m| name(m)).collect::<Vec<_>>()
        ));
    };
    if name(script) != expected {
        return Err(format!(
            "its script is {}, expected {expected}",
            name(script)
        ));
    }
    // pip keeps the zip's executable bits on Unix; Windows has none to keep.
    let mode = script["mode"].as_u64().unwrap_or(0);
    if artifact.target.npm_os != "win32" && mode & 0o111 != 0o111 {
        return Err(format!("{expected} is not executable (mode {mode:o})"));
    }
    let binary = super::sha256_file(&artifact.binary)?;
    if script["sha256"].as_str() != Some(binary.as_str()) {
        return Err(format!(
            "{expected} is not {} byte for byte",
            artifact.binary.display()
        ));
    }
    for module in [
        "cosmos_emulator/__init__.py",
        "cosmos_emulator/_binary.py",
        "cosmos_emulator/pytest_plugin.py",
        &format!("cosmos_emulator-{version}.dist-info/entry_points.txt"),
    ] {
        if !members.iter().any(|m| name(m) == module) {
            return Err(format!("no {module}"));
        }
    }
    Ok(())
}

/// The local index, then each platform's pick, the install by name and
/// the suite, then the quick start.
pub fn test(build: &Build) -> Result<(), String> {
    let host = build.host()?;
    // packages/python/tests is this tree's: it tests this tree's module.
    let stale = differs_from_the_tree(&list(&host.wheel)?)?;
    if !stale.is_empty() {
        return Err(format!(
            "{} was built from another tree than this one (its cosmos_emulator module: {}); \
             the package's tests would test that one: cargo xtask dist --target {} builds it again",
            host.wheel.display(),
            stale.join(", "),
            host.target.triple
        ));
    }
    // The index's directory: the wheels of this version, nothing else.
    let packages = target_dir().join("package-test").join("pypi");
    fresh_dir(&packages)?;
    for artifact in &build.artifacts {
        let name = artifact.wheel.file_name().ok_or("a wheel without a name")?;
        copy_file(&artifact.wheel, &packages.join(name))?;
    }
    let index = registry::pypiserver(&packages)?;
    let simple = format!("{}/simple", index.url);
    each_platform_gets_its_wheel(build, &simple)?;
    install_by_name(build, host, &index.url, &simple)?;
    drop(index);
    first_test(build, host)
}

/// `pip download --platform <tag>` from the local index picks exactly that
/// platform's wheel, for every wheel there and each tag it carries (a
/// manylinux2014 wheel's PEP 600 alias too).
fn each_platform_gets_its_wheel(build: &Build, simple: &str) -> Result<(), String> {
    let pip = venv_bin(&registry::tools_venv()?, "python");
    let downloads = target_dir().join("package-test").join("pip-download");
    for artifact in &build.artifacts {
        for tag in artifact.target.wheel_tags() {
            let dir = downloads.join(tag);
            fresh_dir(&dir)?;
            let mut command = Command::new(&pip);
            only_the_named_index(&mut command)
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--quiet",
                    "--disable-pip-version-check",
                    "--no-cache-dir",
                    "--only-binary=:all:",
                    "--platform",
                    tag,
                    "--python-version",
                    "3.11",
                    "--no-deps",
                    "--index-url",
                    simple,
                    "cosmos-emulator",
                    "-d",
                ])
                .arg(&dir);
            timed(
                &format!("pip download --platform {tag} cosmos-emulator (the local index)"),
                &mut command,
            )?;
            let got: Vec<String> = std::fs::read_dir(&dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            let expected = artifact
                .wheel
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            if got != [expected.as_ref()] {
                return Err(format!(
                    "pip download --platform {tag} got {got:?}, expected [{expected:?}]"
                ));
            }
            eprintln!("   {tag}: {expected}");
        }
    }
    Ok(())
}

/// A fresh virtualenv gets `cosmos-emulator` by name from the local index
/// (and only from there), then the test requirements from PyPI, and runs
/// packages/python/tests.
fn install_by_name(build: &Build, host: &Artifact, url: &str, simple: &str) -> Result<(), String> {
    let venv = target_dir().join("package-test").join("python-venv");
    fresh_dir(&venv)?;
    let user = User::new(
        &venv,
        "create a fresh virtualenv (target/package-test/python-venv)",
    )?;
    let report = target_dir()
        .join("package-test")
        .join("pip-install-report.json");
    let mut install = user.pip_install();
    only_the_named_index(&mut install)
        .args([
            "--no-deps",
            "--no-cache-dir",
            "--index-url",
            simple,
            "--report",
        ])
        .arg(&report)
        .arg("cosmos-emulator");
    let seconds = timed(
        "pip install cosmos-emulator, by name, from the local index alone",
        &mut install,
    )?;
    let report: serde_json::Value = serde_json::from_str(&super::read(&report)?)
        .map_err(|e| format!("pip's install report: {e}"))?;
    let wheel_name = host.wheel.file_name().unwrap_or_default().to_string_lossy();
    let installed: Vec<(String, String)> = report["install"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    (
                        i["metadata"]["name"].as_str().unwrap_or("?").to_string(),
                        i["download_info"]["url"]
                            .as_str()
                            .unwrap_or("?")
                            .to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    match installed.as_slice() {
        [(name, from)]
            if name == "cosmos-emulator"
                && from.starts_with(&format!("{url}/"))
                && from
                    .split('#')
                    .next()
                    .unwrap_or("")
                    .ends_with(&format!("/{wheel_name}")) =>
        {
            eprintln!("   installed {wheel_name} from {from} in {seconds:.1} s");
        }
        other => {
            return Err(format!(
                "pip should have installed {wheel_name} alone, from {url}; it installed {other:?}"
            ))
        }
    }
    let script = user.bin("cosmos-emulator");
    same_binary(&script, host)?;

    // The wheel put the binary on the venv's PATH (found as programs look
    // for a command, with PATHEXT on Windows; no shell needed), and it runs
    // there, by its bare name, with no Rust toolchain in reach.
    let found = output(
        "the wheel puts cosmos-emulator on PATH: shutil.which('cosmos-emulator')",
        user.python().args([
            "-c",
            "import shutil; print(shutil.which('cosmos-emulator'))",
        ]),
    )?;
    if !crate::host::same_file(Path::new(found.trim()), &script) {
        return Err(format!(
            "cosmos-emulator resolves to {:?}, expected {}",
            found.trim(),
            script.display()
        ));
    }
    let version = output(
        "cosmos-emulator --version, from the virtualenv, without a Rust toolchain",
        user.command("cosmos-emulator").arg("--version"),
    )?;
    eprint!("{version}");
    if version.trim() != format!("cosmos-emulator {}", build.version) {
        return Err(format!(
            "cosmos-emulator --version printed {:?}, expected \"cosmos-emulator {}\"",
            version.trim(),
            build.version
        ));
    }
    // The module needs only the standard library: start one, move its
    // clock, stop it, with nothing else installed.
    timed(
        "the module alone (no azure-cosmos): start, advance, stop",
        user.python().args([
            "-c",
            "import importlib.util, cosmos_emulator\n\
             assert importlib.util.find_spec('azure') is None, 'azure-cosmos should not be installed yet'\n\
             with cosmos_emulator.start() as e:\n    \
                 now = e.now()\n    \
                 assert e.advance(10) == now + 10\n    \
                 print('   started', e.binary, 'at', e.endpoint, 'and moved its clock')\n",
        ]),
    )?;

    // From PyPI, as the machine's pip is configured: the SDK and pytest,
    // never cosmos-emulator (installed already, and not in the file).
    let requirements = package_dir().join("tests/requirements.txt");
    timed(
        "install the test requirements from PyPI: azure-cosmos and pytest (packages/python/tests/requirements.txt)",
        user.pip_install().arg("-r").arg(&requirements),
    )?;
    same_binary(&script, host)?;
    timed(
        "Python package tests: pytest packages/python/tests (the plugin through its entry point)",
        user.python()
            .args(["-m", "pytest", "-v"])
            .current_dir(package_dir().join("tests"))
            .env("COSMOS_EMULATOR_PACKAGE_TEST", "1"),
    )
    .map(|_| ())
}

/// The README's and the guide's first test, as a reader follows it: in a
/// fresh directory holding the wheels, with a fresh virtualenv active, the
/// documented install command (docs/snippets/first-test/install-python.sh:
/// pip picks this platform's wheel from the directory; run without a shell,
/// as `snippet` does, so on Windows too), then the documented test with
/// pytest and the example without pytest.
fn first_test(build: &Build, host: &Artifact) -> Result<(), String> {
    let snippets = root().join("docs/snippets/first-test");
    let dir = target_dir().join("package-test").join("python-first-test");
    fresh_dir(&dir)?;
    let user = User::new(&dir.join("venv"), "the quick start: a fresh virtualenv")?;
    for artifact in &build.artifacts {
        let name = artifact.wheel.file_name().ok_or("a wheel without a name")?;
        copy_file(&artifact.wheel, &dir.join(name))?;
    }
    for file in ["test_items_expire.py", "without_pytest.py"] {
        copy_file(&snippets.join(file), &dir.join(file))?;
    }
    // With the virtualenv active, `pip` is its pip.
    let (program, args) = snippet::command(&snippets.join("install-python.sh"), "pip")?;
    timed(
        &format!(
            "the quick start's install command, beside the wheels: {program} {} \
             (docs/snippets/first-test/install-python.sh)",
            args.join(" ")
        ),
        user.command(user.bin(&program))
            .args(&args)
            .env("VIRTUAL_ENV", &user.venv)
            .current_dir(&dir),
    )?;
    // The wheel of this platform, from the directory (not a namesake's).
    same_binary(&user.bin("cosmos-emulator"), host)?;
    timed(
        "the quick start's first test: pytest test_items_expire.py",
        user.python()
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "test_items_expire.py",
            ])
            .current_dir(&dir),
    )?;
    timed(
        "the quick start's example without pytest: python without_pytest.py",
        user.python().arg("without_pytest.py").current_dir(&dir),
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::dist_dir;
    use crate::dist::targets::find;

    fn artifact(triple: &str) -> Artifact {
        Artifact {
            target: find(triple).unwrap(),
            binary: dist_dir().join("none"),
            wheel: dist_dir().join("none.whl"),
        }
    }

    fn member(name: &str, mode: u32) -> serde_json::Value {
        serde_json::json!({"name": name, "mode": mode, "sha256": null})
    }

    #[test]
    fn the_windows_wheel_needs_the_exe() {
        let windows = artifact("x86_64-pc-windows-gnu");
        let members = [member(
            "cosmos_emulator-1.0.0.data/scripts/cosmos-emulator",
            0o755,
        )];
        let error = check_members(&windows, "1.0.0", &members).unwrap_err();
        assert!(
            error.contains("expected cosmos_emulator-1.0.0.data/scripts/cosmos-emulator.exe"),
            "{error}"
        );
    }

    #[test]
    fn a_module_file_not_the_trees_is_found() {
        let module = package_dir().join("src/cosmos_emulator");
        let mut members: Vec<serde_json::Value> = std::fs::read_dir(&module)
            .unwrap()
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| {
                serde_json::json!({
                    "name": format!("cosmos_emulator/{}", e.file_name().to_string_lossy()),
                    "mode": 0o644,
                    "sha256": crate::package::sha256_file(&e.path()).unwrap(),
                })
            })
            .collect();
        assert_eq!(
            differs_from_the_tree(&members).unwrap(),
            Vec::<String>::new()
        );
        members[0]["sha256"] = "0".repeat(64).into();
        let name = members[0]["name"].as_str().unwrap().to_string();
        members.push(member("cosmos_emulator/_old.py", 0o644));
        let mut expected = vec![
            "cosmos_emulator/_old.py not in the tree".to_string(),
            format!("{name} differs"),
        ];
        expected.sort();
        assert_eq!(differs_from_the_tree(&members).unwrap(), expected);
    }

    #[test]
    fn a_unix_script_must_be_executable() {
        let linux = artifact("x86_64-unknown-linux-musl");
        let members = [member(
            "cosmos_emulator-1.0.0.data/scripts/cosmos-emulator",
            0o644,
        )];
        let error = check_members(&linux, "1.0.0", &members).unwrap_err();
        assert!(error.contains("not executable"), "{error}");
    }
}
