//! The image as shipped, read back from its archive (an OCI layout in a
//! tar file) and checked, platform by platform: the list names each
//! platform once; its config says that OS and architecture, a numeric user
//! other than root, the health check, and the labels; its layers hold the
//! binary (a static build for that architecture, as `cargo xtask dist`
//! checks it), the licence and the directories, nothing else; its
//! compressed layers stay under [`MAX_COMPRESSED`].
//!
//! The layers are listed and read with tar and gzip, as a user would.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use super::context::{Platform, DIRECTORIES};
use super::podman::output;
use crate::dist::inspect;

/// 8 MB: the compressed layers of one platform (today about 6 MB).
pub const MAX_COMPRESSED: u64 = 8_000_000;
/// The image's user and group.
pub const USER: &str = "10001:10001";
/// The health check every platform's config must carry.
const HEALTHCHECK: [&str; 3] = ["CMD", "/cosmos-emulator", "health"];

/// What one platform's image is.
#[derive(Debug)]
pub struct PlatformImage {
    pub platform: String,
    pub layers: usize,
    pub compressed: u64,
    pub uncompressed: u64,
    pub user: String,
    /// `mode owner path`, one a file, as the layers list them.
    pub files: Vec<String>,
}

impl PlatformImage {
    pub fn summary(&self) -> String {
        format!(
            "{}: {} layer(s), {:.2} MB compressed, {:.2} MB uncompressed, user {}, {} entries",
            self.platform,
            self.layers,
            self.compressed as f64 / 1e6,
            self.uncompressed as f64 / 1e6,
            self.user,
            self.files.len()
        )
    }
}

/// Unpacks `archive` into `dir` (fresh) and checks every platform of
/// `platforms` in it; `labels` are the values each config must carry.
pub fn check(
    archive: &Path,
    dir: &Path,
    platforms: &[Platform],
    labels: &[(&'static str, String)],
) -> Result<Vec<PlatformImage>, String> {
    crate::package::fresh_dir(dir)?;
    output(
        Command::new("tar")
            .arg("-xf")
            .arg(archive)
            .arg("-C")
            .arg(dir),
    )?;
    let layout = Layout {
        dir: dir.to_path_buf(),
    };
    let index = layout.json_file(&dir.join("index.json"))?;
    let list = match index["manifests"].as_array().map(Vec::as_slice) {
        Some([one]) => layout.blob_json(one)?,
        _ => {
            return Err(format!(
                "{}: expected one entry in index.json",
                archive.display()
            ))
        }
    };
    let entries = list["manifests"]
        .as_array()
        .ok_or("the archive's image is not a manifest list")?;
    let mut problems = Vec::new();
    let mut images = Vec::new();
    if entries.len() != platforms.len() {
        problems.push(format!(
            "the list has {} images, the target table {} platforms",
            entries.len(),
            platforms.len()
        ));
    }
    for platform in platforms {
        let found: Vec<&Value> = entries
            .iter()
            .filter(|e| {
                e["platform"]["os"] == platform.os()
                    && e["platform"]["architecture"] == platform.architecture()
            })
            .collect();
        let [entry] = found.as_slice() else {
            problems.push(format!(
                "{}: {} entries of the list",
                platform.name,
                found.len()
            ));
            continue;
        };
        let mut mine = Vec::new();
        let image = layout.platform(platform, entry, labels, &mut mine)?;
        problems.extend(mine.into_iter().map(|p| format!("{}: {p}", platform.name)));
        images.push(image);
    }
    if problems.is_empty() {
        Ok(images)
    } else {
        Err(format!(
            "the image is not what it should be:\n  {}",
            problems.join("\n  ")
        ))
    }
}

struct Layout {
    dir: PathBuf,
}

impl Layout {
    fn blob_path(&self, descriptor: &Value) -> Result<PathBuf, String> {
        let digest = descriptor["digest"]
            .as_str()
            .ok_or_else(|| format!("a descriptor without a digest: {descriptor}"))?;
        let (algorithm, hex) = digest
            .split_once(':')
            .ok_or_else(|| format!("not a digest: {digest}"))?;
        Ok(self.dir.join("blobs").join(algorithm).join(hex))
    }

    fn blob_json(&self, descriptor: &Value) -> Result<Value, String> {
        self.json_file(&self.blob_path(descriptor)?)
    }

    fn json_file(&self, path: &Path) -> Result<Value, String> {
        let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads and checks one platform's image; what is wrong goes to `problems`.
    fn platform(
        &self,
        platform: &Platform,
        entry: &Value,
        labels: &[(&'static str, String)],
        problems: &mut Vec<String>,
    ) -> Result<PlatformImage, String> {
        let manifest = self.blob_json(entry)?;
        let config = self.blob_json(&manifest["config"])?;
        if config["os"] != platform.os() || config["architecture"] != platform.architecture() {
            problems.push(format!(
                "the config says {}/{}",
                config["os"], config["architecture"]
            ));
        }
        let settings = &config["config"];
        let user = settings["User"].as_str().unwrap_or("").to_string();
        if let Some(why) = not_numeric_non_root(&user) {
            problems.push(format!("user {user:?}: {why}"));
        }
        if user != USER {
            problems.push(format!("user {user:?}, expected {USER}"));
        }
        if settings["Healthcheck"]["Test"] != serde_json::json!(HEALTHCHECK) {
            problems.push(format!(
                "health check {}, expected {HEALTHCHECK:?} (was the image built --format docker?)",
                settings["Healthcheck"]
            ));
        }
        for (key, value) in labels {
            // `created` is the build's time, which the archive keeps as given.
            if settings["Labels"][key].as_str() != Some(value) {
                problems.push(format!(
                    "label {key} is {}, expected {value:?}",
                    settings["Labels"][key]
                ));
            }
        }

        let layers = manifest["layers"].as_array().cloned().unwrap_or_default();
        let compressed: u64 = layers.iter().filter_map(|l| l["size"].as_u64()).sum();
        if compressed >= MAX_COMPRESSED {
            problems.push(format!(
                "{compressed} bytes of compressed layers, the limit is {MAX_COMPRESSED}"
            ));
        }
        let (mut files, mut uncompressed) = (Vec::new(), 0);
        for layer in &layers {
            let blob = self.blob_path(layer)?;
            files.extend(list_layer(&blob)?);
            uncompressed += gunzipped_size(&blob)?;
        }
        problems.extend(unexpected_files(&files));
        match layers.iter().rev().find_map(|l| {
            let blob = self.blob_path(l).ok()?;
            read_member(&blob, "cosmos-emulator").ok()
        }) {
            Some(binary) => {
                let facts = inspect::read(&binary)?;
                problems.extend(
                    inspect::check(platform.target, &facts)
                        .into_iter()
                        .map(|p| format!("/cosmos-emulator: {p}")),
                );
            }
            None => problems.push("no /cosmos-emulator in its layers".into()),
        }
        Ok(PlatformImage {
            platform: platform.name.to_string(),
            layers: layers.len(),
            compressed,
            uncompressed,
            user,
            files,
        })
    }
}

/// Why `user` is not a numeric user other than root (`uid[:gid]`), if not.
fn not_numeric_non_root(user: &str) -> Option<&'static str> {
    let (uid, gid) = user.split_once(':').unwrap_or((user, "0"));
    match (uid.parse::<u32>(), gid.parse::<u32>()) {
        (Ok(0), _) => Some("root"),
        (Ok(_), Ok(_)) => None,
        _ => Some("not numeric (a scratch image has no /etc/passwd)"),
    }
}

/// The entries the image may hold, as `mode owner path` (GNU tar's
/// listing with numeric owners, the date left out).
pub fn expected_files() -> Vec<String> {
    let mut files = vec![
        "-rwxr-xr-x 0/0 cosmos-emulator".to_string(),
        "-rw-r--r-- 0/0 LICENSE".to_string(),
    ];
    for (dir, mode) in DIRECTORIES {
        let mode = if *mode == 0o1777 {
            "drwxrwxrwt"
        } else {
            "drwxr-xr-x"
        };
        files.push(format!("{mode} {USER_SLASH} {dir}/"));
    }
    files
}

const USER_SLASH: &str = "10001/10001";

/// What differs between the layers' entries and [`expected_files`].
fn unexpected_files(files: &[String]) -> Vec<String> {
    let expected = expected_files();
    let mut problems: Vec<String> = files
        .iter()
        .filter(|f| !expected.contains(f))
        .map(|f| format!("unexpected in the image: {f}"))
        .collect();
    problems.extend(
        expected
            .iter()
            .filter(|e| !files.contains(e))
            .map(|e| format!("missing from the image: {e}")),
    );
    problems
}

/// `tar -tvz` of a layer: `mode owner path` a line, paths without `./`.
fn list_layer(blob: &Path) -> Result<Vec<String>, String> {
    let listing = output(
        Command::new("tar")
            .args(["--numeric-owner", "-tvzf"])
            .arg(blob),
    )?;
    let mut entries = Vec::new();
    for line in listing.lines() {
        // -rwxr-xr-x 0/0 14067328 2026-11-27 02:19 cosmos-emulator
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [mode, owner, _size, _date, _time, path] = fields.as_slice() else {
            return Err(format!(
                "{}: cannot read the listing line {line:?}",
                blob.display()
            ));
        };
        let path = path.trim_start_matches("./");
        // The root itself, if the layer lists it.
        if !path.is_empty() && path != "/" {
            entries.push(format!("{mode} {owner} {path}"));
        }
    }
    Ok(entries)
}

/// The size of a gzip-compressed layer once decompressed.
fn gunzipped_size(blob: &Path) -> Result<u64, String> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .arg(blob)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("gzip: {e}"))?;
    let mut stdout = child.stdout.take().expect("piped");
    let (mut total, mut buffer) = (0u64, vec![0u8; 1 << 16]);
    loop {
        let n = stdout.read(&mut buffer).map_err(|e| format!("gzip: {e}"))?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let status = child.wait().map_err(|e| format!("gzip: {e}"))?;
    if !status.success() {
        return Err(format!("gzip -dc {}: {status}", blob.display()));
    }
    Ok(total)
}

/// One member of a gzip-compressed layer, read whole.
fn read_member(blob: &Path, member: &str) -> Result<Vec<u8>, String> {
    let out = Command::new("tar")
        .arg("-xzOf")
        .arg(blob)
        .arg(member)
        .output()
        .map_err(|e| format!("tar: {e}"))?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users() {
        assert_eq!(not_numeric_non_root("10001:10001"), None);
        assert_eq!(not_numeric_non_root("10001"), None);
        assert_eq!(not_numeric_non_root("0:0"), Some("root"));
        assert_eq!(
            not_numeric_non_root(""),
            Some("not numeric (a scratch image has no /etc/passwd)")
        );
        assert!(not_numeric_non_root("emulator").is_some());
    }

    #[test]
    fn the_expected_files_name_every_directory_once() {
        let files = expected_files();
        assert_eq!(files.len(), DIRECTORIES.len() + 2);
        assert!(files.contains(&"drwxrwxrwt 10001/10001 tmp/".to_string()));
        assert!(unexpected_files(&files).is_empty());
        let mut more = files.clone();
        more.push("-rw-r--r-- 0/0 etc/passwd".into());
        assert_eq!(unexpected_files(&more).len(), 1);
    }
}
