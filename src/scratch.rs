//! Unit tests' scratch folders: an empty folder `tooltape-NAME-…` under the system's temporary
//! folder, removed with everything in it when dropped.

/// A fresh empty folder named after `name`, removed when the value is dropped.
pub(crate) fn folder(name: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("tooltape-{name}-"))
        .tempdir()
        .expect("a scratch folder")
}
