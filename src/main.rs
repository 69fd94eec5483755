//! The `tooltape` binary: parses arguments and hands over to `tooltape::cli`.

use clap::Parser;

fn main() {
    let cli = tooltape::cli::Cli::parse();
    std::process::exit(tooltape::cli::run(cli));
}
