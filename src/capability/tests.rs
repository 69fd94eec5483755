use super::*;

#[test]
fn variant_rejection_needs_the_type_and_not_supported() {
    assert!(is_variant_rejection(
        400,
        "Tool type 'web_search' is not supported with this model.",
        "web_search"
    ));
    assert!(!is_variant_rejection(400, "Invalid schema", "web_search"));
    assert!(!is_variant_rejection(
        500,
        "web_search not supported",
        "web_search"
    ));
}
