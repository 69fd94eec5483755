//! The `tooltape` binary: argument parsing, terminal output and progress (`cli/`), on top of the
//! library's pure pipeline.

mod cli;

use clap::Parser;

/// mimalloc: the proxy's many small allocations per request cost less than with glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args = cli::Cli::parse();
    std::process::exit(cli::run(&args));
}
