//! The code blocks of the README and the guide: each must be a snippet of
//! `docs/snippets/` that a runner runs (see `mod.rs`).

use std::path::{Path, PathBuf};

use super::{files_under, read};

/// Languages of examples a reader runs: they must come from a snippet.
const CODE: &[&str] = &[
    "python",
    "py",
    "js",
    "javascript",
    "mjs",
    "ts",
    "typescript",
    "rust",
    "rs",
    "sh",
    "bash",
    "shell",
    "console",
    "java",
    "go",
    "xml",
];
/// Blocks that show data, output or a command's usage: nothing to run.
const SHOWN: &[&str] = &["text", "json", "toml", "yaml"];
/// The folders of docs/snippets, each with its runner (mod.rs).
const FOLDERS: &[&str] = &[
    "commands",
    "compose",
    "first-test",
    "go",
    "http",
    "java",
    "resilience",
    "rust",
    "testcontainers",
    "tls",
];

/// One problem per line, `file:line: what to do`; empty when all is well.
pub fn check(root: &Path) -> Result<Vec<String>, String> {
    let snippets_dir = root.join("docs/snippets");
    let snippets = Snippets::load(&snippets_dir)?;
    let mut problems = snippets.misplaced(&snippets_dir);
    problems.extend(commands_run_by_ci(root)?);

    let mut pages = vec![root.join("README.md")];
    pages.extend(
        files_under(&root.join("docs/src"))?
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "md")),
    );
    for page in pages {
        let text = read(&page)?;
        let shown = page
            .strip_prefix(root)
            .unwrap_or(&page)
            .display()
            .to_string();
        for block in fenced_blocks(&text) {
            let at = format!("{shown}:{}", block.line);
            if SHOWN.contains(&block.lang.as_str()) {
                continue;
            }
            if !CODE.contains(&block.lang.as_str()) {
                problems.push(format!(
                    "{at}: a block of language {:?}: name one of {CODE:?} (then it must be a snippet) or {SHOWN:?}",
                    block.lang
                ));
                continue;
            }
            let body = block.body.trim();
            if let Some(target) = body
                .strip_prefix("{{#include ")
                .and_then(|b| b.strip_suffix("}}"))
            {
                let (file, anchor) = match target.split_once(':') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target, None),
                };
                let path = normalise(&page.parent().unwrap_or(root).join(file));
                if !path.starts_with(&snippets_dir) {
                    problems.push(format!(
                        "{at}: includes {file}, which is not under docs/snippets/"
                    ));
                } else if snippets.text(&path, anchor).is_none() {
                    problems.push(format!("{at}: includes {target}, which does not exist"));
                }
            } else if !snippets.holds(body) {
                problems.push(format!(
                    "{at}: this {} block is not a snippet: put it in docs/snippets/ (a folder a runner runs), \
                     then {{{{#include}}}} it (the guide) or copy it exactly (the README)",
                    block.lang
                ));
            }
        }
    }
    Ok(problems)
}

/// A fenced block: its language, its first line (1-based) and its body
/// without the fence's indentation.
pub struct Block {
    pub lang: String,
    pub line: usize,
    pub body: String,
}

pub fn fenced_blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let trimmed = line.trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - trimmed.len();
        let lang = info
            .split([',', ' '])
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let mut body = String::new();
        for (_, line) in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            let cut = line.len() - line.trim_start().len();
            body.push_str(&line[cut.min(indent)..]);
            body.push('\n');
        }
        blocks.push(Block {
            lang,
            line: number + 1,
            body,
        });
    }
    blocks
}

/// The snippet files and what a page may show of each: the whole file
/// without its anchor lines, or one anchor's region (mdBook's rules).
struct Snippets {
    files: Vec<(PathBuf, String)>,
}

impl Snippets {
    fn load(dir: &Path) -> Result<Snippets, String> {
        let mut files = Vec::new();
        for path in files_under(dir)? {
            if path.file_name().is_some_and(|n| n == "README.md") {
                continue;
            }
            files.push((path.clone(), read(&path)?));
        }
        Ok(Snippets { files })
    }

    fn text(&self, path: &Path, anchor: Option<&str>) -> Option<String> {
        let (_, text) = self.files.iter().find(|(p, _)| p == path)?;
        match anchor {
            None => Some(without_anchors(text.lines())),
            Some(name) => {
                let mut lines = text.lines();
                lines
                    .by_ref()
                    .find(|l| anchor_of(l, "ANCHOR:") == Some(name))?;
                let region: Vec<&str> = lines
                    .take_while(|l| anchor_of(l, "ANCHOR_END:") != Some(name))
                    .collect();
                Some(without_anchors(region.into_iter()))
            }
        }
    }

    /// Whether `body` is, exactly, a whole snippet or one of its regions.
    fn holds(&self, body: &str) -> bool {
        self.files.iter().any(|(path, text)| {
            let anchors = text.lines().filter_map(|l| anchor_of(l, "ANCHOR:"));
            std::iter::once(None)
                .chain(anchors.map(Some))
                .filter_map(|anchor| self.text(path, anchor))
                .any(|shown| shown.trim() == body)
        })
    }

    /// Snippets outside the folders a runner runs.
    fn misplaced(&self, dir: &Path) -> Vec<String> {
        self.files
            .iter()
            .filter(|(path, _)| {
                let folder = path.strip_prefix(dir).ok().and_then(|p| p.iter().next());
                !folder.is_some_and(|f| FOLDERS.iter().any(|known| f == *known))
                    || path.parent() == Some(dir)
            })
            .map(|(path, _)| {
                format!(
                    "{}: no runner runs this folder; use one of {FOLDERS:?}",
                    path.display()
                )
            })
            .collect()
    }
}

/// The name after `marker`, as mdBook reads it: letters, digits, `_` and
/// `-`, so that a comment's closing (`<!-- ANCHOR: deps -->`) is no part of it.
fn anchor_of<'l>(line: &'l str, marker: &str) -> Option<&'l str> {
    let at = line.find(marker)?;
    let rest = line[at + marker.len()..].trim_start();
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

fn without_anchors<'l>(lines: impl Iterator<Item = &'l str>) -> String {
    let kept: Vec<&str> = lines
        .filter(|l| !l.contains("ANCHOR:") && !l.contains("ANCHOR_END:"))
        .collect();
    kept.join("\n")
}

/// `docs/snippets/commands/*.sh`: each command must be one `.ci/run` runs
/// (the same line, to which it may add options).
fn commands_run_by_ci(root: &Path) -> Result<Vec<String>, String> {
    let ci = read(&root.join(".ci/run"))?;
    let ci_lines: Vec<&str> = ci.lines().map(str::trim).collect();
    let mut problems = Vec::new();
    for path in files_under(&root.join("docs/snippets/commands"))? {
        for line in read(&path)?.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let run = ci_lines.iter().any(|ci| {
                ci.strip_prefix(line)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
            });
            if !run {
                problems.push(format!(
                    "{}: `{line}` is not a command .ci/run runs",
                    path.display()
                ));
            }
        }
    }
    Ok(problems)
}

/// `a/b/../c` → `a/c`, without touching the file system.
pub(super) fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_language_line_and_body_without_the_list_indent() {
        let text = "intro\n\n1. step\n\n   ```sh\n   cosmos-conformance \\\n       --x y\n   ```\n\n```\nusage\n```\n";
        let blocks = fenced_blocks(text);
        assert_eq!(blocks.len(), 2);
        assert_eq!((blocks[0].lang.as_str(), blocks[0].line), ("sh", 5));
        assert_eq!(blocks[0].body, "cosmos-conformance \\\n    --x y\n");
        assert_eq!(blocks[1].lang, "");
    }

    #[test]
    fn a_region_is_shown_without_the_anchor_lines_and_the_file_without_any() {
        let snippets = Snippets {
            files: vec![(
                PathBuf::from("/s/a.sh"),
                "# ANCHOR: one\necho 1\n# ANCHOR_END: one\necho 2\n".into(),
            )],
        };
        assert_eq!(
            snippets.text(Path::new("/s/a.sh"), Some("one")).unwrap(),
            "echo 1"
        );
        assert_eq!(
            snippets.text(Path::new("/s/a.sh"), None).unwrap(),
            "echo 1\necho 2"
        );
        assert!(snippets.holds("echo 1"));
        assert!(snippets.holds("echo 1\necho 2"));
        assert!(
            !snippets.holds("echo 2"),
            "a part that is no region is no snippet"
        );
        assert!(snippets.text(Path::new("/s/a.sh"), Some("two")).is_none());
    }

    #[test]
    fn an_anchor_in_an_xml_comment_is_named_without_the_comment_close() {
        let snippets = Snippets {
            files: vec![(
                PathBuf::from("/s/pom.xml"),
                "<a>\n  <!-- ANCHOR: deps -->\n  <b/>\n  <!-- ANCHOR_END: deps -->\n</a>\n".into(),
            )],
        };
        assert_eq!(
            snippets
                .text(Path::new("/s/pom.xml"), Some("deps"))
                .unwrap(),
            "  <b/>"
        );
        assert!(snippets.holds("<b/>"));
    }
}
