//! How the results write a number: sizes in MiB, microseconds as
//! milliseconds, counts with thousands separators.

/// `12.3 MiB`
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Microseconds as milliseconds: `0.42 ms`, `12.3 ms`, `1234 ms`.
pub fn ms(us: u32) -> String {
    let ms = f64::from(us) / 1000.0;
    if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 100.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}

/// A rate with thousands separators: `12,345`.
pub fn count(value: f64) -> String {
    let digits = format!("{:.0}", value.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(0.0, "0")]
    #[case(999.4, "999")]
    #[case(1000.0, "1,000")]
    #[case(1234567.0, "1,234,567")]
    fn counts(#[case] value: f64, #[case] expected: &str) {
        assert_eq!(count(value), expected);
    }

    #[rstest]
    #[case(420, "0.42 ms")]
    #[case(12_345, "12.3 ms")]
    #[case(1_234_567, "1235 ms")]
    fn milliseconds(#[case] us: u32, #[case] expected: &str) {
        assert_eq!(ms(us), expected);
    }

    #[test]
    fn mebibytes() {
        assert_eq!(mib(20 * 1024 * 1024), "20.0 MiB");
    }
}
