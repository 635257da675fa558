//! The file-level import graph of one crate's library (`lib.rs` and the
//! modules under it), and its cycles: files that import each other, around
//! a loop. A cycle means no file of it can be read, changed or tested
//! without the others; the tidy test lists every one.
//!
//! An import is what a file names of another: a `use` (grouped, renamed,
//! `self`, `super::`, `crate::`, a child module; a re-export, `pub use`,
//! only hands a name on), or a path written in the code from `crate::`,
//! `super::` or `self::` (`crate::json::parse`, `super::execute::subquery`).
//! A name is followed to the file that defines it: through the modules it
//! names, then through the `use` that brings it into a module (a front
//! door's `pub use`), so that importing a name through `data/query/mod.rs` is
//! an edge to the file that defines it, not to the front door. Declaring a
//! module (`mod eval;`) is no import, nor is a path written from a child
//! module's bare name (`eval::walk(..)` where `mod eval;` is declared: a
//! module's file assembling its parts); a `use` of it is. Test code
//! (`#[cfg(test)]` modules, inline or files) is left out: tests may import
//! what they test from anywhere.

use std::collections::{BTreeMap, BTreeSet};

/// A module's path from the crate's root: `["query", "eval"]`.
type ModulePath = Vec<String>;

/// One file of the library: its module path and its code (comments and
/// strings blanked).
pub struct File {
    pub path: String,
    pub code: String,
}

/// The library's files, by module path, and what each binds with `use`.
struct Crate<'a> {
    files: BTreeMap<ModulePath, &'a File>,
    /// Per module: each name a `use` binds, and the absolute path it names.
    bindings: BTreeMap<ModulePath, BTreeMap<String, ModulePath>>,
    /// Per module: its child modules declared as files.
    children: BTreeMap<ModulePath, BTreeSet<String>>,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The module path of `path` (relative to the crate's `src/`): `lib.rs`
/// is the root, `a/mod.rs` and `a.rs` are `a`. `None` for a binary's root.
fn module_path(path: &str) -> Option<ModulePath> {
    let stem = path.strip_suffix(".rs")?;
    if stem == "main" || stem.starts_with("bin/") {
        return None;
    }
    let mut segments: Vec<String> = stem.split('/').map(str::to_string).collect();
    if segments.last().is_some_and(|s| s == "mod" || s == "lib") {
        segments.pop();
    }
    Some(segments)
}

/// `code` with every `#[cfg(test)]` item inside braces blanked (an inline
/// `mod tests { ... }`, a test-only function), and the names of the
/// modules it declares as files, each with whether it is test-only.
fn without_tests(code: &str) -> (String, Vec<(String, bool)>) {
    let mut out = code.to_string();
    let mut declared = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while let Some(at) = code[i..].find("mod ") {
        let start = i + at;
        i = start + 4;
        if start > 0 && is_ident(bytes[start - 1]) {
            continue;
        }
        let rest = code[i..].trim_start();
        let name: String = rest
            .bytes()
            .take_while(|b| is_ident(*b))
            .map(char::from)
            .collect();
        if name.is_empty() {
            continue;
        }
        let after = rest[name.len()..].trim_start();
        // The attributes just before it (`pub`, `pub(crate)` skipped).
        let before = code[..start].trim_end();
        let before = before
            .strip_suffix("pub(crate)")
            .or_else(|| before.strip_suffix("pub(super)"))
            .or_else(|| before.strip_suffix("pub"))
            .unwrap_or(before)
            .trim_end();
        let test_only = before.ends_with("#[cfg(test)]");
        if after.starts_with(';') {
            declared.push((name, test_only));
        }
    }
    // Blank `#[cfg(test)]` items with a body: from the attribute to the
    // brace that closes the item's first brace.
    let mut from = 0;
    while let Some(at) = out[from..].find("#[cfg(test)]") {
        let start = from + at;
        let tail = &out[start..];
        let Some(open) = tail.find(['{', ';']) else {
            break;
        };
        if tail.as_bytes()[open] == b';' {
            from = start + open + 1;
            continue;
        }
        let mut depth = 0;
        let mut end = tail.len();
        for (k, c) in tail[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        let blank: String = tail[..end]
            .chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect();
        out.replace_range(start..start + end, &blank);
        from = start + blank.len();
    }
    (out, declared)
}

/// The paths a `use` tree names, each with the name it binds (`None` for
/// a glob): `a::{b, c::d as e, f::*}` gives `a::b` as `b`, `a::c::d` as
/// `e`, `a::f` (glob).
fn use_paths(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    fn expand(prefix: &[String], tree: &str, out: &mut Vec<(Vec<String>, Option<String>)>) {
        let tree = tree.trim();
        if let Some(open) = tree.find('{') {
            let mut prefix = prefix.to_vec();
            prefix.extend(segments(&tree[..open]));
            let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
            let mut depth = 0;
            let mut item = String::new();
            for c in inner.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if c == ',' && depth == 0 {
                    expand(&prefix, &item, out);
                    item.clear();
                } else {
                    item.push(c);
                }
            }
            expand(&prefix, &item, out);
            return;
        }
        if tree.is_empty() {
            return;
        }
        let (path, alias) = match tree.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias.trim().to_string())),
            None => (tree, None),
        };
        let mut full = prefix.to_vec();
        full.extend(segments(path));
        if full.last().is_some_and(|s| s == "*") {
            full.pop();
            out.push((full, None));
            return;
        }
        if full.last().is_some_and(|s| s == "self") {
            full.pop();
        }
        let name = alias.or_else(|| full.last().cloned());
        out.push((full, name));
    }
    let mut out = Vec::new();
    expand(&[], tree, &mut out);
    out
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The `use` statements of `code`: their trees (after `use`).
fn use_trees(code: &str) -> Vec<(usize, usize, String)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(at) = code[i..].find("use ") {
        let start = i + at;
        i = start + 4;
        if start > 0 && is_ident(bytes[start - 1]) {
            continue;
        }
        let Some(end) = code[i..].find(';') else {
            break;
        };
        found.push((start, i + end, code[i..i + end].to_string()));
        i += end;
    }
    found
}

impl<'a> Crate<'a> {
    fn new(sources: &'a [File]) -> (Self, BTreeMap<ModulePath, String>) {
        let mut files = BTreeMap::new();
        let mut children: BTreeMap<ModulePath, BTreeSet<String>> = BTreeMap::new();
        let mut codes = BTreeMap::new();
        let mut test_only: BTreeSet<ModulePath> = BTreeSet::new();
        let by_module: BTreeMap<ModulePath, &File> = sources
            .iter()
            .filter_map(|f| Some((module_path(&f.path)?, f)))
            .collect();
        for (module, file) in &by_module {
            let (code, declared) = without_tests(&file.code);
            for (name, test) in declared {
                let mut child = module.clone();
                child.push(name.clone());
                if test {
                    test_only.insert(child);
                } else {
                    children.entry(module.clone()).or_default().insert(name);
                }
            }
            codes.insert(module.clone(), code);
        }
        for (module, file) in by_module {
            let in_tests = test_only.iter().any(|t| module.starts_with(t));
            if !in_tests {
                files.insert(module, file);
            }
        }
        codes.retain(|module, _| files.contains_key(module));
        let mut krate = Crate {
            files,
            bindings: BTreeMap::new(),
            children,
        };
        let mut bindings = BTreeMap::new();
        for (module, code) in &codes {
            let mut bound = BTreeMap::new();
            for (_, _, tree) in use_trees(code) {
                for (path, name) in use_paths(&tree) {
                    if let (Some(name), Some(absolute)) = (name, krate.absolute(module, &path)) {
                        bound.insert(name, absolute);
                    }
                }
            }
            bindings.insert(module.clone(), bound);
        }
        krate.bindings = bindings;
        (krate, codes)
    }

    /// `path` as written in `module`, from the crate's root; `None` for a
    /// path into another crate (`std::`, `serde::`).
    fn absolute(&self, module: &ModulePath, path: &[String]) -> Option<ModulePath> {
        let (first, rest) = path.split_first()?;
        let mut base = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => {
                let mut base = module.clone();
                base.pop()?;
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop()?;
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return Some(base);
            }
            name if self.children.get(module).is_some_and(|c| c.contains(name)) => {
                let mut base = module.clone();
                base.push(name.to_string());
                base
            }
            _ => return None,
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file that defines what `path` (absolute) names: the deepest
    /// module file on it, then through that module's `use` of the name.
    fn defining_file(&self, path: &[String], hops: usize) -> Option<ModulePath> {
        let mut module: ModulePath = Vec::new();
        let mut rest = path;
        while let Some((next, tail)) = rest.split_first() {
            let mut child = module.clone();
            child.push(next.clone());
            if !self.files.contains_key(&child) {
                break;
            }
            module = child;
            rest = tail;
        }
        if !self.files.contains_key(&module) {
            return None;
        }
        if let (Some(name), true) = (rest.first(), hops < 8) {
            if let Some(target) = self.bindings.get(&module).and_then(|b| b.get(name)) {
                let mut target = target.clone();
                target.extend(rest[1..].iter().cloned());
                if let Some(found) = self.defining_file(&target, hops + 1) {
                    return Some(found);
                }
            }
        }
        Some(module)
    }

    /// Every file `module`'s `code` imports.
    fn imports(&self, module: &ModulePath, code: &str) -> BTreeSet<ModulePath> {
        let mut paths: Vec<Vec<String>> = Vec::new();
        for (start, _, tree) in use_trees(code) {
            // A re-export (`pub use`, `pub(crate) use`) hands a name on:
            // what imports it through this module imports its definer.
            if code[..start].trim_end().ends_with("pub") || code[..start].trim_end().ends_with(')')
            {
                continue;
            }
            paths.extend(use_paths(&tree).into_iter().map(|(path, _)| path));
        }
        // Paths written in the code, from `crate`, `super` or `self`.
        let bytes = code.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let starts = i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b':');
            let rooted = ["crate::", "super::", "self::"]
                .iter()
                .any(|root| code[i..].starts_with(root));
            if !(starts && rooted) {
                i += 1;
                continue;
            }
            let mut path = Vec::new();
            let mut end = i;
            loop {
                let segment_end = end + bytes[end..].iter().take_while(|b| is_ident(**b)).count();
                path.push(code[end..segment_end].to_string());
                end = segment_end;
                match code[end..].strip_prefix("::") {
                    Some(next) if next.bytes().next().is_some_and(is_ident) => end += 2,
                    _ => break,
                }
            }
            // `crate::{a, b}` in a `use`: its use tree is read above, and
            // the bare root it leaves here names nothing.
            if path.len() > 1 {
                paths.push(path);
            }
            i = end.max(i + 1);
        }
        // A module's file naming what lies below it (`mod.rs` naming its
        // children) assembles them: that is no import of its own.
        paths
            .iter()
            .filter_map(|path| self.absolute(module, path))
            .filter_map(|absolute| self.defining_file(&absolute, 0))
            .filter(|target| target != module)
            .collect()
    }
}

/// A cycle: its files (sorted), and the imports between them (`a -> b`).
#[derive(Debug, PartialEq)]
pub struct Cycle {
    pub files: Vec<String>,
    pub imports: Vec<String>,
}

/// Every cycle of the import graph of the library whose files are
/// `sources` (paths relative to its `src/`).
pub fn cycles(sources: &[File]) -> Vec<Cycle> {
    let (krate, codes) = Crate::new(sources);
    let modules: Vec<&ModulePath> = krate.files.keys().collect();
    let index: BTreeMap<&ModulePath, usize> =
        modules.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let edges: Vec<Vec<usize>> = modules
        .iter()
        .map(|module| {
            krate
                .imports(module, &codes[*module])
                .iter()
                .filter_map(|target| index.get(target).copied())
                .collect()
        })
        .collect();
    let path = |i: usize| krate.files[modules[i]].path.clone();
    strongly_connected(&edges)
        .into_iter()
        .filter(|component| component.len() > 1)
        .map(|component| {
            let mut files: Vec<String> = component.iter().map(|&i| path(i)).collect();
            files.sort();
            let mut imports: Vec<String> = component
                .iter()
                .flat_map(|&from| {
                    edges[from]
                        .iter()
                        .filter(|to| component.contains(to))
                        .map(move |&to| format!("{} -> {}", path(from), path(to)))
                })
                .collect();
            imports.sort();
            Cycle { files, imports }
        })
        .collect()
}

/// Tarjan's strongly connected components of the graph `edges`.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct Walk<'e> {
        edges: &'e [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for k in 0..self.edges[v].len() {
                let w = self.edges[v][k];
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(at) if self.on_stack[w] => self.low[v] = self.low[v].min(at),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.found.push(component);
            }
        }
    }
    let n = edges.len();
    let mut walk = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, code: &str) -> File {
        File {
            path: path.into(),
            code: code.into(),
        }
    }

    #[test]
    fn a_loop_through_a_front_door_is_found_and_a_declaration_is_not_one() {
        let sources = [
            file("lib.rs", "mod query; mod store;"),
            file(
                "query/mod.rs",
                "mod eval; mod functions; #[cfg(test)] mod tests; pub use eval::Value;",
            ),
            file("query/eval.rs", "use super::functions::{self, call};"),
            file(
                "query/functions.rs",
                "fn f() { crate::query::Value::new() }",
            ),
            file("query/tests.rs", "use crate::store::Store;"),
            file("store.rs", "use crate::query::Value; pub struct Store;"),
        ];
        let found: Vec<Vec<String>> = cycles(&sources).into_iter().map(|c| c.files).collect();
        assert_eq!(
            found,
            [["query/eval.rs", "query/functions.rs"]],
            "functions names Value through the front door: eval defines it"
        );
    }

    #[test]
    fn a_grouped_use_from_the_root_names_its_items_not_the_root() {
        // The root imports the server's endpoints; they import two of the
        // root's modules in one group, which is no import of the root.
        let sources = [
            file("lib.rs", "mod http; mod server; use server::endpoints;"),
            file("server/mod.rs", "pub mod endpoints;"),
            file("server/endpoints.rs", "use crate::{http, server};"),
            file("http.rs", "pub struct App;"),
        ];
        assert_eq!(cycles(&sources), []);
    }

    #[test]
    fn use_trees_expand_to_their_paths() {
        let paths = use_paths("super::{a, b::{self, c as d}, e::*}");
        let names: Vec<(String, Option<String>)> =
            paths.into_iter().map(|(p, n)| (p.join("::"), n)).collect();
        assert_eq!(
            names,
            [
                ("super::a".into(), Some("a".into())),
                ("super::b".into(), Some("b".into())),
                ("super::b::c".into(), Some("d".into())),
                ("super::e".into(), None),
            ]
        );
    }
}
