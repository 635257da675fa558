//! Broken links: in the built guide (every relative `href`/`src` names a
//! file that exists, and its `#fragment` an `id` in it), and in the
//! Markdown files GitHub shows as they are (every relative link names a file).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::{files_under, read};

/// `book` is mdBook's output; `print.html` repeats every page and `404.html`
/// links from the site's root, so both are left out.
pub fn check_book(book: &Path) -> Result<Vec<String>, String> {
    let pages: Vec<PathBuf> = files_under(book)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "html"))
        .collect();
    let mut ids: HashMap<PathBuf, HashSet<String>> = HashMap::new();
    for page in &pages {
        ids.insert(
            page.clone(),
            attribute_values(&read(page)?, "id").into_iter().collect(),
        );
    }
    let mut broken = Vec::new();
    for page in &pages {
        let name = page.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "print.html" || name == "404.html" {
            continue;
        }
        let text = read(page)?;
        let shown = page
            .strip_prefix(book)
            .unwrap_or(page)
            .display()
            .to_string();
        for link in attribute_values(&text, "href")
            .into_iter()
            .chain(attribute_values(&text, "src"))
        {
            if is_external(&link) {
                continue;
            }
            let (file, fragment) = match link.split_once('#') {
                Some((file, fragment)) => (file, Some(fragment)),
                None => (link.as_str(), None),
            };
            let file = file.split('?').next().unwrap_or("");
            let target = if file.is_empty() {
                page.clone()
            } else {
                let joined = page.parent().unwrap_or(book).join(file);
                if file.ends_with('/') {
                    joined.join("index.html")
                } else {
                    joined
                }
            };
            let target = super::blocks::normalise(&target);
            if !target.exists() {
                broken.push(format!("docs/book/{shown}: {link}: no such file"));
                continue;
            }
            if let Some(fragment) = fragment.filter(|f| !f.is_empty()) {
                let known = ids.get(&target).is_some_and(|ids| ids.contains(fragment));
                if !known {
                    broken.push(format!(
                        "docs/book/{shown}: {link}: no id {fragment:?} there"
                    ));
                }
            }
        }
    }
    Ok(broken)
}

/// Relative links of Markdown files (`[text](path)`), checked against the tree.
pub fn check_markdown(files: &[PathBuf]) -> Result<Vec<String>, String> {
    let mut broken = Vec::new();
    for file in files {
        let text = read(file)?;
        let mut rest = text.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let Some(end) = rest.find(')') else { break };
            let link = &rest[..end];
            let path = link.split('#').next().unwrap_or("");
            if is_external(link) || path.is_empty() {
                continue;
            }
            let target = file.parent().unwrap_or(Path::new(".")).join(path);
            if !target.exists() {
                broken.push(format!("{}: {link}: no such file", file.display()));
            }
        }
    }
    Ok(broken)
}

fn is_external(link: &str) -> bool {
    [
        "http://",
        "https://",
        "mailto:",
        "javascript:",
        "data:",
        "//",
    ]
    .iter()
    .any(|scheme| link.starts_with(scheme))
}

/// The values of `name="..."` attributes, entities `&amp;` decoded.
fn attribute_values(html: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    let mut values = Vec::new();
    let mut rest = html;
    while let Some(at) = rest.find(&needle) {
        rest = &rest[at + needle.len()..];
        let Some(end) = rest.find('"') else { break };
        values.push(rest[..end].replace("&amp;", "&"));
        rest = &rest[end..];
    }
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_with_their_entities_decoded() {
        let html = r#"<a href="a.html#x">a</a> <h2 id="x">X</h2><img src="i.png"><a href="b?q=1&amp;r=2">"#;
        assert_eq!(attribute_values(html, "href"), ["a.html#x", "b?q=1&r=2"]);
        assert_eq!(attribute_values(html, "id"), ["x"]);
        assert_eq!(attribute_values(html, "src"), ["i.png"]);
    }

    #[test]
    fn a_missing_page_and_a_missing_anchor_are_both_broken() {
        let dir = std::env::temp_dir().join(format!("xtask-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.html"), r#"<h1 id="top">A</h1><a href="b.html#top">ok</a><a href="b.html#gone">x</a><a href="c.html">x</a><a href="https://example.com/">ext</a>"#).unwrap();
        std::fs::write(
            dir.join("b.html"),
            r##"<h1 id="top">B</h1><a href="#top">self</a>"##,
        )
        .unwrap();
        let broken = check_book(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(broken.len(), 2, "{broken:?}");
        assert!(broken[0].contains("b.html#gone"));
        assert!(broken[1].contains("c.html"));
    }
}
