//! Helpers shared by `morello-db`'s subcommands that parse their own options.

/// `text`, the value of the option `--name`, as a number, or an error naming both.
pub(crate) fn number(text: &str, name: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("--{name} {text} is not a number"))
}
