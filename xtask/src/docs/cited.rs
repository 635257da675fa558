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
//! - a word with a `/` in it (`store/ranges.rs`, `emulator/tests/it/`); a
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
//!    (`emulator/src/ttl.rs`, `.ci/run`);
//! 2. the citing file's directory (`container/mod.rs` in `store/mod.rs`);
//! 3. the citing package's root and its `src/`: the package is the nearest
//!    directory up with a `Cargo.toml`, `pyproject.toml` or `package.json`
//!    (`store/ranges.rs` in `emulator/src/http/items.rs`, `tests/it/fuzz.rs`
//!    in `emulator/Cargo.toml`, `cosmos_emulator/__init__.py` in
//!    `packages/python/`, whose modules live in its `src/`);
//! 4. for a file's path (one with an extension), any package's `src/`
//!    (`query/results.rs` in `bench/README.md` or in the guide).
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

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::Command;

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

/// Every dead citation of the repository at `root`, one `file:line: what`
/// a line; empty when all is well.
pub fn check(root: &Path) -> Result<Vec<String>, String> {
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
    let files: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .split('\0')
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect();
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

/// How a file's comments are written.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Syntax {
    /// All of it is prose, but its fenced code blocks.
    Markdown,
    /// `//` and `/* */`, and `'` for chars and lifetimes.
    Rust,
    /// `//` and `/* */`, and `'` for strings.
    JavaScript,
    /// `#` (TOML, YAML, shell).
    Hash,
    /// `#` and docstrings.
    Python,
}

fn syntax_of(file: &str, text: &str) -> Option<Syntax> {
    let name = file.rsplit('/').next().unwrap_or(file);
    match name.rsplit_once('.') {
        Some((_, extension)) => TEXT
            .iter()
            .find(|(e, _)| *e == extension)
            .map(|(_, syntax)| *syntax),
        None => text.starts_with("#!").then_some(Syntax::Hash),
    }
}

/// The prose of `text`, `(line number, text)`: its comments, or for
/// Markdown all of it but its fenced blocks.
fn prose(text: &str, syntax: Syntax) -> Vec<(usize, String)> {
    match syntax {
        Syntax::Markdown => {
            let mut fenced = false;
            let mut out = Vec::new();
            for (number, line) in text.lines().enumerate() {
                if line.trim_start().starts_with("```") {
                    fenced = !fenced;
                } else if !fenced {
                    out.push((number + 1, line.to_string()));
                }
            }
            out
        }
        Syntax::Rust => slash_comments(text, true),
        Syntax::JavaScript => slash_comments(text, false),
        Syntax::Hash => hash_comments(text, false),
        Syntax::Python => hash_comments(text, true),
    }
}

/// The comments of Rust or JavaScript, line by line: a small lexer that
/// knows strings (`"…"`, JavaScript's `'…'` and `` `…` ``, Rust's raw
/// `r#"…"#`; Rust's char literals and lifetimes are not strings), line and
/// block comments.
fn slash_comments(text: &str, rust: bool) -> Vec<(usize, String)> {
    enum State {
        Code,
        /// In a string that this text closes (`"`, `'`, `` ` ``, `"#`).
        Text(Vec<char>),
        Line,
        Block(usize),
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut comment = String::new();
    let mut state = State::Code;
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '\n' {
            if !comment.trim().is_empty() {
                out.push((line, std::mem::take(&mut comment)));
            }
            comment.clear();
            line += 1;
            if matches!(state, State::Line) {
                state = State::Code;
            }
            i += 1;
            continue;
        }
        let mut step = 1;
        match &mut state {
            State::Code => match (c, next) {
                ('/', Some('/')) => {
                    state = State::Line;
                    step = 2;
                }
                ('/', Some('*')) => {
                    state = State::Block(1);
                    step = 2;
                }
                ('"', _) => state = State::Text(vec![c]),
                ('`' | '\'', _) if !rust => state = State::Text(vec![c]),
                ('r', Some('#' | '"')) if rust && (i == 0 || !is_ident(chars[i - 1])) => {
                    let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                    if chars.get(i + 1 + hashes) == Some(&'"') {
                        let mut close = vec!['"'];
                        close.extend(std::iter::repeat_n('#', hashes));
                        state = State::Text(close);
                        step = 2 + hashes;
                    }
                }
                ('\'', _) => {
                    // Rust: a char literal ('"', '\'', '\u{7f}') is
                    // skipped; a lifetime or label ('a) is code.
                    let escaped = next == Some('\\');
                    let from = (i + if escaped { 3 } else { 2 }).min(chars.len());
                    let close = chars[from..]
                        .iter()
                        .take(10)
                        .take_while(|c| **c != '\n')
                        .position(|c| *c == '\'')
                        .map(|at| from + at);
                    if let Some(end) = close.filter(|end| escaped || *end == i + 2) {
                        step = end + 1 - i;
                    }
                }
                _ => {}
            },
            State::Text(close) => {
                if c == '\\' && close.len() == 1 && next != Some('\n') {
                    step = 2;
                } else if chars[i..].starts_with(close) {
                    step = close.len();
                    state = State::Code;
                }
            }
            State::Line => comment.push(c),
            State::Block(depth) => match (c, next) {
                ('*', Some('/')) => {
                    *depth -= 1;
                    if *depth == 0 {
                        state = State::Code;
                    }
                    comment.push(' ');
                    step = 2;
                }
                ('/', Some('*')) => {
                    *depth += 1;
                    step = 2;
                }
                _ => comment.push(c),
            },
        }
        // A string's `\` may precede the last character.
        i = (i + step).min(chars.len());
    }
    if !comment.trim().is_empty() {
        out.push((line, comment));
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The comments of TOML, YAML, shell and Python: from a `#` that starts
/// the line or follows a space, outside quotes, to the end of the line;
/// with `docstrings`, Python's `"""…"""` too.
fn hash_comments(text: &str, docstrings: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut in_docstring: Option<&str> = None;
    for (number, line) in text.lines().enumerate() {
        let number = number + 1;
        let mut rest = line;
        if let Some(close) = in_docstring {
            match line.find(close) {
                Some(end) => {
                    out.push((number, line[..end].to_string()));
                    rest = &line[end + close.len()..];
                    in_docstring = None;
                }
                None => {
                    out.push((number, line.to_string()));
                    continue;
                }
            }
        }
        if docstrings {
            for quote in ["\"\"\"", "'''"] {
                let Some(open) = rest.find(quote) else {
                    continue;
                };
                let inside = &rest[open + quote.len()..];
                match inside.find(quote) {
                    Some(end) => out.push((number, inside[..end].to_string())),
                    None => {
                        out.push((number, inside.to_string()));
                        in_docstring = Some(quote);
                    }
                }
                rest = &rest[..open];
                break;
            }
        }
        let mut quote: Option<char> = None;
        let mut previous = ' ';
        for (at, c) in rest.char_indices() {
            match quote {
                Some(q) if c == q && previous != '\\' => quote = None,
                Some(_) => {}
                None if c == '"' || c == '\'' => quote = Some(c),
                None if c == '#' && previous.is_whitespace() => {
                    out.push((number, rest[at + 1..].to_string()));
                    break;
                }
                None => {}
            }
            previous = c;
        }
    }
    out
}

/// The tracked tree, as the checker sees it.
pub struct Repo {
    /// Every tracked file and every directory above one, `a/b` form.
    paths: BTreeSet<String>,
    /// Every tracked file's name (to tell `README.md` from `NAME.toml`).
    names: BTreeSet<String>,
    /// The directories holding a package file (`""` is the root).
    packages: BTreeSet<String>,
    ignored: Vec<Ignored>,
}

/// One line of `.gitignore`, as far as this checker needs it.
enum Ignored {
    /// `/target`, `/docs/book/`: that path from the root.
    Anchored(String),
    /// `node_modules/`, `.venv/`: any segment with that name.
    Segment(String),
    /// `*.snap.new`: any name with that ending.
    Suffix(String),
}

/// What a cited path is.
enum Resolved {
    /// This path from the root.
    Found(String),
    /// Not a path of this repository.
    Foreign,
    /// A dead citation, and why.
    Dead(&'static str),
}

impl Repo {
    pub fn new<'a>(files: impl Iterator<Item = &'a str>, gitignore: &str) -> Repo {
        let mut paths = BTreeSet::new();
        let mut names = BTreeSet::new();
        let mut packages = BTreeSet::new();
        for file in files {
            let mut at = 0;
            while let Some(slash) = file[at..].find('/') {
                paths.insert(file[..at + slash].to_string());
                at += slash + 1;
            }
            let (dir, name) = split_dir(file);
            if PACKAGE_FILES.contains(&name) {
                packages.insert(dir.to_string());
            }
            names.insert(name.to_string());
            paths.insert(file.to_string());
        }
        let ignored = gitignore
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| {
                if let Some(anchored) = line.strip_prefix('/') {
                    Ignored::Anchored(anchored.trim_end_matches('/').to_string())
                } else if let Some(suffix) = line.strip_prefix('*') {
                    Ignored::Suffix(suffix.to_string())
                } else {
                    Ignored::Segment(line.trim_end_matches('/').to_string())
                }
            })
            .collect();
        Repo {
            paths,
            names,
            packages,
            ignored,
        }
    }

    fn exists(&self, path: &str) -> bool {
        path.is_empty() || self.paths.contains(path)
    }

    fn is_ignored(&self, path: &str) -> bool {
        self.ignored.iter().any(|rule| match rule {
            Ignored::Anchored(prefix) => path == prefix || path.starts_with(&format!("{prefix}/")),
            Ignored::Segment(name) => path.split('/').any(|s| s == name),
            Ignored::Suffix(suffix) => path.ends_with(suffix.as_str()),
        })
    }

    /// Whether the entry `path` is, or holds, a file ending in `.extension`.
    fn holds_kind(&self, path: &str, extension: &str) -> bool {
        let suffix = format!(".{extension}");
        let prefix = format!("{path}/");
        path.ends_with(&suffix)
            || self
                .paths
                .range(prefix.clone()..)
                .take_while(|p| p.starts_with(&prefix))
                .any(|p| p.ends_with(&suffix))
    }

    /// The package `file` belongs to: the nearest directory up with a
    /// package file, or the root.
    fn package_of<'f>(&self, file: &'f str) -> &'f str {
        let mut dir = split_dir(file).0;
        loop {
            if self.packages.contains(dir) || dir.is_empty() {
                return dir;
            }
            dir = split_dir(dir).0;
        }
    }

    /// What `cited`, a path as written in `file`, is.
    fn resolve(&self, file: &str, cited: &str) -> Resolved {
        let cited = cited.trim_start_matches("./");
        if cited.starts_with('/') || cited.starts_with("...") || cited.contains("//") {
            return Resolved::Foreign;
        }
        let path = cited.trim_end_matches('/');
        let segments: Vec<&str> = path.split('/').collect();
        let first = segments[0];
        let shared = match first {
            ".." => segments.get(1) == Some(&"shared"),
            _ => first == "shared",
        };
        if shared {
            return Resolved::Dead("the background documents are not in the repository");
        }
        if segments
            .iter()
            .any(|s| is_placeholder(s) && !self.names.contains(*s))
        {
            return Resolved::Foreign;
        }
        let dir = split_dir(file).0;
        let package = self.package_of(file);
        if first == ".." {
            let mut outside = true;
            for base in [dir, package] {
                if let Some(full) = normalise(base, path) {
                    outside = false;
                    if self.exists(&full) || self.is_ignored(&full) {
                        return Resolved::Found(full);
                    }
                }
            }
            return Resolved::Dead(match outside {
                true => "a path outside the repository",
                false => "no such file",
            });
        }
        let extension = split_dir(path).1.rsplit_once('.').map(|(_, e)| e);
        let mut bases: Vec<String> = Vec::new();
        if self.exists(first) {
            bases.push(String::new());
        }
        // Rule 4, for a file's path (one with an extension): any package's src/.
        let sources = self
            .packages
            .iter()
            .filter(|_| extension.is_some())
            .map(|p| join(p, "src"));
        for base in [dir.to_string(), package.to_string(), join(package, "src")]
            .into_iter()
            .chain(sources)
        {
            let entry = join(&base, first);
            let of_its_kind = extension.is_none_or(|e| self.holds_kind(&entry, e));
            if !base.is_empty() && self.exists(&entry) && of_its_kind && !bases.contains(&base) {
                bases.push(base);
            }
        }
        if bases.is_empty() {
            return Resolved::Foreign;
        }
        for base in &bases {
            let full = join(base, path);
            if self.exists(&full) {
                return Resolved::Found(full);
            }
        }
        if bases.iter().any(|base| self.is_ignored(&join(base, path))) {
            return Resolved::Foreign;
        }
        Resolved::Dead("no such file")
    }

    /// Every dead citation in `text`, the content of `file`, as
    /// `(line, cited, why)`; `read` gives a tracked file's text (for
    /// fragments and sections).
    pub fn dead_citations(
        &self,
        file: &str,
        text: &str,
        syntax: Syntax,
        read: &dyn Fn(&str) -> Option<String>,
    ) -> Vec<(usize, String, String)> {
        let mut dead = Vec::new();
        // Each page's headings, read once.
        let mut pages: HashMap<String, Option<Vec<Heading>>> = HashMap::new();
        for (line, prose) in prose(text, syntax) {
            for word in words(&prose) {
                if word.someone_elses {
                    continue;
                }
                let rest = &prose[word.end..];
                let mut cited = word.text.to_string();
                if word.cut {
                    match cited.rfind('/') {
                        Some(slash) => cited.truncate(slash + 1),
                        None => continue,
                    }
                }
                let resolved = if cited.contains('/') {
                    self.resolve(file, &cited)
                } else if is_document_name(&cited) {
                    self.document(file, &cited)
                } else if cited == "README" && section(rest).is_some() {
                    // A bare README is a citation only with its section.
                    self.document(file, "README.md")
                } else {
                    Resolved::Foreign
                };
                let path = match resolved {
                    Resolved::Found(path) => path,
                    Resolved::Foreign => continue,
                    Resolved::Dead(why) => {
                        dead.push((line, cited, why.to_string()));
                        continue;
                    }
                };
                if word.cut || !path.ends_with(".md") {
                    continue;
                }
                let Some(headings) = pages
                    .entry(path.clone())
                    .or_insert_with(|| read(&path).map(|t| Heading::all(&t)))
                else {
                    continue;
                };
                if let Some(fragment) = rest.strip_prefix('#') {
                    let fragment: String = fragment
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '-' || *c == '_')
                        .collect();
                    if !fragment.is_empty() && !headings.iter().any(|h| h.id == fragment) {
                        dead.push((
                            line,
                            format!("{cited}#{fragment}"),
                            format!("no such heading in {path}"),
                        ));
                    }
                } else if let Some(title) = section(rest) {
                    let wanted = Heading::plain(title);
                    if !headings.iter().any(|h| h.text == wanted) {
                        dead.push((
                            line,
                            format!("{cited}, \"{title}\""),
                            format!("no such heading in {path}"),
                        ));
                    }
                }
            }
        }
        dead
    }

    /// A bare document name (`README.md`): beside `file`, at its package's
    /// root, or at the root; a README, the nearest one up.
    fn document(&self, file: &str, name: &str) -> Resolved {
        let mut dir = split_dir(file).0;
        let package = self.package_of(file);
        for base in [dir, package, ""] {
            let path = join(base, name);
            if self.exists(&path) {
                return Resolved::Found(path);
            }
        }
        if name == "README.md" {
            while !dir.is_empty() {
                dir = split_dir(dir).0;
                let path = join(dir, name);
                if self.exists(&path) {
                    return Resolved::Found(path);
                }
            }
        }
        Resolved::Dead("no such document in this repository")
    }
}

/// A segment in capitals (`NAME.toml`, `DIR`): a placeholder, unless a
/// tracked file is named so (`README.md`).
fn is_placeholder(segment: &str) -> bool {
    let stem = segment.split('.').next().unwrap_or(segment);
    stem.len() > 1
        && stem
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c == '-')
}

/// A name in capitals ending in `.md`: a document's name (`README.md`).
fn is_document_name(word: &str) -> bool {
    word.strip_suffix(".md").is_some_and(|stem| {
        stem.starts_with(|c: char| c.is_ascii_uppercase())
            && stem
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '-' || c == '_')
    })
}

/// `, "Heading"` right after a citation (a closing backtick allowed).
fn section(rest: &str) -> Option<&str> {
    let rest = rest.strip_prefix('`').unwrap_or(rest);
    let quoted = rest.strip_prefix(", \"")?;
    quoted.split_once('"').map(|(title, _)| title)
}

/// A Markdown heading: its text as a reader cites it, and its id.
struct Heading {
    text: String,
    id: String,
}

impl Heading {
    fn all(markdown: &str) -> Vec<Heading> {
        let mut headings = Vec::new();
        for (_, line) in prose(markdown, Syntax::Markdown) {
            let Some(title) = line.strip_prefix('#') else {
                continue;
            };
            let title = title.trim_start_matches('#');
            if !title.starts_with(' ') {
                continue;
            }
            let title = title.trim();
            let (title, id) = match title.rsplit_once("{#") {
                Some((title, attribute)) if title.ends_with(' ') => (
                    title.trim(),
                    attribute.trim_end_matches('}').trim().to_string(),
                ),
                _ => (title, mdbook_id(title)),
            };
            headings.push(Heading {
                text: Heading::plain(title),
                id,
            });
        }
        // Anchors written in HTML (`<a id="r7"></a>`) are ids too.
        let mut rest = markdown;
        while let Some(at) = rest.find(" id=\"") {
            rest = &rest[at + 5..];
            if let Some((id, _)) = rest.split_once('"') {
                headings.push(Heading {
                    text: String::new(),
                    id: id.to_string(),
                });
            }
        }
        headings
    }

    /// A heading's text as compared with a citation: no backticks, any case.
    fn plain(title: &str) -> String {
        title.replace('`', "").trim().to_lowercase()
    }
}

/// The id mdBook gives a heading: lower case, spaces as `-`, only letters,
/// digits, `-` and `_` kept.
fn mdbook_id(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// A run of path characters in a line.
struct Word<'l> {
    text: &'l str,
    /// Where it ends in the line (the next character's byte offset).
    end: usize,
    /// Cut short by a pattern (`.{md,html}`, `<n>`, `*`): only its
    /// directory is a path.
    cut: bool,
    /// Right after a possessive (the SDK's) or an HTTP method (`GET`):
    /// not this repository's.
    someone_elses: bool,
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~' | '@' | '+')
}

/// The path-like words of `line`, trailing dots (a sentence's end) cut.
fn words(line: &str) -> Vec<Word<'_>> {
    let mut words = Vec::new();
    let mut start = None;
    for (at, c) in line
        .char_indices()
        .chain(std::iter::once((line.len(), ' ')))
    {
        match (is_path_char(c), start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                start = None;
                let text = line[from..at].trim_end_matches('.');
                if text.is_empty() {
                    continue;
                }
                let before = line[..from].trim_end_matches(['`', '"', '(']);
                let possessive = before.ends_with("'s ") || before.ends_with("’s ");
                let method = before
                    .strip_suffix(' ')
                    .is_some_and(|b| METHODS.iter().any(|m| b.ends_with(m)));
                words.push(Word {
                    text,
                    end: from + text.len(),
                    cut: matches!(c, '{' | '<' | '*' | '[' | '$'),
                    someone_elses: possessive || method,
                });
            }
            _ => {}
        }
    }
    words
}

/// `("a/b", "c.rs")` → `"a/b/c.rs"`; `""` is the root.
fn join(dir: &str, path: &str) -> String {
    match dir {
        "" => path.to_string(),
        dir => format!("{dir}/{path}"),
    }
}

/// `"a/b/c.rs"` → `("a/b", "c.rs")`; a file at the root has dir `""`.
fn split_dir(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// `path` from `dir` with `.` and `..` applied; `None` when it climbs out
/// of the repository.
fn normalise(dir: &str, path: &str) -> Option<String> {
    let mut segments: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for segment in path.trim_end_matches('/').split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop()?;
            }
            segment => segments.push(segment),
        }
    }
    Some(segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `..` paths are spelled in pieces: this file is scanned too, and from
    /// here they would climb into xtask/.
    const UP: &str = "..";

    /// A small repository: a Rust crate `app`, a Python package `py`, a
    /// guide page with headings and a README with a section.
    fn repo() -> Repo {
        let files = [
            "Cargo.toml",
            "README.md",
            "app/Cargo.toml",
            "app/src/lib.rs",
            "app/src/http/mod.rs",
            "app/src/http/items.rs",
            "app/src/store/mod.rs",
            "app/src/store/container/mod.rs",
            "app/tests/it/main.rs",
            "app/tests/it/fuzz.rs",
            "guide/rules.md",
            "py/pyproject.toml",
            "py/src/pkg/__init__.py",
            "py/tests/test_pkg.py",
        ];
        Repo::new(
            files.into_iter(),
            "/target\n/guide/book/\nnode_modules/\n*.snap.new\n",
        )
    }

    fn read(path: &str) -> Option<String> {
        match path {
            "README.md" => Some("# app\n\n## Test clock protocol\n".to_string()),
            "guide/rules.md" => Some(
                "# Rules\n\n## R7 Remove an item's TTL {#r7}\n\n## The tables\n\n```\n# Not a heading\n```\n"
                    .to_string(),
            ),
            _ => None,
        }
    }

    /// The dead citations of `text` as the file `file`, as reported.
    fn dead(file: &str, text: &str) -> Vec<String> {
        let syntax = syntax_of(file, text).expect("a file the checker reads");
        repo()
            .dead_citations(file, text, syntax, &read)
            .into_iter()
            .map(|(line, cited, why)| format!("{file}:{line}: {cited}: {why}"))
            .collect()
    }

    const NONE: Vec<String> = Vec::new();

    #[test]
    fn paths_resolve_from_the_root_the_file_and_the_package() {
        // From the root, from the file's directory, from the crate's src/
        // and root, from a Python package's src/, and with `..`.
        let text = format!(
            "// app/src/store/mod.rs, container/mod.rs, store/container/mod.rs,\n\
             // tests/it/fuzz.rs, http/mod.rs, {UP}/store/mod.rs, app/tests/it/\n"
        );
        assert_eq!(dead("app/src/store/mod.rs", &text), NONE);
        // From anywhere, a file in any package's src/.
        assert_eq!(
            dead("guide/rules.md", "The maps: store/mod.rs, store/gone.rs.\n"),
            ["guide/rules.md:1: store/gone.rs: no such file"]
        );
        let text = format!("# see pkg/__init__.py and {UP}/src/pkg/\n");
        assert_eq!(dead("py/tests/test_pkg.py", &text), NONE);
    }

    #[test]
    fn a_dead_path_is_named_with_its_file_and_line() {
        let text = "//! Items.\n//! The maps (`store/container.rs`) and the fuzz tests\n\
                    //! (tests/fuzz.rs); app/src/gone.rs. Ok: store/mod.rs.\n";
        assert_eq!(
            dead("app/src/http/items.rs", text),
            [
                "app/src/http/items.rs:2: store/container.rs: no such file",
                "app/src/http/items.rs:3: tests/fuzz.rs: no such file",
                "app/src/http/items.rs:3: app/src/gone.rs: no such file",
            ]
        );
        assert_eq!(
            dead("Cargo.toml", "[x]\n# The guide (guide/gone.md).\n"),
            ["Cargo.toml:2: guide/gone.md: no such file"]
        );
        assert_eq!(
            dead(
                "guide/rules.md",
                "# Rules\n\nSee [the tests](../app/tests/gone.rs).\n"
            ),
            ["guide/rules.md:3: ../app/tests/gone.rs: no such file"]
        );
    }

    #[test]
    fn only_comments_and_prose_are_read() {
        // Paths in code are relative to where it runs; in a fenced block,
        // to the reader's project.
        let rust = "let p = dir.join(\"app/src/gone.rs\"); // but app/src/lib.rs\n\
                    let q = r#\"app/gone.rs // app/gone.rs\"#; let c = '\"'; /* app/x.rs */\n";
        assert_eq!(
            dead("app/src/lib.rs", rust),
            ["app/src/lib.rs:2: app/x.rs: no such file"]
        );
        let js = "const u = 'app/gone.js'; // app/src/gone.js\nconst t = `a\n// app/gone2.js`;\n";
        assert_eq!(
            dead("app/src/ui.js", js),
            ["app/src/ui.js:1: app/src/gone.js: no such file"]
        );
        let python = "\"\"\"Tests (app/src/gone.py).\"\"\"\nx = 'app/ok' # app/gone.py\n";
        assert_eq!(
            dead("py/tests/test_pkg.py", python),
            [
                "py/tests/test_pkg.py:1: app/src/gone.py: no such file",
                "py/tests/test_pkg.py:2: app/gone.py: no such file",
            ]
        );
        let markdown = "Run it:\n\n```sh\ncp app/gone.toml .\n```\n\nThen app/gone.md.\n";
        assert_eq!(
            dead("README.md", markdown),
            ["README.md:7: app/gone.md: no such file"]
        );
    }

    #[test]
    fn other_projects_paths_placeholders_and_build_outputs_are_not_checked() {
        let text = "# _execution_context/aggregators.py, the SDK's tests/test_crud.py,\n\
                    # articles/cosmos-db/nosql/time-to-live.md, vercel/cosmosdb-server/src/x.ts,\n\
                    # target/debug/app, guide/book/index.html, app/NAME.toml, app/{a,b}.rs,\n\
                    # https://example.com/app/src/gone.rs, /app/src/gone.rs, and/or, R7/R8,\n\
                    # guide/rules.{md,html}, app/tests/<n>-<area>.rs, PATCH app/a, dbs/{db}/colls\n\
                    # your project's `app/expectations.toml`\n";
        assert_eq!(dead("Cargo.toml", text), NONE);
        // A Python test cited in a crate whose tests are Rust: the SDK's.
        assert_eq!(dead("app/src/lib.rs", "//! tests/test_crud.py:809\n"), NONE);
    }

    #[test]
    fn nothing_may_cite_the_documents_outside_the_repository() {
        let shared = format!("{UP}/{}/RULES.md", "shared");
        let text = format!("// the rules ({shared}), R7\n");
        assert_eq!(
            dead("app/src/lib.rs", &text),
            [format!(
                "app/src/lib.rs:1: {shared}: the background documents are not in the repository"
            )]
        );
        let text = format!("# the seeds: {}/seeds/\n", "shared");
        assert_eq!(
            dead("app/Cargo.toml", &text),
            [format!(
                "app/Cargo.toml:1: {}/seeds/: the background documents are not in the repository",
                "shared"
            )]
        );
        let text = format!("# {UP}/{UP}/{UP}/elsewhere.md\n");
        assert_eq!(
            dead("app/Cargo.toml", &text),
            [format!(
                "app/Cargo.toml:1: {UP}/{UP}/{UP}/elsewhere.md: a path outside the repository"
            )]
        );
        let name = format!("{}.md", "PROTOCOL");
        assert_eq!(
            dead(
                "app/src/lib.rs",
                &format!("//! The wire ({name}). README.md\n")
            ),
            [format!(
                "app/src/lib.rs:1: {name}: no such document in this repository"
            )]
        );
    }

    #[test]
    fn fragments_and_sections_must_be_headings_of_the_page() {
        let ok =
            "// guide/rules.md#r7, guide/rules.md#the-tables, `guide/rules.md`, \"The tables\"\n\
                  // (README, \"Test clock protocol\"), the SDK's README, \"Anything\"\n";
        assert_eq!(dead("app/src/lib.rs", ok), NONE);
        let text = "// guide/rules.md#r13, guide/rules.md#not-a-heading, (README, \"Clock\")\n";
        assert_eq!(
            dead("app/src/http/mod.rs", text),
            [
                "app/src/http/mod.rs:1: guide/rules.md#r13: no such heading in guide/rules.md",
                "app/src/http/mod.rs:1: guide/rules.md#not-a-heading: no such heading in guide/rules.md",
                "app/src/http/mod.rs:1: README, \"Clock\": no such heading in README.md",
            ]
        );
    }

    #[test]
    fn headings_get_mdbooks_ids() {
        assert_eq!(mdbook_id("R5 Invisible at once"), "r5-invisible-at-once");
        assert_eq!(mdbook_id("The `etag` (a header)"), "the-etag-a-header");
    }

    /// The repository itself: every path it cites exists.
    #[test]
    fn every_path_the_repository_cites_exists() {
        let problems = check(&crate::root()).unwrap();
        assert!(
            problems.is_empty(),
            "{} dead citation(s):\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
}
