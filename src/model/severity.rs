//! How much a finding matters: [`Severity`], shared by drift reports and the engine's findings.

use serde::Serialize;

/// How much a finding matters, least first (drift reports and gateway findings alike; a list
/// shown most severe first sorts by `Reverse`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Cosmetic,
    Behaviour,
    Breaking,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Cosmetic => "cosmetic",
            Severity::Behaviour => "behaviour",
            Severity::Breaking => "breaking",
        }
    }
}
