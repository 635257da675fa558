//! `LIKE` patterns: `%` any run of characters, `_` any one character,
//! `[a-f]` / `[abc]` one character of a range or set, `[^...]` one outside
//! it; a wildcard inside brackets is literal (`[%]`), and an `ESCAPE`
//! character makes the character after it literal. Matching is
//! case-sensitive and runs in O(text × pattern), never backtracking wildly.

/// One step of a pattern: each matches exactly one character, but `Run`.
#[derive(Debug, PartialEq)]
enum Step {
    Run,
    One(Option<char>),
    Set {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

fn compile(pattern: &str, escape: Option<char>) -> Vec<Step> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if Some(c) == escape {
            // The escaped character stands for itself; a trailing escape too.
            steps.push(Step::One(Some(chars.get(i).copied().unwrap_or(c))));
            i += 1;
            continue;
        }
        match c {
            '%' => {
                if steps.last() != Some(&Step::Run) {
                    steps.push(Step::Run);
                }
            }
            '_' => steps.push(Step::One(None)),
            '[' => match set(&chars[i..]) {
                Some((step, used)) => {
                    steps.push(step);
                    i += used;
                }
                None => steps.push(Step::One(Some('['))),
            },
            other => steps.push(Step::One(Some(other))),
        }
    }
    steps
}

/// The set after an opening `[`, and the characters it took (its `]`
/// included); `None` when no `]` closes it (the `[` is then literal).
fn set(rest: &[char]) -> Option<(Step, usize)> {
    let negated = rest.first() == Some(&'^');
    let start = usize::from(negated);
    // The first character after `[` or `[^` may be `]` itself.
    let close = rest[start..]
        .iter()
        .skip(1)
        .position(|&c| c == ']')
        .map(|p| start + 1 + p)
        .or_else(|| (rest.get(start) == Some(&']')).then_some(usize::MAX))?;
    if close == usize::MAX {
        return None;
    }
    let members = &rest[start..close];
    let mut ranges = Vec::new();
    let mut k = 0;
    while k < members.len() {
        if k + 2 < members.len() && members[k + 1] == '-' {
            ranges.push((members[k], members[k + 2]));
            k += 3;
        } else {
            ranges.push((members[k], members[k]));
            k += 1;
        }
    }
    Some((Step::Set { negated, ranges }, close + 1))
}

fn matches_one(step: &Step, c: char) -> bool {
    match step {
        Step::Run => true,
        Step::One(None) => true,
        Step::One(Some(expected)) => c == *expected,
        Step::Set { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
        }
    }
}

/// Whether `text` matches `pattern`.
pub fn like(text: &str, pattern: &str, escape: Option<char>) -> bool {
    let steps = compile(pattern, escape);
    let text: Vec<char> = text.chars().collect();
    // The classic wildcard match: remember the last `%` and where the text
    // stood then, and retry one character further on a mismatch.
    let (mut t, mut s) = (0, 0);
    let mut retry: Option<(usize, usize)> = None;
    while t < text.len() {
        match steps.get(s) {
            Some(Step::Run) => {
                retry = Some((s, t));
                s += 1;
            }
            Some(step) if matches_one(step, text[t]) => {
                s += 1;
                t += 1;
            }
            _ => match retry {
                Some((run, at)) => {
                    s = run + 1;
                    t = at + 1;
                    retry = Some((run, at + 1));
                }
                None => return false,
            },
        }
    }
    steps[s..].iter().all(|step| *step == Step::Run)
}

#[cfg(test)]
mod tests {
    use super::like;
    use rstest::rstest;

    /// The examples of the LIKE page (learn.microsoft.com/cosmos-db/query/like),
    /// then edges.
    #[rstest]
    #[case("Sleek SO PS", "%SO%PS%", None, true)]
    #[case("Sleek SOxPS", "%SO_PS%", None, true)]
    #[case("SOtPS", "%SO[t-z]PS%", None, true)]
    #[case("SOaPS", "%SO[t-z]PS%", None, false)]
    #[case("SOdPS", "%SO[^abc]PS%", None, true)]
    #[case("SObPS", "%SO[^abc]PS%", None, false)]
    #[case("Mountain driver", "%driver%", None, true)]
    #[case("fruit basket", "fruit%", None, true)]
    #[case("a fruit", "fruit%", None, false)]
    #[case("Touring Road", "%Road", None, true)]
    #[case("a 20% discount", "%20^%%", Some('^'), true)]
    #[case("a 20 discount", "%20^%%", Some('^'), false)]
    #[case("20-30%", "20-30[%]", None, true)]
    #[case("_n", "[_]n", None, true)]
    #[case("xn", "[_]n", None, false)]
    #[case("[", "[[]", None, true)]
    #[case("]", "]", None, true)]
    #[case("", "%", None, true)]
    #[case("", "_", None, false)]
    #[case("abc", "ABC", None, false)]
    #[case("ab[c", "ab[c", None, true)]
    #[case("ééé", "_é_", None, true)]
    #[case("aaaaaaaaaaaaaaaaaaaaaaaaaaaaab", "%a%a%a%a%a%a%a%c", None, false)]
    fn patterns(
        #[case] text: &str,
        #[case] pattern: &str,
        #[case] escape: Option<char>,
        #[case] expected: bool,
    ) {
        assert_eq!(
            like(text, pattern, escape),
            expected,
            "{text:?} LIKE {pattern:?}"
        );
    }
}
