//! Reverse mapping of the OpenAI nullable rewrite on decoded calls: a `null` for a property
//! that was optional (and did not accept `null`) in the neutral schema becomes "absent".
//!
//! It walks the neutral schema alongside the arguments, resolving local refs, so it only
//! touches properties the rewrite made nullable; a property that already accepted `null`
//! keeps its `null`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::util::{self, MAX_WALK_DEPTH, push, steps};
use crate::model::Provider;
use crate::model::{ChatRequest, Diagnostic, DiagnosticKind, Outcome};

/// Undoes, on decoded calls, what the strict rewrite changed (on by default).
pub(crate) fn restore_optional(provider: Provider, req: &ChatRequest, outcome: &mut Outcome) {
    restore_optional_with(provider, req, outcome, true);
}

/// [`restore_optional`] with a switch: `enabled = false` leaves the calls exactly as decoded.
pub(crate) fn restore_optional_with(
    provider: Provider,
    req: &ChatRequest,
    outcome: &mut Outcome,
    enabled: bool,
) {
    if !enabled || !matches!(provider, Provider::OpenaiChat | Provider::OpenaiResponses) {
        return;
    }
    for (index, call) in outcome.tool_calls.iter_mut().enumerate() {
        let Some(tool) = req.tool(&call.name) else {
            continue;
        };
        if !super::prepare::openai_rewrote(provider, tool, req.strict) {
            continue;
        }
        for ptr in restore_value(&tool.parameters, &mut call.arguments) {
            outcome.diagnostics.push(Diagnostic {
                kind: DiagnosticKind::NullOptionalRemoved,
                message: format!(
                    "{}: null for optional property {ptr} removed (added by the strict rewrite)",
                    call.name
                )
                .into(),
                offset: None,
                call_index: Some(index),
                recovered: true,
            });
        }
    }
}

/// Applies the reverse mapping to one arguments value against its neutral schema; returns the
/// pointers (into the arguments) of the removed properties.
pub(super) fn restore_value(neutral: &Value, args: &mut Value) -> Vec<String> {
    let mut removed = Vec::new();
    let mut walk = Restore {
        root: neutral,
        removed: &mut removed,
    };
    walk.value(neutral, args, "", 0);
    removed
}

/// [`restore_value`] for a value found inside the arguments: `schema` is its schema, `root`
/// the tool's whole parameters schema (for local refs). The stream filter uses it on an object
/// whose branch depends on all its keys.
pub(super) fn restore_under(root: &Value, schema: &Value, v: &mut Value) {
    let mut removed = Vec::new();
    let mut walk = Restore {
        root,
        removed: &mut removed,
    };
    walk.value(schema, v, "", 0);
}

struct Restore<'a> {
    root: &'a Value,
    removed: &'a mut Vec<String>,
}

impl<'a> Restore<'a> {
    fn value(&mut self, schema: &'a Value, v: &mut Value, ptr: &str, depth: usize) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        let Some(schema) = util::deref(self.root, schema).and_then(Value::as_object) else {
            return;
        };
        match v {
            Value::Object(map) => self.object(schema, map, ptr, depth),
            Value::Array(items) => {
                let Some(item_schema) = array_items(self.root, schema) else {
                    return;
                };
                for (i, item) in items.iter_mut().enumerate() {
                    self.value(item_schema, item, &push(ptr, &i.to_string()), depth + 1);
                }
            }
            _ => {}
        }
    }

    fn object(
        &mut self,
        schema: &'a Map<String, Value>,
        map: &mut Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) {
        self.object_parts(schema, map, (ptr, depth), &mut HashSet::new());
    }

    /// One part of an object's schema (the schema itself or an `allOf` entry) applied to the
    /// value. `entered` holds the `allOf` entries already applied to this value, by address:
    /// an entry reached again (through refs) has nothing left to remove, and following it
    /// again never ended for an entry that refers back to its own schema.
    fn object_parts(
        &mut self,
        schema: &'a Map<String, Value>,
        map: &mut Map<String, Value>,
        (ptr, depth): (&str, usize),
        entered: &mut HashSet<*const Map<String, Value>>,
    ) {
        steps::tick();
        if depth > MAX_WALK_DEPTH {
            return;
        }
        let Some(schema) = object_branch(self.root, schema, map) else {
            return;
        };
        if let Some(entries) = schema.get("allOf").and_then(Value::as_array) {
            for e in entries {
                if let Some(e) = util::deref(self.root, e).and_then(Value::as_object)
                    && entered.insert(std::ptr::from_ref(e))
                {
                    self.object_parts(e, map, (ptr, depth + 1), entered);
                }
            }
        }
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            return;
        };
        let required: HashSet<&str> = util::required_names(schema.get("required")).collect();
        let mut drop = Vec::new();
        for (k, sub) in props {
            let Some(value) = map.get_mut(k) else {
                continue;
            };
            if value.is_null() {
                if !required.contains(k.as_str()) && !util::accepts_null(self.root, sub) {
                    drop.push(k.clone());
                }
            } else {
                self.value(sub, value, &push(ptr, k), depth + 1);
            }
        }
        for k in drop {
            map.shift_remove(&k);
            self.removed.push(push(ptr, &k));
        }
    }
}

/// The branch of a (possibly union) schema that describes this object: the node itself when
/// it has `properties`, else the first `anyOf`/`oneOf` object branch whose properties cover
/// every key of the value (what the closed strict branch would have matched).
fn object_branch<'a>(
    root: &'a Value,
    schema: &'a Map<String, Value>,
    map: &Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    if schema.contains_key("properties") || schema.contains_key("allOf") {
        return Some(schema);
    }
    union_branches(root, schema).find_map(|b| {
        let b = b.as_object()?;
        let props = b.get("properties").and_then(Value::as_object)?;
        map.keys().all(|k| props.contains_key(k)).then_some(b)
    })
}

/// The `items` schema of an array schema, looking through `anyOf`/`oneOf` branches.
pub(super) fn array_items<'a>(
    root: &'a Value,
    schema: &'a Map<String, Value>,
) -> Option<&'a Value> {
    if let Some(items) = schema.get("items") {
        return Some(items);
    }
    union_branches(root, schema).find_map(|b| b.get("items"))
}

/// The `anyOf` branches of `schema`, then its `oneOf` ones, each through its local `$ref`s (a
/// branch whose reference does not resolve is left out).
fn union_branches<'a>(
    root: &'a Value,
    schema: &'a Map<String, Value>,
) -> impl Iterator<Item = &'a Value> {
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|key| schema.get(key).and_then(Value::as_array))
        .flatten()
        .filter_map(|b| util::deref(root, b))
}
