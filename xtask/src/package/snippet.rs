//! The quick starts' install commands (`docs/snippets/first-test/
//! install-*.sh`), run as a reader types them but without a shell: each is
//! one simple command whose words every shell (sh, PowerShell, cmd.exe)
//! passes as they are written, so the same words run on Windows too.

use std::path::Path;

/// Characters that a shell would not pass on as written (quotes,
/// expansions, globs, redirections, separators, comments).
const SHELL_SPECIAL: &[char] = &[
    '$', '`', '"', '\'', '\\', '|', '&', ';', '<', '>', '(', ')', '{', '}', '*', '?', '[', ']',
    '~', '#', '!',
];

/// The snippet's command, split into its program (which must be
/// `program`, the one the caller knows where to find) and its arguments.
pub fn command(path: &Path, program: &str) -> Result<(String, Vec<String>), String> {
    let text = super::read(path)?;
    let mut words = words(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if words[0] != program {
        return Err(format!(
            "{}: the command runs {:?}; xtask runs it with {program:?} only",
            path.display(),
            words[0]
        ));
    }
    let program = words.remove(0);
    Ok((program, words))
}

/// The words of the one command in `text` (blank lines and `#` comment
/// lines aside).
fn words(text: &str) -> Result<Vec<String>, String> {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .collect();
    let [line] = lines.as_slice() else {
        return Err(format!(
            "expected one command line, found {}: {lines:?}",
            lines.len()
        ));
    };
    if let Some(special) = line.chars().find(|c| SHELL_SPECIAL.contains(c)) {
        return Err(format!(
            "{line:?} has {special:?}, which a shell would not pass as written; \
             xtask runs the snippet's words without a shell"
        ));
    }
    Ok(line.split_whitespace().map(str::to_string).collect())
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn the_quick_starts_are_simple_commands() {
        let root = crate::root().join("docs/snippets/first-test");
        let (program, args) = super::command(&root.join("install-python.sh"), "pip").unwrap();
        assert_eq!(program, "pip");
        assert_eq!(args[..3], ["install", "--find-links", "."]);
        let (program, args) = super::command(&root.join("install-js.sh"), "npm").unwrap();
        assert_eq!(program, "npm");
        assert!(args.iter().any(|a| a.ends_with(".tgz")), "{args:?}");
        let error = super::command(&root.join("install-js.sh"), "pip").unwrap_err();
        assert!(error.contains("runs \"npm\""), "{error}");
    }

    #[test]
    fn a_comment_or_a_blank_line_is_no_command() {
        assert_eq!(
            words("# install\n\n  pip install  x\n").unwrap(),
            ["pip", "install", "x"]
        );
    }

    #[test]
    fn what_needs_a_shell_is_refused() {
        for text in [
            "pip install x && pytest",
            "pip install \"x y\"",
            "npm install $PKG",
            "pip install x > log",
            "npm install ./*.tgz",
            "pip install x\npytest",
            "",
        ] {
            assert!(words(text).is_err(), "{text:?}");
        }
    }
}
