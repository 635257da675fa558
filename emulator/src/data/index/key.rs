//! What the index keeps of an item at a path: its value in the order
//! `ORDER BY` sorts values (`data/query/eval.rs`, `sort_order`), read from the
//! stored body without building the document.
//!
//! Scalars keep their value; every array is one key and every object
//! another, because ORDER BY ranks them after strings and does not order
//! them among themselves. An item without the path has the key
//! `Undefined`, which sorts first.

use std::cell::{Cell, RefCell};
use std::cmp::Ordering;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::data::index::document_path::ELEMENTS;

/// A value as the index orders it: by type (undefined, null, booleans,
/// numbers, strings, arrays, objects), then by value within the type.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IndexKey {
    Undefined,
    Null,
    Bool(bool),
    Number(Number),
    String(Box<str>),
    Array,
    Object,
}

/// A JSON number as a double, as queries compare numbers (`1` and `1.0`
/// are one value; `-0` is `0`). Never NaN: JSON has none.
#[derive(Debug, Clone, Copy)]
pub struct Number(f64);

impl Number {
    pub fn new(x: f64) -> Self {
        // -0.0 == 0.0 for the query's comparisons: one key for both.
        Number(if x == 0.0 { 0.0 } else { x })
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Number {}
impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Number {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.to_bits().hash(state);
    }
}

/// The types of the index's order, each a contiguous run of keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyType {
    Undefined,
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

impl IndexKey {
    /// The key of a value (`None`: undefined).
    pub fn of(value: Option<&Value>) -> Self {
        match value {
            None => IndexKey::Undefined,
            Some(Value::Null) => IndexKey::Null,
            Some(Value::Bool(b)) => IndexKey::Bool(*b),
            Some(Value::Number(n)) => IndexKey::Number(Number::new(n.as_f64().unwrap_or(0.0))),
            Some(Value::String(s)) => IndexKey::String(s.as_str().into()),
            Some(Value::Array(_)) => IndexKey::Array,
            Some(Value::Object(_)) => IndexKey::Object,
        }
    }

    pub fn key_type(&self) -> KeyType {
        match self {
            IndexKey::Undefined => KeyType::Undefined,
            IndexKey::Null => KeyType::Null,
            IndexKey::Bool(_) => KeyType::Bool,
            IndexKey::Number(_) => KeyType::Number,
            IndexKey::String(_) => KeyType::String,
            IndexKey::Array => KeyType::Array,
            IndexKey::Object => KeyType::Object,
        }
    }

    /// The least key of a type: where a range open below starts.
    pub fn least_of(key_type: KeyType) -> Self {
        match key_type {
            KeyType::Undefined => IndexKey::Undefined,
            KeyType::Null => IndexKey::Null,
            KeyType::Bool => IndexKey::Bool(false),
            KeyType::Number => IndexKey::Number(Number(f64::NEG_INFINITY)),
            KeyType::String => IndexKey::String("".into()),
            KeyType::Array => IndexKey::Array,
            KeyType::Object => IndexKey::Object,
        }
    }

    /// The key of the value at `steps` (property names from the
    /// document's root) in a stored body.
    pub fn at(body: &[u8], steps: &[Box<str>]) -> Self {
        Self::walk(body, steps, None)
    }

    /// The keys of the elements of the array at `steps`, each once, in
    /// order (none when the value there is not an array).
    pub fn elements_at(body: &[u8], steps: &[Box<str>]) -> Vec<Self> {
        let elements = RefCell::new(Vec::new());
        Self::walk(body, steps, Some(&elements));
        let mut keys = elements.into_inner();
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    /// The keys a stored body has in the index of `path`: the value's, or
    /// for a path ending in [`ELEMENTS`] each distinct element's.
    pub fn each_at(body: &[u8], path: &[Box<str>], mut f: impl FnMut(IndexKey)) {
        match path.split_last() {
            Some((last, array)) if &**last == ELEMENTS => {
                Self::elements_at(body, array).into_iter().for_each(f)
            }
            _ => f(Self::at(body, path)),
        }
    }

    fn walk(body: &[u8], steps: &[Box<str>], elements: Option<&RefCell<Vec<IndexKey>>>) -> Self {
        let mut deserializer = serde_json::Deserializer::from_slice(body);
        deserializer.disable_recursion_limit();
        let found = Cell::new(None);
        match (At {
            steps,
            found: &found,
            elements,
        })
        .deserialize(&mut deserializer)
        {
            Ok(key) => key,
            // Stopped once the first step's value was read.
            Err(_) => found.take().unwrap_or(IndexKey::Undefined),
        }
    }
}

/// Walks to the value at `steps` and reads its key. A stored body holds
/// each name once, so the walk stops as soon as the first step's value
/// is read (with an error that carries nothing: the key is in `found`),
/// without reading the rest of the document.
struct At<'s> {
    steps: &'s [Box<str>],
    found: &'s Cell<Option<IndexKey>>,
    /// Where the elements' keys go, when the path's value is an array.
    elements: Option<&'s RefCell<Vec<IndexKey>>>,
}

impl<'de> DeserializeSeed<'de> for At<'_> {
    type Value = IndexKey;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for At<'_> {
    type Value = IndexKey;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some((step, rest)) = self.steps.split_first() else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(IndexKey::Object);
        };
        while let Some(name) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if **step == *name {
                let key = map.next_value_seed(At {
                    steps: rest,
                    found: self.found,
                    elements: self.elements,
                })?;
                self.found.set(Some(key));
                return Err(de::Error::custom("found"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(IndexKey::Undefined)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        match self.elements.filter(|_| self.steps.is_empty()) {
            Some(elements) => {
                let element = || At {
                    steps: &[],
                    found: self.found,
                    elements: None,
                };
                while let Some(key) = seq.next_element_seed(element())? {
                    elements.borrow_mut().push(key);
                }
            }
            None => while seq.next_element::<IgnoredAny>()?.is_some() {},
        }
        // A property of an array is undefined.
        Ok(self.leaf(IndexKey::Array))
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::Bool(b)))
    }
    fn visit_i64<E: de::Error>(self, x: i64) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::Number(Number::new(x as f64))))
    }
    fn visit_u64<E: de::Error>(self, x: u64) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::Number(Number::new(x as f64))))
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::Number(Number::new(x))))
    }
    fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::String(s.into())))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(self.leaf(IndexKey::Null))
    }
}

impl At<'_> {
    /// A value found before the path's end leaves the rest undefined.
    fn leaf(&self, key: IndexKey) -> IndexKey {
        match self.steps.is_empty() {
            true => key,
            false => IndexKey::Undefined,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn steps(path: &[&str]) -> Vec<Box<str>> {
        path.iter().map(|s| (*s).into()).collect()
    }

    #[test]
    fn keys_are_read_at_their_path() {
        let body =
            br#"{"a":{"b":[1,2],"c":"x","d":null,"e":-0.0},"n":3,"big":18446744073709551615}"#;
        let at = |path: &[&str]| IndexKey::at(body, &steps(path));
        assert_eq!(at(&["a", "b"]), IndexKey::Array);
        assert_eq!(at(&["a", "c"]), IndexKey::String("x".into()));
        assert_eq!(at(&["a", "d"]), IndexKey::Null);
        assert_eq!(at(&["a", "e"]), IndexKey::Number(Number::new(0.0)));
        assert_eq!(at(&["a"]), IndexKey::Object);
        assert_eq!(at(&["n"]), IndexKey::Number(Number::new(3.0)));
        assert_eq!(
            at(&["big"]),
            IndexKey::of(Some(&json!(18446744073709551615u64)))
        );
        assert_eq!(at(&["missing"]), IndexKey::Undefined);
        assert_eq!(at(&["n", "x"]), IndexKey::Undefined);
        assert_eq!(at(&["a", "b", "x"]), IndexKey::Undefined);
    }

    #[test]
    fn elements_are_read_each_once_in_order() {
        let body = br#"{"tags":["b",1,"a",1.0,null,[2],{"x":1},"b"],"n":3,"o":{"t":[true]}}"#;
        let elements = |path: &[&str]| IndexKey::elements_at(body, &steps(path));
        assert_eq!(
            elements(&["tags"]),
            [
                IndexKey::Null,
                IndexKey::Number(Number::new(1.0)),
                IndexKey::String("a".into()),
                IndexKey::String("b".into()),
                IndexKey::Array,
                IndexKey::Object,
            ]
        );
        assert_eq!(elements(&["o", "t"]), [IndexKey::Bool(true)]);
        assert_eq!(elements(&["n"]), []);
        assert_eq!(elements(&["missing"]), []);
        assert_eq!(elements(&["tags", "x"]), [], "a property of an array");
        let mut keys = vec![];
        IndexKey::each_at(body, &steps(&["o", "t", ELEMENTS]), |k| keys.push(k));
        assert_eq!(keys, [IndexKey::Bool(true)]);
        IndexKey::each_at(body, &steps(&["n"]), |k| keys.push(k));
        assert_eq!(keys[1], IndexKey::Number(Number::new(3.0)));
    }
}
