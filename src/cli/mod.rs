//! The `tooltape` command line: argument definitions and dispatch to the library.

// The output macros first: `out!`/`outln!` are in scope for every module declared after it.
#[macro_use]
mod out;

mod drift;
mod gateway;
mod import_vcr;
mod inject;
mod parse_request;
mod proxy;
mod record;
mod report;
mod schema;
mod status;
mod text_protocol;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand};
use serde_json::{Value, json};
use tooltape::{
    ChatRequest, ChoiceSpec, Mode, Outcome, Provider, ReplayServer, ReplayStatus, StreamDecoder,
    StrictPolicy, Trial, decode, discover, encode, load_case, load_cassette, load_providers,
    replay_all, runtime,
};

#[derive(Parser, Debug)]
#[command(
    name = "tooltape",
    version,
    about = "Record-and-replay conformance suite for LLM tool calling"
)]
pub struct Cli {
    /// Project root (holds cases/ and cassettes/).
    #[arg(long, global = true, default_value = ".")]
    pub root: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Replay trials against their cassettes offline and print the pass/fail matrix.
    Replay(ReplayArgs),
    /// Decode one raw response body (JSON or SSE) and print the outcome as JSON.
    Parse(ParseArgs),
    /// Decode one request of a provider's wire format and print the neutral request as JSON.
    ParseRequest(ParseRequestArgs),
    /// Print the request body the encoder produces for a trial's first exchange.
    Convert(ConvertArgs),
    /// Record cassettes from the live providers (keys from the environment) or the simulator.
    Record(RecordArgs),
    /// Scan cassettes for secrets (key-shaped strings, unredacted auth headers); exit 1 on a finding.
    Scan(ScanArgs),
    /// One line per trial: ok, missing, stale (why), synthetic, imported; then orphaned files.
    Status(StatusArgs),
    /// Convert a vcrpy / pytest-recording YAML cassette into a redacted tooltape cassette.
    ImportVcr(ImportVcrArgs),
    /// Compare the committed cassettes with another folder or a fresh recording: what drifted.
    Drift(drift::DriftArgs),
    /// Print the conformance matrix of a replay run (case × choice × mode by provider).
    Report(report::ReportArgs),
    /// Strict-mode schemas: print what the encoder sends for a provider, or check one.
    Schema {
        #[command(subcommand)]
        action: SchemaAction,
    },
    /// Print the text protocol's injected developer instructions for a Responses-shaped request.
    Inject {
        /// The request JSON; standard input when absent.
        file: Option<PathBuf>,
    },
    /// Run the case suite through an LLM gateway (gateways/NAME.toml) and print its matrix.
    Gateway(gateway::GatewayArgs),
    /// Run the reference gateway on loopback until interrupted: four inbound formats, each model
    /// alias routed to an upstream provider (see `gateways/tooltape.toml`).
    Proxy(proxy::ProxyArgs),
    /// Run the provider simulator on loopback until interrupted (point a gateway at it).
    Simulate {
        /// Port on 127.0.0.1 (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
}

#[derive(Args, Debug)]
pub struct ScanArgs {
    /// A cassette file or folder (default: cassettes/ under --root).
    pub path: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// Only trials whose name contains this.
    pub filter: Option<String>,
}

#[derive(Args, Debug)]
pub struct ImportVcrArgs {
    /// The vcrpy YAML cassette.
    pub file: PathBuf,
    /// The provider that answered (openai-chat, openai-responses, anthropic, gemini, text-protocol).
    #[arg(long)]
    pub provider: String,
    /// Where to write the tooltape cassette.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing file at --out that is not this file's earlier import.
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand, Debug)]
pub enum SchemaAction {
    /// Print the schema the encoder would send for P (exit 1 with reasons when it cannot be strict).
    Strict {
        #[arg(long)]
        provider: String,
        file: Option<PathBuf>,
    },
    /// Print one violation per line as `POINTER: RULE: message` (exit 1 when there are any).
    Check {
        #[arg(long)]
        provider: String,
        file: Option<PathBuf>,
    },
}

#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// Only trials whose name contains this.
    pub filter: Option<String>,
    /// Replay one cassette's recorded requests and print the outcomes.
    #[arg(long)]
    pub cassette: Option<PathBuf>,
    /// With --cassette: replay the whole cassette N times and print the rate.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// With --cassette: the provider, when the path does not say.
    #[arg(long)]
    pub provider: Option<String>,
}

#[derive(Args, Debug)]
pub struct ParseArgs {
    #[arg(long)]
    pub provider: String,
    /// The body is a stream (SSE, or Gemini's streamed JSON array).
    #[arg(long)]
    pub stream: bool,
    /// HTTP status of the response (non-2xx: decode the error envelope).
    #[arg(long, default_value_t = 200)]
    pub status: u16,
    /// text-protocol: the request (Responses- or Chat-shaped JSON) that configures the parser.
    #[arg(long)]
    pub request: Option<PathBuf>,
    /// The body; standard input when absent.
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ParseRequestArgs {
    /// The wire format (openai-chat, openai-responses, anthropic, gemini; text-protocol reads
    /// as openai-chat).
    #[arg(long)]
    pub provider: String,
    /// The request path, with its query (`/v1beta/models/M:streamGenerateContent?alt=sse`):
    /// needed for a bare Gemini body; overrides the path of a whole request.
    #[arg(long)]
    pub path: Option<String>,
    /// A whole request (`{"method","path","query","body"}`, as cassettes store it) or a bare
    /// body; standard input when absent.
    pub file: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ConvertArgs {
    #[arg(long)]
    pub provider: String,
    #[arg(long)]
    pub case: PathBuf,
    /// A tool choice slug of the case (auto, none, required, forced-NAME, ...).
    #[arg(long)]
    pub choice: String,
    #[arg(long)]
    pub stream: bool,
}

#[derive(Args, Debug)]
pub struct RecordArgs {
    /// Only trials whose name contains this.
    pub filter: Option<String>,
    #[arg(long)]
    pub provider: Option<String>,
    /// Record trials whose cassette is missing (the default).
    #[arg(long, group = "which")]
    pub missing: bool,
    /// Re-record trials whose cassette is stale.
    #[arg(long, group = "which")]
    pub stale: bool,
    /// Re-record every selected trial.
    #[arg(long, group = "which")]
    pub all: bool,
    /// List what would be recorded and how many requests it would send; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Answer with the project's own simulator on loopback: cassettes are marked synthetic.
    #[arg(long)]
    pub simulate: bool,
}

/// Runs the command; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let root = cli.root.clone();
    match cli.command {
        Command::Replay(a) => match a.cassette {
            Some(path) => replay_cassette(&root, &path, a.repeat, a.provider.as_deref()),
            None => replay_matrix(&root, a.filter.as_deref()),
        },
        Command::Parse(a) => parse(&a),
        Command::ParseRequest(a) => parse_request(&a),
        Command::Convert(a) => convert(&a),
        Command::Record(a) => record::run(&root, &a),
        Command::Simulate { port } => match runtime().block_on(serve_forever(port)) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("cannot start the simulator on 127.0.0.1:{port}: {e}");
                1
            }
        },
        Command::Proxy(a) => proxy::run(&a),
        Command::Scan(a) => status::run_scan(&root, a.path.as_deref()),
        Command::Status(a) => status::run(&root, a.filter.as_deref()),
        Command::ImportVcr(a) => import_vcr::run(&a.file, &a.provider, &a.out, a.force),
        Command::Drift(a) => drift::run(&root, &a),
        Command::Report(a) => report::run(&root, &a),
        Command::Gateway(a) => gateway::run(&root, &a),
        Command::Schema { action } => {
            let (provider, file, strict) = match &action {
                SchemaAction::Strict { provider, file } => (provider, file, true),
                SchemaAction::Check { provider, file } => (provider, file, false),
            };
            let provider = match provider_arg(provider) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("{e}");
                    return 2;
                }
            };
            text_command(file.as_deref(), |input| {
                if strict {
                    schema::cli_strict(provider, input)
                } else {
                    schema::cli_check(provider, input)
                }
            })
        }
        Command::Inject { file } => {
            // Exactly the instructions: no newline added.
            text_command(file.as_deref(), |input| {
                let (out, code) = inject::cli_inject(input);
                if code == 0 {
                    out!("{out}");
                    return (String::new(), 0);
                }
                (out, code)
            })
        }
    }
}

/// Reads FILE or stdin as UTF-8, runs `f`, prints its output (stdout for exit 0 and 1,
/// stderr for usage errors), returns its exit code.
fn text_command(file: Option<&Path>, f: impl FnOnce(&str) -> (String, i32)) -> i32 {
    let bytes = match read_input(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let name = input_name(file);
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("{name}: not UTF-8");
        return 2;
    };
    let (out, code) = f(&text);
    if code == 2 {
        eprintln!("{name}: {out}");
    } else if !out.is_empty() {
        outln!("{}", out.trim_end_matches('\n'));
    }
    code
}

fn provider_arg(s: &str) -> Result<Provider, String> {
    Provider::from_slug(s).ok_or_else(|| {
        let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
        format!("unknown provider `{s}`; expected one of {}", all.join(", "))
    })
}

/// How an input is named in messages: its path, or `<stdin>`.
fn input_name(file: Option<&Path>) -> String {
    file.map_or_else(|| "<stdin>".to_string(), |p| p.display().to_string())
}

fn read_input(file: Option<&Path>) -> Result<Vec<u8>, String> {
    match file {
        Some(p) => tooltape::read_bounded(p).map_err(|e| format!("{}: {e}", p.display())),
        None => tooltape::read_all_bounded(std::io::stdin().lock(), Path::new("<stdin>"))
            .map_err(|e| format!("stdin: {e}")),
    }
}

/// The trials a command runs, and what is broken in the suite around them.
pub struct Selection {
    pub trials: Vec<Trial>,
    /// `path:line:col: what` per broken file (case, tool, provider table, orphan).
    pub problems: Vec<String>,
    /// How many files `problems` names.
    pub broken_files: usize,
}

impl Selection {
    /// Prints the suite's problems on stderr (after the command's own output).
    pub fn report_problems(&self) {
        if self.problems.is_empty() {
            return;
        }
        eprintln!("\nbroken in the suite:");
        for p in &self.problems {
            eprintln!("{p}");
        }
    }

    /// `; N broken files` for a summary line (empty when nothing is broken).
    pub fn broken_suffix(&self, extra: usize) -> String {
        match self.broken_files + extra {
            0 => String::new(),
            1 => "; 1 broken file".into(),
            n => format!("; {n} broken files"),
        }
    }
}

/// Selects trials by substring of their name; the suite's problems (broken case, tool and
/// provider files, orphans) come with them, for every command to report and fail on.
pub fn select(root: &Path, filter: Option<&str>) -> Selection {
    let d = discover(root);
    let problems = tooltape::suite_problems(root, &d);
    let broken_files = tooltape::broken_file_count(&d, &problems);
    let trials = d
        .trials
        .into_iter()
        .filter(|t| filter.is_none_or(|f| t.name().contains(f)))
        .collect();
    Selection {
        trials,
        problems,
        broken_files,
    }
}

fn replay_matrix(root: &Path, filter: Option<&str>) -> i32 {
    let sel = select(root, filter);
    let trials = &sel.trials;
    if trials.is_empty() {
        sel.report_problems();
        eprintln!(
            "no trials match{}",
            filter.map(|f| format!(" `{f}`")).unwrap_or_default()
        );
        return 1;
    }
    let results = replay_all(root, trials);
    let mut cells = std::collections::BTreeMap::new();
    let mut failed = 0;
    let mut broken_cassettes = 0;
    for (t, r) in trials.iter().zip(&results) {
        let cell = match &r.status {
            Ok((v, _)) => v.label().to_string(),
            Err(ReplayStatus::Missing) => "missing".into(),
            Err(ReplayStatus::Stale(_)) => "stale".into(),
            Err(ReplayStatus::Broken(_)) => {
                broken_cassettes += 1;
                "broken".into()
            }
        };
        if r.failure.is_some() {
            failed += 1;
        }
        cells.insert((t.id().row(), t.provider), cell);
    }
    let providers: Vec<Provider> = Provider::ALL
        .into_iter()
        .filter(|p| trials.iter().any(|t| t.provider == *p))
        .collect();
    let rows: std::collections::BTreeSet<&String> = cells.keys().map(|(r, _)| r).collect();
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(10).max(5);
    let mut header = format!("{:width$}", "trial");
    for p in &providers {
        header.push_str(&format!("  {:>16}", p.slug()));
    }
    outln!("{header}");
    for row in rows {
        let mut line = format!("{row:width$}");
        for p in &providers {
            let c = cells.get(&(row.clone(), *p)).map_or("-", String::as_str);
            line.push_str(&format!("  {c:>16}"));
        }
        outln!("{line}");
    }
    for r in &results {
        if let Some(f) = &r.failure {
            eprintln!("\n{}:\n{f}", r.trial);
        }
    }
    sel.report_problems();
    outln!(
        "\n{} trials: {} passed, {failed} failed{}",
        results.len(),
        results.len() - failed,
        sel.broken_suffix(broken_cassettes)
    );
    i32::from(failed > 0 || sel.broken_files > 0)
}

/// The provider of a cassette: `--provider`, else `cassettes/<provider>/…` in its path, else its trial name.
fn cassette_provider(path: &Path, trial: &str, flag: Option<&str>) -> Result<Provider, String> {
    if let Some(f) = flag {
        return provider_arg(f);
    }
    if let Some(p) = path
        .iter()
        .filter_map(|s| s.to_str())
        .find_map(Provider::from_slug)
    {
        return Ok(p);
    }
    trial
        .split("::")
        .find_map(Provider::from_slug)
        .ok_or_else(|| {
            format!(
                "{}: cannot tell the provider; pass --provider",
                path.display()
            )
        })
}

fn replay_cassette(root: &Path, path: &Path, repeat: usize, provider: Option<&str>) -> i32 {
    let (cassette, _) = match load_cassette(path) {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("{}: no such cassette", path.display());
            return 2;
        }
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let provider = match cassette_provider(path, &cassette.trial, provider) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    // The neutral request configures decoding (text-protocol parser, schema restore): use the
    // owning trial's when the cassette belongs to a known trial.
    let trial = discover(root)
        .trials
        .into_iter()
        .find(|t| t.name() == cassette.trial);
    let repeat = repeat.max(1);
    // A current-thread runtime: one cassette's requests go one after another, and cross-thread
    // wake-ups would dominate the per-interaction figure.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cannot start a tokio runtime: {e}");
            return 2;
        }
    };
    let started = Instant::now();
    let outcomes = rt.block_on(async {
        let server = ReplayServer::start(&cassette).await;
        let endpoint = server.endpoint();
        let client = tooltape::http_client(Duration::from_secs(30));
        let mut last = Vec::new();
        for _ in 0..repeat {
            last.clear();
            for it in &cassette.interactions {
                let stream = it
                    .request
                    .body
                    .get("stream")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                    || it.request.path.contains("streamGenerateContent");
                let neutral = trial.as_ref().map_or_else(
                    || bare_request(stream),
                    |t| ChatRequest {
                        stream,
                        ..t.first_request()
                    },
                );
                let r = tooltape::send(&client, &endpoint, provider, &neutral, &it.request).await;
                last.push(r);
            }
            server.take_received();
        }
        last
    });
    let elapsed = started.elapsed();
    let mut code = 0;
    for (i, r) in outcomes.iter().enumerate() {
        match r {
            Ok((_, Ok(o))) => outln!("{}", outcome_json(o)),
            Ok((_, Err(e))) => {
                eprintln!("{}: interaction {}: {e}", path.display(), i + 1);
                code = 1;
            }
            Err(e) => {
                eprintln!("{}: interaction {}: {e}", path.display(), i + 1);
                code = 1;
            }
        }
    }
    if repeat > 1 {
        let per_s = repeat as f64 / elapsed.as_secs_f64();
        let per_int =
            elapsed.as_secs_f64() * 1e3 / (repeat * cassette.interactions.len().max(1)) as f64;
        outln!(
            "{repeat} trials in {:.3} s: {per_s:.1} trials/s, {per_int:.3} ms per interaction",
            elapsed.as_secs_f64()
        );
    }
    code
}

/// A neutral request with nothing but the stream flag (for decoding a body on its own).
pub fn bare_request(stream: bool) -> ChatRequest {
    ChatRequest {
        model: String::new(),
        messages: Vec::new(),
        tools: Vec::new(),
        hosted: Vec::new(),
        tool_choice: None,
        parallel_tool_calls: None,
        stream,
        max_tokens: None,
        strict: StrictPolicy::Off,
        thinking: None,
    }
}

/// The parse contract's JSON: calls, text and finish reasons, or the error alone.
pub fn outcome_json(o: &Outcome) -> Value {
    serde_json::to_value(OutcomeJson(o)).unwrap_or_default()
}

/// The parse contract's JSON, serialized straight from the outcome: `parse` prints outcomes of
/// thousands of calls, and building a `Value` first copied every argument tree.
struct OutcomeJson<'a>(&'a Outcome);

impl serde::Serialize for OutcomeJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let o = self.0;
        if let Some(e) = &o.error {
            #[derive(serde::Serialize)]
            struct ErrorJson<'a> {
                status: u16,
                #[serde(rename = "type")]
                kind: &'a Option<String>,
                code: &'a Option<String>,
                message: &'a str,
            }
            let mut m = s.serialize_map(Some(1))?;
            m.serialize_entry(
                "error",
                &ErrorJson {
                    status: e.status,
                    kind: &e.kind,
                    code: &e.code,
                    message: &e.message,
                },
            )?;
            return m.end();
        }
        #[derive(serde::Serialize)]
        struct CallJson<'a> {
            id: &'a str,
            name: &'a str,
            arguments: &'a Value,
        }
        let calls: Vec<CallJson<'_>> = o
            .tool_calls
            .iter()
            .map(|c| CallJson {
                id: &c.id,
                name: &c.name,
                arguments: &c.arguments,
            })
            .collect();
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("tool_calls", &calls)?;
        m.serialize_entry("text", &o.text)?;
        m.serialize_entry("finish_reason", &o.finish)?;
        m.serialize_entry("raw_finish_reason", &o.raw_finish)?;
        m.end()
    }
}

/// Prints the parse contract's JSON on one line.
fn print_outcome(o: &Outcome) {
    match serde_json::to_string(&OutcomeJson(o)) {
        Ok(text) => outln!("{text}"),
        Err(_) => outln!("{}", outcome_json(o)),
    }
}

/// Decodes a 2xx stream as it is read, 64 KiB at a time (the decoders give the same outcome for
/// any chunking): the body is never held whole, so a 22 MB stream costs no 22 MB of fresh pages.
fn parse_stream(provider: Provider, file: Option<&Path>, name: &str) -> i32 {
    let mut input: Box<dyn Read> = match file {
        Some(p) => match tooltape::Bounded::open(p) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("{}: cannot read: {e}", p.display());
                return 2;
            }
        },
        None => Box::new(std::io::stdin().lock()),
    };
    let mut decoder = StreamDecoder::new(provider, &bare_request(true));
    let mut buf = vec![0; 1 << 16];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                match file {
                    Some(p) => eprintln!("{}: cannot read: {e}", p.display()),
                    None => eprintln!("stdin: {e}"),
                }
                return 2;
            }
        };
        if let Err(e) = decoder.push(&buf[..n]) {
            eprintln!("{name}: {e}");
            return 2;
        }
    }
    match decoder.finish() {
        Ok(o) => {
            print_outcome(&o);
            0
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            2
        }
    }
}

fn parse(a: &ParseArgs) -> i32 {
    let provider = match provider_arg(&a.provider) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let name = input_name(a.file.as_deref());
    if a.stream && (200..300).contains(&a.status) && provider != Provider::TextProtocol {
        return parse_stream(provider, a.file.as_deref(), &name);
    }
    let body = match read_input(a.file.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    if provider == Provider::TextProtocol {
        let Some(req_path) = &a.request else {
            eprintln!(
                "parse --provider text-protocol needs --request REQ.json (it configures the parser)"
            );
            return 2;
        };
        let req = match tooltape::read_to_string_bounded(req_path) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("{}: cannot read: {e}", req_path.display());
                return 2;
            }
        };
        let (out, code) = text_protocol::cli_parse(&req, &body, a.stream);
        if code == 0 {
            outln!("{out}");
        } else {
            eprintln!("{name}: {out}");
        }
        return code;
    }
    let resp = tooltape::HttpResponse {
        status: a.status,
        headers: Default::default(),
        body,
    };
    match decode(provider, &bare_request(a.stream), &resp) {
        Ok(o) => {
            print_outcome(&o);
            0
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            2
        }
    }
}

fn parse_request(a: &ParseRequestArgs) -> i32 {
    let provider = match provider_arg(&a.provider) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let name = input_name(a.file.as_deref());
    let bytes = match read_input(a.file.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("{name}: not UTF-8");
        return 2;
    };
    let (out, code) = parse_request::cli_parse_request(provider, &text, a.path.as_deref());
    if code == 0 {
        outln!("{out}");
    } else {
        eprintln!("{name}:{out}");
    }
    code
}

fn convert(a: &ConvertArgs) -> i32 {
    let provider = match provider_arg(&a.provider) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let cases_dir = a.case.parent().unwrap_or(Path::new("."));
    let loaded =
        load_providers(cases_dir).and_then(|p| load_case(&a.case, &cases_dir.join("tools"), &p));
    let case = match loaded {
        Ok(c) => std::sync::Arc::new(c),
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let Some(choice) = ChoiceSpec::from_slug(&a.choice) else {
        eprintln!("unknown tool choice `{}`", a.choice);
        return 2;
    };
    let declared: Vec<&str> = case.tools.iter().map(|t| t.name.as_str()).collect();
    if let Some(bad) = choice
        .named_tools()
        .into_iter()
        .find(|n| !declared.contains(&n.as_str()))
    {
        eprintln!(
            "{}: tool choice `{}` names `{bad}`, which is not among the case's tools {declared:?}",
            a.case.display(),
            a.choice
        );
        return 2;
    }
    let mode = if a.stream {
        Mode::Stream
    } else {
        Mode::Buffered
    };
    let trial = Trial {
        case,
        provider,
        choice,
        mode,
    };
    match encode(provider, &trial.first_request()) {
        Ok(enc) => {
            outln!(
                "{}",
                serde_json::to_string_pretty(&enc.request.body).unwrap_or_default()
            );
            for n in &enc.notes {
                eprintln!("note: {n}");
            }
            0
        }
        Err(e) => {
            eprintln!("{e}");
            outln!(
                "{}",
                json!({"error": {"code": e.code, "message": e.message}})
            );
            1
        }
    }
}

/// Runs a simulator on `127.0.0.1:port` until the process ends, printing its base URL
/// (for `tooltape simulate --port N`, to point gateways at it).
async fn serve_forever(port: u16) -> std::io::Result<()> {
    let sim = tooltape::Simulator::start_on(port, tooltape::SimConfig::default()).await?;
    outln!("{}", sim.base_url());
    std::future::pending::<()>().await;
    drop(sim);
    Ok(())
}
