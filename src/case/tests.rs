//! Unit tests of the case format: patterns, loading errors with positions, the case hash,
//! trial identities, and the editor schema kept equal to the types.

use std::path::{Path, PathBuf};

use super::schema::{problems, rust_fields};
use super::*;
use crate::located::line_col;

#[test]
fn patterns() {
    assert!(pattern_matches("*::*::*", "gemini::auto::stream"));
    assert!(pattern_matches("gemini", "gemini::auto::stream"));
    assert!(pattern_matches(
        "gemini::forced-*",
        "gemini::forced-get_weather::buffered"
    ));
    assert!(!pattern_matches(
        "gemini::forced-*",
        "gemini::auto::buffered"
    ));
    assert!(pattern_matches("*::*::stream", "anthropic::none::stream"));
    assert!(!pattern_matches(
        "openai-*::*::stream",
        "anthropic::none::stream"
    ));
}

/// A throwaway project root with the real provider table and tools, plus `cases/NAME.toml`.
/// Removed when dropped.
fn project_with(name: &str, case_text: &str) -> tempfile::TempDir {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let tmp = crate::scratch::folder(&format!("case-{name}"));
    let root = tmp.path();
    std::fs::create_dir_all(root.join("cases/tools")).unwrap();
    std::fs::copy(
        real.join(PROVIDERS_FILE),
        root.join("cases").join(PROVIDERS_FILE),
    )
    .unwrap();
    std::fs::copy(
        real.join("tools/get_weather.json"),
        root.join("cases/tools/get_weather.json"),
    )
    .unwrap();
    std::fs::write(root.join(format!("cases/{name}.toml")), case_text).unwrap();
    tmp
}

fn broken(name: &str, text: &str) -> String {
    let root = project_with(name, text);
    let d = discover(root.path());
    assert!(d.trials.is_empty(), "expected {name} to be rejected");
    assert_eq!(d.broken.len(), 1);
    d.broken[0].1.to_string()
}

/// The project holding `text` as case `name`, discovered: it must load without a broken case.
fn loaded(name: &str, text: &str) -> Discovery {
    let root = project_with(name, text);
    let d = discover(root.path());
    assert!(d.broken.is_empty(), "{:?}", d.broken);
    d
}

const GOOD: &str = "description = \"d\"\ntools = [\"get_weather\"]\nchoices = [\"auto\"]\n[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";

#[test]
fn a_good_case_expands_into_named_trials() {
    let d = loaded("good", GOOD);
    let names: Vec<String> = d.trials.iter().map(Trial::name).collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], "good::openai-chat::auto::buffered");
    assert_eq!(
        d.trials[1].cassette_path(),
        PathBuf::from("cassettes/openai-chat/good/auto-stream.json")
    );
}

#[test]
fn unknown_field_is_reported_with_line_and_column() {
    let msg = broken("typo", &format!("{GOOD}\n[[expect]]\ncals = [\"x\"]\n"));
    assert!(
        msg.starts_with("cases/typo.toml:9:1: unknown field `cals`"),
        "{msg}"
    );
}

#[test]
fn semantic_errors_point_at_the_value() {
    let cases = [
        (
            "badtool",
            GOOD.replace("[\"get_weather\"]", "[\"get_wether\"]"),
            "cases/badtool.toml:2:10: no tool file",
        ),
        (
            "badchoice",
            GOOD.replace("[\"auto\"]", "[\"forced-nope\"]"),
            "cases/badchoice.toml:3:12: tool choice names `nope`",
        ),
        (
            "badkf",
            format!("{GOOD}[[known_failure]]\ntrials = \"gemini::none\"\nreason = \"r\"\n"),
            "cases/badkf.toml:7:1: known_failure pattern `gemini::none` matches no trial",
        ),
        (
            "syntax",
            "description = \"unterminated\n".to_string(),
            "cases/syntax.toml:1:",
        ),
    ];
    for (name, text, starts) in cases {
        let msg = broken(name, &text);
        assert!(msg.starts_with(starts), "{msg}");
    }
}

#[test]
fn case_hash_ignores_comments_and_order_but_not_meaning() {
    let hash = |text: &str| {
        let root = project_with("hashing", text);
        let d = discover(root.path());
        d.trials[0].case.hash.clone()
    };
    let base = hash(GOOD);
    let reordered = "choices = [\"auto\"]\n# a comment\ntools = [\"get_weather\"]\ndescription = \"d\"\n\n[[messages]]\ncontent = \"hi\"\nrole = \"user\"\n";
    assert_eq!(hash(reordered), base);
    assert_ne!(hash(&GOOD.replace("\"hi\"", "\"hello\"")), base);
}

#[test]
fn line_col_counts_chars() {
    assert_eq!(line_col("ab\ncdé\nx", 7), (2, 4));
    assert_eq!(line_col("ab\ncdé\nx", 8), (3, 1));
    assert_eq!(line_col("ab", 0), (1, 1));
}

#[test]
fn probes_read_field_lists_from_serde() {
    let fields = rust_fields("[[known_failure]]\n__probe__ = 1").unwrap();
    assert_eq!(fields, ["flaky", "reason", "trials"]);
}

#[test]
fn shipped_schema_matches_rust_types() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert_eq!(problems(root), Vec::<String>::new());
}

const PROVIDER_LIST: &str = "openai-chat, openai-responses, anthropic, gemini, text-protocol";

#[test]
fn typed_fields_fail_at_their_value_with_the_valid_values() {
    let msg = broken(
        "badslug",
        &GOOD.replace("[\"auto\"]", "[\"auto\", \"sometimes\"]"),
    );
    assert_eq!(
        msg,
        "cases/badslug.toml:3:20: unknown tool choice `sometimes`; write omitted, auto, none, required, forced-NAME, allowed-auto-A+B or allowed-required-A+B"
    );
    let msg = broken("badrole", &GOOD.replace("\"user\"", "\"tool\""));
    assert_eq!(
        msg,
        "cases/badrole.toml:5:8: unknown role `tool`; case messages are system, developer or user (tool rounds go in [[rounds]])"
    );
    let msg = broken("badmode", &format!("modes = [\"fast\"]\n{GOOD}"));
    assert_eq!(
        msg,
        "cases/badmode.toml:1:10: unknown mode `fast`; expected buffered or stream"
    );
    let msg = broken("badprov", &format!("providers = [\"gemni\"]\n{GOOD}"));
    assert_eq!(
        msg,
        format!(
            "cases/badprov.toml:1:14: unknown provider `gemni`; expected one of {PROVIDER_LIST}"
        )
    );
    let msg = broken("badmodel", &format!("models = {{ gemni = \"m\" }}\n{GOOD}"));
    assert_eq!(
        msg,
        format!(
            "cases/badmodel.toml:1:12: unknown provider `gemni` in models; expected one of {PROVIDER_LIST}"
        )
    );
}

#[test]
fn typed_fields_load_into_the_case() {
    let text = format!(
        "providers = [\"gemini\", \"anthropic\"]\nmodes = [\"stream\"]\nmodels = {{ gemini = \"g-1\" }}\n{}",
        GOOD.replace("[\"auto\"]", "[\"omitted\", \"forced-get_weather\"]")
            .replace("\"user\"", "\"system\"")
    );
    let d = loaded("typed", &text);
    let names: Vec<String> = d.trials.iter().map(Trial::name).collect();
    assert_eq!(
        names,
        [
            "typed::gemini::omitted::stream",
            "typed::gemini::forced-get_weather::stream",
            "typed::anthropic::omitted::stream",
            "typed::anthropic::forced-get_weather::stream",
        ]
    );
    let case = &d.trials[0].case;
    assert_eq!(case.models[&crate::model::Provider::Gemini], "g-1");
    assert_eq!(*case.file.messages[0].role.get_ref(), Role::System);
    assert_eq!(d.trials[1].choice_location(), "cases/typed.toml:6:23");
}

#[test]
fn trial_ids_read_back_their_name_cassette_and_snapshot() {
    for name in [
        "weather::openai-chat::auto::buffered",
        "weather::gemini::forced-get_weather::stream",
        "multi-tool::anthropic::allowed-required-a+b::buffered",
        "x::text-protocol::omitted::stream",
    ] {
        let id = TrialId::from_name(name).unwrap();
        assert_eq!(id.name(), name);
        assert_eq!(
            TrialId::from_cassette_path(&id.cassette_path()),
            Some(id.clone())
        );
        assert_eq!(
            TrialId::from_snapshot_file(&id.snapshot_file()),
            Some(id.clone())
        );
    }
    let id = TrialId::from_name("weather::gemini::forced-get_weather::stream").unwrap();
    assert_eq!(
        id.cassette_path(),
        PathBuf::from("cassettes/gemini/weather/forced-get_weather-stream.json")
    );
    assert_eq!(
        id.snapshot_file(),
        "weather__gemini__forced-get_weather__stream.snap"
    );
    assert_eq!(id.row(), "weather::forced-get_weather::stream");
    assert_eq!(
        TrialId::from_cassette_path(Path::new("gemini/weather/auto-buffered.json"))
            .map(|i| i.name()),
        Some("weather::gemini::auto::buffered".into())
    );
    for bad in [
        "cassettes/nope/weather/auto-buffered.json",
        "cassettes/gemini/weather/auto-slow.json",
        "cassettes/gemini/weather/auto-buffered.txt",
        "auto-buffered.json",
    ] {
        assert_eq!(TrialId::from_cassette_path(Path::new(bad)), None, "{bad}");
    }
    assert_eq!(TrialId::from_name("weather::gemini::auto"), None);
    assert_eq!(
        TrialId::from_snapshot_file("weather__gemini__auto__stream.yaml"),
        None
    );
}

#[test]
fn provider_table_rejects_an_unknown_provider() {
    let tmp = crate::scratch::folder("providers");
    let dir = tmp.path();
    let real = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cases")
        .join(PROVIDERS_FILE);
    let text =
        std::fs::read_to_string(real).unwrap() + "\n[gemni]\nmodel = \"m\"\nbase_url = \"u\"\n";
    std::fs::write(dir.join(PROVIDERS_FILE), text).unwrap();
    let msg = load_providers(dir).unwrap_err().message;
    assert_eq!(
        msg,
        format!("unknown provider `gemni`; expected one of {PROVIDER_LIST}")
    );
}

#[test]
fn an_unknown_call_id_is_read_and_checked_at_its_value() {
    let round = "[[rounds]]\nresults = [{ tool = \"get_weather\", content = \"x\", unknown_call_id = \"call_unknown_1\" }]\n";
    let d = loaded("unknownid", &format!("{GOOD}{round}"));
    let r = &d.trials[0].case.file.rounds[0].results[0];
    assert_eq!(
        r.unknown_call_id.as_ref().map(|i| i.get_ref().as_str()),
        Some("call_unknown_1")
    );
    let msg = broken(
        "badid",
        &format!("{GOOD}{}", round.replace("call_unknown_1", "call/1")),
    );
    assert!(
        msg.starts_with("cases/badid.toml:8:69: unknown_call_id `call/1`: use 1 to 64"),
        "{msg}"
    );
}

#[test]
fn tool_names_allow_dots_but_nothing_that_leaves_or_hides_in_the_folder() {
    for bad in [".hidden", "a..b", "a/b", "a\\\\b", ""] {
        let msg = broken(
            "badname",
            &GOOD.replace("[\"get_weather\"]", &format!("[\"{bad}\"]")),
        );
        assert!(
            msg.starts_with("cases/badname.toml:2:10: tool name"),
            "{bad}: {msg}"
        );
    }
    // A dotted name passes the name rule and is looked up as cases/tools/NAME.json.
    let msg = broken(
        "dotted",
        &GOOD.replace("[\"get_weather\"]", "[\"weather.get\"]"),
    );
    assert!(
        msg.contains("no tool file") && msg.contains("weather.get.json"),
        "{msg}"
    );
}

#[test]
fn a_round_s_tool_changes_are_read_checked_and_applied() {
    let round = "[[rounds]]\nresults = [{ tool = \"get_weather\", content = \"x\" }]\nremove_tools = [\"get_weather\"]\nadd_tools = [\"get_weather\"]\n";
    let d = loaded("changes", &format!("{GOOD}{round}"));
    let r = &d.trials[0].case.file.rounds[0];
    assert_eq!(r.added.len(), 1);
    let mut tools = d.trials[0].case.tools.clone();
    r.apply_tools(&mut tools);
    assert_eq!(
        tools.len(),
        1,
        "a tool removed and added back is in force once"
    );
    // Removing a tool not in force, adding one in force, answering a removed tool's call.
    let gone = "[[rounds]]\nresults = [{ tool = \"get_weather\", content = \"x\" }]\nremove_tools = [\"get_weather\"]\n[[rounds]]\nresults = [{ tool = \"get_weather\", content = \"y\" }]\n";
    let twice = "[[rounds]]\nresults = []\nadd_tools = [\"get_weather\"]\n";
    let absent = "[[rounds]]\nresults = []\nremove_tools = [\"nope\"]\n";
    for (name, rounds, says) in [
        ("gone", gone, "not among the tools in force"),
        ("twice", twice, "in force already"),
        ("absent", absent, "`nope`, which is not in force"),
    ] {
        let msg = broken(name, &format!("{GOOD}{rounds}"));
        assert!(msg.contains(says), "{msg}");
    }
}

#[test]
fn caller_tools_are_read_per_format_and_refused_beside_rounds() {
    let tools = "[caller_tools]\nopenai-responses = [{ type = \"custom\", name = \"run_sql\" }]\n";
    let d = loaded("caller", &format!("{GOOD}{tools}"));
    let declared = &d.trials[0].case.file.caller_tools;
    assert_eq!(
        declared[&crate::model::Provider::OpenaiResponses][0]["name"],
        "run_sql"
    );
    let round = "[[rounds]]\nresults = [{ tool = \"get_weather\", content = \"x\" }]\n";
    let msg = broken("callerrounds", &format!("{GOOD}{tools}{round}"));
    assert!(msg.contains("`caller_tools` with `[[rounds]]`"), "{msg}");
}

#[test]
fn a_case_s_subject_is_every_option_it_sets_unless_it_lists_them() {
    use crate::case::CaseOption;
    let head = "description = \"d\"\ntools = [\"get_weather\"]\nchoices = [\"auto\"]\nparallel = true\nmax_tokens = 99\n";
    let tail = "[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";
    let d = loaded("all", &format!("{head}{tail}"));
    let case = &d.trials[0].case;
    assert_eq!(
        case.options(),
        [CaseOption::Parallel, CaseOption::MaxTokens]
    );
    assert_eq!(
        case.subject(),
        case.options(),
        "default: every option it sets"
    );
    assert!(!case.incidental(CaseOption::Parallel));

    let d = loaded("some", &format!("{head}subject = [\"max_tokens\"]\n{tail}"));
    let case = &d.trials[0].case;
    assert!(case.incidental(CaseOption::Parallel));
    assert!(!case.incidental(CaseOption::MaxTokens));
    let without = case.without(&[CaseOption::Parallel]);
    assert_eq!(
        (without.file.parallel, without.file.max_tokens),
        (None, Some(99))
    );
    assert_eq!(without.name, case.name);
    assert_eq!(
        without.hash, case.hash,
        "the same case, its cassettes the same"
    );
}

#[test]
fn a_subject_names_options_the_case_sets_and_lists_every_one_that_cannot_be_left_out() {
    let tail = "[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";
    let plain = "description = \"d\"\ntools = [\"get_weather\"]\nchoices = [\"auto\"]\n";
    let unset = broken("unset", &format!("{plain}subject = [\"thinking\"]\n{tail}"));
    assert!(unset.contains("unset.toml:4:"), "{unset}");
    assert!(
        unset.contains("`subject` lists `thinking`, which this case does not set"),
        "{unset}"
    );
    let head = "description = \"d\"\ntools = [\"get_weather\"]\nchoices = [\"auto\"]\nthinking = 512\nparallel = true\n";
    let twice = broken(
        "twice",
        &format!("{head}subject = [\"thinking\", \"thinking\"]\n{tail}"),
    );
    assert!(twice.contains("lists `thinking` twice"), "{twice}");
    let kept = broken("kept", &format!("{head}subject = [\"parallel\"]\n{tail}"));
    assert!(kept.contains("kept.toml:6:"), "{kept}");
    assert!(
        kept.contains("`subject` leaves out `thinking`, which no trial can run without")
            && kept.contains("add `thinking` to `subject`"),
        "{kept}"
    );
    let typo = broken("typo", &format!("{head}subject = [\"paralel\"]\n{tail}"));
    assert!(typo.contains("typo.toml:6:"), "{typo}");
    loaded("fine", &format!("{head}subject = [\"thinking\"]\n{tail}"));
}

#[test]
fn a_deferred_tool_needs_a_tool_search_and_a_search_variant_names_one() {
    let deferred = "description = \"d\"\ntools = [\"find_flights\"]\nchoices = [\"auto\"]\n[[messages]]\nrole = \"user\"\ncontent = \"hi\"\n";
    let with_tool = |name: &str, text: &str| {
        let root = project_with(name, text);
        let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/tools/find_flights.json");
        std::fs::copy(real, root.path().join("cases/tools/find_flights.json")).unwrap();
        discover(root.path())
    };
    let d = with_tool("nosearch", deferred);
    let msg = d.broken[0].1.to_string();
    assert!(
        msg.starts_with("cases/nosearch.toml:2:10: tool `find_flights` is deferred"),
        "{msg}"
    );
    let searched = deferred.replace(
        "choices",
        "hosted = [{ type = \"tool_search\", variant = \"tool_search\" }]\nchoices",
    );
    assert!(with_tool("searched", &searched).broken.is_empty());
    let bad = searched.replace("variant = \"tool_search\"", "variant = \"regex\"");
    let msg = with_tool("badvariant", &bad).broken[0].1.to_string();
    assert!(
        msg.starts_with("cases/badvariant.toml:3:") && msg.contains("tool search variant `regex`"),
        "{msg}"
    );
}
