//! Standard output for the CLI: when the reader goes away (`tooltape status | head`) the process
//! ends quietly with status 0, where `println!` would panic on the broken pipe.

use std::io::Write;

use super::exit;

/// `println!` for command output.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for command output.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*))
    };
}

/// Writes to standard output; a closed pipe exits 0, any other write error exits 1 with a message.
pub fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(args).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(exit::OK);
        }
        eprintln!("cannot write to standard output: {e}");
        std::process::exit(exit::FAILED);
    }
}
