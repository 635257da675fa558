//! Paths cited in the repository's own comments and documents: every path
//! of this repository that they name must exist, and none may cite the
//! background documents that live outside it (a folder named `shared`
//! beside the clone).
//!
//! Where citations are looked for, in every tracked text file: the whole of
//! a Markdown file but its fenced code blocks; the comments (and Python's
//! docstrings) of `.rs`, `.js`, `.mjs`, `.ts`, `.py`, `.toml`, `.yml`, `.sh`
//! files and of scripts with a `#!` line. Code is not read: its paths are
//! relative to whatever directory it runs in, and its tests find them.
//!
//! What a citation is:
//! - a word with a `/` in it (`data/store/ranges.rs`, `emulator/tests/it/`); a
//!   word cut short by a pattern (`docs/scorecard.{md,html}`,
//!   `fixtures/cases/<n>-<area>.toml`) is checked up to its last `/`, and a
//!   segment in capitals that no tracked file is named (`NAME.toml`, `DIR`)
//!   is a placeholder, not checked;
//! - a `#fragment` after a `.md` path: a heading of that page (mdBook's id
//!   of its text, its `{#id}`, or an HTML `id="..."`);
//! - a section, a `.md` path or a bare README followed by `, "Heading"`:
//!   that heading in that file (a bare README is the nearest one up);
//! - a bare Markdown name in capitals (`CONTRIBUTING.md`): a document
//!   beside the citing file, at its package's root or at the root.
//!
//! Where a path is looked for, the first place where it exists winning:
//! 1. the repository's root, when its first segment is a top-level entry
//!    (`emulator/src/data/ttl.rs`, `.ci/run`);
//! 2. the citing file's directory (`container/mod.rs` in `data/store/mod.rs`);
//! 3. the citing package's root and its `src/`: the package is the nearest
//!    directory up with a `Cargo.toml`, `pyproject.toml` or `package.json`
//!    (`data/store/ranges.rs` in `emulator/src/http/items.rs`, `tests/it/fuzz.rs`
//!    in `emulator/Cargo.toml`, `cosmos_emulator/__init__.py` in
//!    `packages/python/`, whose modules live in its `src/`);
//! 4. for a file's path (one with an extension), any package's `src/`
//!    (`data/query/results.rs` in `bench/README.md` or in the guide).
//!
//! For 2 to 4 the path must also be of a kind found there: the entry its
//! first segment names holds files with its extension. A path that starts
//! with `..` is resolved from the file's directory and its package's root.
//!
//! What is not this repository's, and so not checked:
//! - a path whose first segment names nothing in those places: another
//!   project's (the SDK's
//!   `_execution_context/multi_execution_aggregator.py`, Microsoft's
//!   `articles/cosmos-db/…`), or a path on the wire (`dbs/{db}/colls`);
//! - a path of another kind than what is there (the SDK's
//!   `tests/test_crud.py` cited in the emulator, whose `tests/` is Rust);
//! - a path right after a possessive (the SDK's, your project's): the
//!   owner named is another;
//! - a path right after an HTTP method (`PATCH docs/a`): a URL;
//! - what `.gitignore` ignores (`target/…`, `docs/book/…`): outputs a build
//!   makes, not sources.
//!
//! "Exists" means tracked by git (`git ls-files`, staged files included),
//! so the answer is the same on a clean clone as here.

mod prose;
mod repo;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::process::Command;

#[cfg(test)]
pub(crate) use prose::rust_code;
use prose::{syntax_of, Syntax};
use repo::Repo;

/// The files read, by extension, and how their comments are written.
const TEXT: &[(&str, Syntax)] = &[
    ("md", Syntax::Markdown),
    ("rs", Syntax::Rust),
    ("js", Syntax::JavaScript),
    ("mjs", Syntax::JavaScript),
    ("ts", Syntax::JavaScript),
    ("py", Syntax::Python),
    ("toml", Syntax::Hash),
    ("yml", Syntax::Hash),
    ("yaml", Syntax::Hash),
    ("sh", Syntax::Hash),
];
/// The files that make a directory a package (rule 3).
const PACKAGE_FILES: &[&str] = &["Cargo.toml", "pyproject.toml", "package.json"];
/// A path right after one of these is a URL's.
const METHODS: &[&str] = &["GET", "PUT", "POST", "PATCH", "DELETE", "HEAD"];

/// The files git tracks in the repository at `root` (staged ones
/// included), relative to it: what "exists" means for a citation, and
/// what `tidy.rs` reads.
pub(crate) fn tracked_files(root: &Path) -> Result<Vec<String>, String> {
    let output = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("cannot run git ls-files: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "git ls-files failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout)
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect())
}

/// Every dead citation of the repository at `root`, one `file:line: what`
/// a line; empty when all is well.
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let files = tracked_files(root)?;
    let gitignore = std::fs::read_to_string(root.join(".gitignore")).unwrap_or_default();
    let repo = Repo::new(files.iter().map(String::as_str), &gitignore);
    let read = |cited: &str| std::fs::read_to_string(root.join(cited)).ok();
    let mut problems = Vec::new();
    for file in &files {
        // Deleted in the work tree but still in the index, or not text.
        let Some(text) = read(file) else {
            continue;
        };
        let Some(syntax) = syntax_of(file, &text) else {
            continue;
        };
        for (line, cited, why) in repo.dead_citations(file, &text, syntax, &read) {
            problems.push(format!("{file}:{line}: {cited}: {why}"));
        }
    }
    Ok(problems)
}
