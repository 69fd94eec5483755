//! Drift at the wire level: the structural differences between two response shapes (fields
//! removed, renamed, added or retyped; stream event kinds; statuses; noise values), each
//! reported once per folded path. Pure.

use std::collections::BTreeSet;

use super::shape::{Shape, is_noise, root_len};
use super::{DriftFinding, Kind, Severity};

/// The parent of a folded path (`$.a.b` → `$.a`, `$.a[]` → `$.a`); `None` at a root.
fn parent(path: &str) -> Option<&str> {
    let root = root_len(path);
    if path.len() <= root {
        return None;
    }
    if let Some(p) = path.strip_suffix("[]") {
        return Some(p);
    }
    path.rfind('.').filter(|i| *i >= root).map(|i| &path[..i])
}

/// The event kind a path belongs to (`<kind>.x` → `kind`), `None` for buffered bodies.
fn event_of(path: &str) -> Option<&str> {
    let rest = path.strip_prefix('<')?;
    rest.find('>').map(|i| &rest[..i])
}

fn non_null(t: &BTreeSet<&'static str>) -> BTreeSet<&'static str> {
    t.iter().copied().filter(|x| *x != "null").collect()
}

fn types_text(t: &BTreeSet<&'static str>) -> String {
    t.iter().copied().collect::<Vec<_>>().join("|")
}

/// Keeps only the topmost paths of a set (a removed object is one finding, not one per leaf).
fn topmost(paths: &BTreeSet<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        let mut up = parent(p);
        let mut covered = false;
        while let Some(q) = up {
            if paths.contains(q) {
                covered = true;
                break;
            }
            up = parent(q);
        }
        if !covered {
            out.push((*p).to_string());
        }
    }
    out
}
/// A field renamed in place: one removed and one added under the same parent, same types. Each
/// rename found is a finding and leaves `removed` and `added`.
fn renames(
    old: &Shape,
    new: &Shape,
    removed: &mut Vec<String>,
    added: &mut Vec<String>,
    out: &mut Vec<DriftFinding>,
) {
    let parents: BTreeSet<String> = removed
        .iter()
        .filter_map(|p| parent(p))
        .map(str::to_string)
        .collect();
    for par in parents {
        let r: Vec<&String> = removed
            .iter()
            .filter(|p| parent(p) == Some(par.as_str()))
            .collect();
        let a: Vec<&String> = added
            .iter()
            .filter(|p| parent(p) == Some(par.as_str()))
            .collect();
        if let ([r], [a]) = (r.as_slice(), a.as_slice())
            && non_null(&old.types[r.as_str()]) == non_null(&new.types[a.as_str()])
        {
            let sev = if is_noise(r) || is_noise(a) {
                Severity::Cosmetic
            } else {
                Severity::Behaviour
            };
            out.push(DriftFinding::new(
                sev,
                Kind::FieldRenamed,
                Some((*r).clone()),
                Some((*r).clone()),
                Some((*a).clone()),
            ));
            let (r, a) = ((*r).clone(), (*a).clone());
            removed.retain(|p| *p != r);
            added.retain(|p| *p != a);
        }
    }
}

/// Structural differences. When the model's behaviour changed (other calls, text appeared or
/// vanished), whole fields and event kinds coming and going follow from it: they are counted
/// in the second value and not listed. Renames and type changes are always listed.
pub(crate) fn diff(
    old: &Shape,
    new: &Shape,
    behaviour_changed: bool,
) -> (Vec<DriftFinding>, usize) {
    let mut out = Vec::new();
    let mut explained = 0;
    if old.statuses != new.statuses && old.statuses.len() == new.statuses.len() {
        out.push(DriftFinding::new(
            Severity::Behaviour,
            Kind::Status,
            None,
            list(&old.statuses),
            list(&new.statuses),
        ));
    }
    let new_events: BTreeSet<&str> = new
        .events
        .difference(&old.events)
        .map(String::as_str)
        .collect();
    let gone_events: BTreeSet<&str> = old
        .events
        .difference(&new.events)
        .map(String::as_str)
        .collect();
    for (set, kind) in [
        (&new_events, Kind::EventAdded),
        (&gone_events, Kind::EventRemoved),
    ] {
        for e in set {
            if behaviour_changed {
                explained += 1;
                continue;
            }
            let (before, after) = if kind == Kind::EventAdded {
                (None, Some(e.to_string()))
            } else {
                (Some(e.to_string()), None)
            };
            out.push(DriftFinding::new(
                Severity::Behaviour,
                kind,
                Some(format!("<{e}>")),
                before,
                after,
            ));
        }
    }
    let in_changed_event =
        |p: &str| event_of(p).is_some_and(|e| new_events.contains(e) || gone_events.contains(e));
    let removed = only_in(old, new, &in_changed_event);
    let added = only_in(new, old, &in_changed_event);
    let mut removed = topmost(&removed);
    let mut added = topmost(&added);
    renames(old, new, &mut removed, &mut added, &mut out);
    for p in removed {
        if behaviour_changed && !is_noise(&p) {
            explained += 1;
            continue;
        }
        out.push(DriftFinding::new(
            change_severity(&p),
            Kind::FieldRemoved,
            Some(p.clone()),
            Some(types_text(&old.types[&p])),
            None,
        ));
    }
    for p in added {
        if behaviour_changed && !is_noise(&p) {
            explained += 1;
            continue;
        }
        out.push(DriftFinding::new(
            Severity::Cosmetic,
            Kind::FieldAdded,
            Some(p.clone()),
            None,
            Some(types_text(&new.types[&p])),
        ));
    }
    for (p, t_old) in &old.types {
        let Some(t_new) = new.types.get(p) else {
            continue;
        };
        let (a, b) = (non_null(t_old), non_null(t_new));
        if a != b && !a.is_empty() && !b.is_empty() {
            out.push(DriftFinding::new(
                change_severity(p),
                Kind::TypeChanged,
                Some(p.clone()),
                Some(types_text(t_old)),
                Some(types_text(t_new)),
            ));
        }
    }
    let changed_noise: Vec<&str> = old
        .noise
        .iter()
        .filter(|(p, v)| new.noise.get(*p).is_some_and(|w| w != *v))
        .map(|(p, _)| p.as_str())
        .collect();
    if !changed_noise.is_empty() {
        out.push(DriftFinding::new(
            Severity::Cosmetic,
            Kind::Noise,
            None,
            None,
            Some(changed_noise.join(", ")),
        ));
    }
    (out, explained)
}

fn list(v: &[u16]) -> Option<String> {
    Some(v.iter().map(u16::to_string).collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
mod tests;

/// How much a field's removal or new type matters: cosmetic at a noisy path, else behaviour.
fn change_severity(path: &str) -> Severity {
    if is_noise(path) {
        Severity::Cosmetic
    } else {
        Severity::Behaviour
    }
}

/// The paths of `a` that `b` lacks, leaving out those inside an event that changed.
fn only_in<'a>(
    a: &'a Shape,
    b: &Shape,
    in_changed_event: &dyn Fn(&str) -> bool,
) -> BTreeSet<&'a str> {
    (a.types.keys())
        .filter(|p| !b.types.contains_key(*p) && !in_changed_event(p))
        .map(String::as_str)
        .collect()
}
