use super::*;

#[test]
fn percentiles_are_nearest_rank() {
    let s: Vec<f64> = (1..=100).map(f64::from).collect();
    assert_eq!(percentile(&s, 50.0), Some(50.0));
    assert_eq!(percentile(&s, 99.0), Some(99.0));
    assert_eq!(percentile(&[3.0, 1.0, 2.0], 50.0), Some(2.0));
    assert_eq!(percentile(&[7.0], 99.0), Some(7.0));
    assert_eq!(percentile(&[], 50.0), None);
}

#[test]
fn a_region_body_without_a_final_newline_gets_one() {
    let text = "a\n<!-- compare:begin -->\nold\n<!-- compare:end -->\nb\n";
    assert_eq!(
        replace_region(text, "new").as_deref(),
        Ok("a\n<!-- compare:begin -->\nnew\n<!-- compare:end -->\nb\n")
    );
}

#[test]
fn reversed_or_repeated_markers_are_refused() {
    let reversed = "<!-- compare:end -->\n<!-- compare:begin -->\n";
    assert!(replace_region(reversed, "x").is_err_and(|e| e.contains("before")));
    let twice = "<!-- compare:begin -->\n<!-- compare:end -->\n<!-- compare:begin -->\n";
    assert!(replace_region(twice, "x").is_err_and(|e| e.contains("once")));
}
