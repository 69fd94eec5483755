//! The skeleton loads as written.

#[test]
fn the_skeleton_loads_as_written() {
    let dir = std::env::temp_dir().join(format!("tooltape-server-skeleton-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("servers")).unwrap();
    std::fs::write(
        dir.join("servers/ours.toml"),
        super::skeleton("ours", "ours"),
    )
    .unwrap();
    let p = crate::server::load_server(&dir, "ours").unwrap();
    assert_eq!(p.routes().len(), 1);
    assert!(p.profile.start.is_none() && p.profile.install.is_none());
    std::fs::remove_dir_all(&dir).unwrap();
}
