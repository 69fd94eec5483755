//! FNV-1a (64-bit), the crate's one non-cryptographic hash: the simulator's deterministic ids
//! and the schema walkers' hash sets (fast for short keys; those keys are not attacker-chosen
//! hash-flooding input in a local tool).

use std::hash::Hasher;

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a as a [`Hasher`], for `HashSet<_, BuildHasherDefault<Fnv>>`.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(OFFSET_BASIS)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(PRIME);
        }
        self.0 = h;
    }
}

/// The hash of `bytes` in one go.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = Fnv::default();
    h.write(bytes);
    h.finish()
}
