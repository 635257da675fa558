//! The vectors of a container's embedding paths, as float32 in one
//! contiguous block per path: what `ORDER BY VectorDistance` compares
//! instead of parsing every stored document (`data/query/search/nearest.rs`).
//!
//! One [`VectorColumn`] per embedding of the container's
//! `vectorEmbeddingPolicy`. An item is in a column while its value at the
//! path is an array of exactly the policy's dimensions of numbers, read as
//! `VectorDistance` reads them (each number as a double, then float32), so
//! that a score from the column is the score from the document, bit for
//! bit. Any other value (absent, shorter, longer, not all numbers) leaves
//! the item out, and a query whose vector has another length does not use
//! the column at all.
//!
//! Kept by `Container::install` and `Container::forget`, so every write
//! path (create, replace, upsert, patch, batch, bulk, delete, TTL purge,
//! journal replay) and snapshot restore keeps it. Expired items stay in
//! their column until they are purged: the query asks the container
//! whether each candidate is live and in scope.
//!
//! Cost: nothing for a container without an embedding policy. With one, a
//! write reads the stored body once more, skipping everything but the
//! path (no document tree is built); per item, 4 bytes per dimension, its
//! key and a map entry.

use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::data::index::search_policy::VectorEmbeddingPolicy;
use crate::data::index::vector;
use crate::protocol::item_key::ItemKey;

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The vectors at one embedding path.
#[derive(Debug, Clone)]
pub struct VectorColumn {
    /// As the policy gives it, e.g. "/embedding".
    path: String,
    steps: Vec<String>,
    dimensions: usize,
    /// Slot `i`'s vector is `values[i * dimensions..(i + 1) * dimensions]`.
    values: Vec<f32>,
    /// Slot `i`'s `dot(v, v)` (a cosine's norm, computed once).
    squared_norms: Vec<f32>,
    /// Slot `i`'s item.
    keys: Vec<ItemKey>,
    /// Slot `i`'s item number (its place in write order, which breaks
    /// ties as the scan's stable sort does).
    numbers: Vec<u64>,
    slot_of: FastMap<ItemKey, u32>,
}

impl VectorColumn {
    pub fn new(path: &str, dimensions: usize) -> Self {
        VectorColumn {
            path: path.to_string(),
            steps: path
                .trim_start_matches('/')
                .split('/')
                .map(str::to_string)
                .collect(),
            dimensions,
            values: Vec::new(),
            squared_norms: Vec::new(),
            keys: Vec::new(),
            numbers: Vec::new(),
            slot_of: FastMap::default(),
        }
    }

    pub fn dimensions(&self) -> usize {
        self.dimensions
    }

    /// Items in the column.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every vector with its squared norm, in slot order (no particular
    /// order; [`Self::key_at`] names its item).
    pub fn vectors(&self) -> impl Iterator<Item = (&[f32], f32)> {
        self.values
            .chunks_exact(self.dimensions.max(1))
            .zip(self.squared_norms.iter().copied())
    }

    /// The slot of the item at `key`, if it has a vector here.
    pub fn slot(&self, key: &ItemKey) -> Option<usize> {
        self.slot_of.get(key).map(|&slot| slot as usize)
    }

    /// The item in `slot` (of those [`Self::vectors`] numbers in turn).
    pub fn key_at(&self, slot: usize) -> &ItemKey {
        &self.keys[slot]
    }

    /// The number of the item in `slot`: its place in write order.
    pub fn number_at(&self, slot: usize) -> u64 {
        self.numbers[slot]
    }

    /// Takes the new stored body of the item numbered `number` at `key`.
    pub fn put(&mut self, number: u64, key: &ItemKey, body: &[u8]) {
        match vector_at(body, &self.steps, self.dimensions) {
            Some(vector) => self.set(number, key, &vector),
            None => self.remove(key),
        }
    }

    fn set(&mut self, number: u64, key: &ItemKey, vector: &[f32]) {
        let d = self.dimensions;
        let squared_norm = vector::dot(vector, vector);
        match self.slot_of.get(key) {
            Some(&slot) => {
                let start = slot as usize * d;
                self.values[start..start + d].copy_from_slice(vector);
                self.squared_norms[slot as usize] = squared_norm;
            }
            None => {
                self.slot_of.insert(key.clone(), self.keys.len() as u32);
                self.keys.push(key.clone());
                self.numbers.push(number);
                self.values.extend_from_slice(vector);
                self.squared_norms.push(squared_norm);
            }
        }
    }

    /// Lets go of the item at `key`: the last slot moves into its place.
    pub fn remove(&mut self, key: &ItemKey) {
        let Some(slot) = self.slot_of.remove(key) else {
            return;
        };
        let (slot, d) = (slot as usize, self.dimensions);
        let last = self.keys.len() - 1;
        if slot != last {
            self.values.copy_within(last * d..(last + 1) * d, slot * d);
            self.keys.swap(slot, last);
            self.numbers.swap(slot, last);
            self.squared_norms.swap(slot, last);
            self.slot_of.insert(self.keys[slot].clone(), slot as u32);
        }
        self.keys.pop();
        self.numbers.pop();
        self.squared_norms.pop();
        self.values.truncate(last * d);
        if self.values.capacity() > 2 * self.values.len() + 1024 * d {
            self.values.shrink_to_fit();
            self.keys.shrink_to_fit();
        }
    }
}

/// The columns of a container, one per embedding of its policy.
#[derive(Debug, Clone, Default)]
pub struct VectorColumns(Vec<VectorColumn>);

impl VectorColumns {
    pub fn for_policy(policy: &VectorEmbeddingPolicy) -> Self {
        VectorColumns(
            policy
                .embeddings
                .iter()
                .map(|e| VectorColumn::new(&e.path, e.dimensions as usize))
                .collect(),
        )
    }

    /// The column of the embedding at `path`.
    pub fn get(&self, path: &str) -> Option<&VectorColumn> {
        self.0.iter().find(|c| c.path == path)
    }

    pub fn put(&mut self, number: u64, key: &ItemKey, body: &[u8]) {
        for column in &mut self.0 {
            column.put(number, key, body);
        }
    }

    pub fn remove(&mut self, key: &ItemKey) {
        for column in &mut self.0 {
            column.remove(key);
        }
    }
}

/// The vector at `steps` in a stored body, if it is an array of
/// `dimensions` numbers; read without building the document.
pub fn vector_at(body: &[u8], steps: &[String], dimensions: usize) -> Option<Vec<f32>> {
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    deserializer.disable_recursion_limit();
    let found = At { steps, dimensions }
        .deserialize(&mut deserializer)
        .ok()?;
    found.filter(|v| v.len() == dimensions)
}

/// Walks to the value at `steps` and reads it as a vector.
struct At<'s> {
    steps: &'s [String],
    dimensions: usize,
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = Option<Vec<f32>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = Option<Vec<f32>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = None;
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match self.steps.split_first() {
                Some((step, rest)) if *step == name => {
                    // The last of equal names is the one a document holds.
                    found = map.next_value_seed(At {
                        steps: rest,
                        dimensions: self.dimensions,
                    })?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(found)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        if !self.steps.is_empty() {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            return Ok(None);
        }
        let mut vector = Vec::with_capacity(self.dimensions);
        let mut numbers = true;
        while let Some(element) = seq.next_element::<Element>()? {
            match element {
                Element::Number(x) if numbers => vector.push(x as f32),
                _ => numbers = false,
            }
        }
        Ok(numbers.then_some(vector))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// An array element: a number as a double (as `Value::as_f64` gives it),
/// or anything else.
enum Element {
    Number(f64),
    Other,
}

impl<'de> de::Deserialize<'de> for Element {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Number;
        impl<'de> Visitor<'de> for Number {
            type Value = Element;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_i64<E: de::Error>(self, x: i64) -> Result<Element, E> {
                Ok(Element::Number(x as f64))
            }
            fn visit_u64<E: de::Error>(self, x: u64) -> Result<Element, E> {
                Ok(Element::Number(x as f64))
            }
            fn visit_f64<E: de::Error>(self, x: f64) -> Result<Element, E> {
                Ok(Element::Number(x))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Element, E> {
                Ok(Element::Other)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Element, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Element::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Element, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Element::Other)
            }
        }
        deserializer.deserialize_any(Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::index::vector;
    use serde_json::{json, Value};

    fn steps(path: &str) -> Vec<String> {
        VectorColumn::new(path, 0).steps
    }

    /// What `VectorDistance` reads from the parsed document, for the same path.
    fn read_as_query_does(body: &Value, path: &str) -> Option<Vec<f32>> {
        let value = steps(path)
            .iter()
            .try_fold(body, |v, step| v.get(step.as_str()))?;
        vector::read(value)
    }

    #[test]
    fn reads_what_the_query_reads_bit_for_bit() {
        let body = json!({
            "id": "a",
            "nested": {"skip": [1, [2, {"x": 3}]], "v": [0.1, -2, 3e-5, 1.0000001, 12345678901234567890u64, -0.0]},
            "embedding": [0.3, 0.7, 1e-45]
        });
        let bytes = serde_json::to_vec(&body).unwrap();
        for (path, d) in [("/embedding", 3), ("/nested/v", 6)] {
            let from_bytes = vector_at(&bytes, &steps(path), d).unwrap();
            let from_value = read_as_query_does(&body, path).unwrap();
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&from_bytes), bits(&from_value), "{path}");
        }
    }

    #[test]
    fn anything_but_an_array_of_that_many_numbers_is_no_vector() {
        let at = |body: Value, d| vector_at(&serde_json::to_vec(&body).unwrap(), &steps("/e"), d);
        assert_eq!(at(json!({"e": [1, 2]}), 2), Some(vec![1.0, 2.0]));
        assert_eq!(at(json!({"e": [1, 2]}), 3), None);
        assert_eq!(at(json!({"e": [1, 2, 3]}), 2), None);
        assert_eq!(at(json!({"e": [1, "2"]}), 2), None);
        assert_eq!(at(json!({"e": [1, null]}), 2), None);
        assert_eq!(at(json!({"e": [1, [2]]}), 2), None);
        assert_eq!(at(json!({"e": "[1, 2]"}), 2), None);
        assert_eq!(at(json!({"e": {"0": 1, "1": 2}}), 2), None);
        assert_eq!(at(json!({"f": [1, 2]}), 2), None);
        assert_eq!(at(json!([1, 2]), 2), None);
        assert_eq!(at(json!({"e": []}), 0), Some(vec![]));
    }

    #[test]
    fn a_column_keeps_one_slot_per_item_through_writes_and_removes() {
        let mut column = VectorColumn::new("/e", 2);
        let key = |id: &str| ItemKey::new("[\"p\"]", id);
        let body = |v: Value| serde_json::to_vec(&json!({"e": v})).unwrap();
        column.put(1, &key("a"), &body(json!([1, 2])));
        column.put(2, &key("b"), &body(json!([3, 4])));
        column.put(3, &key("c"), &body(json!([5, 6])));
        column.put(1, &key("a"), &body(json!([7, 8])));
        assert_eq!(column.len(), 3);
        column.remove(&key("a"));
        // A new body without a vector leaves the column.
        column.put(3, &key("c"), &body(json!("none")));
        column.remove(&key("zz"));
        let held: Vec<(ItemKey, Vec<f32>, f32)> = column
            .vectors()
            .enumerate()
            .map(|(slot, (v, norm))| (column.key_at(slot).clone(), v.to_vec(), norm))
            .collect();
        assert_eq!(held, [(key("b"), vec![3.0, 4.0], 25.0)]);
        assert!(column.slot(&key("b")).is_some() && column.slot(&key("a")).is_none());
        column.put(4, &key("d"), &body(json!([9, 10])));
        column.remove(&key("b"));
        let held: Vec<(Vec<f32>, f32)> = column.vectors().map(|(v, n)| (v.to_vec(), n)).collect();
        assert_eq!(held, [(vec![9.0, 10.0], 181.0)]);
    }
}
