//! The binary's exit codes, one meaning each (README "Exit codes"; `tooltape --help`).

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

/// [`FAILED`] when something failed, else [`OK`].
pub fn failed_if(failed: bool) -> i32 {
    if failed { FAILED } else { OK }
}

/// A command that could not run in full: the message to print on stderr (it names the file,
/// line and column where there is one); the command exits with [`ERROR`].
#[derive(Debug)]
pub struct CliError(pub String);

impl From<String> for CliError {
    fn from(message: String) -> CliError {
        CliError(message)
    }
}

/// What a command returns: its exit code, or the error that stopped it.
pub type CommandResult = Result<i32, CliError>;

/// The process exit code of a command's result; an error is printed on stderr first.
pub fn code(result: CommandResult) -> i32 {
    match result {
        Ok(code) => code,
        Err(CliError(message)) => {
            eprintln!("{message}");
            ERROR
        }
    }
}
