//! Installs: once, locked, and used only when complete.

use std::path::Path;

use super::{COMPLETE, Install, install_into};

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tooltape-install-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An install that counts its runs in `runs` (outside the install folder), takes a while, and
/// then makes its check path.
fn counting(runs: &Path) -> Install {
    Install {
        check: "bin/tool".into(),
        command: format!(
            "echo run >> '{}' && sleep 0.5 && mkdir -p bin && touch bin/tool",
            runs.display()
        ),
    }
}

fn runs(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[test]
fn two_runs_at_once_install_once_and_both_find_it_complete() {
    let root = scratch("race");
    let counter = root.join("runs");
    let dir = root.join("pkg-1.0");
    let install = counting(&counter);
    let notes = std::sync::Mutex::new(Vec::new());
    let note = |n: &str| notes.lock().unwrap().push(n.to_string());
    let together = std::sync::Barrier::new(2);
    let one = || {
        together.wait();
        install_into("pkg", &dir, &install, &note)
    };
    let ran: Vec<bool> = std::thread::scope(|s| {
        let a = s.spawn(one);
        let b = s.spawn(one);
        [a.join().unwrap(), b.join().unwrap()]
            .into_iter()
            .map(Result::unwrap)
            .collect()
    });
    assert_eq!(runs(&counter), 1, "the command ran once");
    assert_eq!(ran.iter().filter(|r| **r).count(), 1, "{ran:?}");
    let notes = notes.into_inner().unwrap();
    assert!(
        notes.iter().any(|n| n.starts_with("installing pkg into")),
        "{notes:?}"
    );
    assert!(dir.join(COMPLETE).is_file() && dir.join("bin/tool").is_file());
    assert!(
        !install_into("pkg", &dir, &install, &|_| {}).unwrap(),
        "warm: nothing runs"
    );
    assert_eq!(runs(&counter), 1);
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_half_made_install_is_removed_and_installed_again() {
    let root = scratch("half");
    let counter = root.join("runs");
    let dir = root.join("pkg-1.0");
    // A run stopped after the check path appeared but before the install finished.
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join("bin/tool"), "").unwrap();
    std::fs::write(dir.join("stale"), "").unwrap();
    assert!(install_into("pkg", &dir, &counting(&counter), &|_| {}).unwrap());
    assert_eq!(runs(&counter), 1);
    assert!(
        !dir.join("stale").exists(),
        "the half-made folder was removed first"
    );
    assert!(dir.join(COMPLETE).is_file());
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn a_failed_install_is_never_complete_and_names_its_log() {
    let root = scratch("fail");
    let dir = root.join("pkg-1.0");
    let failing = Install {
        check: "bin/tool".into(),
        command: "mkdir -p bin && touch bin/tool && echo no such release >&2 && exit 3".into(),
    };
    let err = install_into("pkg", &dir, &failing, &|_| {}).unwrap_err();
    assert!(
        err.contains("installing pkg into") && err.contains("no such release"),
        "{err}"
    );
    assert!(!dir.join(COMPLETE).exists());
    assert!(
        install_into("pkg", &dir, &failing, &|_| {}).is_err(),
        "not taken as installed next time"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

/// A long install says how long it has run and its log's last line while it runs.
#[test]
fn a_long_install_says_how_far_it_got() {
    let root = scratch("progress");
    let log = root.join("install.log");
    let out = std::fs::File::create(&log).unwrap();
    let child = std::process::Command::new("sh")
        .args([
            "-c",
            "echo '[ 40%] Building CXX object ggml.cpp.o'; sleep 0.5",
        ])
        .stdout(out)
        .spawn()
        .unwrap();
    let notes = std::sync::Mutex::new(Vec::new());
    let note = |n: &str| notes.lock().unwrap().push(n.to_string());
    let every = std::time::Duration::from_millis(150);
    let status = super::wait_noting(child, ("llama", &log), every, &note).unwrap();
    assert!(status.success());
    let notes = notes.into_inner().unwrap();
    assert!((2..=4).contains(&notes.len()), "{notes:?}");
    assert!(
        notes[0].starts_with("installing llama: 0s so far; its log: [ 40%] Building CXX"),
        "{notes:?}"
    );
    let _ = std::fs::remove_dir_all(&root);
}
