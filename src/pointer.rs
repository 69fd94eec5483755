//! JSON pointers (RFC 6901): built token by token with escaping, kept as a lazy chain of
//! borrowed tokens while a walker recurses, and split back into tokens.

/// Appends one reference token to a JSON pointer (RFC 6901 escaping).
pub(crate) fn push(ptr: &str, token: &str) -> String {
    let mut out = String::with_capacity(ptr.len() + token.len() + 1);
    out.push_str(ptr);
    push_token(&mut out, token);
    out
}

/// Appends `/` and one reference token, escaped, to a pointer being built.
fn push_token(out: &mut String, token: &str) {
    out.push('/');
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            _ => out.push(c),
        }
    }
}

/// A JSON pointer kept as a chain of borrowed tokens, one per walker frame, and rendered only
/// when a violation is reported. Walkers visit every node but report few: building each node's
/// pointer string up front cost an allocation and a copy of the whole path per node.
#[derive(Clone, Copy, Debug)]
pub enum Ptr<'a> {
    Root,
    Key(&'a Ptr<'a>, &'a str),
    Index(&'a Ptr<'a>, usize),
}

impl Ptr<'_> {
    /// The pointer as a string (RFC 6901 escaping), as [`push`] would have built it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Ptr::Root => {}
            Ptr::Key(parent, token) => {
                parent.write(out);
                push_token(out, token);
            }
            Ptr::Index(parent, i) => {
                parent.write(out);
                push_token(out, &i.to_string());
            }
        }
    }
}

/// Splits a JSON pointer into unescaped tokens (`""` → none).
pub(crate) fn tokens(ptr: &str) -> Vec<String> {
    if ptr.is_empty() {
        return Vec::new();
    }
    ptr.split('/')
        .skip(1)
        .map(|t| t.replace("~1", "/").replace("~0", "~"))
        .collect()
}
