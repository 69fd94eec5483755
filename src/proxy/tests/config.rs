//! The config file: defaults, routes by alias, and every refusal at `path:line:col` with its key.

use std::path::Path;

use super::config;
use crate::model::{Provider, StrictPolicy};
use crate::proxy::config::ProxyConfig;

/// Asserts that `text` is refused at `p.toml:{at}` with a message containing `says`.
fn refused_at(text: &str, at: &str, says: &str) {
    let e = ProxyConfig::parse(Path::new("p.toml"), text)
        .unwrap_err()
        .to_string();
    let (place, message) = e.split_once(": ").unwrap_or_default();
    assert_eq!(place, format!("p.toml:{at}"), "{e}");
    assert!(message.contains(says), "{e}");
}

#[test]
fn defaults_fill_what_is_absent_and_routes_are_found_by_alias() {
    let c = config();
    assert!(c.listen.ip().is_loopback());
    assert_eq!(c.listen.port(), 0);
    assert_eq!(c.max_body_bytes, 8 * 1024 * 1024);
    assert_eq!(c.max_json_depth, 64);
    assert_eq!(c.max_connections, 4096);
    let r = c.route("to-anthropic").expect("routed");
    assert_eq!(r.provider, Provider::Anthropic);
    assert_eq!(r.strict, StrictPolicy::default());
    assert_eq!(
        c.route("to-chat").map(|r| r.strict),
        Some(StrictPolicy::Off)
    );
    assert!(c.route("TO-CHAT").is_none(), "aliases are exact");
    assert_eq!(
        c.route("to-gemini").and_then(|r| r.key()),
        Some("AIza-test".into())
    );
}

#[test]
fn an_unknown_key_is_refused_where_it_stands() {
    let text = "max_body_bytes = 10\n\n[[route]]\nmodel = \"m\"\nprovider = \"anthropic\"\nbase_url = \"http://x\"\nretries = 3\n";
    refused_at(text, "7:1", "unknown field `retries`");
}

#[test]
fn a_model_routed_twice_is_refused_naming_it() {
    let route = "[[route]]\nmodel = \"m\"\nprovider = \"anthropic\"\nbase_url = \"http://x\"\n";
    // Placed at the model's first mention.
    refused_at(
        &format!("{route}\n{route}"),
        "2:9",
        "model `m` is routed twice",
    );
}

#[test]
fn a_base_url_that_is_not_http_is_refused_and_so_is_listening_off_loopback() {
    let ftp = "[[route]]\nmodel = \"m\"\nprovider = \"gemini\"\nbase_url = \"ftp://x\"\n";
    refused_at(ftp, "4:13", "must start with http:// or https://");
    let anywhere = "listen = \"0.0.0.0:8080\"\n";
    refused_at(anywhere, "1:1", "the proxy only listens on loopback");
    assert!(ProxyConfig::parse(Path::new("p.toml"), "listen = \"[::1]:0\"\n").is_ok());
}

#[test]
fn each_limit_is_checked_at_its_bounds_and_named_at_its_line() {
    for key in [
        "max_body_bytes",
        "max_connections",
        "header_timeout_ms",
        "body_timeout_ms",
        "idle_timeout_ms",
        "upstream_timeout_secs",
    ] {
        let says = format!("{key} = 0: it must be at least 1");
        refused_at(&format!("# limits\n{key} = 0\n"), "2:1", &says);
    }
    for (depth, ok) in [(0, false), (1, true), (128, true), (129, false)] {
        let parsed =
            ProxyConfig::parse(Path::new("p.toml"), &format!("max_json_depth = {depth}\n"));
        assert_eq!(parsed.is_ok(), ok, "max_json_depth = {depth}");
    }
}
