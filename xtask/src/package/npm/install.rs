//! The npm packages as users get them: published to a local verdaccio,
//! then installed by name from it, for each platform (`npm install --os
//! --cpu --libc`), in a fresh project on this machine, for the package's
//! suite and for the README's quick start.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::super::{
    copy_file, fresh_dir, read, registry, same_binary, snippet, step, write, Artifact, Build,
};
use super::{copy_tree, npm, Tarballs};
use crate::dist::targets::TARGETS;
use crate::{root, target_dir};

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
    first_test(build, tarballs, host, &url)
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
/// documented install command (docs/snippets/first-test/install-js.sh,
/// without a shell, as `snippet` runs it; with this platform's tarball in
/// place of the Linux x64 one it names, as a reader elsewhere does;
/// the SDK comes through the local registry's uplink, and the other
/// platforms' packages, which npm looks up, from the local registry), then
/// the documented test with `node --test`.
fn first_test(
    build: &Build,
    tarballs: &Tarballs,
    host: &Artifact,
    url: &str,
) -> Result<(), String> {
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
    let (program, args) = snippet::command(&snippets.join("install-js.sh"), "npm")?;
    let ours = platform
        .path
        .file_name()
        .unwrap_or_default()
        .to_string_lossy();
    let args = with_this_platforms_tarball(args, &build.version, &ours)?;
    step(
        &format!(
            "the quick start's install command: {program} {} (docs/snippets/first-test/install-js.sh)",
            args.join(" ")
        ),
        npm()
            .args(&args)
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

/// The install command's arguments with its one platform tarball
/// (`./cosmos-emulator-<os>-<cpu>[-musl]-<version>.tgz`) replaced by this
/// platform's, `ours`.
fn with_this_platforms_tarball(
    args: Vec<String>,
    version: &str,
    ours: &str,
) -> Result<Vec<String>, String> {
    let platform_tarballs: Vec<String> = TARGETS
        .iter()
        .map(|t| format!("./{}-{version}.tgz", t.npm_package()))
        .collect();
    let named = args
        .iter()
        .filter(|a| platform_tarballs.contains(a))
        .count();
    if named != 1 {
        return Err(format!(
            "docs/snippets/first-test/install-js.sh should name one platform tarball of version \
             {version} (such as {}); it names {named}: {args:?}",
            platform_tarballs[0]
        ));
    }
    Ok(args
        .into_iter()
        .map(|a| {
            if platform_tarballs.contains(&a) {
                format!("./{ours}")
            } else {
                a
            }
        })
        .collect())
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

#[cfg(test)]
mod tests {
    use super::with_this_platforms_tarball;

    fn words(text: &str) -> Vec<String> {
        text.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn the_quick_start_installs_this_platforms_tarball() {
        let args =
            words("install ./cosmos-emulator-linux-x64-1.0.0.tgz ./cosmos-emulator-1.0.0.tgz x");
        assert_eq!(
            with_this_platforms_tarball(
                args.clone(),
                "1.0.0",
                "cosmos-emulator-win32-x64-1.0.0.tgz"
            )
            .unwrap(),
            words("install ./cosmos-emulator-win32-x64-1.0.0.tgz ./cosmos-emulator-1.0.0.tgz x")
        );
        // The guide's own platform: unchanged.
        let linux = "cosmos-emulator-linux-x64-1.0.0.tgz";
        assert_eq!(
            with_this_platforms_tarball(args.clone(), "1.0.0", linux).unwrap(),
            args
        );
        // Another version, or none named: the snippet is stale.
        assert!(with_this_platforms_tarball(args, "1.0.1", linux).is_err());
        let none = words("install ./cosmos-emulator-1.0.0.tgz");
        assert!(with_this_platforms_tarball(none, "1.0.0", linux).is_err());
    }

    #[test]
    fn the_guides_snippet_names_one_platform_tarball() {
        let path = crate::root().join("docs/snippets/first-test/install-js.sh");
        let (_, args) = super::snippet::command(&path, "npm").unwrap();
        let version = crate::package::emulator_version().unwrap();
        with_this_platforms_tarball(args, &version, "ours.tgz").unwrap();
    }
}
