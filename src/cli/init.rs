//! `tooltape init gateway NAME`: writes a commented gateway profile skeleton and prints the
//! base URLs the gateway's config gives each provider to reach the recording upstream.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::exit;
use super::gateway::listen_addr;
use tooltape::gateway::{DEFAULT_UPSTREAM, base_urls, skeleton};

#[derive(Args, Debug)]
pub struct InitArgs {
    #[command(subcommand)]
    pub what: InitWhat,
}

#[derive(Subcommand, Debug)]
pub enum InitWhat {
    /// Write a commented gateway profile (routes, headers, known failures) to
    /// gateways/NAME.toml under --root (or to NAME when it ends in .toml), and print the
    /// upstream base URLs to put in the gateway's config for each provider.
    Gateway {
        name: String,
        /// Where the recording upstream will listen (`tooltape gateway … --upstream-listen`).
        #[arg(long, value_name = "ADDR", value_parser = listen_addr, default_value = DEFAULT_UPSTREAM)]
        upstream_listen: SocketAddr,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
}

/// Runs `tooltape init …`.
pub fn run(root: &std::path::Path, a: &InitArgs) -> i32 {
    let InitWhat::Gateway {
        name,
        upstream_listen,
        force,
    } = &a.what;
    let (path, stem, profile): (PathBuf, String, String) = if name.ends_with(".toml") {
        let path = PathBuf::from(name);
        let stem = path
            .file_stem()
            .map_or_else(|| name.clone(), |s| s.to_string_lossy().into_owned());
        (path, stem, name.clone())
    } else {
        let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
        if name.is_empty() || !name.chars().all(ok) {
            eprintln!(
                "init gateway: `{name}`: a profile name uses letters, digits, `_`, `-` and `.` (or give a path ending in .toml)"
            );
            return exit::ERROR;
        }
        let path = root.join("gateways").join(format!("{name}.toml"));
        (path, name.clone(), name.clone())
    };
    if !force && std::fs::symlink_metadata(&path).is_ok() {
        eprintln!(
            "{}: exists; not replaced (pass --force to overwrite it)",
            path.display()
        );
        return exit::ERROR;
    }
    let text = skeleton(&stem, &profile, *upstream_listen);
    let written = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, text));
    if let Err(e) = written {
        eprintln!("cannot write {}: {e}", path.display());
        return exit::ERROR;
    }
    eprintln!(
        "wrote {}: edit its routes, headers and known failures",
        path.display()
    );
    outln!(
        "Point your gateway's providers at the recording upstream ({upstream_listen}; any API key):"
    );
    for (provider, url) in base_urls(*upstream_listen) {
        outln!("  {:<17} {url}", provider.slug());
    }
    outln!(
        "Then: tooltape gateway {profile} --url YOUR_GATEWAY_URL --upstream-listen {upstream_listen}"
    );
    exit::OK
}
