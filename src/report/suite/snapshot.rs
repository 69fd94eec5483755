//! One gateway trial as a readable YAML snapshot: the client request, the upstream request as
//! the gateway sent it, the upstream answer (JSON, or a stream's lines), the downstream outcome
//! and the findings. Written by `tooltape gateway --snapshots` (named by
//! `RoutedTrialId::snapshot_name`), checked by the mutant suite.

use serde_json::Value;
use yaml_rust2::{Yaml, YamlEmitter, yaml::Hash};

use crate::engine::TrialResult;

/// The YAML text of one trial.
pub fn snapshot(r: &TrialResult) -> String {
    let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
    if let Some(answer) = v.get_mut("upstream_answer")
        && let Some(text) = answer.as_str().map(str::to_string)
    {
        *answer = serde_json::from_str(&text).unwrap_or_else(|_| {
            Value::Array(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| {
                        // An event's JSON data as YAML; other lines (`event:`, `[DONE]`) as text.
                        l.strip_prefix("data:")
                            .and_then(|d| serde_json::from_str::<Value>(d.trim()).ok())
                            .filter(Value::is_object)
                            .unwrap_or_else(|| Value::String(l.to_string()))
                    })
                    .collect(),
            )
        });
    }
    let mut out = String::new();
    let mut emitter = YamlEmitter::new(&mut out);
    emitter.multiline_strings(true);
    if emitter.dump(&to_yaml(&v)).is_err() {
        return format!("{v:#}\n");
    }
    let body = out.strip_prefix("---\n").unwrap_or(&out);
    format!("{}\n", body.trim_end())
}

fn to_yaml(v: &Value) -> Yaml {
    match v {
        Value::Null => Yaml::Null,
        Value::Bool(b) => Yaml::Boolean(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Yaml::Integer(i),
            None => Yaml::Real(n.to_string()),
        },
        Value::String(s) => Yaml::String(s.clone()),
        Value::Array(a) => Yaml::Array(a.iter().map(to_yaml).collect()),
        Value::Object(o) => {
            let mut h = Hash::new();
            for (k, x) in o {
                h.insert(Yaml::String(k.clone()), to_yaml(x));
            }
            Yaml::Hash(h)
        }
    }
}
