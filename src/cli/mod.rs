//! The `tooltape` command line: argument definitions and dispatch to the library.

// The output macros first: `out!`/`outln!` are in scope for every module declared after it.
#[macro_use]
mod out;

mod cases;
mod client;
mod convert;
mod drift;
mod exit;
mod gateway;
mod import_vcr;
mod init;
mod inject;
mod matrix;
mod mcp;
mod parse;
mod parse_request;
mod proxy;
mod record;
mod releases;
mod replay;
mod report;
mod schema;
mod select;
mod server;
mod signals;
mod simulate;
mod status;
mod suite;
mod text_protocol;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "tooltape",
    version,
    about = "Record-and-replay conformance suite for LLM tool calling",
    after_help = exit::HELP
)]
pub struct Cli {
    /// Project root (holds cases/ and cassettes/).
    #[arg(long, global = true, default_value = ".")]
    pub root: PathBuf,
    #[command(flatten)]
    pub corpus: cases::CorpusArgs,
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
    Scan(status::ScanArgs),
    /// One line per trial: ok, missing, stale (why), synthetic, imported; then orphaned files.
    Status(status::StatusArgs),
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
    /// The built-in case corpus: `cases export DIR` writes it out.
    Cases(cases::CasesArgs),
    /// Start testing your own system: `init gateway NAME` writes a commented profile.
    Init(init::InitArgs),
    /// Print the text protocol's injected developer instructions for a Responses-shaped request.
    Inject {
        /// The request JSON; standard input when absent.
        file: Option<PathBuf>,
    },
    /// Run the case suite through an LLM gateway (gateways/NAME.toml) and print its matrix.
    Gateway(gateway::GatewayArgs),
    /// Run the case suite through a client library (clients/NAME.toml) by its driver.
    Client(client::ClientArgs),
    /// Run the case suite against a server that runs the model (servers/NAME.toml: llama.cpp,
    /// vLLM), judged on the tool calls it produces, with its scores.
    Server(server::ServerArgs),
    /// Run gateway and client suites into one document (`--shard K/N`, `merge`, `diff`).
    Matrix(matrix::MatrixArgs),
    /// Run the reference gateway on loopback until interrupted: four inbound formats, each model
    /// alias routed to an upstream provider (see `gateways/tooltape.toml`).
    Proxy(proxy::ProxyArgs),
    /// List an MCP server's tools (`-- COMMAND…` or `--url URL`) and say, per tool and target,
    /// whether it is sent as written, after a lossless or lossy rewrite, or refused.
    Mcp(mcp::McpArgs),
    /// Run the provider simulator on loopback until interrupted (point a gateway at it).
    Simulate {
        /// Port on 127.0.0.1 (0: any free port).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
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
    /// Chat only: mistral, groq, openrouter, together, hf-router or openai (detected if absent).
    #[arg(long)]
    pub dialect: Option<String>,
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
    #[arg(long, group = "refresh")]
    pub missing: bool,
    /// Re-record trials whose cassette is stale.
    #[arg(long, group = "refresh")]
    pub stale: bool,
    /// Re-record every selected trial.
    #[arg(long, group = "refresh")]
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

/// Runs the command; returns the process exit code, the one place a result becomes one.
pub fn run(cli: &Cli) -> i32 {
    let code = exit::code(dispatch(cli));
    signals::wait_if_stopping();
    code
}

fn dispatch(cli: &Cli) -> exit::CommandResult {
    let root = cli.root.as_path();
    let corpus = cases::Corpus {
        root,
        cases: cli.corpus.cases.as_deref(),
    };
    match &cli.command {
        Command::Replay(a) => replay::run(corpus, a),
        Command::Parse(a) => parse::parse(a),
        Command::ParseRequest(a) => parse_request::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Record(a) => record::run(corpus, a),
        Command::Simulate { port } => simulate::run(*port),
        Command::Cases(a) => cases::run(a),
        Command::Init(a) => init::run(root, a),
        Command::Proxy(a) => proxy::run(a),
        Command::Scan(a) => status::run_scan(root, a.path.as_deref()),
        Command::Status(a) => status::run(corpus, a.filter.as_deref()),
        Command::ImportVcr(a) => import_vcr::run(a),
        Command::Drift(a) => drift::run(corpus, a),
        Command::Report(a) => report::run(corpus, a),
        Command::Gateway(a) => signals::stopping_on_signals(|| gateway::run(corpus, a)),
        Command::Client(a) => client::run(corpus, a),
        Command::Server(a) => signals::stopping_on_signals(|| server::run(corpus, a)),
        Command::Matrix(a) => signals::stopping_on_signals(|| matrix::run(corpus, a)),
        Command::Mcp(a) => mcp::run(a, corpus.cases),
        Command::Schema { action } => schema::run(action),
        Command::Inject { file } => inject::run(file.as_deref()),
    }
}
