//! Errors that point at a place in a file and print as `path:line:col: message`.

use std::fmt;
use std::path::PathBuf;

/// A problem at a position in a file (case, tool, cassette, imported cassette).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
}

impl Located {
    /// A problem with the file as a whole, reported at its first character.
    pub fn at_start(path: impl Into<PathBuf>, message: impl Into<String>) -> Located {
        Located {
            path: path.into(),
            line: 1,
            column: 1,
            message: message.into(),
        }
    }

    /// A problem at byte `offset` of `source`, the text of the file at `path`.
    pub fn at_offset(
        path: impl Into<PathBuf>,
        source: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Located {
        let (line, column) = line_col(source, offset);
        Located {
            path: path.into(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// 1-based line and column of a byte offset in `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..text.floor_char_boundary(offset)];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

impl fmt::Display for Located {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.path.display(),
            self.line,
            self.column,
            self.message
        )
    }
}

impl std::error::Error for Located {}
