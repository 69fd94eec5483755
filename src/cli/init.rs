//! `tooltape init gateway NAME` / `init client NAME` / `init server NAME`: writes a commented profile skeleton (for a
//! gateway, also printing the base URLs its config gives each provider to reach the recording
//! upstream).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::exit::CommandResult;
use super::gateway::listen_addr;
use tooltape::client::Language;
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
    /// clients/NAME.toml under --root (or to NAME when it ends in .toml); with --language, also
    /// a driver skeleton beside it (clients/NAME/driver.py or driver.mjs) that uses tooltape's
    /// driver helper.
    Client {
        name: String,
        /// The driver's language: `python` or `node` (default: tooltape's reference driver).
        #[arg(long, value_parser = ["python", "node"])]
        language: Option<String>,
        /// Replace an existing file.
        #[arg(long)]
        force: bool,
    },
    /// Write a commented model-server profile (model, start, settings, routes) to
    /// servers/NAME.toml under --root (or to NAME when it ends in .toml).
    Server {
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

/// Writes a client profile at `path` and, for a `language`, its driver skeleton beside it
/// (`clients/NAME/driver.py`), named in the profile under `{{root}}` when it is under `root`.
fn client(
    root: &Path,
    (path, stem): (&Path, &str),
    profile: &str,
    language: Option<Language>,
    force: bool,
) -> Result<(PathBuf, String), String> {
    let Some(language) = language else {
        let text = tooltape::client::skeleton(stem, profile, None);
        return write_new(path, &text, force).map(|()| (path.to_path_buf(), profile.to_string()));
    };
    let (file, driver) = language.driver(stem);
    let driver_path = path.with_extension("").join(file);
    let named = match driver_path.strip_prefix(root) {
        Ok(rel) => format!("{{{{root}}}}/{}", rel.display()),
        Err(_) => std::path::absolute(&driver_path)
            .map_err(|e| e.to_string())?
            .display()
            .to_string(),
    };
    let text = tooltape::client::skeleton(stem, profile, Some((language, &named)));
    if !force && std::fs::symlink_metadata(&driver_path).is_ok() {
        return Err(format!(
            "{}: exists; not replaced (pass --force to overwrite it)",
            driver_path.display()
        ));
    }
    write_new(path, &text, force)?;
    write_new(&driver_path, &driver, true)?;
    eprintln!(
        "wrote {}: your library's calls go there",
        driver_path.display()
    );
    Ok((path.to_path_buf(), profile.to_string()))
}

/// Runs `tooltape init …`.
pub fn run(root: &Path, a: &InitArgs) -> CommandResult {
    let (folder, name, force) = match &a.what {
        InitWhat::Gateway { name, force, .. } => ("gateways", name, *force),
        InitWhat::Client { name, force, .. } => ("clients", name, *force),
        InitWhat::Server { name, force } => ("servers", name, *force),
    };
    let written = place(root, folder, name).and_then(|(path, stem, profile)| {
        let text = match &a.what {
            InitWhat::Gateway {
                upstream_listen, ..
            } => tooltape::gateway::skeleton(&stem, &profile, *upstream_listen),
            InitWhat::Server { .. } => tooltape::server::skeleton(&stem, &profile),
            InitWhat::Client { language, .. } => {
                let language = language.as_deref().and_then(Language::named);
                return client(root, (&path, &stem), &profile, language, force);
            }
        };
        write_new(&path, &text, force).map(|()| (path, profile))
    });
    let (path, profile) =
        written.map_err(|e| format!("init {}: {e}", folder.trim_end_matches('s')))?;
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
    } else if let InitWhat::Server { .. } = &a.what {
        outln!("Then: tooltape server {profile} --url YOUR_SERVER_URL");
    } else {
        outln!("Then: tooltape client {profile}");
    }
    Ok(())
}
