//! Helpers shared by `morello-db`'s subcommands that parse their own options.

use morello_core::target::TargetId;

/// `text`, the value of the option `--name`, as a number, or an error naming both.
pub(crate) fn number(text: &str, name: &str) -> Result<u64, String> {
    text.parse().map_err(|_| format!("--{name} {text} is not a number"))
}

/// The target `name` names (`avx2`, `avx512`, `portable`), or an error naming it.
pub(crate) fn target_id(name: &str) -> Result<TargetId, String> {
    TargetId::from_name(name).ok_or_else(|| format!("unknown target `{name}`"))
}

/// `text` split into command-line arguments at whitespace, for the commands' tests.
#[cfg(test)]
pub(crate) fn args(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_owned).collect()
}
