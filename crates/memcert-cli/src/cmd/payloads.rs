//! `memcert payloads`: print the traversal payload corpus, one path or one JSON object a line.

use std::io::Write as _;

use anyhow::{bail, Result};

use memcert::exit;

/// The flags of `memcert payloads`.
#[derive(clap::Args, Debug)]
pub struct PayloadsArgs {
    /// Only this family (traversal, prefix, absolute, root-alias, control, windows, long, and the
    /// check/use spellings of `..`: trim, ignorable, slug).
    #[arg(long)]
    pub family: Option<String>,
    /// Only traversal and check/use spelling payloads of this depth (1-8).
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub depth: Option<u8>,
    /// `text`: one path per line; `jsonl`: one JSON object per payload with its parameters.
    #[arg(long, default_value = "text", value_parser = ["text", "jsonl"])]
    pub format: String,
}

/// `payloads`: the corpus after --family/--depth, in --format; none is an error.
pub fn run(args: PayloadsArgs) -> Result<i32> {
    let PayloadsArgs {
        family,
        depth,
        format,
    } = args;
    let list: Vec<_> = memcert::attack::payloads::corpus()
        .into_iter()
        .filter(|p| family.as_ref().is_none_or(|f| &p.family == f))
        .filter(|p| depth.is_none_or(|d| p.depth == Some(d)))
        .collect();
    if list.is_empty() {
        bail!("no payload matches --family/--depth");
    }
    let mut out = std::io::stdout().lock();
    for p in list {
        let line = if format == "jsonl" {
            serde_json::to_string(&p)?
        } else {
            memcert::vpath::display_path(&p.text)
        };
        if writeln!(out, "{line}").is_err() {
            break; // a closed pipe (`| head`) ends the listing quietly
        }
    }
    Ok(exit::PASS)
}
