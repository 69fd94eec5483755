//! Splitting a matrix run over N machines, deterministically: each suite is a piece, a suite
//! larger than a shard's fair share is cut into pieces at case boundaries (a case's trials stay
//! together, so its stream and buffered trials are still compared), and the pieces go, largest
//! first, to the least loaded shard. Every machine computes the same plan from the same
//! version, profiles, cases and filter, and runs only its own pieces.

use serde::{Deserialize, Serialize};

/// `--shard K/N`: this machine runs part K (from 1) of N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    /// Reads `K/N` (1 ≤ K ≤ N).
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {s}: expected K/N with 1 <= K <= N (`1/4`)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let n: usize = n.trim().parse().map_err(|_| bad())?;
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }
}

/// A contiguous range of one system's trials (`from..to`, in the order the suite lists them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Piece {
    pub system: String,
    pub from: usize,
    pub to: usize,
}

/// What a shard's part says about itself: which shard, and which pieces it ran.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    pub k: usize,
    pub n: usize,
    pub pieces: Vec<Piece>,
}

/// The pieces of each of `n` shards. `suites`: each system with its trials' cases in order
/// (one entry per trial: the case it belongs to); cuts fall only where the case changes.
pub fn plan(suites: &[(String, Vec<String>)], n: usize) -> Vec<Vec<Piece>> {
    let total: usize = suites.iter().map(|(_, t)| t.len()).sum();
    let share = total.div_ceil(n.max(1)).max(1);
    let mut pieces: Vec<Piece> = Vec::new();
    for (system, cases) in suites {
        pieces.extend(cut(system, cases, share));
    }
    // Largest first; ties keep plan order (a stable sort). Each to the least loaded shard, the
    // lowest-numbered on a tie.
    let mut order: Vec<usize> = (0..pieces.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(pieces[i].to - pieces[i].from));
    let mut load = vec![0usize; n.max(1)];
    let mut owner = vec![0usize; pieces.len()];
    for i in order {
        let shard = (0..load.len()).min_by_key(|&s| (load[s], s)).unwrap_or(0);
        load[shard] += pieces[i].to - pieces[i].from;
        owner[i] = shard;
    }
    let mut out = vec![Vec::new(); n.max(1)];
    for (i, p) in pieces.into_iter().enumerate() {
        out[owner[i]].push(p);
    }
    out
}

/// One suite cut into pieces of about `share` trials at case boundaries (one piece when it is
/// no larger than `share`; an empty suite is one empty piece, so its set-up is still tried).
fn cut(system: &str, cases: &[String], share: usize) -> Vec<Piece> {
    let piece = |from, to| Piece {
        system: system.to_string(),
        from,
        to,
    };
    if cases.len() <= share {
        return vec![piece(0, cases.len())];
    }
    let count = cases.len().div_ceil(share);
    let target = cases.len().div_ceil(count);
    let mut out = Vec::new();
    let mut from = 0;
    for i in 1..cases.len() {
        if i - from >= target && cases[i] != cases[i - 1] {
            out.push(piece(from, i));
            from = i;
        }
    }
    out.push(piece(from, cases.len()));
    out
}
