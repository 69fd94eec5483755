//! The binary's exit codes, one meaning each (README "Exit codes"; `tooltape --help`), and the
//! one result every command returns: [`CommandResult`], made an exit code by
//! [`CliError::exit_code`] alone (as nextest's `ExpectedError::process_exit_code`).

/// Everything ran and every result is as expected (passes, known failures, not applicable).
pub const OK: i32 = 0;
/// Everything ran and something failed: a trial, a finding beyond the known failures, a secret
/// in a cassette, breaking drift, a known failure that now passes, no trial matching a filter.
pub const FAILED: i32 = 1;
/// The command could not run in full: bad arguments or input (the message names the file, line
/// and column), a gateway or file that could not be used.
pub const ERROR: i32 = 2;

/// `gateway`, `client` or `matrix` ended by SIGINT (128 + 2) or SIGTERM (128 + 15), after
/// stopping the gateway or drivers it started.
pub const INTERRUPTED: i32 = 130;
pub const TERMINATED: i32 = 143;

/// The exit codes as `--help` shows them.
pub const HELP: &str = "Exit codes:
  0  everything ran; every result is as expected (passes, known failures, not applicable)
  1  everything ran; something failed (a trial, a finding beyond the known failures, a secret,
     breaking drift, a known failure that now passes, no trial matching the filter)
  2  the command could not run in full (bad arguments or input, a gateway or file that could
     not be used); the message says what to do
  130, 143  gateway, client or matrix ended by SIGINT or SIGTERM; the gateway or drivers it
     started were stopped first";

/// What every command returns: `Ok` when everything ran and every result is as expected.
pub type CommandResult = Result<(), CliError>;

/// Why a command did not end with every result as expected.
#[derive(Debug)]
pub enum CliError {
    /// Everything ran and something failed; the command's output already says what.
    Failed,
    /// Everything ran and something failed; this message says what.
    FailedWith(String),
    /// The command could not run in full; this message says why (the file, line and column
    /// where there are ones) and what to do.
    Error(String),
    /// The command could not run in full; its output already says why (a run's log tail, the
    /// releases that could not be installed, the systems of a matrix that could not run).
    Reported,
}

impl CliError {
    /// The process exit code of a command that ended so: the one place the two meet.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Failed | CliError::FailedWith(_) => FAILED,
            CliError::Error(_) | CliError::Reported => ERROR,
        }
    }

    /// The message still to print on stderr, if any.
    fn message(&self) -> Option<&str> {
        match self {
            CliError::FailedWith(m) | CliError::Error(m) => Some(m),
            CliError::Failed | CliError::Reported => None,
        }
    }
}

impl From<String> for CliError {
    fn from(message: String) -> CliError {
        CliError::Error(message)
    }
}

/// [`CliError::Failed`] when something failed, else `Ok`.
pub fn failed_if(failed: bool) -> CommandResult {
    if failed {
        Err(CliError::Failed)
    } else {
        Ok(())
    }
}

/// The result of an exit code the library computed (a matrix document's worst status, a diff's
/// appearances), whose reasons are already printed.
pub fn of_code(code: i32) -> CommandResult {
    match code {
        OK => Ok(()),
        FAILED => Err(CliError::Failed),
        _ => Err(CliError::Reported),
    }
}

/// The process exit code of a command's result; a message still to print goes to stderr first.
pub fn code(result: CommandResult) -> i32 {
    match result {
        Ok(()) => OK,
        Err(e) => {
            if let Some(m) = e.message() {
                eprintln!("{m}");
            }
            e.exit_code()
        }
    }
}
