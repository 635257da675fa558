//! The tracked tree as the checker sees it, and how a cited path,
//! fragment or heading is resolved in it (the rules of `mod.rs`).

use std::collections::{BTreeSet, HashMap};

use super::prose::{prose, Syntax};
use super::{METHODS, PACKAGE_FILES};

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
pub(super) fn mdbook_id(title: &str) -> String {
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
