//! Suggestions for unknown tool names: the allowed name nearest to the one the model wrote.

/// Names are compared on at most this many normalized chars (suggestions need no more).
const MAX: usize = 64;

/// The names a call may use, with their normalized forms (computed once per parser config).
#[derive(Clone, Debug, Default)]
pub(super) struct Names {
    names: Vec<String>,
    normal: Vec<Vec<char>>,
}

impl Names {
    pub(super) fn new(names: &[String]) -> Names {
        let normal = names
            .iter()
            .map(|n| {
                let mut buf = ['\0'; MAX];
                normalize(n, &mut buf).to_vec()
            })
            .collect();
        Names {
            names: names.to_vec(),
            normal,
        }
    }

    /// The allowed name nearest to `name`: equal after normalization (case, `-`, `_`, `.`), else
    /// the smallest edit distance if it is at most a third of the longer name (at least 2).
    pub(super) fn nearest(&self, name: &str) -> Option<&str> {
        let mut buf = ['\0'; MAX];
        let n = normalize(name, &mut buf);
        let mut best: Option<(usize, &str)> = None;
        for (a, na) in self.names.iter().zip(&self.normal) {
            if na.as_slice() == n {
                return Some(a);
            }
            let d = levenshtein(n, na);
            let limit = (n.len().max(na.len()) / 3).max(2);
            if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, a));
            }
        }
        best.map(|(_, a)| a)
    }
}

/// `s` lower-cased, without `-`, `_` and `.`, written into `buf` (cut at its length).
fn normalize<'b>(s: &str, buf: &'b mut [char; MAX]) -> &'b [char] {
    let mut len = 0;
    let mut put = |c: char| {
        if let Some(slot) = buf.get_mut(len) {
            *slot = c;
            len += 1;
        }
    };
    for c in s.chars().filter(|c| !matches!(c, '-' | '_' | '.')) {
        if c.is_ascii() {
            // The usual name: no case-mapping tables.
            put(c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(&mut put);
        }
    }
    buf.get(..len).unwrap_or_default()
}

/// Edit distance; both sides are at most `MAX` chars, so a row fits in bytes.
fn levenshtein(a: &[char], b: &[char]) -> usize {
    let mut rows = [[0u8; MAX + 1]; 2];
    let [mut prev, mut cur] = rows.each_mut();
    for (j, p) in (0u8..).zip(prev.iter_mut()) {
        *p = j;
    }
    for (i, ca) in (1u8..).zip(a) {
        cur[0] = i;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + u8::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        // The rows trade places by reference (swapping the arrays would copy them).
        std::mem::swap(&mut prev, &mut cur);
    }
    usize::from(prev[b.len()])
}
