//! Property test: for generated schemas and instances, an instance valid against the neutral
//! schema (optional fields absent) stays valid against the OpenAI strict schema once the
//! absent optionals are sent as `null`, and `restore_value` maps it back exactly.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::schema::openai_strict;
use crate::schema::restore::restore_value;

/// A generated schema together with a generator of matching instances is hard to express
/// directly; instead a small tree describes both.
#[derive(Clone, Debug)]
enum Shape {
    Str,
    Int,
    Enum(Vec<String>),
    AlreadyNullable,
    Array(Box<Shape>),
    Object(Vec<(Shape, bool)>),
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        Just(Shape::Str),
        Just(Shape::Int),
        prop::collection::vec("[a-z]{1,3}", 1..4).prop_map(Shape::Enum),
        Just(Shape::AlreadyNullable),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|s| Shape::Array(Box::new(s))),
            prop::collection::vec((inner, any::<bool>()), 1..4).prop_map(Shape::Object),
        ]
    })
}

fn schema(s: &Shape) -> Value {
    match s {
        Shape::Str => json!({"type": "string"}),
        Shape::Int => json!({"type": "integer"}),
        Shape::Enum(e) => json!({"type": "string", "enum": e}),
        Shape::AlreadyNullable => json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        Shape::Array(i) => json!({"type": "array", "items": schema(i)}),
        Shape::Object(props) => {
            let mut p = Map::new();
            let mut req = Vec::new();
            for (i, (s, required)) in props.iter().enumerate() {
                p.insert(format!("f{i}"), schema(s));
                if *required {
                    req.push(json!(format!("f{i}")));
                }
            }
            json!({"type": "object", "properties": p, "required": req})
        }
    }
}

/// An instance of the neutral schema (optionals absent when `skip` says so) and the same
/// instance as a strict-mode model must send it (absent optionals as `null`).
fn instance(s: &Shape, seed: &mut u64) -> (Value, Value) {
    *seed = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let bit = (*seed >> 33) & 1 == 1;
    match s {
        Shape::Str => (json!("s"), json!("s")),
        Shape::Int => (json!(7), json!(7)),
        Shape::Enum(e) => (json!(e[0]), json!(e[0])),
        Shape::AlreadyNullable => {
            let v = if bit { Value::Null } else { json!("x") };
            (v.clone(), v)
        }
        Shape::Array(i) => {
            let (a, b) = instance(i, seed);
            (json!([a]), json!([b]))
        }
        Shape::Object(props) => {
            let (mut neutral, mut strict) = (Map::new(), Map::new());
            for (i, (s, required)) in props.iter().enumerate() {
                *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                let skip = !required && (*seed >> 33) & 1 == 1;
                let (a, b) = instance(s, seed);
                if skip && matches!(s, Shape::AlreadyNullable) {
                    // Already nullable: the rewrite left it alone, so a `null` the model sends
                    // for it is a real value and restore keeps it.
                    neutral.insert(format!("f{i}"), Value::Null);
                    strict.insert(format!("f{i}"), Value::Null);
                } else if skip {
                    strict.insert(format!("f{i}"), Value::Null);
                } else {
                    neutral.insert(format!("f{i}"), a);
                    strict.insert(format!("f{i}"), b);
                }
            }
            (Value::Object(neutral), Value::Object(strict))
        }
    }
}

fn valid(schema: &Value, v: &Value) -> bool {
    jsonschema::validator_for(schema)
        .map(|val| val.is_valid(v))
        .unwrap_or(false)
}

proptest! {
    // No regression files in the repository: a failure prints its minimal input instead.
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn strict_rewrite_round_trips(props in prop::collection::vec((shape(), any::<bool>()), 1..5), seed in any::<u64>()) {
        let root = Shape::Object(props);
        let neutral = schema(&root);
        let strict = openai_strict(&neutral).expect("generated schemas are strictable").schema;
        let mut seed = seed;
        let (neutral_instance, strict_instance) = instance(&root, &mut seed);
        prop_assert!(valid(&neutral, &neutral_instance), "neutral {neutral} / {neutral_instance}");
        prop_assert!(valid(&strict, &strict_instance), "strict {strict} / {strict_instance}");
        let mut restored = strict_instance.clone();
        restore_value(&neutral, &mut restored);
        prop_assert_eq!(restored, neutral_instance);
    }
}
