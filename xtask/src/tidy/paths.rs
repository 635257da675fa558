//! What a file of the emulator names: the modules of the crate's root (or
//! of a folder that groups them, [`GROUPS`]) its code reaches, read as the
//! compiler resolves paths. Grouped `use` trees are
//! flattened (`crate::{store::{Store, Item}, query}` names `store` and
//! `query`), `super::` chains are written from `crate::`
//! (`super::super::query::Select` in `data/store/container/mod.rs`, or
//! `super::{super::query::Select}`, names the query engine `data::query`), and a name `lib.rs`
//! re-exports names the module it comes from. Comments and strings are
//! blanked first (`rust_code`), so a path cited in prose is not a use.

use std::collections::{BTreeMap, BTreeSet};

use crate::docs::cited::rust_code;

/// Where the emulator's modules are.
pub const EMULATOR_SRC: &str = "emulator/src/";

/// The folders that group the crate root's modules by what the emulator is
/// made of: `data/store/` is the module `data::store`, which the layers
/// place as they place `http`. `account/` is a module too (its `mod.rs`
/// is the `Account`), its parts beside it; the others' `mod.rs` only
/// declare their modules.
pub const GROUPS: &[&str] = &["account", "binary", "data", "net", "protocol"];

/// The module a path from the crate's root names (its segments, `crate`
/// left out): the first segment, or a group's first two (`data::store`
/// for `data::store::Store`); `lib` for the root itself. A path such as
/// `account::Account` names `account::Account` here: [`module_edges`]
/// falls back to the group when no module has that name.
///
/// [`module_edges`]: super::layers::module_edges
pub fn module_named<S: AsRef<str>>(segments: &[S]) -> String {
    match segments {
        [] => "lib".to_string(),
        [group, member, ..] if GROUPS.contains(&group.as_ref()) => {
            format!("{}::{}", group.as_ref(), member.as_ref())
        }
        [first, ..] => first.as_ref().to_string(),
    }
}

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

/// The module every `crate::` path in `code` names ([`module_named`]):
/// `crate::a::b` gives `a`, `crate::{a::b, c}` gives `a` and `c`,
/// `crate::data::store::Store` gives `data::store`.
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
                    found.extend(named_by(&item));
                    item.clear();
                    if depth == 0 {
                        break;
                    }
                } else {
                    item.push(c);
                }
            }
        } else {
            found.extend(named_by(rest));
        }
    }
    found
}

/// The module path of a file of `emulator/src`: `["data", "store",
/// "container"]` for `data/store/container/mod.rs`, `["http", "items"]`
/// for `http/items.rs`; empty for `lib.rs` and `main.rs`.
pub fn module_segments(file: &str) -> Vec<String> {
    let Some(path) = file.strip_prefix(EMULATOR_SRC) else {
        return Vec::new();
    };
    let mut segments: Vec<String> = path
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if matches!(segments.as_slice(), [only] if only == "lib" || only == "main")
        || segments.last().is_some_and(|s| s == "mod")
    {
        segments.pop();
    }
    segments
}

/// `code` with every `super::` chain written from `crate::`, so that
/// [`crate_paths`] sees what it names: `use super::super::query::Select`
/// in `data/store/container/mod.rs` names the query engine as
/// `crate::data::query::Select` does. `module` is the file's
/// ([`module_segments`]); an inline module (`mod tests { ... }`) is one
/// deeper, so `super::` inside it names the file's own module. Grouped
/// trees must be flattened first ([`flatten_groups`]): a chain that goes
/// on inside a group is whole only then.
pub fn with_super_resolved(code: &str, module: &[String]) -> String {
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
            let mut count = 0usize;
            let mut chain = rest;
            while let Some(next) = chain.strip_prefix("super::") {
                count += 1;
                chain = next;
            }
            // Inside an inline module, the first `super` names the file's
            // own module; what climbs past the file leaves its path.
            let climbed = count.saturating_sub(inline.len());
            if count > inline.len() && climbed <= module.len() {
                out.push_str("crate::");
                for segment in &module[..module.len() - climbed] {
                    out.push_str(segment);
                    out.push_str("::");
                }
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

/// The module a path after `crate::` names ([`module_named`]), from its
/// first two segments.
fn named_by(path: &str) -> Option<String> {
    let segments: Vec<&str> = path
        .trim_start()
        .split("::")
        .map(|segment| {
            let end = segment
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(segment.len());
            &segment[..end]
        })
        .take_while(|segment| !segment.is_empty())
        .take(2)
        .collect();
    (!segments.is_empty()).then(|| module_named(&segments))
}

/// The module a file of `emulator/src` belongs to ([`module_named`]:
/// `data::store` for `data/store/lookup.rs`, `lib` for `lib.rs`); `None`
/// for `main.rs`, which uses the library by its name.
pub fn module_of(file: &str) -> Option<String> {
    let path = file.strip_prefix(EMULATOR_SRC)?;
    (path != "main.rs").then(|| module_named(&module_segments(file)))
}

/// What `lib.rs` re-exports from its modules (`pub use data::clock::{Clock,
/// ClockMode};`): a path through the root names the module it comes from.
pub fn root_reexports(lib: &str) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for statement in rust_code(lib).split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
            continue;
        };
        let split = match path.find("::{") {
            Some(at) => Some((&path[..at], &path[at + 2..])),
            None => path.rsplit_once("::"),
        };
        let Some((module, items)) = split else {
            continue;
        };
        let module: Vec<&str> = module.trim().split("::").collect();
        let items = items.trim_matches(|c| c == '{' || c == '}');
        for item in items.split(',') {
            let item = item.trim();
            let name = item.rsplit(" as ").next().unwrap_or(item).trim();
            if !name.is_empty() {
                names.insert(name.to_string(), module_named(&module));
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

/// The modules the file `path` (its `text`) names by crate paths,
/// `super::` chains included: `data::query` for
/// `use super::super::query::Select;` in `data/store/container/mod.rs`.
pub fn named_from_root(path: &str, text: &str) -> BTreeSet<String> {
    crate_paths(&with_super_resolved(&code_of(text), &module_segments(path)))
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
        let exports = root_reexports(
            "pub use data::clock::{Clock, ClockMode};\npub use data::store::Store;\n\
             pub use account::Account;",
        );
        assert_eq!(
            exports.get("ClockMode").map(String::as_str),
            Some("data::clock")
        );
        assert_eq!(
            exports.get("Store").map(String::as_str),
            Some("data::store")
        );
        assert_eq!(exports.get("Account").map(String::as_str), Some("account"));
    }

    #[test]
    fn a_super_chain_names_what_crate_names() {
        // `super::` chains name what the `crate::` path they climb to
        // names; `super::` in an inline module stays inside the file.
        let store = module_segments("emulator/src/data/store/container/mod.rs");
        assert_eq!(store, ["data", "store", "container"]);
        assert_eq!(
            module_segments("emulator/src/http/items.rs"),
            ["http", "items"]
        );
        assert_eq!(
            module_segments("emulator/src/data/clock.rs"),
            ["data", "clock"]
        );
        assert!(module_segments("emulator/src/lib.rs").is_empty());
        let resolved = with_super_resolved(
            "use super::super::query::Select; use super::eval; \
             mod tests { use super::*; use super::super::super::super::http::x; }",
            &store,
        );
        let found: Vec<String> = crate_paths(&resolved).into_iter().collect();
        assert_eq!(found, ["data::query", "data::store", "http"], "{resolved}");
    }

    #[test]
    fn a_grouped_module_is_named_by_its_folder_and_name() {
        assert_eq!(
            module_of("emulator/src/data/store/lookup.rs").as_deref(),
            Some("data::store")
        );
        assert_eq!(
            module_of("emulator/src/protocol/auth.rs").as_deref(),
            Some("protocol::auth")
        );
        assert_eq!(
            module_of("emulator/src/account/mod.rs").as_deref(),
            Some("account")
        );
        assert_eq!(
            module_of("emulator/src/http/items.rs").as_deref(),
            Some("http")
        );
        assert_eq!(module_of("emulator/src/lib.rs").as_deref(), Some("lib"));
        assert_eq!(module_of("emulator/src/main.rs"), None);
        let found: Vec<String> = crate_paths(&flatten_groups(
            "use crate::account::{Account, regions::Outage}; crate::protocol::auth::sign(); crate::http::x;",
        ))
        .into_iter()
        .collect();
        assert_eq!(
            found,
            [
                "account::Account",
                "account::regions",
                "http",
                "protocol::auth"
            ]
        );
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
        let query = "emulator/src/data/query/eval.rs";
        for planted in [
            "use super::{super::store::Store, ast};",
            "use super::{super::{store::Store}, ast};",
            "pub(crate) use crate::{\n    data::store::{self, Store},\n    protocol::json,\n};",
            "use crate::data::{store};",
        ] {
            assert!(
                named_from_root(query, planted).contains("data::store"),
                "{planted:?} names the store"
            );
        }
        let names = named_from_root(query, "use super::{ast::Expr, eval};");
        assert_eq!(names, BTreeSet::from(["data::query".to_string()]));
    }
}
