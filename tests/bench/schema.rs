//! Schemas: strict transform + check on generated schemas, against the < 5 ms target for 5000
//! properties over 10 levels, and ns/node at three sizes (linearity).

use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::report::{Report, fastest};
use tooltape::Provider;

/// A schema of `levels` nested objects with `props` properties in total: each level has
/// `props / levels` leaf properties (half optional, some enums) and one `child` object.
fn generated(props: usize, levels: usize) -> Value {
    let per_level = (props / levels.max(1)).max(1);
    let mut node = json!({"type": "object", "properties": {}});
    for level in (0..levels).rev() {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for i in 0..per_level.saturating_sub(usize::from(level + 1 < levels)) {
            let name = format!("p{level}_{i}");
            let schema = match i % 4 {
                0 => json!({"type": "string", "description": "a string"}),
                1 => json!({"type": "integer", "minimum": 0}),
                // Enums are kept rare so the schema stays under the 1000-enum-value limit.
                2 if i % 40 == 2 => json!({"type": "string", "enum": ["a", "b", "c"]}),
                2 => json!({"type": "boolean"}),
                _ => json!({"type": "array", "items": {"type": "number"}}),
            };
            if i % 2 == 0 {
                required.push(Value::String(name.clone()));
            }
            properties.insert(name, schema);
        }
        if level + 1 < levels {
            properties.insert("child".into(), node);
        }
        node = json!({"type": "object", "properties": properties, "required": required});
    }
    node
}

/// Number of schema nodes (objects) in a value: the unit of the ns/node figures.
fn count_nodes(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(count_nodes).sum::<usize>(),
        Value::Array(a) => a.iter().map(count_nodes).sum(),
        _ => 0,
    }
}

pub fn section(report: &mut Report) {
    report.section("schema: OpenAI strict transform + check");
    let schema = generated(5000, 10);
    let d = fastest(Duration::from_millis(300), || {
        let _ = std::hint::black_box(tooltape::schema::openai_strict(std::hint::black_box(
            &schema,
        )));
    });
    let ms = d.as_secs_f64() * 1e3;
    report.figure(
        "transform+check 5000 properties, 10 levels",
        ms,
        "ms",
        Some(("< 5 ms", ms < 5.0)),
    );
    // ~1.25 schema nodes per property (arrays add an `items` node); sizes of about 500,
    // 5,000 and 50,000 nodes. The largest is over the 5000-property limit: the checker still
    // walks it all (and reports the limit), which is what is timed.
    for props in [400, 4000, 40_000] {
        let s = generated(props, 10);
        let nodes = count_nodes(&s);
        let d = fastest(Duration::from_millis(200), || {
            let _ =
                std::hint::black_box(tooltape::schema::openai_transform(std::hint::black_box(&s)));
            let _ = std::hint::black_box(tooltape::schema::check(
                Provider::OpenaiChat,
                std::hint::black_box(&s),
            ));
        });
        let ns = d.as_secs_f64() * 1e9 / nodes as f64;
        report.figure(
            &format!("transform+check per node ({nodes} nodes)"),
            ns,
            "ns/node",
            None,
        );
    }
}
