//! `memcert cases`: list the cases of a level (after --cases/--exclude): one id per line, or one
//! JSON object per case with its requirement, citations and where it is defined.

use std::io::Write as _;

use anyhow::Result;

use memcert::exit;

use crate::args::SelectArgs;

/// The flags of `memcert cases`.
#[derive(clap::Args, Debug)]
pub struct CasesArgs {
    #[command(flatten)]
    pub select: SelectArgs,
    /// `text`: one case id per line; `jsonl`: one JSON object per case: `id`, `level` (`must`,
    /// `should`), `requirement`, `source` (citation ids: `memcert explain ID`), `defined`
    /// (workspace-relative `file:line`).
    #[arg(long, default_value = "text", value_parser = ["text", "jsonl"])]
    pub format: String,
}

/// One `--format jsonl` line, keys in this order.
#[derive(serde::Serialize)]
struct Line<'a> {
    id: &'a str,
    level: memcert::suite::Level,
    requirement: &'a str,
    source: &'a [String],
    defined: &'a str,
}

/// `cases`: every case the selection keeps, possibly none, in --format.
pub fn run(args: CasesArgs) -> Result<i32> {
    let mut out = std::io::stdout().lock();
    // Each payload case is built for its line and dropped: the listing holds one at a time.
    for c in args.select.matching()?.iter() {
        let line = if args.format == "jsonl" {
            serde_json::to_string(&Line {
                id: &c.id,
                level: c.level,
                requirement: &c.requirement,
                source: &c.source,
                defined: &c.defined,
            })?
        } else {
            c.id.clone()
        };
        if writeln!(out, "{line}").is_err() {
            break; // a closed pipe (`| head`) ends the listing quietly
        }
    }
    Ok(exit::PASS)
}
