//! The support cache: per model, forgotten after its TTL.

use std::time::{Duration, Instant};

use super::SupportCache;
use crate::model::Provider;

#[test]
fn cache_forgets_unsupported_after_ttl() {
    let cache = SupportCache::new(Duration::from_secs(900));
    let t0 = Instant::now();
    let p = Provider::OpenaiResponses;
    assert_eq!(cache.first_variant(p, "gpt-4.1", t0), Some("web_search"));
    cache.mark_unsupported(p, "gpt-4.1", "web_search", t0);
    assert_eq!(
        cache.first_variant(p, "gpt-4.1", t0 + Duration::from_secs(899)),
        Some("web_search_preview")
    );
    assert_eq!(
        cache.first_variant(p, "other", t0),
        Some("web_search"),
        "per model"
    );
    assert_eq!(
        cache.first_variant(p, "gpt-4.1", t0 + Duration::from_secs(900)),
        Some("web_search"),
        "retried after 15 min"
    );
    cache.mark_unsupported(p, "m", "web_search", t0);
    cache.mark_unsupported(p, "m", "web_search_preview", t0);
    assert_eq!(
        cache.first_variant(p, "m", t0),
        None,
        "both variants unsupported: the model is"
    );
}
