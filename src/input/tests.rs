use std::path::Path;

use super::*;

/// An empty folder `tooltape-input-NAME-…`, removed when dropped.
fn scratch(name: &str) -> tempfile::TempDir {
    crate::scratch::folder(&format!("input-{name}"))
}

#[test]
fn reads_a_regular_file() {
    let tmp = scratch("regular");
    let d = tmp.path();
    let f = d.join("a.toml");
    std::fs::write(&f, "x = 1\n").unwrap();
    assert_eq!(read_to_string(&f).unwrap(), "x = 1\n");
}

#[test]
fn missing_is_not_found() {
    let e = read(Path::new("/nonexistent/tooltape/x.json")).unwrap_err();
    assert!(e.not_found);
}

#[test]
fn refuses_a_directory_and_a_link_to_a_device() {
    let tmp = scratch("kinds");
    let d = tmp.path();
    let e = read(d).unwrap_err();
    assert!(e.message.contains("a directory"), "{e}");
    let link = d.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
    let e = read(&link).unwrap_err();
    assert!(e.message.contains("a device"), "{e}");
    assert!(!e.not_found);
}

/// The FIFO is made by the `mkfifo` program (coreutils; `unsafe` is forbidden, so no libc call):
/// without it the test says it skipped, but under CI (`CI` set, as `.ci/run` sets it, on a machine
/// with coreutils) it fails.
#[test]
#[allow(clippy::print_stderr)] // a skip says why
fn refuses_a_fifo_without_blocking() {
    let tmp = scratch("fifo");
    let d = tmp.path();
    let f = d.join("case.toml");
    let ok = std::process::Command::new("mkfifo").arg(&f).status();
    if !ok.is_ok_and(|s| s.success()) {
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(!ci, "CI is set and `mkfifo` failed: install coreutils");
        eprintln!("skipped: `mkfifo` failed (install coreutils)");
        return;
    }
    let e = read(&f).unwrap_err();
    assert!(e.message.contains("a FIFO"), "{e}");
}

#[test]
fn refuses_input_past_the_cap() {
    let big = vec![b'x'; (DEFAULT_MAX_FILE_BYTES + 10) as usize];
    let e = read_all(big.as_slice(), Path::new("<stdin>")).unwrap_err();
    assert!(e.message.contains("64 MiB limit"), "{e}");
    assert!(e.message.contains(LIMIT_VAR), "{e}");
}

#[test]
fn invalid_utf8_names_the_offset() {
    let tmp = scratch("utf8");
    let d = tmp.path();
    let f = d.join("a.toml");
    std::fs::write(&f, b"ab\xffcd").unwrap();
    let e = read_to_string(&f).unwrap_err();
    assert!(e.message.contains("offset 2"), "{e}");
}

#[test]
fn gunzip_is_capped() {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(&vec![0u8; 1 << 20]).unwrap();
    let gz = enc.finish().unwrap();
    assert_eq!(gunzip(&gz, 2 << 20).unwrap().len(), 1 << 20);
    let e = gunzip(&gz, 1000).unwrap_err();
    assert!(e.contains("inflates past the 1000 bytes limit"), "{e}");
}
