//! Tokens of the Cosmos DB SQL dialect.

use crate::protocol::error::{ApiError, ApiResult};

#[derive(Debug, Clone, PartialEq)]
pub enum Token {
    /// An identifier or keyword, as written.
    Ident(String),
    Number(f64),
    Str(String),
    Param(String),
    /// Punctuation and operators: `( ) [ ] { } , . : * + - / % = != <> < <= > >= || ?? ?`
    /// and the bitwise `& | ^ ~ << >> >>>`.
    Sym(&'static str),
}

/// Longest first, so that `>>>` is not read as `>>` and `>`.
const SYMBOLS: [&str; 30] = [
    ">>>", "!=", "<>", "<=", ">=", "||", "??", "<<", ">>", "(", ")", "[", "]", "{", "}", ",", ".",
    ":", "*", "+", "-", "/", "%", "=", "<", ">", "&", "|", "^", "~",
];

pub fn tokenize(text: &str) -> ApiResult<Vec<Token>> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == '@' {
            let start = i;
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            tokens.push(match word.strip_prefix('@') {
                Some(name) if !name.is_empty() => Token::Param(word.clone()),
                Some(_) => return Err(syntax_error(text, "a lone '@'")),
                None => Token::Ident(word),
            });
        } else if c.is_ascii_digit() {
            let start = i;
            let hex = chars.get(i + 1).is_some_and(|x| *x == 'x' || *x == 'X');
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    // An exponent's sign: 3.06e-05, 1e+308.
                    || (matches!(chars[i], '+' | '-')
                        && !hex
                        && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let literal: String = chars[start..i].iter().collect();
            let number = if let Some(hex) = literal.strip_prefix("0x") {
                i64::from_str_radix(hex, 16).map(|n| n as f64).ok()
            } else {
                literal.parse::<f64>().ok()
            };
            tokens.push(Token::Number(number.ok_or_else(|| {
                syntax_error(text, &format!("the number '{literal}'"))
            })?));
        } else if c == '\'' || c == '"' {
            let quote = c;
            let mut s = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(syntax_error(text, "an unterminated string")),
                    Some('\\') => {
                        let escaped = chars.get(i + 1).copied().unwrap_or('\\');
                        s.push(match escaped {
                            'n' => '\n',
                            't' => '\t',
                            'r' => '\r',
                            other => other,
                        });
                        i += 2;
                    }
                    Some(&q) if q == quote => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        s.push(other);
                        i += 1;
                    }
                }
            }
            tokens.push(Token::Str(s));
        } else if let Some(sym) = SYMBOLS.iter().find(|s| {
            s.chars()
                .enumerate()
                .all(|(k, sc)| chars.get(i + k) == Some(&sc))
        }) {
            tokens.push(Token::Sym(sym));
            i += sym.len();
        } else if c == '?' {
            tokens.push(Token::Sym("?"));
            i += 1;
        } else {
            return Err(syntax_error(text, &format!("the character '{c}'")));
        }
    }
    Ok(tokens)
}

pub fn syntax_error(query: &str, what: &str) -> ApiError {
    ApiError::bad_request(format!(
        "Syntax error, incorrect syntax near {}. Query: {}",
        truncated(what),
        truncated(query)
    ))
}

/// A refusal in the service's form for errors of the query language: the
/// message is JSON text listing each error with its code (`SC2203`, ...),
/// which tools match on.
pub fn query_error(code: &str, message: &str) -> ApiError {
    let errors = serde_json::json!({
        "errors": [{"severity": "Error", "code": code, "message": message}]
    });
    ApiError::bad_request(errors.to_string())
}

/// Text quoted in an error message: whole when short, else its first 200
/// characters, so that a refusal of a 512 KB query is not 512 KB long.
pub fn truncated(text: &str) -> std::borrow::Cow<'_, str> {
    const SHOWN: usize = 200;
    match text.char_indices().nth(SHOWN) {
        None => text.into(),
        Some((end, _)) => format!("{}... ({} bytes in all)", &text[..end], text.len()).into(),
    }
}
