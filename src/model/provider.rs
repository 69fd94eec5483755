//! The closed set of wire formats, [`Provider`]: slugs, and the environment and credential facts
//! transports read (`key_vars`, `base_url_var`, `auth_header`).

use std::fmt;

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Provider {
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
    Gemini,
    TextProtocol,
}

impl Provider {
    pub const ALL: [Provider; 5] = [
        Provider::OpenaiChat,
        Provider::OpenaiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::TextProtocol,
    ];

    /// The name used in case files, trial names, cassette paths and the CLI.
    pub fn slug(self) -> &'static str {
        match self {
            Provider::OpenaiChat => "openai-chat",
            Provider::OpenaiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::TextProtocol => "text-protocol",
        }
    }

    pub fn from_slug(s: &str) -> Option<Provider> {
        Provider::ALL.into_iter().find(|p| p.slug() == s)
    }

    /// Environment variables that may hold the API key, in order of preference.
    pub fn key_vars(self) -> &'static [&'static str] {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                &["OPENAI_API_KEY"]
            }
            Provider::Anthropic => &["ANTHROPIC_API_KEY"],
            Provider::Gemini => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        }
    }

    /// Environment variable that overrides the base URL.
    pub fn base_url_var(self) -> &'static str {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                "OPENAI_BASE_URL"
            }
            Provider::Anthropic => "ANTHROPIC_BASE_URL",
            Provider::Gemini => "GEMINI_BASE_URL",
        }
    }

    /// The credential header for a key (added by transports, never by encoders).
    pub fn auth_header(self, key: &str) -> (&'static str, String) {
        match self {
            Provider::OpenaiChat | Provider::OpenaiResponses | Provider::TextProtocol => {
                ("authorization", format!("Bearer {key}"))
            }
            Provider::Anthropic => ("x-api-key", key.to_string()),
            Provider::Gemini => ("x-goog-api-key", key.to_string()),
        }
    }
}

/// Providers are read by their slug; an unknown one lists the valid slugs. The error is raised
/// inside the visitor, so a deserializer that tracks positions reports the value's own.
impl<'de> serde::Deserialize<'de> for Provider {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Slug;
        impl serde::de::Visitor<'_> for Slug {
            type Value = Provider;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Provider, E> {
                Provider::from_slug(s).ok_or_else(|| {
                    let all: Vec<&str> = Provider::ALL.iter().map(|p| p.slug()).collect();
                    E::custom(format!(
                        "unknown provider `{s}`; expected one of {}",
                        all.join(", ")
                    ))
                })
            }
        }
        d.deserialize_str(Slug)
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}
