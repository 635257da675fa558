//! BM25, the relevance `FullTextScore` gives: for each term (a word or a
//! phrase) `idf × tf × (k1 + 1) / (tf + k1 × (1 − b + b × dl / avgdl))`,
//! summed over the terms, with `idf = ln(1 + (N − n + 0.5) / (n + 0.5))`,
//! `tf` the term's occurrences in the document, `dl` the document's words,
//! `N` the documents, `n` those that contain the term and `avgdl` the words
//! per document — Okapi BM25 with Lucene's idf and constants (k1 = 1.2,
//! b = 0.75). The statistics are the ones the gateway's query plan
//! gathers across every range (`documentCount`, `totalWordCount`,
//! `hitCounts`), so a score is the same whichever range computes it.

/// A `FullTextScore`'s statistics are kept per path and terms.
pub type TermsKey = (String, Vec<String>);

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// What scoring needs of the whole collection, for one path and its terms.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Statistics {
    /// Every document in scope, with the path or not.
    pub documents: u64,
    /// The words of the path, summed over the documents.
    pub words: u64,
    /// For each term, the documents that contain it.
    pub hits: Vec<u64>,
}

impl Statistics {
    /// The score of a document of `words` words in which the terms occur
    /// `occurrences` times (in the order of `hits`).
    pub fn score(&self, occurrences: &[u64], words: u64) -> f64 {
        if self.documents == 0 {
            return 0.0;
        }
        let n_docs = self.documents as f64;
        let average = self.words as f64 / n_docs;
        let length = if average > 0.0 {
            1.0 - B + B * words as f64 / average
        } else {
            1.0
        };
        occurrences
            .iter()
            .zip(&self.hits)
            .filter(|(tf, _)| **tf > 0)
            .map(|(&tf, &n)| {
                let n = (n as f64).min(n_docs);
                let idf = (1.0 + (n_docs - n + 0.5) / (n + 0.5)).ln();
                let tf = tf as f64;
                idf * tf * (K1 + 1.0) / (tf + K1 * length)
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_terms_and_denser_documents_score_higher() {
        let stats = Statistics {
            documents: 10,
            words: 100,
            hits: vec![1, 5],
        };
        let rare = stats.score(&[1, 0], 10);
        let common = stats.score(&[0, 1], 10);
        assert!(rare > common, "{rare} > {common}");
        // More occurrences score more, with diminishing returns.
        let twice = stats.score(&[2, 0], 10);
        assert!(twice > rare && twice < 2.0 * rare);
        // A longer document scores less for the same occurrences.
        assert!(stats.score(&[1, 0], 40) < rare);
        // Terms add up.
        assert!((stats.score(&[1, 1], 10) - (rare + common)).abs() < 1e-12);
        assert_eq!(stats.score(&[0, 0], 10), 0.0);
    }

    #[test]
    fn the_formula_on_one_worked_value() {
        // N = 4, n = 1: idf = ln(1 + 3.5 / 1.5); avgdl = 5, dl = 5: length 1.
        let stats = Statistics {
            documents: 4,
            words: 20,
            hits: vec![1],
        };
        let idf = (1.0f64 + 3.5 / 1.5).ln();
        let expected = idf * 2.0 * 2.2 / (2.0 + 1.2);
        assert!((stats.score(&[2], 5) - expected).abs() < 1e-12);
        // Nothing in scope: no score.
        assert_eq!(Statistics::default().score(&[1], 3), 0.0);
    }
}
