//! tooltape: a record-and-replay conformance suite for LLM tool calling.
//!
//! One pipeline (ARCHITECTURE.md): a case file expands into trials; each trial's neutral request
//! is encoded for a provider ([`encode`]), sent to an [`Endpoint`] (the [`ReplayServer`], the
//! [`Simulator`], a gateway or a live provider) by [`run_trial`], decoded ([`decode`],
//! [`StreamDecoder`]), checked, snapshotted and reported. Every module is private; this page is
//! the whole surface the `tooltape` binary, the tests and the benchmarks use.
//!
//! The library prints nothing: commands, terminal output and progress are the binary's.

#![warn(unreachable_pub)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod capability;
mod case;
mod cassette;
mod check;
mod clock;
mod drift;
mod fnv;
mod gateway;
mod harness;
mod http;
mod import_vcr;
mod inject;
mod input;
mod jsonseq;
mod located;
mod model;
mod pointer;
mod providers;
mod proxy;
mod record;
mod redact;
mod replay;
mod report;
mod respond;
mod run;
mod scenario;
mod schema;
mod serve;
mod simulate;
mod sse;
mod status;
mod textcall;
mod tls;

// The neutral model and plain HTTP values.
pub use http::{HttpRequest, HttpResponse};
pub use model::{
    AllowedMode, ChatRequest, DecodeError, Diagnostic, DiagnosticKind, EncodeError, Encoded,
    Finish, Grounding, HostedActivity, HostedTool, Message, Outcome, Provider, ProviderError,
    StrictPolicy, Tool, ToolCall, ToolChoice, TruncatedCall, Usage, empty_parameters,
};

// Cases: discovery, trials and their identity.
pub use case::schema::problems as case_schema_problems;
pub use case::{
    Case, ChoiceSpec, Discovery, Mode, PROVIDERS_FILE, Trial, TrialId, discover, load_case,
    load_providers,
};

// Wire formats: the encode/decode dispatch, and each provider's pure codec.
pub use providers::{
    CallProgress, DecodedRequest, Extra as RequestExtra, ExtraKind as RequestExtraKind, Framing,
    Progress, StreamDecoder, WireRoute, anthropic, decode, decode_request, encode, gemini,
    openai_chat, openai_responses, query_map, route, sent_tools, text_protocol,
};

// Strict schemas, hosted-search capability, the text protocol's injection and parser.
pub use capability::{forces_search, wire_tool_type};
pub use inject::request::{Choice as InjectedChoice, function_tools, tool_choice};
pub use inject::{developer_instructions, json_message};
pub use schema::{
    Transformed, Violation, check as check_schema, openai_strict, openai_transform,
    strict_parameters,
};
pub use textcall::{Parsed, Parser, ParserConfig, parse as parse_tool_calls};

// Bounded input: every file the tool reads goes through one reader.
pub use input::{
    Bounded, InputError, read as read_bounded, read_all as read_all_bounded,
    read_to_string as read_to_string_bounded,
};

// Cassettes, redaction and the secret scan.
pub use cassette::{
    Cassette, FORMAT as CASSETTE_FORMAT, Interaction, Provenance, ProvenanceKind, StoredResponse,
    clean_stale_temps, load as load_cassette, split_stream, to_text as cassette_text, today,
    write_atomic,
};
pub use redact::{
    REDACTED, Secrets, find_secrets, redact_request, redact_response, redact_text,
    scan as scan_secrets,
};

// Running trials: transport, replay, the simulator, the one road, recording.
pub use harness::{
    ReplayStatus, TrialResult, broken_file_count, orphans, replay_all, replay_trial,
    run_on_cassette, runtime, suite_problems,
};
pub use proxy::{Proxy, ProxyConfig, ProxyRoute};
pub use record::{
    Endpoints, RecordOptions, RetryPolicy, SIMULATOR_KEY, Summary, Which, backoff,
    cassette_from_run, dry_run_listing, endpoints, in_ci, record_all_with, record_trial,
    select as select_to_record, server_hint, write_cassette,
};
pub use replay::ReplayServer;
pub use run::{
    Endpoint, ExchangeRun, SupportCache, Telemetry, TrialRun, client as http_client, run_trial,
    send,
};
pub use simulate::{Fault, FaultKind, SimConfig, Simulator};

// Reports: status, drift, the conformance matrix, imports.
pub use drift::render::{
    json as drift_json, markdown as drift_markdown, terminal as drift_terminal,
};
pub use drift::{DriftReport, Finding as DriftFinding, Kind as DriftKind, Severity, compare_dirs};
pub use import_vcr::convert as import_vcr;
pub use report::{
    Cell, Matrix, Parity, Status, build as build_matrix, html::page as matrix_html, matrix, parity,
    summary as matrix_summary, text::REGENERATE as REGENERATE_CONFORMANCE,
    text::json as matrix_json, text::markdown as matrix_markdown,
    text::terminal as matrix_terminal,
};
pub use status::{ScanReport, State as CassetteState, report as status_report, scan_path};

// Gateway mode: the suite run black-box through a gateway, tooltape at both ends.
pub use case::pattern_matches;
/// Report timestamps: `YYYY-MM-DD HH:MM UTC`.
pub use clock::utc_minute as utc_date;
pub use gateway::{
    COMPARE_BEGIN, COMPARE_END, CompareMeta, CompareRow, GatewayRun, GatewayTrial,
    PeakSampler as GatewayMemory, RequestTiming as GatewayRequestTiming,
    common_routes as gateway_common_routes, compare_markdown, compare_row, compare_terminal,
    machine_note, percentile, replace_region as replace_compare_region,
    rewrite_region as rewrite_compare_region, version as gateway_version,
};
pub use gateway::{
    Cell as GatewayCell, LoadedProfile as GatewayProfile, Route as GatewayRoute,
    TrialResult as GatewayTrialResult, Upstream as RecordingUpstream, cases_of as gateway_cases,
    ensure_installed as ensure_gateway_installed, html as gateway_html,
    load_profile as load_gateway_profile, markdown as gateway_markdown,
    run_all as run_gateway_trials, snapshot as gateway_snapshot,
    snapshot_name as gateway_snapshot_name, start as start_gateway, summary as gateway_summary,
    terminal as gateway_terminal, trials as gateway_trials,
};
