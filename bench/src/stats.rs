//! Percentiles and summaries of latency samples, in microseconds.

use serde::Serialize;

/// The nearest-rank `p`-th percentile (0 < p <= 100) of samples sorted in
/// ascending order: the smallest sample that at least `p`% of the samples
/// do not exceed. `None` for no samples.
pub fn percentile(sorted: &[u32], p: f64) -> Option<u32> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// The median of a few measurements (nearest rank: the lower middle of an
/// even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    if sorted.is_empty() {
        return None;
    }
    Some(sorted[(sorted.len() - 1) / 2])
}

/// A latency distribution.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    pub count: usize,
    pub mean_us: f64,
    pub p50_us: u32,
    pub p99_us: u32,
    pub p999_us: u32,
    pub max_us: u32,
}

impl Latency {
    /// Summarises samples (in any order); `None` when there are none.
    pub fn of(mut samples: Vec<u32>) -> Option<Latency> {
        samples.sort_unstable();
        let count = samples.len();
        let sum: u64 = samples.iter().map(|&s| u64::from(s)).sum();
        Some(Latency {
            count,
            mean_us: sum as f64 / count.max(1) as f64,
            p50_us: percentile(&samples, 50.0)?,
            p99_us: percentile(&samples, 99.0)?,
            p999_us: percentile(&samples, 99.9)?,
            max_us: *samples.last()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(&[], 50.0, None)]
    #[case(&[7], 50.0, Some(7))]
    #[case(&[7], 99.9, Some(7))]
    #[case(&[1, 2, 3, 4], 50.0, Some(2))]
    #[case(&[1, 2, 3, 4], 75.0, Some(3))]
    #[case(&[1, 2, 3, 4], 76.0, Some(4))]
    #[case(&[1, 2, 3, 4], 100.0, Some(4))]
    #[case(&[1, 2, 3, 4], 0.1, Some(1))]
    fn nearest_rank(#[case] sorted: &[u32], #[case] p: f64, #[case] expected: Option<u32>) {
        assert_eq!(percentile(sorted, p), expected);
    }

    #[test]
    fn p99_of_a_hundred_is_the_99th_value_and_p999_the_last() {
        let samples: Vec<u32> = (1..=100).rev().collect();
        let latency = Latency::of(samples).unwrap();
        assert_eq!(
            (
                latency.p50_us,
                latency.p99_us,
                latency.p999_us,
                latency.max_us
            ),
            (50, 99, 100, 100)
        );
        assert_eq!(latency.mean_us, 50.5);
        assert_eq!(latency.count, 100);
    }

    #[rstest]
    #[case(&[], None)]
    #[case(&[3.0], Some(3.0))]
    #[case(&[5.0, 1.0, 3.0], Some(3.0))]
    #[case(&[4.0, 1.0, 3.0, 2.0], Some(2.0))]
    fn median_of_runs(#[case] values: &[f64], #[case] expected: Option<f64>) {
        assert_eq!(median(values), expected);
    }

    #[test]
    fn no_samples_no_summary() {
        assert_eq!(Latency::of(Vec::new()), None);
    }
}
