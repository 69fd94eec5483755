//! The sweep's cases load, one per tool, each forcing its tool.

#[test]
fn every_tool_gets_a_forced_case_that_loads() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let cases = crate::engine::cases_of(&crate::case::discover(root));
    let sweep = super::Sweep::write(&cases).unwrap();
    let tools: std::collections::BTreeSet<&str> = (cases.iter())
        .flat_map(|c| c.tools.iter())
        .filter(|t| super::swept(t))
        .map(|t| t.name.as_str())
        .collect();
    assert!(tools.len() > 200, "{}", tools.len());
    assert_eq!(sweep.tools, tools.len());
    let d = crate::case::discover_with(root, Some(sweep.dir()));
    assert!(d.broken.is_empty(), "{:?}", d.broken.first());
    let swept: Vec<_> = crate::engine::cases_of(&d)
        .into_iter()
        .filter(|c| c.name.starts_with(super::SWEEP_PREFIX))
        .collect();
    assert_eq!(swept.len(), tools.len());
    for c in &swept {
        assert_eq!(c.tools.len(), 1);
        assert_eq!(c.choices[0].slug(), format!("forced-{}", c.tools[0].name));
    }
    let dir = sweep.dir().to_path_buf();
    drop(sweep);
    assert!(!dir.exists(), "removed when dropped");
}
