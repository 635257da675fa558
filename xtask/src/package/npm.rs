//! The npm packages `cosmos-emulator` and `cosmos-emulator-<os>-<cpu>`
//! (packages/npm): packed with `npm pack`; tested in a fresh npm project.
//!
//! The esbuild / @biomejs/biome pattern: the main package is plain
//! JavaScript and lists one platform package per OS and CPU in its
//! `optionalDependencies`; npm installs the one whose `os`, `cpu` (and
//! `libc`) match. Only this machine's platform package is built here, from
//! the template `packages/npm/platform/`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::{fresh_dir, step, Build};
use crate::{root, target_dir};

/// The main package's version in the repository, replaced by the
/// emulator's at build time (its own and its optionalDependencies' pins).
const DEV_VERSION: &str = "\"0.0.0-dev\"";

/// Packs the main package and this platform's package into `build.out`;
/// returns their paths (the platform package first).
pub fn build(build: &Build) -> Result<Vec<PathBuf>, String> {
    let started = Instant::now();
    let platform = Platform::host()?;
    let sources = root().join("packages/npm");
    let staging = target_dir().join("package-staging").join("npm");
    fresh_dir(&staging)?;

    // The platform package: the template filled in, the binary beside it.
    let platform_dir = staging.join(platform.package());
    std::fs::create_dir_all(platform_dir.join("bin"))
        .map_err(|e| format!("{}: {e}", platform_dir.display()))?;
    for file in ["package.json", "README.md"] {
        let text = read(&sources.join("platform").join(file))?;
        write(
            &platform_dir.join(file),
            &platform.fill(&text, &build.version),
        )?;
    }
    let binary = platform_dir.join("bin").join(platform.binary());
    std::fs::copy(&build.binary, &binary).map_err(|e| {
        format!(
            "copy {} to {}: {e}",
            build.binary.display(),
            binary.display()
        )
    })?;
    make_executable(&binary)?;
    check_manifest(&platform_dir, &platform.package(), &build.version)?;

    // The main package: its files as they are, the versions written in.
    let main_dir = staging.join("cosmos-emulator");
    copy_tree(&sources.join("cosmos-emulator"), &main_dir)?;
    let manifest = read(&main_dir.join("package.json"))?;
    if !manifest.contains(&format!("\"{}\": {DEV_VERSION}", platform.package())) {
        return Err(format!(
            "packages/npm/cosmos-emulator/package.json: its optionalDependencies have no \
             \"{}\": {DEV_VERSION}; add this platform's package there",
            platform.package()
        ));
    }
    let version = format!("\"{}\"", build.version);
    write(
        &main_dir.join("package.json"),
        &manifest.replace(DEV_VERSION, &version),
    )?;
    check_manifest(&main_dir, "cosmos-emulator", &build.version)?;

    let tarballs = vec![
        pack(&platform_dir, &build.out)?,
        pack(&main_dir, &build.out)?,
    ];
    eprintln!(
        "npm packages packed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(tarballs)
}

/// Installs the tarballs into a fresh project and runs packages/npm's tests.
pub fn test(build: &Build, tarballs: &[PathBuf]) -> Result<(), String> {
    let project = target_dir().join("package-test").join("npm");
    fresh_dir(&project)?;
    // The test project as committed: package.json, package-lock.json (the
    // SDK, the test runners and TypeScript, pinned), the suite.
    copy_tree(&root().join("packages/npm/test"), &project)?;

    let started = Instant::now();
    // --ignore-scripts: the packages must work without install scripts
    // (they have none), and the test tools do too (esbuild finds its
    // platform package at run time); a script could also reach beyond the
    // registries.
    step(
        "npm: install the test project's pinned dependencies (npm ci)",
        npm()
            .args(["ci", "--ignore-scripts", "--no-audit", "--no-fund"])
            .current_dir(&project),
    )?;
    // Both tarballs in one command, the platform package named explicitly:
    // it is not on the registry, so the main package's optional dependency
    // must be satisfied by this local copy rather than looked up (a lookup
    // answers 404, which npm would skip silently as an optional failure and
    // leave a main package without its binary).
    step(
        "npm: install the packed tarballs",
        npm()
            .args([
                "install",
                "--no-save",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
            ])
            .args(tarballs)
            .current_dir(&project),
    )?;
    eprintln!("npm install took {:.1} s", started.elapsed().as_secs_f64());
    let platform = Platform::host()?;
    let installed = project
        .join("node_modules")
        .join(platform.package())
        .join("bin")
        .join(platform.binary());
    if !installed.exists() {
        return Err(format!(
            "npm did not install the platform package's binary ({})",
            installed.display()
        ));
    }

    let output = npm_exec(&project)
        .args(["cosmos-emulator", "--version"])
        .output()
        .map_err(|e| format!("npx cosmos-emulator --version: {e}"))?;
    let printed = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !printed.contains(&build.version) {
        return Err(format!(
            "npx cosmos-emulator --version: {} printed {printed:?} (stderr {:?}), expected version {}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            build.version
        ));
    }
    eprintln!("npx cosmos-emulator --version: {}", printed.trim());

    let started = Instant::now();
    let files = test_files(&project)?;
    step(
        "npm: the package's suite (node --test) against the installed packages",
        Command::new("node")
            .arg("--test")
            .args(&files)
            .current_dir(&project)
            // The suite finds the binary through the installed packages,
            // never through a variable left in the caller's environment.
            .env_remove("COSMOS_EMULATOR_BINARY"),
    )?;
    eprintln!("npm suite took {:.1} s", started.elapsed().as_secs_f64());
    first_test(tarballs)
}

/// The README's and the guide's first test, as a reader follows it: in an
/// empty directory holding the two tarballs, the documented install command
/// (docs/snippets/first-test/install-js.sh, which installs the SDK from the
/// registry), then the documented test with `node --test`.
fn first_test(tarballs: &[PathBuf]) -> Result<(), String> {
    let snippets = root().join("docs/snippets/first-test");
    let project = target_dir().join("package-test").join("npm-first-test");
    fresh_dir(&project)?;
    for tarball in tarballs {
        let name = tarball.file_name().ok_or("a tarball has no file name")?;
        std::fs::copy(tarball, project.join(name)).map_err(|e| format!("copy {name:?}: {e}"))?;
    }
    let test = "items-expire.test.mjs";
    std::fs::copy(snippets.join(test), project.join(test))
        .map_err(|e| format!("copy docs/snippets/first-test/{test}: {e}"))?;
    step(
        "the quick start's install command (docs/snippets/first-test/install-js.sh)",
        Command::new("bash")
            .arg("-e")
            .arg(snippets.join("install-js.sh"))
            .current_dir(&project),
    )?;
    step(
        "the quick start's first test: node --test items-expire.test.mjs",
        Command::new("node")
            .args(["--test", test])
            .current_dir(&project)
            .env_remove("COSMOS_EMULATOR_BINARY")
            .env_remove("NODE_TEST_CONTEXT"),
    )
}

/// The platform in npm's words (`process.platform`, `process.arch`).
struct Platform {
    os: &'static str,
    cpu: &'static str,
    libc: Option<&'static str>,
}

impl Platform {
    /// This machine's, which is the one the release binary was built for.
    fn host() -> Result<Platform, String> {
        let os = match std::env::consts::OS {
            "linux" => "linux",
            "macos" => "darwin",
            "windows" => "win32",
            "freebsd" => "freebsd",
            "openbsd" => "openbsd",
            "netbsd" => "netbsd",
            "solaris" | "illumos" => "sunos",
            "aix" => "aix",
            other => return Err(format!("no npm platform name for the OS {other:?}")),
        };
        let cpu = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            "x86" => "ia32",
            "arm" => "arm",
            "riscv64" => "riscv64",
            "powerpc64" => "ppc64",
            "s390x" => "s390x",
            "loongarch64" => "loong64",
            "mips64" => "mips64el",
            other => return Err(format!("no npm CPU name for {other:?}")),
        };
        let libc = if os != "linux" {
            None
        } else if cfg!(target_env = "musl") {
            Some("musl")
        } else {
            Some("glibc")
        };
        Ok(Platform { os, cpu, libc })
    }

    /// `cosmos-emulator-linux-x64`
    fn package(&self) -> String {
        format!("cosmos-emulator-{}-{}", self.os, self.cpu)
    }

    fn binary(&self) -> &'static str {
        if self.os == "win32" {
            "cosmos-emulator.exe"
        } else {
            "cosmos-emulator"
        }
    }

    /// The template with its `{{...}}` filled in; the `libc` line goes
    /// where the platform has no libc to choose.
    fn fill(&self, template: &str, version: &str) -> String {
        let text: String = if self.libc.is_none() {
            template
                .lines()
                .filter(|line| !line.contains("{{libc}}"))
                .map(|line| format!("{line}\n"))
                .collect()
        } else {
            template.to_string()
        };
        let libc_note = match self.libc {
            Some(libc) => format!(" ({libc})"),
            None => String::new(),
        };
        text.replace("{{name}}", &self.package())
            .replace("{{version}}", version)
            .replace("{{platform}}", self.os)
            .replace("{{arch}}", self.cpu)
            .replace("{{libc}}", self.libc.unwrap_or(""))
            .replace("{{libc_note}}", &libc_note)
            .replace("{{binary}}", self.binary())
    }
}

/// The staged package.json parses and says `name` and `version`.
fn check_manifest(dir: &Path, name: &str, version: &str) -> Result<(), String> {
    let path = dir.join("package.json");
    let manifest: serde_json::Value = serde_json::from_str(&read(&path)?)
        .map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    if manifest["name"] != name || manifest["version"] != version {
        return Err(format!(
            "{}: expected name {name} and version {version}, got {} and {}",
            path.display(),
            manifest["name"],
            manifest["version"]
        ));
    }
    if let Some(pins) = manifest["optionalDependencies"].as_object() {
        if let Some((package, pin)) = pins.iter().find(|(_, pin)| *pin != version) {
            return Err(format!(
                "{}: optionalDependencies pins {package} at {pin}, not {version}",
                path.display()
            ));
        }
    }
    Ok(())
}

/// `npm pack` of `dir` into `out`; the tarball's path.
fn pack(dir: &Path, out: &Path) -> Result<PathBuf, String> {
    let what = format!("npm pack {}", dir.display());
    eprintln!("\n== xtask package: {what}");
    let output = npm()
        .args(["pack", "--json", "--ignore-scripts", "--pack-destination"])
        .arg(out)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("{what}: cannot run npm: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "{what}: failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("{what}: cannot read its --json report: {e}"))?;
    let entry = &report[0];
    let filename = entry["filename"]
        .as_str()
        .ok_or_else(|| format!("{what}: no filename in {report}"))?;
    let files: Vec<&str> = entry["files"]
        .as_array()
        .map(|files| files.iter().filter_map(|f| f["path"].as_str()).collect())
        .unwrap_or_default();
    eprintln!(
        "{filename}: {} bytes packed, {} unpacked; {}",
        entry["size"],
        entry["unpackedSize"],
        files.join(", ")
    );
    Ok(out.join(filename))
}

/// The suite's files: `*.test.mjs` at the top of the test project.
fn test_files(project: &Path) -> Result<Vec<String>, String> {
    let mut files: Vec<String> = std::fs::read_dir(project)
        .map_err(|e| format!("{}: {e}", project.display()))?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".test.mjs"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no *.test.mjs", project.display()));
    }
    Ok(files)
}

/// Copies `from` into `to` (made if needed), leaving out `node_modules`.
fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", from.display()))?;
        let name = entry.file_name();
        if name == "node_modules" {
            continue;
        }
        let (source, target) = (entry.path(), to.join(&name));
        let kind = entry
            .file_type()
            .map_err(|e| format!("{}: {e}", source.display()))?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else {
            std::fs::copy(&source, &target)
                .map_err(|e| format!("copy {} to {}: {e}", source.display(), target.display()))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_executable(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> Result<(), String> {
    Ok(())
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn npm() -> Command {
    Command::new("npm")
}

/// `npm exec --no` in `project`: runs a bin of its node_modules, never
/// one fetched for the occasion.
fn npm_exec(project: &Path) -> Command {
    let mut command = npm();
    command
        .args(["exec", "--no", "--offline", "--"])
        .current_dir(project);
    command
}
