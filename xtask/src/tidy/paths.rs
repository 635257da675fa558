//! What a file of the emulator names: the top-level modules its code
//! reaches, read as the compiler resolves paths. Grouped `use` trees are
//! flattened (`crate::{store::{Store, Item}, query}` names `store` and
//! `query`), `super::` chains that climb to the crate's root are written
//! `crate::` (`super::super::query::Select` in `store/container/mod.rs`,
//! or `super::{super::query::Select}`, names the query engine), and a name `lib.rs`
//! re-exports names the module it comes from. Comments and strings are
//! blanked first (`rust_code`), so a path cited in prose is not a use.

use std::collections::{BTreeMap, BTreeSet};

use crate::docs::cited::rust_code;

/// Where the emulator's modules are.
pub const EMULATOR_SRC: &str = "emulator/src/";

pub fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The paths of `code` with every grouped `use` tree flattened:
/// `a::{b, c::{d, self}}` becomes `a::b, a::c::d, a::c`. What is left is no
/// longer Rust, but every path in it is whole, so that a scan of `crate::`
/// or `super::` sees what each one names.
pub fn flatten_groups(code: &str) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let mut copied = 0;
    let mut from = 0;
    while let Some(at) = code[from..].find("::{").map(|at| from + at) {
        let open = at + "::".len();
        let Some(close) = matching_brace(code, open) else {
            break;
        };
        let mut start = at;
        while start > 0 && (is_ident(bytes[start - 1]) || bytes[start - 1] == b':') {
            start -= 1;
        }
        let prefix = &code[start..at];
        out.push_str(&code[copied..start]);
        let inner = flatten_groups(&code[open + 1..close]);
        let items: Vec<String> = inner
            .split(',')
            .map(str::trim)
            .filter(|item| !item.is_empty())
            .map(|item| match item {
                "self" => prefix.to_string(),
                _ => format!("{prefix}::{item}"),
            })
            .collect();
        out.push_str(&items.join(", "));
        copied = close + 1;
        from = copied;
    }
    out.push_str(&code[copied..]);
    out
}

/// The index of the `}` that closes the `{` at `open`.
fn matching_brace(code: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in code.bytes().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// The first segments of every `crate::` path in `code`: `crate::a::b`
/// gives `a`, `crate::{a::b, c}` gives `a` and `c`.
pub fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].bytes().last();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|b| is_ident(b) || b == b':' || b == b'$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 || (depth == 1 && c == ',') {
                    found.extend(first_segment(&item));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            found.extend(first_segment(rest));
        }
    }
    found
}

/// How deep a file of `emulator/src` sits in the module tree: 1 for
/// `clock.rs` and `http/mod.rs`, 2 for `store/container/mod.rs` and
/// `http/items.rs`; 0 for `lib.rs` and `main.rs`.
pub fn module_depth(file: &str) -> usize {
    let Some(path) = file.strip_prefix(EMULATOR_SRC) else {
        return 0;
    };
    let path = path.trim_end_matches(".rs");
    let segments: Vec<&str> = path.split('/').collect();
    match segments.as_slice() {
        ["lib"] | ["main"] => 0,
        [.., "mod"] => segments.len() - 1,
        _ => segments.len(),
    }
}

/// `code` with every `super::` chain that climbs to the crate's root
/// written as `crate::`, so that [`crate_paths`] sees what it names:
/// `use super::super::query::Select` in `store/container/mod.rs` names the
/// query engine as `crate::query::Select` does. `depth` is the file's
/// ([`module_depth`]); an inline module (`mod tests { ... }`) is one
/// deeper, so `super::` inside it names the file's own module. Grouped
/// trees must be flattened first ([`flatten_groups`]): a chain that goes
/// on inside a group is whole only then.
pub fn with_super_resolved(code: &str, depth: usize) -> String {
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    // The brace depth at which each open inline module's body started.
    let mut inline: Vec<usize> = Vec::new();
    let mut braces = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let after_ident = i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':');
        if !after_ident && rest.starts_with("mod ") {
            // `mod name {` opens an inline module; `mod name;` does not.
            let tail = rest["mod ".len()..].trim_start();
            let name_end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            if name_end > 0 && tail[name_end..].trim_start().starts_with('{') {
                inline.push(braces + 1);
            }
        }
        if !after_ident && rest.starts_with("super::") {
            let mut count = 0;
            let mut chain = rest;
            while let Some(next) = chain.strip_prefix("super::") {
                count += 1;
                chain = next;
            }
            if count == depth + inline.len() {
                out.push_str("crate::");
                i += count * "super::".len();
                continue;
            }
        }
        match bytes[i] {
            b'{' => braces += 1,
            b'}' => {
                if inline.last() == Some(&braces) {
                    inline.pop();
                }
                braces = braces.saturating_sub(1);
            }
            _ => {}
        }
        let len = rest.chars().next().map_or(1, char::len_utf8);
        out.push_str(&rest[..len]);
        i += len;
    }
    out
}

fn first_segment(path: &str) -> Option<String> {
    let path = path.trim_start();
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    (end > 0).then(|| path[..end].to_string())
}

/// The top-level module a file of `emulator/src` belongs to (`lib` for
/// `lib.rs`); `None` for `main.rs`, which uses the library by its name.
pub fn module_of(file: &str) -> Option<String> {
    let first = file.strip_prefix(EMULATOR_SRC)?.split('/').next()?;
    let name = first.trim_end_matches(".rs");
    (name != "main").then(|| name.to_string())
}

/// What `lib.rs` re-exports from its modules (`pub use clock::{Clock,
/// ClockMode};`): a path through the root names the module it comes from.
pub fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in rust_code(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, items)) = path.split_once("::") else {
            continue;
        };
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                names.insert(name.to_string(), module.trim().to_string());
            }
        }
    }
    names
}

/// A file's code (its `text`), comments and strings blanked and its
/// grouped paths flattened: what the checks read.
pub fn code_of(text: &str) -> String {
    flatten_groups(&rust_code(text))
}

/// The first segments of the crate paths the file `path` (its `text`)
/// names, `super::` chains to the root included: `query` for
/// `use super::super::query::Select;` in `store/container/mod.rs`.
pub fn named_from_root(path: &str, text: &str) -> BTreeSet<String> {
    crate_paths(&with_super_resolved(&code_of(text), module_depth(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_sees_code_not_comments_or_strings() {
        let code = rust_code(
            "use crate::a::b; // crate::c\n/* crate::d */ let s = \"crate::e\"; \
             let r = r#\"crate::f\"#; let c = '\"'; fn g<'x>() { crate::h::i() }\n\
             use crate::{j::k, l, m::{n, o}};",
        );
        let found: Vec<String> = crate_paths(&code).into_iter().collect();
        assert_eq!(found, ["a", "h", "j", "l", "m"]);
        let exports = root_reexports("pub use clock::{Clock, ClockMode};\npub use store::Store;");
        assert_eq!(exports.get("ClockMode").map(String::as_str), Some("clock"));
        assert_eq!(exports.get("Store").map(String::as_str), Some("store"));
    }

    #[test]
    fn a_super_chain_to_the_root_names_what_crate_names() {
        // `super::` chains that climb to the root name what `crate::`
        // names; shorter ones, and `super::` in an inline module, stay
        // inside.
        assert_eq!(module_depth("emulator/src/store/container/mod.rs"), 2);
        assert_eq!(module_depth("emulator/src/http/items.rs"), 2);
        assert_eq!(module_depth("emulator/src/clock.rs"), 1);
        assert_eq!(module_depth("emulator/src/lib.rs"), 0);
        let resolved = with_super_resolved(
            "use super::super::store::Store; use super::eval; \
             mod tests { use super::*; use super::super::super::http::x; }",
            2,
        );
        let found: Vec<String> = crate_paths(&resolved).into_iter().collect();
        assert_eq!(found, ["http", "store"], "{resolved}");
    }

    #[test]
    fn grouped_paths_are_read_whole() {
        assert_eq!(
            flatten_groups("use crate::{store::{Store, Item}, query};"),
            "use crate::store::Store, crate::store::Item, crate::query;"
        );
        assert_eq!(
            flatten_groups("use super::{super::store::Store, eval::{self, Value}};"),
            "use super::super::store::Store, super::eval, super::eval::Value;"
        );
        // A block is not a group: it stays as it is.
        let block = "fn f() { if x { y::z() } }";
        assert_eq!(flatten_groups(block), block);
        let query = "emulator/src/query/eval.rs";
        for planted in [
            "use super::{super::store::Store, ast};",
            "use super::{super::{store::Store}, ast};",
            "pub(crate) use crate::{\n    store::{self, Store},\n    json,\n};",
            "use crate::{store};",
        ] {
            assert!(
                named_from_root(query, planted).contains("store"),
                "{planted:?} names the store"
            );
        }
        let names = named_from_root(query, "use super::{ast::Expr, eval};");
        assert!(names.is_empty(), "{names:?}");
    }
}
