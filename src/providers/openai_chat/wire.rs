//! Borrowing serde building blocks shared by the OpenAI decoders: strings that borrow from the
//! event text when they carry no escapes, a "first element only" sequence that does
//! not allocate, and arguments that are a string or an object.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A string borrowed from the input when it has no escapes, owned otherwise.
///
/// `Option<Cow<str>>` never borrows with serde derive, hence this newtype.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BStr<'a>(pub Cow<'a, str>);

impl BStr<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for BStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<BStr<'a>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Cow<'de, str>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Cow<'de, str>, E> {
                Ok(Cow::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Cow<'de, str>, E> {
                Ok(Cow::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Cow<'de, str>, E> {
                Ok(Cow::Owned(v))
            }
        }
        d.deserialize_str(V).map(BStr)
    }
}

/// Arguments as sent: normally a JSON string (OpenAI), sometimes an object (compatible servers).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ArgsWire<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl ArgsWire<'_> {
    /// Appends the arguments text to `out` (an object is written as compact JSON).
    pub(crate) fn append_to(&self, out: &mut String) {
        match self {
            ArgsWire::Text(t) => out.push_str(t),
            ArgsWire::Json(v) => out.push_str(&v.to_string()),
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ArgsWire<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ArgsWire<'a>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ArgsWire<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON string or an object")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<ArgsWire<'de>, E> {
                Ok(ArgsWire::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ArgsWire<'de>, E> {
                Ok(ArgsWire::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ArgsWire<'de>, E> {
                Ok(ArgsWire::Text(Cow::Owned(v)))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ArgsWire<'de>, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(ArgsWire::Json)
            }
        }
        d.deserialize_any(V)
    }
}

/// The first element of a JSON array (or `null`/absent), the rest parsed and dropped: no `Vec`.
#[derive(Debug)]
pub(crate) struct First<T>(pub Option<T>);

impl<T> Default for First<T> {
    fn default() -> First<T> {
        First(None)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for First<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<First<T>, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = First<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array or null")
            }
            fn visit_none<E: de::Error>(self) -> Result<First<T>, E> {
                Ok(First(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<First<T>, E> {
                Ok(First(None))
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<First<T>, D::Error> {
                d.deserialize_seq(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<First<T>, A::Error> {
                let first = seq.next_element::<T>()?;
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(First(first))
            }
        }
        d.deserialize_option(V(PhantomData))
    }
}

/// Token counts: Chat says prompt/completion, Responses says input/output.
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct UsageWire {
    #[serde(default, alias = "input_tokens")]
    pub prompt_tokens: Option<u64>,
    #[serde(default, alias = "output_tokens")]
    pub completion_tokens: Option<u64>,
}

impl UsageWire {
    pub(crate) fn to_usage(&self) -> crate::model::Usage {
        crate::model::Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
        }
    }
}

/// A string field of an event whose shape this decoder does not control (unknown event types may
/// reuse a name like `delta` for an object): a string borrows, anything else is skipped as `None`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MaybeStr<'a>(pub Option<Cow<'a, str>>);

impl MaybeStr<'_> {
    pub(crate) fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for MaybeStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<MaybeStr<'a>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(v)))
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
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<de::IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map
                    .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(None)
            }
        }
        d.deserialize_any(V).map(MaybeStr)
    }
}

/// One tool-call delta as sent: located by `index` (or `id`) before its fields apply.
#[derive(serde::Deserialize)]
pub(crate) struct CallDeltaWire<'a> {
    #[serde(default)]
    pub index: Option<u64>,
    #[serde(default, borrow)]
    pub id: Option<BStr<'a>>,
    #[serde(default, borrow)]
    pub function: Option<FnDeltaWire<'a>>,
}

#[derive(serde::Deserialize)]
pub(crate) struct FnDeltaWire<'a> {
    #[serde(default, borrow)]
    pub name: Option<BStr<'a>>,
    #[serde(default, borrow)]
    pub arguments: Option<ArgsWire<'a>>,
}
