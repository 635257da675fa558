//! `SHA256SUMS`, in the format `sha256sum -c` reads: a line per file, its
//! digest in hex, two spaces, its name relative to the directory.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub fn write(dir: &Path, files: &[PathBuf]) -> Result<(), String> {
    let mut lines = Vec::new();
    for file in files {
        let data = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let name = file
            .strip_prefix(dir)
            .map_err(|_| format!("{} is not under {}", file.display(), dir.display()))?;
        lines.push(line(&data, &name.to_string_lossy()));
    }
    lines.sort_by(|a, b| a[66..].cmp(&b[66..]));
    let path = dir.join("SHA256SUMS");
    std::fs::write(&path, lines.concat()).map_err(|e| format!("{}: {e}", path.display()))
}

fn line(data: &[u8], name: &str) -> String {
    let digest = Sha256::digest(data);
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{hex}  {name}\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_is_what_sha256sum_prints() {
        // sha256sum of "abc" (FIPS 180-2's first example).
        assert_eq!(
            super::line(b"abc", "f"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  f\n"
        );
    }
}
