//! Joining shards' parts into the document an unsharded run writes: the parts must come from
//! one tooltape version, one filter and one plan, and be shards 1..N of the same N, each once;
//! each system's pieces are put back in trial order, its root causes joined (trials and routes
//! in run order, the smallest reproducer kept) and its summary and status settled again. A
//! whole run's document alone passes through (to render its page again).

use std::collections::BTreeMap;

use serde_json::Value;

use super::document::{Document, SystemEntry};

/// The merged document of `parts` (each named by its file, for errors).
pub fn merge(parts: &[(String, Document)]) -> Result<Document, String> {
    let Some((first_name, first)) = parts.first() else {
        return Err("matrix merge: give the parts (the --out of each --shard K/N run)".into());
    };
    if parts.len() == 1 && first.shard.is_none() {
        // A whole run's document: nothing to join (its page is rendered again).
        return Ok(first.clone());
    }
    let Some(n) = first.shard.as_ref().map(|s| s.n) else {
        return Err(format!(
            "{first_name}: not a shard's part (written without --shard): nothing to merge"
        ));
    };
    let mut seen: BTreeMap<usize, &str> = BTreeMap::new();
    for (name, part) in parts {
        same(first_name, first, name, part)?;
        let Some(shard) = &part.shard else {
            return Err(format!(
                "{name}: not a shard's part (written without --shard)"
            ));
        };
        if shard.n != n {
            return Err(format!(
                "{name} is shard {}/{}, {first_name} is of {n} shards: merge the parts of one split",
                shard.k, shard.n
            ));
        }
        if let Some(other) = seen.insert(shard.k, name) {
            return Err(format!(
                "shard {}/{n} is given twice ({other} and {name}): the parts overlap",
                shard.k
            ));
        }
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !seen.contains_key(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "shard {} missing: merge every part of the split",
            missing.join(", ")
        ));
    }
    let mut systems = Vec::new();
    for planned in &first.plan {
        let mut pieces: Vec<(usize, usize, &SystemEntry)> = Vec::new();
        for (_, part) in parts {
            let shard = part.shard.as_ref().map_or(&[][..], |s| &s.pieces[..]);
            for (p, e) in shard.iter().zip(&part.systems) {
                if p.system == planned.system {
                    pieces.push((p.from, p.to, e));
                }
            }
        }
        pieces.sort_by_key(|(from, to, _)| (*from, *to));
        let mut at = 0;
        for (from, to, _) in &pieces {
            if *from != at {
                return Err(format!(
                    "{}: trials {at}..{from} are in no part, or in two: the parts were not split from one plan",
                    planned.system
                ));
            }
            at = *to;
        }
        if at != planned.trials || pieces.is_empty() {
            return Err(format!(
                "{}: the parts hold {at} of its {} trials",
                planned.system, planned.trials
            ));
        }
        let entries: Vec<&SystemEntry> = pieces.into_iter().map(|(_, _, e)| e).collect();
        systems.push(join(&entries));
    }
    Ok(Document {
        tooltape: first.tooltape.clone(),
        date: (parts.iter())
            .map(|(_, p)| p.date.clone())
            .min()
            .unwrap_or_default(),
        filter: first.filter.clone(),
        plan: first.plan.clone(),
        shard: None,
        systems,
    })
}

/// Refuses a part that does not belong with the first: another version, filter or plan.
fn same(first_name: &str, first: &Document, name: &str, part: &Document) -> Result<(), String> {
    if part.tooltape != first.tooltape {
        return Err(format!(
            "{first_name} was written by tooltape {}, {name} by tooltape {}: merge parts of one version",
            first.tooltape, part.tooltape
        ));
    }
    if part.filter != first.filter {
        return Err(format!(
            "{first_name} ran under filter {:?}, {name} under {:?}: merge parts of one run",
            first.filter, part.filter
        ));
    }
    if part.plan != first.plan {
        return Err(format!(
            "{first_name} and {name} planned different systems or trials (other profiles or cases): merge parts of one run"
        ));
    }
    Ok(())
}

/// One system's pieces, in trial order, as one entry.
fn join(pieces: &[&SystemEntry]) -> SystemEntry {
    let mut out = pieces[0].clone();
    out.trials.clear();
    out.causes.clear();
    out.stale.clear();
    let mut errors: Vec<String> = Vec::new();
    out.scores = None;
    for e in pieces {
        if let Some(s) = &e.scores {
            out.scores.get_or_insert_with(Default::default).add(s);
        }
        out.trials.extend(e.trials.iter().cloned());
        for c in &e.causes {
            add_cause(&mut out.causes, c);
        }
        for s in &e.stale {
            if !out.stale.contains(s) {
                out.stale.push(s.clone());
            }
        }
        if let Some(m) = &e.error
            && !errors.contains(m)
        {
            errors.push(m.clone());
        }
        if out.exited.is_none() {
            out.exited.clone_from(&e.exited);
        }
    }
    out.error = (!errors.is_empty()).then(|| errors.join("; "));
    // A piece judges a known failure stale when its own trials never failed with the cause; it
    // is stale for the whole suite only when no trial of any piece did.
    let seen: Vec<&str> = (out.trials.iter())
        .filter(|t| matches!(t.cell, crate::engine::Cell::KnownFailure(_)))
        .filter_map(|t| t.cause.as_deref())
        .collect();
    out.stale.retain(|m| {
        !seen
            .iter()
            .any(|c| m.contains(&format!("root cause `{c}`")))
    });
    out.causes.sort_by(|a, b| {
        count(b)
            .cmp(&count(a))
            .then_with(|| text(a, "id").cmp(text(b, "id")))
    });
    out.settle();
    out
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn count(v: &Value) -> usize {
    v.get("trials")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// Adds a piece's root cause: a new one as it is; one already met gets its trials and routes
/// appended (run order) and keeps the smaller reproducer (its request's JSON length, then its
/// trial key: the engine's rule), with that reproducer's title.
fn add_cause(causes: &mut Vec<Value>, c: &Value) {
    let Some(have) = causes.iter_mut().find(|h| text(h, "id") == text(c, "id")) else {
        causes.push(c.clone());
        return;
    };
    for key in ["trials", "routes"] {
        let more: Vec<Value> = c
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(list) = have.get_mut(key).and_then(Value::as_array_mut) {
            for v in more {
                if key == "trials" || !list.contains(&v) {
                    list.push(v);
                }
            }
        }
    }
    let size = |v: &Value| {
        let r = v.get("reproducer");
        let request = r.and_then(|r| r.get("client_request"));
        (
            request.map_or(0, |q| q.to_string().len()),
            r.map(|r| text(r, "trial").to_string()).unwrap_or_default(),
        )
    };
    if size(c) < size(have) {
        for key in ["reproducer", "title"] {
            if let (Some(v), Some(obj)) = (c.get(key), have.as_object_mut()) {
                obj.insert(key.into(), v.clone());
            }
        }
    }
}
