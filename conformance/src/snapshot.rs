//! `--snapshot FILE`: the run's outcome table kept in a file of insta's
//! `.snap` format, so that a project gating on the suite commits it and
//! reviews changes as it reviews insta snapshots. A difference writes
//! `FILE.new` (insta's pending snapshot), which `cargo insta review` and
//! `cargo insta accept` pick up, or which is simply moved over FILE.

use insta::internals::TextSnapshotContents;
use insta::{Snapshot, TextSnapshotKind};
use std::path::{Path, PathBuf};

/// What comparing the run's table with the snapshot file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    /// There was no file: it is written now.
    Written,
    /// The file holds the same table.
    Matches,
    /// The table differs: `diff` is a unified diff (old to new) and
    /// `pending` the `FILE.new` written for review.
    Differs { diff: String, pending: PathBuf },
}

/// Compares `table` with the snapshot in `file` (see [`Comparison`]).
pub fn compare(file: &Path, table: &str) -> Result<Comparison, String> {
    let pending = pending_path(file);
    if !file.exists() {
        write(file, table)?;
        // A pending file left from an earlier run is settled by this one.
        let _ = std::fs::remove_file(&pending);
        return Ok(Comparison::Written);
    }
    let old = Snapshot::from_file(file)
        .map_err(|e| format!("{} is not an insta snapshot: {e}", file.display()))?;
    let old = old
        .contents()
        .as_text()
        .ok_or_else(|| format!("{} is a binary snapshot", file.display()))?
        .to_string();
    // insta's own normalisation (trailing whitespace, line endings).
    let new = TextSnapshotContents::new(table.to_string(), TextSnapshotKind::File).to_string();
    if old == new {
        let _ = std::fs::remove_file(&pending);
        return Ok(Comparison::Matches);
    }
    write(&pending, table)?;
    let diff = similar::TextDiff::from_lines(&format!("{old}\n"), &format!("{new}\n"))
        .unified_diff()
        .context_radius(2)
        .header(&file.display().to_string(), &pending.display().to_string())
        .to_string();
    Ok(Comparison::Differs { diff, pending })
}

/// `FILE.new`, e.g. `outcomes.snap.new`.
pub fn pending_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

/// Writes a text snapshot: insta's YAML header, then the table.
fn write(file: &Path, table: &str) -> Result<(), String> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let text = format!(
        "---\nsource: cosmos-conformance\nexpression: outcome table (cosmos-conformance --snapshot)\n---\n{}\n",
        table.trim_end()
    );
    std::fs::write(file, text).map_err(|e| format!("cannot write {}: {e}", file.display()))
}
