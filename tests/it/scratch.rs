//! Paths the tests share: the repository, the built binary, and scratch folders that remove
//! themselves — empty, or a project root holding `cases/providers.toml`, every tool and the
//! chosen cases copied from the repository (the mutant suites' cases narrowed to the routes
//! that express them).

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::Path;

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The built `tooltape` binary.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tooltape")
}

/// A folder `tooltape-TAG-XXXXXX` in the temporary directory, removed with everything in it when
/// dropped — unless the test is failing (panicking): then it is kept and named on stderr, to be
/// looked at. It reads as the folder's [`Path`] (`dir.join(…)`, `&dir` where a `&Path` is asked).
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    /// An empty scratch folder.
    pub fn new(tag: &str) -> Scratch {
        let dir = tempfile::Builder::new()
            .prefix(&format!("tooltape-{tag}-"))
            .tempdir()
            .expect("a folder in the temporary directory");
        Scratch(dir)
    }

    /// A scratch project root with the provider table, every tool, and `cases` (names without
    /// `.toml`).
    pub fn with_cases(tag: &str, cases: &[&str]) -> Scratch {
        let root = Scratch::new(tag);
        std::fs::create_dir_all(root.join("cases/tools")).unwrap();
        let src = repo().join("cases");
        std::fs::copy(
            src.join("providers.toml"),
            root.join("cases/providers.toml"),
        )
        .unwrap();
        for e in std::fs::read_dir(src.join("tools")).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, root.join("cases/tools").join(p.file_name().unwrap())).unwrap();
        }
        for c in cases {
            let f = format!("{c}.toml");
            std::fs::copy(src.join(&f), root.join("cases").join(&f)).unwrap();
        }
        root
    }
}

/// Corpus cases the mutant suites run on the routes that express them only: hosted search beside
/// a function (class 23) where a target has hosted search; a name over 64 characters (class 24)
/// where it is expressible (Gemini's 128), forced, so that the model calls it.
pub const HOSTED: &str = "c23_hosted_search_beside_function";
pub const LONG_NAME: &str = "c24_mcp_name_over_64";
/// Class 33: constraints at once (an allowed subset or a named tool, parallel off), on the
/// formats with a parallel switch (Gemini and the text protocol refuse it).
pub const CONSTRAINTS: &str = "c33_constraints_kept";
/// Class 28: deferred tools beside Anthropic's regex tool search (Anthropic only).
pub const SEARCH_REGEX: &str = "c28_anthropic_regex_search";
/// Class 28: deferred tools beside Responses' hosted tool search (Responses only).
pub const SEARCH_HOSTED: &str = "c28_responses_tool_search";
/// Class 29: a namespaced function called and replayed with its namespace (Responses only).
pub const NAMESPACED: &str = "c29_namespaced_call";
/// Class 30: a tool only code may call, called by the model's code (Anthropic's runner, and
/// Responses'), each on its own API only.
pub const PROGRAM_ANTHROPIC: &str = "c30_anthropic_programmatic";
pub const PROGRAM_RESPONSES: &str = "c30_responses_programmatic";
/// Class 34: a model server's reasoning text on Chat (vLLM `reasoning`, llama.cpp
/// `reasoning_content`), to be sent back on the assistant message (Chat only).
pub const VLLM: &str = "c34_vllm_reasoning_kept";
pub const LLAMA_CPP: &str = "c34_llama_cpp_reasoning_content_kept";
/// Class 35: a tool's results through an MCP server (client mode's MCP routes; elsewhere plain
/// rounds): `structuredContent` with a `null` argument, an image, `isError`, a network `$ref`.
pub const MCP_STRUCTURED: &str = "c35_mcp_structured_result";
pub const MCP_IMAGE: &str = "c35_mcp_image_result";
pub const MCP_ERROR: &str = "c35_mcp_error_result";
pub const MCP_REMOTE_REF: &str = "c35_mcp_remote_ref";
/// (case, its `providers`, its `choices` where narrowed).
pub const NARROWED: [(&str, &str, Option<&str>); 8] = [
    (
        HOSTED,
        r#"["openai-responses", "anthropic", "gemini"]"#,
        None,
    ),
    (
        LONG_NAME,
        r#"["gemini"]"#,
        Some(
            r#"["forced-mcp__github_enterprise_server__list_repository_pull_request_review_comments_by_author"]"#,
        ),
    ),
    (
        CONSTRAINTS,
        r#"["openai-chat", "openai-responses", "anthropic"]"#,
        None,
    ),
    (SEARCH_REGEX, r#"["anthropic"]"#, None),
    (SEARCH_HOSTED, r#"["openai-responses"]"#, None),
    (NAMESPACED, r#"["openai-responses"]"#, None),
    (PROGRAM_ANTHROPIC, r#"["anthropic"]"#, None),
    (PROGRAM_RESPONSES, r#"["openai-responses"]"#, None),
];

impl Scratch {
    /// Copies each [`NARROWED`] case into this root's `cases/`, with `providers` (and `choices`)
    /// narrowed. Its expectations name the other providers too: the copy keeps the request only.
    pub fn with_narrowed(&self) {
        for (case, providers, choices) in NARROWED {
            let text = std::fs::read_to_string(repo().join(format!("cases/{case}.toml"))).unwrap();
            let request = text.split("\n[[expect]]").next().unwrap();
            let (first, rest) = request.split_once('\n').unwrap();
            let mut narrowed = format!("{first}\nproviders = {providers}\n{rest}");
            if let Some(choices) = choices {
                let line = narrowed
                    .lines()
                    .find(|l| l.starts_with("choices = "))
                    .unwrap();
                narrowed = narrowed.replace(line, &format!("choices = {choices}"));
            }
            std::fs::write(self.join(format!("cases/{case}.toml")), narrowed).unwrap();
        }
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<OsStr> for Scratch {
    fn as_ref(&self) -> &OsStr {
        self.0.path().as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.disable_cleanup(true);
            eprintln!("kept {} (the test failed)", self.0.path().display());
        }
    }
}

/// The trials of `system` through the engine against `upstream` (`url`: a gateway already
/// running there; `None`: the system starts itself), its work folder in `work_in`: the results.
pub async fn run_through<S: tooltape::engine::System>(
    system: std::sync::Arc<S>,
    trials: Vec<tooltape::engine::RoutedTrial>,
    upstream: &std::sync::Arc<tooltape::engine::Upstream>,
    url: Option<String>,
    work_in: &Path,
) -> Vec<tooltape::engine::TrialResult> {
    let options = tooltape::engine::RunOptions {
        url,
        work_in: Some(work_in.to_path_buf()),
        ..Default::default()
    };
    tooltape::engine::run_on(system, trials, upstream, &options, &|_| {})
        .await
        .unwrap_or_else(|e| panic!("{}", e.message))
        .results
}
