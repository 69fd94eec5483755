use serde_json::json;

use super::document::{Document, Planned, SystemEntry, TrialCell};
use super::page::{Mark, classes, mark};
use super::shard::{Piece, Shard, ShardInfo, plan};
use super::{diff, html, markdown, merge};
use crate::engine::Cell;

fn trial(
    system: &str,
    (case, route, mode): (&str, &str, &str),
    cell: Cell,
    cause: Option<&str>,
) -> TrialCell {
    TrialCell {
        name: format!(
            "{}::{case}::{route}::auto::{mode}",
            system.replace(':', "::")
        ),
        case: case.into(),
        route: route.into(),
        choice: "auto".into(),
        mode: mode.into(),
        cell,
        cause: cause.map(str::to_string),
    }
}

/// `system`'s trials, one a row: where (case, route, mode), its cell and its cause.
type Row<'a> = ((&'a str, &'a str, &'a str), Cell, Option<&'a str>);

fn trials(system: &str, rows: Vec<Row<'_>>) -> Vec<TrialCell> {
    rows.into_iter()
        .map(|(at, cell, cause)| trial(system, at, cell, cause))
        .collect()
}

fn cause(id: &str, routes: &[&str], trials: &[&str], request: &str) -> serde_json::Value {
    json!({"id": id, "title": format!("downstream: {id}"), "routes": routes, "trials": trials,
        "reproducer": {"trial": trials[0], "command": "curl …", "client_request": {"body": request}, "expected": "…"}})
}

fn entry(system: &str, trials: Vec<TrialCell>, causes: Vec<serde_json::Value>) -> SystemEntry {
    let (kind, target) = system.split_once(':').unwrap();
    let mut e = SystemEntry {
        system: system.into(),
        kind: kind.into(),
        target: target.into(),
        version: Some("1.0".into()),
        routes: vec!["chat→anthropic".into(), "chat→gemini".into()],
        summary: String::new(),
        status: String::new(),
        error: None,
        stale: Vec::new(),
        exited: None,
        causes,
        trials,
        scores: None,
    };
    e.settle();
    e
}

/// A whole run: gateway:a with 4 trials over two cases (one failing on both routes with one
/// cause), client:b with 2.
fn whole() -> Document {
    let g = "gateway:a";
    let g = entry(
        g,
        trials(
            g,
            vec![
                (("c05_x", "chat→anthropic", "buffered"), Cell::Pass, None),
                (
                    ("c05_x", "chat→gemini", "buffered"),
                    Cell::Fail("f".into()),
                    Some("k-1"),
                ),
                (
                    ("c06_y", "chat→anthropic", "buffered"),
                    Cell::NotApplicable("n".into()),
                    None,
                ),
                (
                    ("c06_y", "chat→gemini", "buffered"),
                    Cell::Fail("f".into()),
                    Some("k-1"),
                ),
            ],
        ),
        vec![cause(
            "k-1",
            &["chat→gemini"],
            &[
                "c05_x::chat→gemini::auto::buffered",
                "c06_y::chat→gemini::auto::buffered",
            ],
            "xx",
        )],
    );
    let c = "client:b";
    let c = entry(
        c,
        trials(
            c,
            vec![
                (
                    ("c05_x", "chat→anthropic", "buffered"),
                    Cell::KnownFailure("r".into()),
                    Some("k-2"),
                ),
                (("c05_x", "chat→anthropic", "stream"), Cell::Pass, None),
            ],
        ),
        vec![cause(
            "k-2",
            &["chat→anthropic"],
            &["c05_x::chat→anthropic::auto::buffered"],
            "y",
        )],
    );
    Document {
        tooltape: "0.1.0".into(),
        date: "2026-11-26T03:00:00Z".into(),
        filter: Some("c0".into()),
        plan: vec![
            Planned {
                system: "gateway:a".into(),
                trials: 4,
            },
            Planned {
                system: "client:b".into(),
                trials: 2,
            },
        ],
        shard: None,
        systems: vec![g, c],
    }
}

/// The whole run cut as `pieces` say, into parts `1..=n`.
fn parts(
    doc: &Document,
    n: usize,
    pieces: &[(usize, &str, usize, usize)],
) -> Vec<(String, Document)> {
    (1..=n)
        .map(|k| {
            let mut part = doc.clone();
            part.date = format!("2026-11-26T03:0{k}:00Z");
            let mine: Vec<_> = pieces.iter().filter(|p| p.0 == k).collect();
            part.systems = mine
                .iter()
                .map(|&&(_, s, from, to)| {
                    let whole = doc.systems.iter().find(|e| e.system == s).unwrap();
                    let trials = whole.trials[from..to].to_vec();
                    let keys: Vec<String> = trials
                        .iter()
                        .map(|t| t.name.splitn(3, "::").nth(2).unwrap().to_string())
                        .collect();
                    let causes = whole
                        .causes
                        .iter()
                        .filter_map(|c| {
                            let mut c = c.clone();
                            let ts: Vec<_> = c["trials"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .filter(|t| keys.contains(&t.as_str().unwrap().to_string()))
                                .cloned()
                                .collect();
                            if ts.is_empty() {
                                return None;
                            }
                            c["reproducer"]["trial"] = ts[0].clone();
                            c["trials"] = json!(ts);
                            Some(c)
                        })
                        .collect();
                    entry(s, trials, causes)
                })
                .collect();
            part.shard = Some(ShardInfo {
                k,
                n,
                pieces: mine
                    .iter()
                    .map(|&&(_, s, from, to)| Piece {
                        system: s.into(),
                        from,
                        to,
                    })
                    .collect(),
            });
            (format!("part{k}.json"), part)
        })
        .collect()
}

#[test]
fn shard_parse_takes_k_of_n_and_refuses_the_rest() {
    assert_eq!(Shard::parse("2/3"), Ok(Shard { k: 2, n: 3 }));
    for bad in ["0/2", "3/2", "1", "a/b", "1/0"] {
        assert!(Shard::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn the_plan_covers_every_trial_once_and_cuts_only_between_cases() {
    let cases = |spec: &[(&str, usize)]| -> Vec<String> {
        spec.iter()
            .flat_map(|(c, n)| std::iter::repeat_n(c.to_string(), *n))
            .collect()
    };
    let suites = vec![
        (
            "gateway:big".to_string(),
            cases(&[("a", 4), ("b", 4), ("c", 4), ("d", 4)]),
        ),
        ("client:small".to_string(), cases(&[("a", 2)])),
        ("client:none".to_string(), Vec::new()),
    ];
    for n in 1..=5 {
        let shards = plan(&suites, n);
        assert_eq!(shards.len(), n);
        assert_eq!(shards, plan(&suites, n), "deterministic");
        for (system, trials) in &suites {
            let mut pieces: Vec<&Piece> = shards
                .iter()
                .flatten()
                .filter(|p| &p.system == system)
                .collect();
            pieces.sort_by_key(|p| p.from);
            let mut at = 0;
            for p in &pieces {
                assert_eq!(p.from, at, "{system} n={n}");
                assert!(
                    p.from == 0 || trials[p.from] != trials[p.from - 1],
                    "cut inside a case"
                );
                at = p.to;
            }
            assert_eq!(at, trials.len());
        }
    }
    // Two shards: the large suite is cut, each shard gets work.
    let two = plan(&suites, 2);
    assert!(
        two.iter()
            .all(|s| s.iter().map(|p| p.to - p.from).sum::<usize>() > 0)
    );
    assert_eq!(
        two.iter()
            .flatten()
            .filter(|p| p.system == "gateway:big")
            .count(),
        2
    );
}

#[test]
fn merging_the_parts_gives_the_whole_run() {
    let doc = whole();
    let split = parts(
        &doc,
        2,
        &[
            (1, "gateway:a", 0, 2),
            (2, "gateway:a", 2, 4),
            (2, "client:b", 0, 2),
        ],
    );
    let merged = merge(&split).unwrap();
    assert_eq!(merged.systems, doc.systems);
    assert_eq!(merged.date, "2026-11-26T03:01:00Z", "the earliest part's");
    assert_eq!(merged.shard, None);
    // Given in another order: the same.
    let mut reversed = split.clone();
    reversed.reverse();
    assert_eq!(merge(&reversed).unwrap().systems, doc.systems);
}

#[test]
fn merge_refuses_other_versions_overlaps_and_missing_shards() {
    let doc = whole();
    let split = parts(&doc, 2, &[(1, "gateway:a", 0, 4), (2, "client:b", 0, 2)]);
    let err = |p: &[(String, Document)]| merge(p).unwrap_err();
    assert!(
        err(&split[..1]).contains("shard 2/2 missing"),
        "{}",
        err(&split[..1])
    );
    let twice = vec![split[0].clone(), split[0].clone()];
    assert!(err(&twice).contains("given twice"), "{}", err(&twice));
    let mut other = split.clone();
    other[1].1.tooltape = "0.2.0".into();
    assert!(err(&other).contains("tooltape 0.2.0"), "{}", err(&other));
    let mut unsharded = split.clone();
    unsharded[0].1.shard = None;
    assert!(err(&unsharded).contains("not a shard's part"));
    let mut overlap = split.clone();
    overlap[1].1.shard.as_mut().unwrap().pieces[0] = Piece {
        system: "gateway:a".into(),
        from: 0,
        to: 4,
    };
    assert!(err(&overlap).contains("gateway:a"), "{}", err(&overlap));
}

#[test]
fn diff_lists_appeared_disappeared_and_moved_causes_and_fails_on_a_new_one() {
    let old = whole();
    assert_eq!(diff(&old, &old).exit_code(), 0);
    assert!(diff(&old, &old).systems.is_empty());
    let mut new = old.clone();
    new.systems[0].causes[0]["routes"] = json!(["chat→gemini", "chat→anthropic"]);
    new.systems[1].causes = vec![cause("k-3", &["chat→anthropic"], &["t"], "z")];
    let d = diff(&old, &new);
    assert_eq!(d.exit_code(), 1);
    assert_eq!(d.systems[0].changed_routes[0].id, "k-1");
    assert_eq!(d.systems[1].appeared[0].id, "k-3");
    assert_eq!(d.systems[1].disappeared[0].id, "k-2");
    // Only disappearing: exit 0.
    let d = diff(&new, &old);
    assert_eq!(d.exit_code(), 1, "k-2 reappears");
    let mut fixed = old.clone();
    fixed.systems[0].causes.clear();
    assert_eq!(diff(&old, &fixed).exit_code(), 0);
    assert!(diff(&old, &fixed).markdown().contains("disappeared: `k-1`"));
}

#[test]
fn the_page_has_every_class_and_system_and_marks_cells_by_their_worst_trial() {
    let doc = whole();
    let readme = "| class | what | cases |\n| --- | --- | --- |\n| 5 | no params | `c05_x` |\n| 6 | stop | `c06_y`, `c06_z` |\n";
    let cls = classes(readme, &doc);
    assert_eq!(
        cls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["class 5", "class 6"]
    );
    assert_eq!(cls[1].cases, ["c06_y", "c06_z"]);
    let g = &doc.systems[0];
    assert_eq!(mark(g, &["c05_x".into()], "chat→anthropic"), Mark::Pass);
    assert_eq!(
        mark(g, &["c05_x".into()], "chat→gemini"),
        Mark::Fail(Some("k-1".into()))
    );
    assert_eq!(
        mark(g, &["c06_y".into()], "chat→anthropic"),
        Mark::NotExpressible
    );
    assert_eq!(
        mark(&doc.systems[1], &["c05_x".into()], "chat→anthropic"),
        Mark::Known(Some("k-2".into()))
    );
    assert_eq!(mark(g, &["c06_z".into()], "chat→anthropic"), Mark::Empty);
    let page = html(&doc);
    let xml = page.trim_start_matches("<!DOCTYPE html>\n");
    let tree = roxmltree::Document::parse(xml).expect("well-formed");
    let systems: Vec<&str> = tree
        .descendants()
        .filter_map(|n| n.attribute("data-system"))
        .collect();
    assert_eq!(systems, ["gateway:a", "client:b"]);
    let link = tree
        .descendants()
        .find(|n| n.has_tag_name("a"))
        .unwrap()
        .attribute("href")
        .unwrap();
    assert!(
        tree.descendants()
            .any(|n| n.attribute("id") == Some(&link[1..])),
        "{link} resolves"
    );
    assert!(markdown(&doc).contains("| gateway:a chat→anthropic |"));
}
