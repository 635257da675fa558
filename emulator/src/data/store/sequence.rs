//! An append-only sequence ordered by LSN, kept in chunks: what the change
//! log and the latest-write index are made of.
//!
//! Both grow at the back (LSNs only increase) and shrink at the front, and
//! both can hold a million entries under the store's lock. A `VecDeque`
//! would double (and copy) all of them at once when it grows; here the
//! sequence grows a chunk at a time, and drops emptied chunks.

use std::collections::VecDeque;

/// Entries per chunk.
pub const CHUNK: usize = 1024;

/// What an entry must tell: its LSN. Several consecutive entries may share
/// one (the operations of a transactional batch).
pub trait Sequenced {
    fn lsn(&self) -> u64;
}

#[derive(Debug)]
pub struct Sequence<T> {
    /// Only the last chunk is not full; none is empty.
    chunks: VecDeque<VecDeque<T>>,
    /// The LSN of each chunk's last entry: a search for an LSN reads these
    /// few contiguous numbers, not the head of every chunk it passes.
    last_lsns: VecDeque<u64>,
    len: usize,
}

impl<T> Default for Sequence<T> {
    fn default() -> Self {
        Sequence {
            chunks: VecDeque::new(),
            last_lsns: VecDeque::new(),
            len: 0,
        }
    }
}

impl<T: Sequenced> Sequence<T> {
    /// Appends an entry; its LSN is at least the last entry's.
    pub fn push(&mut self, entry: T) {
        let lsn = entry.lsn();
        debug_assert!(self.last_lsns.back().is_none_or(|&last| last <= lsn));
        match self.chunks.back_mut() {
            Some(chunk) if chunk.len() < CHUNK => {
                chunk.push_back(entry);
                *self.last_lsns.back_mut().expect("one per chunk") = lsn;
            }
            _ => {
                let mut chunk = VecDeque::with_capacity(CHUNK);
                chunk.push_back(entry);
                self.chunks.push_back(chunk);
                self.last_lsns.push_back(lsn);
            }
        }
        self.len += 1;
    }

    pub fn front(&self) -> Option<&T> {
        self.chunks.front().and_then(VecDeque::front)
    }

    pub fn pop_front(&mut self) -> Option<T> {
        let chunk = self.chunks.front_mut()?;
        let entry = chunk.pop_front();
        if chunk.is_empty() {
            self.chunks.pop_front();
            self.last_lsns.pop_front();
        }
        self.len -= 1;
        entry
    }

    /// The position (chunk, index) of the first entry whose LSN is above
    /// `lsn` (or the end).
    fn first_after(&self, lsn: u64) -> (usize, usize) {
        let chunk = self.last_lsns.partition_point(|&last| last <= lsn);
        let Some(entries) = self.chunks.get(chunk) else {
            return (chunk, 0);
        };
        // LSNs mostly come one after another: guess the position from the
        // chunk's last LSN and check it, two neighbouring reads, before a
        // binary search (a cache miss a step on a million entries).
        let last = self.last_lsns[chunk];
        let guess = entries.len().saturating_sub((last - lsn) as usize);
        let fits = (guess == 0 || entries[guess - 1].lsn() <= lsn)
            && (guess == entries.len() || entries[guess].lsn() > lsn);
        let index = if fits {
            guess
        } else {
            entries.partition_point(|e| e.lsn() <= lsn)
        };
        (chunk, index)
    }

    /// The entries whose LSN is above `lsn`, in order.
    pub fn after(&self, lsn: u64) -> impl Iterator<Item = &T> {
        let (first, start) = self.first_after(lsn);
        self.chunks
            .range(first..)
            .enumerate()
            .flat_map(move |(k, chunk)| chunk.range(if k == 0 { start } else { 0 }..))
    }

    /// The entries with exactly this LSN.
    pub fn at(&self, lsn: u64) -> impl Iterator<Item = &T> {
        self.after(lsn.saturating_sub(1))
            .take_while(move |e| e.lsn() == lsn)
    }

    /// The entries with exactly this LSN, for changing them in place.
    pub fn at_mut(&mut self, lsn: u64) -> impl Iterator<Item = &mut T> {
        let (first, start) = self.first_after(lsn.saturating_sub(1));
        self.chunks
            .range_mut(first..)
            .enumerate()
            .flat_map(move |(k, chunk)| chunk.range_mut(if k == 0 { start } else { 0 }..))
            .take_while(move |e| e.lsn() == lsn)
    }

    /// Keeps only the entries `keep` accepts, in order, in full chunks again.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut kept = Sequence::default();
        for entry in std::mem::take(&mut self.chunks).into_iter().flatten() {
            if keep(&entry) {
                kept.push(entry);
            }
        }
        *self = kept;
    }

    pub fn len(&self) -> usize {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Sequenced for (u64, char) {
        fn lsn(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn entries_after_an_lsn_span_chunks_and_shared_lsns() {
        let mut sequence = Sequence::default();
        // LSN 1..=n, with LSN 5 shared by three entries (a batch).
        let mut entries = Vec::new();
        for lsn in 1..=(2 * CHUNK as u64 + 3) {
            let copies = if lsn == 5 { 3 } else { 1 };
            for c in 0..copies {
                entries.push((lsn, char::from(b'a' + c)));
            }
        }
        for &e in &entries {
            sequence.push(e);
        }
        assert_eq!(sequence.len(), entries.len());
        for after in [
            0,
            4,
            5,
            6,
            CHUNK as u64 - 3,
            CHUNK as u64,
            2 * CHUNK as u64 + 3,
        ] {
            let got: Vec<_> = sequence.after(after).copied().collect();
            let expected: Vec<_> = entries.iter().filter(|e| e.0 > after).copied().collect();
            assert_eq!(got, expected, "after {after}");
        }
        let shared: Vec<char> = sequence.at_mut(5).map(|e| e.1).collect();
        assert_eq!(shared, ['a', 'b', 'c']);
        assert_eq!(sequence.at_mut(CHUNK as u64).count(), 1);
        assert_eq!(sequence.at_mut(99_999).count(), 0);
    }

    #[test]
    fn the_front_goes_and_retain_keeps_the_order() {
        let mut sequence = Sequence::default();
        for lsn in 1..=(3 * CHUNK as u64) {
            sequence.push((lsn, 'x'));
        }
        for lsn in 1..=(CHUNK as u64 + 1) {
            assert_eq!(sequence.pop_front(), Some((lsn, 'x')));
        }
        assert_eq!(sequence.front(), Some(&(CHUNK as u64 + 2, 'x')));
        sequence.retain(|e| e.0 % 2 == 0);
        assert_eq!(sequence.len(), (2 * CHUNK - 1).div_ceil(2));
        let lsns: Vec<u64> = sequence.after(0).map(|e| e.0).collect();
        assert!(lsns.windows(2).all(|w| w[1] == w[0] + 2), "in order");
        assert_eq!(lsns[0], CHUNK as u64 + 2);
    }
}
