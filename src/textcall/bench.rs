//! Parser throughput (placeholder).
pub fn bench(_report: &mut crate::bench::Report) {}
