//! `VectorDistance(a, b [, bruteForce [, {distanceFunction, dataType}]])`:
//! the similarity of two vectors by the container's embedding policy for
//! the path, or the options given, or cosine over float32 by default.
//!
//! Always exact: every item is compared (an emulator holds little enough
//! that brute force is fast, so `bruteForce` changes nothing). Vectors are
//! read as float32, as the service stores them, and one kernel computes
//! every score, in float32 with eight partial sums (which the compiler
//! turns into SIMD lanes), so that a score is the same bit for bit on
//! every path that computes it.

use serde_json::Value;

use crate::data::index::search_policy::DistanceFunction;

/// Whether a greater score is more similar (cosine, dot product) or a
/// smaller one (Euclidean distance): how `ORDER BY VectorDistance` sorts.
pub fn greater_is_closer(distance: DistanceFunction) -> bool {
    distance != DistanceFunction::Euclidean
}

/// A JSON array of numbers as float32; `None` for anything else.
pub fn read(value: &Value) -> Option<Vec<f32>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_f64().map(|x| x as f32))
        .collect()
}

/// The score of two vectors of one length; `None` for two lengths, none,
/// or a cosine with a zero vector (which has no direction).
pub fn score(distance: DistanceFunction, a: &[f32], b: &[f32]) -> Option<f64> {
    score_with(distance, a, b, || (dot(a, a), dot(b, b)))
}

/// [`score`], with the squared norms `(dot(a, a), dot(b, b))` that a cosine
/// needs given by the caller, who may have them already (the same bits).
pub fn score_with(
    distance: DistanceFunction,
    a: &[f32],
    b: &[f32],
    squared_norms: impl FnOnce() -> (f32, f32),
) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let value = match distance {
        DistanceFunction::DotProduct => dot(a, b),
        DistanceFunction::Cosine => {
            let (aa, bb) = squared_norms();
            let norms = (aa * bb).sqrt();
            if norms == 0.0 {
                return None;
            }
            dot(a, b) / norms
        }
        DistanceFunction::Euclidean => squared_distance(a, b).sqrt(),
    };
    value.is_finite().then_some(f64::from(value))
}

const LANES: usize = 8;

/// The dot product, summed in `LANES` partial sums then added in order.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    lane_sum(a, b, |x, y| x * y)
}

/// The squared Euclidean distance, summed as [`dot`] sums.
fn squared_distance(a: &[f32], b: &[f32]) -> f32 {
    lane_sum(a, b, |x, y| (x - y) * (x - y))
}

/// `Σ term(a[i], b[i])` in `LANES` partial sums (one per SIMD lane once
/// the compiler vectorises the loop), the remainder into the first lanes.
/// On x86-64 with AVX, the same loop compiled for 256-bit registers: the
/// same operations in the same order (no fused multiply-add), so the same
/// bits as without.
#[inline(always)]
fn lane_sum(a: &[f32], b: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the CPU has AVX, checked just above.
        return unsafe { lane_sum_avx(a, b, term) };
    }
    lane_sum_portable(a, b, term)
}

/// # Safety
/// Only on a CPU with AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn lane_sum_avx(a: &[f32], b: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
    lane_sum_portable(a, b, term)
}

#[inline(always)]
fn lane_sum_portable(a: &[f32], b: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
    let mut sums = [0f32; LANES];
    let chunks_a = a.chunks_exact(LANES);
    let chunks_b = b.chunks_exact(LANES);
    let (rest_a, rest_b) = (chunks_a.remainder(), chunks_b.remainder());
    for (x, y) in chunks_a.zip(chunks_b) {
        for lane in 0..LANES {
            sums[lane] += term(x[lane], y[lane]);
        }
    }
    for (lane, (x, y)) in rest_a.iter().zip(rest_b).enumerate() {
        sums[lane] += term(*x, *y);
    }
    sums.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use DistanceFunction::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-6)
    }

    #[test]
    fn the_three_functions_on_worked_values() {
        let a = [1.0, 2.0, 3.0];
        let b = [4.0, 5.0, 6.0];
        assert!(close(score(DotProduct, &a, &b), 32.0));
        assert!(close(
            score(Cosine, &a, &b),
            32.0 / (14f64.sqrt() * 77f64.sqrt())
        ));
        assert!(close(score(Euclidean, &a, &b), 27f64.sqrt()));
        assert!(close(score(Cosine, &a, &a), 1.0));
        assert!(close(score(Euclidean, &a, &a), 0.0));
        // Opposite directions.
        assert!(close(score(Cosine, &[1.0, 0.0], &[-2.0, 0.0]), -1.0));
    }

    #[test]
    fn vectors_that_cannot_be_compared_have_no_score() {
        assert_eq!(score(Cosine, &[1.0, 2.0], &[1.0]), None);
        assert_eq!(score(DotProduct, &[], &[]), None);
        assert_eq!(score(Cosine, &[0.0, 0.0], &[1.0, 1.0]), None);
        assert_eq!(read(&json!([1, "2"])), None);
        assert_eq!(read(&json!("[1]")), None);
        assert_eq!(read(&json!([1, 2.5])), Some(vec![1.0, 2.5]));
    }

    #[test]
    fn long_vectors_use_every_lane_and_the_remainder() {
        // 1,536 dimensions plus a remainder of 3: every element counts once.
        let a: Vec<f32> = (0..1539).map(|i| (i % 7) as f32).collect();
        let ones = vec![1.0f32; 1539];
        let expected: f32 = a.iter().sum();
        assert_eq!(dot(&a, &ones), expected);
    }

    #[test]
    fn every_instruction_set_gives_the_same_bits() {
        let a: Vec<f32> = (0..1539)
            .map(|i| ((i * 7919) % 1000) as f32 / 997.0 - 0.5)
            .collect();
        let b: Vec<f32> = (0..1539)
            .map(|i| ((i * 104729) % 1000) as f32 / 991.0 - 0.5)
            .collect();
        let portable = lane_sum_portable(&a, &b, |x, y| x * y);
        assert_eq!(dot(&a, &b).to_bits(), portable.to_bits());
        // Given norms are the computed ones.
        let given = score_with(Cosine, &a, &b, || (dot(&a, &a), dot(&b, &b)));
        assert_eq!(given, score(Cosine, &a, &b));
    }

    #[test]
    fn ordering_follows_the_distance_function() {
        assert!(greater_is_closer(Cosine));
        assert!(greater_is_closer(DotProduct));
        assert!(!greater_is_closer(Euclidean));
    }
}
