//! The `tooltape client NAME` command: load the client profile, install the pinned library,
//! run every applicable trial through its driver against the recording upstream, print the
//! matrix and the closing totals; and `tooltape client drive`, the reference driver (tooltape's
//! own codecs as the library, or one of its mutants) on stdin and stdout.

use std::sync::Arc;

use clap::{Args, Subcommand};

use super::cases::Corpus;
use super::exit::CommandResult;
use super::releases::{self, Releases};
use super::suite::{self, Extras, ProfileArgs};
use tooltape::client::{Library, Mutant};
use tooltape::engine::{Run, RunOptions};
use tooltape::runtime;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
#[command(mut_args(suite::profile_help("clients")))]
pub struct ClientArgs {
    #[command(subcommand)]
    pub command: Option<ClientCommand>,
    #[command(flatten)]
    pub profile: ProfileArgs,
    /// Test the library installed in DIR instead of installing the profile's pinned release: a
    /// venv your checkout is installed into (`pip install -e .`; Python profiles run
    /// `DIR/bin/python`), or a folder whose `node_modules` holds your build (Node.js profiles).
    /// See docs/clients/README.md, "Your own library's checkout". Not with `--versions`, which
    /// installs each release itself.
    #[arg(long, value_name = "DIR", conflicts_with = "versions")]
    pub install_dir: Option<std::path::PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum ClientCommand {
    /// The reference driver: reads trials on stdin, answers results on stdout (the driver
    /// protocol, docs/clients/README.md), with tooltape's own codecs as the library.
    Drive {
        /// A deliberate bug: faithful, drop-tools, never-yield, required-to-auto,
        /// merge-parallel, lose-ids, omit-strict, empty-fragments, drop-reasoning, kimi-ids,
        /// truncate-names, usage-on-finish, quote-parts, drop-response-id, foreign-reasoning,
        /// custom-as-function, cut-call-finished.
        #[arg(long, default_value = "faithful")]
        mutant: String,
    },
}

/// Runs `tooltape client`: 0 when every result is expected, 1 otherwise, 2 when the library
/// could not be installed, the profile read, or not one trial got an answer.
pub fn run(corpus: Corpus<'_>, a: &ClientArgs) -> CommandResult {
    if let Some(ClientCommand::Drive { mutant }) = &a.command {
        return drive(mutant);
    }
    super::signals::stopping_on_signals(|| run_suite(corpus, a))
}

/// `tooltape client NAME` (or `--list`).
fn run_suite(corpus: Corpus<'_>, a: &ClientArgs) -> CommandResult {
    let root = corpus.root;
    let args = &a.profile;
    if args.list {
        return suite::list(root, "clients", tooltape::client::load_client);
    }
    let name = args.named("client: name a profile (clients/NAME.toml) or `drive`")?;
    let profile = tooltape::client::load_client(root, name).map_err(|e| e.to_string())?;
    if args.suite.versions.is_some() {
        let at = |release: &str| -> Result<Arc<Library>, String> {
            let mut p = tooltape::client::load_client(root, name).map_err(|e| e.to_string())?;
            p.at_release(release)?;
            Ok(Arc::new(Library::new(p, root)))
        };
        let q = &profile.profile;
        let releases = Releases {
            at: &at,
            package: releases::package(q.version.as_deref(), q.install.as_ref()),
        };
        let options = args.suite.options(RunOptions::default());
        return releases::run(corpus, &args.suite, &options, &releases);
    }
    let mut library = Library::new(profile, root);
    if let Some(dir) = &a.install_dir {
        library = library.with_installed(dir);
    }
    let library = Arc::new(library);
    let extras = Extras {
        document: &|l: &Library, ran: &Run| {
            tooltape::report::suite::client_markdown(&l.profile, &ran.results, &ran.causes)
        },
        after: &|_: &Run| Ok(()),
        json: &|_: &Run| Vec::new(),
    };
    suite::run(
        corpus,
        &library,
        &args.suite,
        RunOptions::default(),
        &extras,
    )
}

/// `tooltape client drive`: serves the protocol until end of input.
fn drive(mutant: &str) -> CommandResult {
    let m = Mutant::named(mutant).ok_or_else(|| {
        format!(
            "unknown mutant `{mutant}`; expected one of {}",
            Mutant::ALL.map(|(n, _)| n).join(", ")
        )
    })?;
    let served = runtime().block_on(tooltape::client::drive(
        m,
        tokio::io::stdin(),
        tokio::io::stdout(),
    ));
    served.map_err(|e| format!("drive: {e}").into())
}
