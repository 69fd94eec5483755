//! Call arguments read into a `serde_json::Value` exactly as serde_json reads one, plus the JSON
//! pointers of repeated object keys (serde_json keeps the last value silently; so do we, but say so).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};

use crate::pointer::Ptr;

/// A value and the pointers of the keys repeated in it (in the order they were met).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Tracked {
    pub value: Value,
    pub duplicates: Vec<String>,
}

/// Parses a whole JSON text (what `serde_json::from_str::<Value>` accepts, with its errors).
pub(super) fn parse(s: &str) -> Result<Tracked, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(s);
    let mut duplicates = Vec::new();
    let value = Seed {
        path: Ptr::Root,
        duplicates: &mut duplicates,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok(Tracked { value, duplicates })
}

/// Reads one value at `path`, recording repeated keys; the result equals serde_json's `Value`
/// (same number handling; a repeated key keeps its first position and its last value).
pub(super) struct Seed<'a, 'd> {
    pub path: Ptr<'a>,
    pub duplicates: &'d mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed {
            path: Ptr::Index(&self.path, items.len()),
            duplicates: &mut *self.duplicates,
        })? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Seed {
                path: Ptr::Key(&self.path, &key),
                duplicates: &mut *self.duplicates,
            })?;
            insert(&mut object, key, value, &self.path, self.duplicates);
        }
        Ok(Value::Object(object))
    }
}

/// Inserts as `serde_json::Map::insert` does (a repeated key keeps its first position and takes
/// the last value), recording the pointer of a repeated key.
pub(super) fn insert(
    object: &mut Map<String, Value>,
    key: String,
    value: Value,
    path: &Ptr<'_>,
    duplicates: &mut Vec<String>,
) {
    match object.entry(key) {
        Entry::Vacant(e) => {
            e.insert(value);
        }
        Entry::Occupied(mut e) => {
            duplicates.push(Ptr::Key(path, e.key()).render());
            e.insert(value);
        }
    }
}
