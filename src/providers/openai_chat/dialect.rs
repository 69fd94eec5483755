//! The OpenAI-compatible servers' dialects of a Chat Completions request (Mistral, Groq,
//! OpenRouter, Together, Hugging Face's router): the tool choices and the request fields each
//! documents beyond OpenAI's, and detection from a request body. Pure data; the decoder reads
//! it (`request.rs`). Sources per dialect: docs/wire-formats.md.

use serde_json::Value;

use crate::model::ToolChoice;

/// Whose Chat Completions a request is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    Mistral,
    Groq,
    OpenRouter,
    Together,
    HfRouter,
}

impl Dialect {
    pub const ALL: [Dialect; 6] = [
        Dialect::OpenAi,
        Dialect::Mistral,
        Dialect::Groq,
        Dialect::OpenRouter,
        Dialect::Together,
        Dialect::HfRouter,
    ];

    /// The `--dialect` spelling.
    pub fn slug(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::Mistral => "mistral",
            Dialect::Groq => "groq",
            Dialect::OpenRouter => "openrouter",
            Dialect::Together => "together",
            Dialect::HfRouter => "hf-router",
        }
    }

    pub fn from_slug(s: &str) -> Option<Dialect> {
        Dialect::ALL.into_iter().find(|d| d.slug() == s)
    }

    /// Request fields the server documents beyond OpenAI's: kept as not-carried extras (OpenAI
    /// itself would not know them: unknown there).
    pub(crate) fn fields(self) -> &'static [&'static str] {
        match self {
            Dialect::OpenAi => &[],
            Dialect::Mistral => &["random_seed", "safe_prompt", "prompt_mode"],
            Dialect::Groq => &[
                "reasoning_format",
                "include_reasoning",
                "search_settings",
                "documents",
                "citation_options",
                "compound_custom",
                "disable_tool_validation",
                "exclude_domains",
                "include_domains",
            ],
            Dialect::OpenRouter => &[
                "models",
                "route",
                "provider",
                "transforms",
                "plugins",
                "reasoning",
                "usage",
                "top_k",
                "repetition_penalty",
                "min_p",
                "top_a",
                "debug",
            ],
            Dialect::Together => &[
                "top_k",
                "repetition_penalty",
                "min_p",
                "echo",
                "safety_model",
                "context_length_exceeded_behavior",
                "reasoning",
            ],
            Dialect::HfRouter => &["top_k", "repetition_penalty", "tool_prompt"],
        }
    }

    /// A `tool_choice` string this server accepts beyond OpenAI's `auto`/`none`/`required`.
    pub(crate) fn choice(self, s: &str) -> Option<ToolChoice> {
        match (self, s) {
            // Mistral: `any` makes the model call a tool, as `required` does.
            (Dialect::Mistral, "any") => Some(ToolChoice::Required),
            (_, "auto" | "none" | "required") => None,
            // Hugging Face's TGI (text-generation-inference `router/src/lib.rs`,
            // `ToolTypeDeserializer`): any other string is the name of the function to call.
            (Dialect::HfRouter, name) if !name.is_empty() => {
                Some(ToolChoice::Forced(name.to_string()))
            }
            _ => None,
        }
    }

    /// The dialect a request is written in, from what only that server documents: Mistral's
    /// `safe_prompt`/`random_seed`/`prompt_mode` or `tool_choice: "any"`; OpenRouter's routing
    /// fields (`models`, `provider`, `route`, `transforms`, `plugins`); Groq's
    /// `reasoning_format`, `search_settings`, `compound_custom`, `documents`; Together's
    /// `safety_model`, `context_length_exceeded_behavior`, `echo`; the router's `tool_prompt`
    /// (TGI's) or its `org/model:provider` model spelling. OpenAI when none of these is present.
    pub fn detect(body: &Value) -> Dialect {
        // One pass over the body's few keys (every proxied Chat request is detected) rather
        // than a hashed lookup per documented field; the first dialect in this order wins.
        const ORDER: [Dialect; 4] = [
            Dialect::Mistral,
            Dialect::OpenRouter,
            Dialect::Groq,
            Dialect::Together,
        ];
        let mut shown = [false; 4];
        for key in body.as_object().into_iter().flat_map(|o| o.keys()) {
            let at = match key.as_str() {
                "safe_prompt" | "random_seed" | "prompt_mode" => 0,
                "models" | "provider" | "route" | "transforms" | "plugins" => 1,
                "reasoning_format" | "search_settings" | "compound_custom" | "documents"
                | "citation_options" => 2,
                "safety_model" | "context_length_exceeded_behavior" | "echo" => 3,
                _ => continue,
            };
            shown[at] = true;
        }
        shown[0] |= body.get("tool_choice").and_then(Value::as_str) == Some("any");
        if let Some(at) = shown.iter().position(|&s| s) {
            return ORDER[at];
        }
        if body.get("tool_prompt").is_some() {
            return Dialect::HfRouter;
        }
        let model = body.get("model").and_then(Value::as_str).unwrap_or("");
        if model
            .split_once('/')
            .is_some_and(|(_, rest)| rest.contains(':'))
        {
            return Dialect::HfRouter;
        }
        Dialect::OpenAi
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.slug())
    }
}
