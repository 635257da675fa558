//! The prose of a file, where citations are looked for: a Markdown
//! file's text but its fenced code blocks, or the comments (and Python's
//! docstrings) of code, found by a small lexer per comment syntax.

use super::TEXT;

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

pub(super) fn syntax_of(file: &str, text: &str) -> Option<Syntax> {
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
pub(super) fn prose(text: &str, syntax: Syntax) -> Vec<(usize, String)> {
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

/// The comments of Rust or JavaScript, line by line.
fn slash_comments(text: &str, rust: bool) -> Vec<(usize, String)> {
    lex(text, rust).0
}

/// Rust source with its comments, string and char literals blanked to
/// spaces (lines kept): the code alone, for checks that read paths
/// (`tidy.rs`) and must not take a comment's or a message's for a use.
#[cfg(test)]
pub(crate) fn rust_code(text: &str) -> String {
    lex(text, true).1
}

/// A small lexer that knows strings (`"…"`, JavaScript's `'…'` and
/// `` `…` ``, Rust's raw `r#"…"#`; Rust's char literals and lifetimes are
/// not strings), line and block comments: the comments, line by line, and
/// the code with everything else blanked.
fn lex(text: &str, rust: bool) -> (Vec<(usize, String)>, String) {
    enum State {
        Code,
        /// In a string that this text closes (`"`, `'`, `` ` ``, `"#`).
        Text(Vec<char>),
        Line,
        Block(usize),
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut code = String::with_capacity(text.len());
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
            code.push('\n');
            i += 1;
            continue;
        }
        let in_code = matches!(state, State::Code);
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
                    } else {
                        // A raw identifier (`r#type`).
                        code.push(c);
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
                    } else {
                        code.push(c);
                    }
                }
                _ => code.push(c),
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
        // What is not code reads as a space, so that the tokens either
        // side of it stay apart.
        if !(in_code && matches!(state, State::Code) && step == 1) {
            code.push(' ');
        }
        // A string's `\` may precede the last character.
        i = (i + step).min(chars.len());
    }
    if !comment.trim().is_empty() {
        out.push((line, comment));
    }
    (out, code)
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
