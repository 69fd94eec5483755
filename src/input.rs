//! The one bounded file reader: refuses what is not a regular file (FIFO, directory, device, a
//! link to one) and caps the size (`TOOLTAPE_MAX_FILE_BYTES`), for every input the suite reads.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The environment variable that raises (or lowers) the size cap, in bytes.
pub(crate) const LIMIT_VAR: &str = "TOOLTAPE_MAX_FILE_BYTES";

/// The default cap: far above any case, tool file or cassette, below what hurts a small machine.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;

/// Why a file could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    pub path: PathBuf,
    /// The file does not exist (callers may treat this as "absent", not "broken").
    pub not_found: bool,
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for InputError {}

fn refused(path: &Path, message: String) -> InputError {
    InputError {
        path: path.to_path_buf(),
        not_found: false,
        message,
    }
}

/// The size cap: `TOOLTAPE_MAX_FILE_BYTES` when set (a positive whole number of bytes), else
/// [`DEFAULT_MAX_FILE_BYTES`]. An unreadable value is an error, never a silent default.
pub(crate) fn max_file_bytes() -> Result<u64, String> {
    match std::env::var(LIMIT_VAR) {
        Err(std::env::VarError::NotPresent) => Ok(DEFAULT_MAX_FILE_BYTES),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("{LIMIT_VAR} is not UTF-8")),
        Ok(v) => match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{LIMIT_VAR}=`{v}` is not a positive whole number of bytes (default {DEFAULT_MAX_FILE_BYTES})"
            )),
        },
    }
}

/// `64 MiB`, `512 KiB` or `100 bytes`.
pub(crate) fn human(n: u64) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} bytes")
    }
}

fn too_large(path: &Path, limit: u64, what: &str) -> InputError {
    refused(
        path,
        format!(
            "{what} is larger than the {} limit; raise it with {LIMIT_VAR}=BYTES",
            human(limit)
        ),
    )
}

/// Checks that `path` (following links) is a regular file, without opening it (opening a FIFO
/// blocks).
fn check_regular(path: &Path) -> Result<(), InputError> {
    let meta = std::fs::metadata(path).map_err(|e| InputError {
        path: path.to_path_buf(),
        not_found: e.kind() == std::io::ErrorKind::NotFound,
        message: format!("cannot read: {e}"),
    })?;
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    let kind = if ft.is_dir() {
        "a directory"
    } else {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_char_device() || ft.is_block_device() {
            "a device"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        }
    };
    Err(refused(
        path,
        format!("not a regular file ({kind}): refusing to read it"),
    ))
}

/// An open regular file and the cap its reads must stay under.
pub struct Bounded {
    inner: std::io::Take<std::fs::File>,
    path: PathBuf,
    limit: u64,
    read: u64,
}

impl Bounded {
    /// Opens `path` after checking it is a regular file.
    pub fn open(path: &Path) -> Result<Bounded, InputError> {
        let limit = max_file_bytes().map_err(|m| refused(path, m))?;
        check_regular(path)?;
        let file = std::fs::File::open(path).map_err(|e| InputError {
            path: path.to_path_buf(),
            not_found: e.kind() == std::io::ErrorKind::NotFound,
            message: format!("cannot read: {e}"),
        })?;
        // The file may have been swapped between the check and the open.
        match file.metadata() {
            Ok(m) if m.is_file() => {}
            _ => {
                return Err(refused(
                    path,
                    "not a regular file: refusing to read it".into(),
                ));
            }
        }
        Ok(Bounded {
            inner: file.take(limit + 1),
            path: path.to_path_buf(),
            limit,
            read: 0,
        })
    }
}

impl Read for Bounded {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.limit {
            return Err(std::io::Error::other(
                too_large(&self.path, self.limit, "the file").message,
            ));
        }
        Ok(n)
    }
}

/// Reads a whole regular file, refusing it past the cap.
pub fn read(path: &Path) -> Result<Vec<u8>, InputError> {
    let mut r = Bounded::open(path)?;
    let mut out = Vec::new();
    r.read_to_end(&mut out)
        .map_err(|e| refused(path, format!("cannot read: {e}")))?;
    Ok(out)
}

/// Reads a whole regular file as UTF-8, refusing it past the cap.
pub fn read_to_string(path: &Path) -> Result<String, InputError> {
    let bytes = read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        refused(
            path,
            format!(
                "not UTF-8 (invalid byte at offset {}): save it as UTF-8",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Reads all of `r` (standard input), refusing it past the cap.
pub fn read_all(mut r: impl Read, name: &Path) -> Result<Vec<u8>, InputError> {
    let limit = max_file_bytes().map_err(|m| refused(name, m))?;
    let mut out = Vec::new();
    (&mut r)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| refused(name, format!("cannot read: {e}")))?;
    if out.len() as u64 > limit {
        return Err(too_large(name, limit, "the input"));
    }
    Ok(out)
}

/// Inflates gzip data, refusing output past `limit` bytes (a small file can inflate to GiBs).
pub(crate) fn gunzip(data: &[u8], limit: u64) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("a gzip body does not decompress: {e}"))?;
    if out.len() as u64 > limit {
        return Err(format!(
            "a gzip body inflates past the {} limit; raise it with {LIMIT_VAR}=BYTES",
            human(limit)
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
