//! The cases a model server cannot play.

use super::scripted;

#[test]
fn only_cases_scripted_for_the_simulator_are_left_out() {
    let discovery = crate::case::discover(std::path::Path::new(env!("CARGO_MANIFEST_DIR")));
    let cases = crate::engine::cases_of(&discovery);
    let why = |name: &str| scripted(cases.iter().find(|c| c.name == name).unwrap());
    assert_eq!(why("weather"), None);
    assert_eq!(why("parallel"), None);
    assert_eq!(why("c13_stream_cut"), Some("its stream fails midway"));
    let left: Vec<_> = cases.iter().filter(|c| scripted(c).is_some()).collect();
    assert!(
        left.len() < cases.len() / 2,
        "{} of {}",
        left.len(),
        cases.len()
    );
}
