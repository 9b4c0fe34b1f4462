//! `morello-db fuzz`: the differential fuzzer's command line (see [`morello_core::fuzz`]).

use crate::cli::{number, target_id};
use morello_core::fuzz::{self, FuzzOptions};
use morello_core::harness::CCompiler;
use morello_core::target::TargetId;

/// The command's usage line.
pub const USAGE: &str = "morello-db fuzz [--cases N] [--seed S] [--target <avx2|avx512|portable>] [--sanitize] [--batch N] [--max-specs N] [--no-reduce] [--compile-only]";

/// Runs `morello-db fuzz` with `args` (after the command's name): prints progress and failures
/// with their regression tests to standard error and the report to standard output. Returns
/// whether every case passed.
pub fn run(args: &[String]) -> Result<bool, String> {
    let options = parse(args)?;
    if options.compilers.is_empty() {
        return Err("no C compiler found (gcc or clang)".to_owned());
    }
    let names: Vec<&str> = options.compilers.iter().map(|c| c.program.as_str()).collect();
    eprintln!(
        "fuzzing {} cases for {} from seed {}, compiled with {}{}",
        options.cases,
        options.target.name(),
        options.seed,
        names.join(" and "),
        if options.sanitize { ", sanitized" } else { "" }
    );
    let report = fuzz::run(&options, &mut std::io::stderr());
    print!("{}", report.render());
    Ok(report.failures.is_empty())
}

/// The options `args` ask for.
fn parse(args: &[String]) -> Result<FuzzOptions, String> {
    let mut options = FuzzOptions::new(200, 1, TargetId::X86Avx2);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = |name: &str| it.next().cloned().ok_or_else(|| format!("`--{name}` needs a value"));
        match flag.as_str() {
            "--cases" => options.cases = number(&value("cases")?, "cases")?,
            "--seed" => options.seed = number(&value("seed")?, "seed")?,
            "--batch" => options.batch = number(&value("batch")?, "batch")?.max(1) as usize,
            "--max-specs" => options.max_specs = number(&value("max-specs")?, "max-specs")?,
            "--target" => options.target = target_id(&value("target")?)?,
            "--sanitize" => options.sanitize = true,
            "--no-reduce" => options.reduce = false,
            "--compile-only" => options.compile_only = true,
            other => return Err(format!("`fuzz` takes no argument `{other}`\nusage: {USAGE}")),
        }
    }
    if std::env::var_os("MORELLO_REQUIRE_CLANG").is_some()
        && !options.compilers.iter().any(|c| *c == CCompiler::clang())
    {
        return Err("MORELLO_REQUIRE_CLANG is set but clang is not installed".to_owned());
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args;

    #[test]
    fn options_parse_and_bad_ones_are_named() {
        let o = parse(&args("--cases 30 --seed 9 --target avx512 --sanitize --no-reduce --batch 8")).unwrap();
        assert_eq!(
            (o.cases, o.seed, o.target, o.sanitize, o.reduce, o.batch),
            (30, 9, TargetId::X86Avx512, true, false, 8)
        );
        assert!(parse(&args("--cases many")).unwrap_err().contains("--cases many is not a number"));
        assert!(parse(&args("--target sparc")).unwrap_err().contains("unknown target `sparc`"));
        assert!(parse(&args("--frobnicate")).unwrap_err().contains("no argument `--frobnicate`"));
        assert!(parse(&args("--seed")).unwrap_err().contains("`--seed` needs a value"));
    }
}
