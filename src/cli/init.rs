//! `tooltape init gateway NAME` / `init client NAME`: writes a commented profile skeleton (for a
//! gateway, also printing the base URLs its config gives each provider to reach the recording
//! upstream).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::exit;
use super::gateway::listen_addr;
use tooltape::gateway::{DEFAULT_UPSTREAM, base_urls};

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
    /// Write a commented client-library profile (driver, routes, known failures) to
    /// clients/NAME.toml under --root (or to NAME when it ends in .toml).
    Client {
        name: String,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
}

/// Where profile `name` of `folder` (`gateways`, `clients`) goes: (path, profile name, how the
/// run command names it); a bad name is the message.
fn place(root: &Path, folder: &str, name: &str) -> Result<(PathBuf, String, String), String> {
    if name.ends_with(".toml") {
        let path = PathBuf::from(name);
        let stem = path
            .file_stem()
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
        return Ok((path, stem, name.to_string()));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    if name.is_empty() || !name.chars().all(ok) {
        return Err(format!(
            "`{name}`: a profile name uses letters, digits, `_`, `-` and `.` (or give a path ending in .toml)"
        ));
    }
    let path = root.join(folder).join(format!("{name}.toml"));
    Ok((path, name.to_string(), name.to_string()))
}

/// Writes `text` to `path` unless a file is there (and not `force`).
fn write_new(path: &Path, text: &str, force: bool) -> Result<(), String> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(format!(
            "{}: exists; not replaced (pass --force to overwrite it)",
            path.display()
        ));
    }
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, text))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Runs `tooltape init …`.
pub fn run(root: &Path, a: &InitArgs) -> i32 {
    let (folder, name, force) = match &a.what {
        InitWhat::Gateway { name, force, .. } => ("gateways", name, *force),
        InitWhat::Client { name, force } => ("clients", name, *force),
    };
    let written = place(root, folder, name).and_then(|(path, stem, profile)| {
        let text = match &a.what {
            InitWhat::Gateway {
                upstream_listen, ..
            } => tooltape::gateway::skeleton(&stem, &profile, *upstream_listen),
            InitWhat::Client { .. } => tooltape::client::skeleton(&stem, &profile),
        };
        write_new(&path, &text, force).map(|()| (path, profile))
    });
    let (path, profile) = match written {
        Ok(w) => w,
        Err(e) => {
            eprintln!("init {}: {e}", folder.trim_end_matches('s'));
            return exit::ERROR;
        }
    };
    eprintln!(
        "wrote {}: edit its routes and known failures",
        path.display()
    );
    if let InitWhat::Gateway {
        upstream_listen, ..
    } = &a.what
    {
        outln!(
            "Point your gateway's providers at the recording upstream ({upstream_listen}; any API key):"
        );
        for (provider, url) in base_urls(*upstream_listen) {
            outln!("  {:<17} {url}", provider.slug());
        }
        outln!(
            "Then: tooltape gateway {profile} --url YOUR_GATEWAY_URL --upstream-listen {upstream_listen}"
        );
    } else {
        outln!("Then: tooltape client {profile}");
    }
    exit::OK
}
