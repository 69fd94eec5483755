//! The `tooltape` binary: argument parsing, terminal output and progress (`cli/`), on top of the
//! library's pure pipeline.

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    std::process::exit(cli::run(args));
}
