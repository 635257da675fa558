//! The npm packages `cosmos-emulator` and one `cosmos-emulator-<os>-<cpu>
//! [-musl]` per target (packages/npm): packed with `npm pack` into
//! `target/package/`; tested by publishing them to a local verdaccio
//! and installing them by name from it.
//!
//! The esbuild / @biomejs/biome pattern: the main package is plain
//! JavaScript and lists every platform package in its
//! `optionalDependencies`; npm installs the one whose `os`, `cpu` and (on
//! Linux) `libc` match. The platform packages are the template
//! `packages/npm/platform/` filled in from the target table, each with its
//! target's release binary from `target/dist/`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use super::{copy_file, fresh_dir, read, registry, same_binary, step, write, Artifact, Build};
use crate::dist::targets::{Target, TARGETS};
use crate::{root, target_dir};

/// The main package's version in the repository, replaced by the
/// emulator's at build time (its own and its optionalDependencies' pins).
const DEV_VERSION: &str = "\"0.0.0-dev\"";

/// One packed package.
pub struct Tarball {
    /// The platform package's target; None for the main package.
    pub target: Option<&'static Target>,
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    pub unpacked: u64,
}

pub struct Tarballs {
    /// `target/package/`
    pub dir: PathBuf,
    pub platform: Vec<Tarball>,
    pub main: Tarball,
}

/// Packs each target's platform package and the main package.
pub fn build(build: &Build) -> Result<Tarballs, String> {
    let started = Instant::now();
    let sources = root().join("packages/npm");
    let staging = target_dir().join("package-staging").join("npm");
    fresh_dir(&staging)?;
    // target/package/, fresh: the tarballs of this run only.
    let out = build.out.clone();

    let mut platform = Vec::new();
    for artifact in &build.artifacts {
        let target = artifact.target;
        let dir = staging.join(target.npm_package());
        std::fs::create_dir_all(dir.join("bin")).map_err(|e| format!("{}: {e}", dir.display()))?;
        for file in ["package.json", "README.md"] {
            let text = read(&sources.join("platform").join(file))?;
            write(&dir.join(file), &fill(&text, target, &build.version))?;
        }
        let binary = dir.join("bin").join(target.binary_name());
        copy_file(&artifact.binary, &binary)?;
        make_executable(&binary)?;
        let manifest = check_manifest(&dir, &target.npm_package(), &build.version)?;
        check_platform_fields(&manifest, target)
            .map_err(|e| format!("{}: {e}", dir.join("package.json").display()))?;
        let mut tarball = pack(&dir, &out)?;
        tarball.target = Some(target);
        platform.push(tarball);
    }

    // The main package: its files as they are, the versions written in.
    let main_dir = staging.join("cosmos-emulator");
    copy_tree(&sources.join("cosmos-emulator"), &main_dir)?;
    let path = main_dir.join("package.json");
    let manifest = read(&path)?;
    check_optional_dependencies(&manifest)
        .map_err(|e| format!("packages/npm/cosmos-emulator/package.json: {e}"))?;
    let version = format!("\"{}\"", build.version);
    write(&path, &manifest.replace(DEV_VERSION, &version))?;
    check_manifest(&main_dir, "cosmos-emulator", &build.version)?;
    let main = pack(&main_dir, &out)?;
    eprintln!(
        "npm packages packed in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(Tarballs {
        dir: out,
        platform,
        main,
    })
}

/// The template with its `{{...}}` filled in from the target table; the
/// `libc` line goes where the platform has no libc to choose.
fn fill(template: &str, target: &Target, version: &str) -> String {
    let text: String = if target.npm_libc.is_none() {
        template
            .lines()
            .filter(|line| !line.contains("{{libc}}"))
            .map(|line| format!("{line}\n"))
            .collect()
    } else {
        template.to_string()
    };
    let libc_note = match target.npm_libc {
        Some(libc) => format!(" ({libc})"),
        None => String::new(),
    };
    text.replace("{{name}}", &target.npm_package())
        .replace("{{version}}", version)
        .replace("{{platform}}", target.npm_os)
        .replace("{{arch}}", target.npm_cpu)
        .replace("{{libc}}", target.npm_libc.unwrap_or(""))
        .replace("{{libc_note}}", &libc_note)
        .replace("{{binary}}", &target.binary_name())
}

/// The manifest's `os`, `cpu` and `libc` are the target's, so that npm
/// installs it on that platform and no other.
fn check_platform_fields(manifest: &serde_json::Value, target: &Target) -> Result<(), String> {
    let one = |field: &str| -> Option<String> {
        match manifest[field].as_array().map(Vec::as_slice) {
            Some([value]) => value.as_str().map(str::to_string),
            _ => None,
        }
    };
    let fields = (one("os"), one("cpu"), one("libc"));
    let expected = (
        Some(target.npm_os.to_string()),
        Some(target.npm_cpu.to_string()),
        target.npm_libc.map(str::to_string),
    );
    if fields != expected || (target.npm_libc.is_none() && !manifest["libc"].is_null()) {
        return Err(format!(
            "os, cpu, libc are {fields:?}, expected {expected:?} ({})",
            target.triple
        ));
    }
    Ok(())
}

/// The repository's main manifest pins every platform package of the
/// target table, and nothing else, at the development version.
fn check_optional_dependencies(manifest: &str) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_str(manifest).map_err(|e| format!("not JSON: {e}"))?;
    let pins = value["optionalDependencies"]
        .as_object()
        .ok_or("no optionalDependencies")?;
    let listed: BTreeSet<&str> = pins.keys().map(String::as_str).collect();
    let names: Vec<String> = TARGETS.iter().map(Target::npm_package).collect();
    let table: BTreeSet<&str> = names.iter().map(String::as_str).collect();
    let missing: Vec<_> = table.difference(&listed).collect();
    let extra: Vec<_> = listed.difference(&table).collect();
    if !missing.is_empty() || !extra.is_empty() {
        return Err(format!(
            "its optionalDependencies must be the target table's platform packages \
             (xtask/src/dist/targets.rs); add {missing:?}, remove {extra:?}"
        ));
    }
    if let Some((name, pin)) = pins
        .iter()
        .find(|(_, pin)| pin.as_str() != Some("0.0.0-dev"))
    {
        return Err(format!(
            "optionalDependencies pins {name} at {pin}; write {DEV_VERSION}, replaced at build time"
        ));
    }
    Ok(())
}

/// The staged package.json parses and says `name` and `version`, and pins
/// its optional dependencies at that version; returns it.
fn check_manifest(dir: &Path, name: &str, version: &str) -> Result<serde_json::Value, String> {
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
    Ok(manifest)
}

/// `npm pack` of `dir` into `out`.
fn pack(dir: &Path, out: &Path) -> Result<Tarball, String> {
    let what = format!("npm pack {}", dir.display());
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
        "   {filename}: {} bytes packed, {} unpacked; {}",
        entry["size"],
        entry["unpackedSize"],
        files.join(", ")
    );
    Ok(Tarball {
        target: None,
        name: entry["name"].as_str().unwrap_or_default().to_string(),
        path: out.join(filename),
        size: entry["size"].as_u64().unwrap_or(0),
        unpacked: entry["unpackedSize"].as_u64().unwrap_or(0),
    })
}

/// Publishes every tarball to a local verdaccio, then installs by name
/// from it: each platform's pick, this machine's fresh project, the
/// package's suite, the quick start.
pub fn test(build: &Build, tarballs: &Tarballs) -> Result<(), String> {
    let host = build.host()?;
    let registry = registry::verdaccio()?;
    let url = format!("{}/", registry.url);
    publish(tarballs, &url)?;
    for artifact in &build.artifacts {
        each_platform_gets_its_package(build, artifact, &url)?;
    }
    by_name_in_a_fresh_project(build, host, &url)?;
    suite(build, host, &url)?;
    first_test(tarballs, host, &url)
}

/// `npm publish` of every tarball (the platform packages first: the main
/// package names them), with a throwaway token: verdaccio lets anyone
/// publish ours, but npm sends nothing without a token.
fn publish(tarballs: &Tarballs, url: &str) -> Result<(), String> {
    let dir = target_dir().join("package-test").join("npm-publish");
    fresh_dir(&dir)?;
    let userconfig = dir.join(".npmrc");
    let host = url.trim_start_matches("http:");
    write(
        &userconfig,
        &format!("{host}:_authToken=local-test-registry\n"),
    )?;
    let started = Instant::now();
    for tarball in tarballs.platform.iter().chain([&tarballs.main]) {
        step(
            &format!("npm publish {} (the local registry)", tarball.name),
            npm()
                .args(["publish", "--ignore-scripts", "--loglevel=warn"])
                .args(["--registry", url, "--userconfig"])
                .arg(&userconfig)
                .arg(&tarball.path)
                .current_dir(&dir),
        )?;
    }
    eprintln!(
        "published {} packages in {:.1} s",
        tarballs.platform.len() + 1,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// A fresh project with only a package.json.
fn fresh_project(dir: &Path) -> Result<(), String> {
    fresh_dir(dir)?;
    let name = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_lowercase();
    write(
        &dir.join("package.json"),
        &format!(
            "{{\n  \"name\": \"{name}\",\n  \"version\": \"1.0.0\",\n  \"private\": true\n}}\n"
        ),
    )
}

/// `npm install` with what every install here takes: the local registry,
/// no scripts, no audit or funding requests.
fn npm_install(project: &Path, url: &str) -> Command {
    let mut command = npm();
    command
        .args(["install", "--registry", url])
        .args(["--ignore-scripts", "--no-audit", "--no-fund"])
        .current_dir(project);
    command
}

/// The platform packages in `project/node_modules`.
fn installed_platform_packages(project: &Path) -> Result<Vec<String>, String> {
    let modules = project.join("node_modules");
    let mut names: Vec<String> = std::fs::read_dir(&modules)
        .map_err(|e| format!("{}: {e}", modules.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cosmos-emulator-"))
        .collect();
    names.sort();
    Ok(names)
}

/// `npm install --os --cpu --libc cosmos-emulator` for the artifact's
/// platform installs its package and no other, with its binary.
fn each_platform_gets_its_package(
    build: &Build,
    artifact: &Artifact,
    url: &str,
) -> Result<(), String> {
    let target = artifact.target;
    let project = target_dir()
        .join("package-test")
        .join("npm-platforms")
        .join(target.npm_package());
    fresh_project(&project)?;
    let mut flags = vec![
        format!("--os={}", target.npm_os),
        format!("--cpu={}", target.npm_cpu),
    ];
    if let Some(libc) = target.npm_libc {
        flags.push(format!("--libc={libc}"));
    }
    let started = Instant::now();
    step(
        &format!("npm install {} cosmos-emulator", flags.join(" ")),
        npm_install(&project, url)
            .args(&flags)
            .arg(format!("cosmos-emulator@{}", build.version)),
    )?;
    let got = installed_platform_packages(&project)?;
    if got != [target.npm_package()] {
        return Err(format!(
            "npm install {} cosmos-emulator installed {got:?}, expected [{}]",
            flags.join(" "),
            target.npm_package()
        ));
    }
    let binary = project
        .join("node_modules")
        .join(target.npm_package())
        .join("bin")
        .join(target.binary_name());
    same_binary(&binary, artifact)?;
    eprintln!(
        "   {}: {} in {:.1} s",
        flags.join(" "),
        target.npm_package(),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// This machine, a fresh project, `npm install cosmos-emulator`: the main
/// package and exactly this platform's package, the others known to the
/// lockfile as optional dependencies npm left out; the bin runs.
fn by_name_in_a_fresh_project(build: &Build, host: &Artifact, url: &str) -> Result<(), String> {
    let project = target_dir().join("package-test").join("npm-by-name");
    fresh_project(&project)?;
    let started = Instant::now();
    step(
        "npm install cosmos-emulator, by name, in a fresh project (the local registry)",
        npm_install(&project, url).arg("cosmos-emulator"),
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let got = installed_platform_packages(&project)?;
    if got != [host.target.npm_package()] {
        return Err(format!(
            "npm install cosmos-emulator installed the platform packages {got:?}, expected [{}]",
            host.target.npm_package()
        ));
    }
    let lock: serde_json::Value = serde_json::from_str(&read(&project.join("package-lock.json"))?)
        .map_err(|e| format!("package-lock.json: {e}"))?;
    let main = &lock["packages"]["node_modules/cosmos-emulator"];
    if main["version"] != build.version.as_str() {
        return Err(format!(
            "the lockfile has cosmos-emulator {}",
            main["version"]
        ));
    }
    for artifact in &build.artifacts {
        let entry = &lock["packages"][format!("node_modules/{}", artifact.target.npm_package())];
        if entry["optional"] != true || entry["version"] != build.version.as_str() {
            return Err(format!(
                "the lockfile should list {} {} as optional: {entry}",
                artifact.target.npm_package(),
                build.version
            ));
        }
    }
    let binary = project
        .join("node_modules")
        .join(host.target.npm_package())
        .join("bin")
        .join(host.target.binary_name());
    same_binary(&binary, host)?;
    let version = npx_version(&project)?;
    if !version.contains(&build.version) {
        return Err(format!(
            "npx cosmos-emulator --version printed {version:?}, expected version {}",
            build.version
        ));
    }
    eprintln!(
        "   npm install cosmos-emulator: cosmos-emulator and {} in {seconds:.1} s; npx cosmos-emulator --version: {}",
        host.target.npm_package(),
        version.trim()
    );
    Ok(())
}

/// The package's suite (packages/npm/test) in a fresh copy of its project:
/// its pinned tools and SDK from the lockfile, then `cosmos-emulator` by
/// name from the local registry.
fn suite(build: &Build, host: &Artifact, url: &str) -> Result<(), String> {
    let project = target_dir().join("package-test").join("npm");
    fresh_dir(&project)?;
    copy_tree(&root().join("packages/npm/test"), &project)?;
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
    let started = Instant::now();
    step(
        "npm: install cosmos-emulator by name into the test project (the local registry)",
        npm_install(&project, url)
            .arg("--no-save")
            .arg(format!("cosmos-emulator@{}", build.version)),
    )?;
    eprintln!(
        "npm install cosmos-emulator took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let got = installed_platform_packages(&project)?;
    if got != [host.target.npm_package()] {
        return Err(format!(
            "the test project got the platform packages {got:?}, expected [{}]",
            host.target.npm_package()
        ));
    }
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
    Ok(())
}

/// The README's and the guide's first test, as a reader follows it: in an
/// empty directory holding the main tarball and this platform's, the
/// documented install command (docs/snippets/first-test/install-js.sh;
/// the SDK comes through the local registry's uplink, and the other
/// platforms' packages, which npm looks up, from the local registry), then
/// the documented test with `node --test`.
fn first_test(tarballs: &Tarballs, host: &Artifact, url: &str) -> Result<(), String> {
    let snippets = root().join("docs/snippets/first-test");
    let project = target_dir().join("package-test").join("npm-first-test");
    fresh_dir(&project)?;
    let platform = tarballs
        .platform
        .iter()
        .find(|t| t.target.is_some_and(|t| t.triple == host.target.triple))
        .ok_or("no tarball of this platform")?;
    for tarball in [platform, &tarballs.main] {
        let name = tarball
            .path
            .file_name()
            .ok_or("a tarball has no file name")?;
        copy_file(&tarball.path, &project.join(name))?;
    }
    let test = "items-expire.test.mjs";
    copy_file(&snippets.join(test), &project.join(test))?;
    step(
        "the quick start's install command (docs/snippets/first-test/install-js.sh)",
        Command::new("bash")
            .arg("-e")
            .arg(snippets.join("install-js.sh"))
            .env("npm_config_registry", url)
            .current_dir(&project),
    )?;
    let got = installed_platform_packages(&project)?;
    if got != [host.target.npm_package()] {
        return Err(format!(
            "the quick start installed the platform packages {got:?}, expected [{}]",
            host.target.npm_package()
        ));
    }
    step(
        "the quick start's first test: node --test items-expire.test.mjs",
        Command::new("node")
            .args(["--test", test])
            .current_dir(&project)
            .env_remove("COSMOS_EMULATOR_BINARY")
            .env_remove("NODE_TEST_CONTEXT"),
    )
}

/// `npx cosmos-emulator --version` in `project` (`npm exec --no`: a bin of
/// its node_modules, never one fetched for the occasion).
fn npx_version(project: &Path) -> Result<String, String> {
    let output = npm()
        .args([
            "exec",
            "--no",
            "--offline",
            "--",
            "cosmos-emulator",
            "--version",
        ])
        .current_dir(project)
        .env_remove("COSMOS_EMULATOR_BINARY")
        .output()
        .map_err(|e| format!("npx cosmos-emulator --version: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "npx cosmos-emulator --version: {} (stderr {:?})",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
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
            copy_file(&source, &target)?;
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

/// npm, without its update notice.
fn npm() -> Command {
    let mut command = Command::new("npm");
    command.env("npm_config_update_notifier", "false");
    command
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dist::targets::find;

    const TEMPLATE: &str = include_str!("../../../packages/npm/platform/package.json");

    #[test]
    fn each_target_fills_the_template_with_its_fields() {
        for target in TARGETS {
            let text = fill(TEMPLATE, target, "1.2.3");
            let manifest: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(manifest["name"], target.npm_package().as_str());
            assert_eq!(manifest["version"], "1.2.3");
            check_platform_fields(&manifest, target).unwrap();
            assert_eq!(
                manifest["files"][0],
                format!("bin/{}", target.binary_name()).as_str()
            );
        }
        let musl = fill(TEMPLATE, find("aarch64-unknown-linux-musl").unwrap(), "1");
        assert!(musl.contains("\"libc\": [\"musl\"]"), "{musl}");
        let windows = fill(TEMPLATE, find("x86_64-pc-windows-gnu").unwrap(), "1");
        assert!(!windows.contains("libc"), "{windows}");
    }

    #[test]
    fn the_main_package_names_every_target() {
        let manifest = include_str!("../../../packages/npm/cosmos-emulator/package.json");
        check_optional_dependencies(manifest).unwrap();
        let fewer = manifest.replace(
            "\"cosmos-emulator-win32-x64\": \"0.0.0-dev\"",
            "\"x\": \"0.0.0-dev\"",
        );
        let error = check_optional_dependencies(&fewer).unwrap_err();
        assert!(error.contains("cosmos-emulator-win32-x64"), "{error}");
    }
}
