//! `memcert record`: a pass-through proxy to the real Messages API that writes the conversation
//! it carries as a transcript, to replay with `certify --app`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};

use memcert::exit;
use memcert_app::record::{self, Ending, Recorder};

use crate::args::seconds;
use crate::interrupt;
use crate::reporting::say;

/// The flags of `memcert record`.
#[derive(clap::Args, Debug)]
pub struct RecordArgs {
    /// The real API's base URL (as for ANTHROPIC_BASE_URL), e.g. https://api.anthropic.com.
    #[arg(long, value_name = "URL")]
    pub upstream: String,
    /// The transcript file to write (rewritten after every turn).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The transcript id; default: from the file name.
    #[arg(long)]
    pub id: Option<String>,
    /// Stop after this many seconds whatever happens.
    #[arg(long, default_value_t = 1800.0, value_name = "SECONDS")]
    pub timeout: f64,
}

/// `record`: proxy one conversation to the upstream and write it as a transcript.
pub fn run(args: RecordArgs) -> Result<i32> {
    let RecordArgs {
        upstream,
        out,
        id,
        timeout,
    } = args;
    let limit = seconds("--timeout", timeout)?;
    if !(upstream.starts_with("http://") || upstream.starts_with("https://")) {
        bail!("--upstream must be an http:// or https:// base URL, got {upstream:?}");
    }
    let out = record::out_path(&out);
    memcert::report::check_writable(&out)
        .with_context(|| format!("cannot write the transcript {}", out.display()))?;
    let id = id.unwrap_or_else(|| record::id_for(&out));
    let stop = interrupt::flag()?;
    let rec =
        Recorder::start(&upstream, &out, &id, limit).context("the recording proxy cannot start")?;
    if crate::reporting::out(&format!("ANTHROPIC_BASE_URL={}", rec.url())) {
        say(&format!(
            "recording to {} through {upstream}; start your app with ANTHROPIC_BASE_URL set to the URL above (stops by itself when the conversation ends, or after {timeout}s)",
            out.display()
        ));
    } else {
        // No one reads the URL from a closed stdout: stop as if interrupted.
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    let recording = rec.wait(limit, &stop)?;
    let n = recording.answers;
    if n == 0 {
        say("nothing was recorded (no Messages API answer went through)");
        return Ok(exit::FAILED);
    }
    let ended = match recording.ending {
        Ending::Ended => "the conversation ended",
        Ending::Interrupted => "interrupted",
        Ending::TimeUp => "time is up",
    };
    say(&format!(
        "{ended}; {n} answer(s) recorded in {}",
        out.display()
    ));
    Ok(exit::PASS)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::{Cli, Cmd};

    #[test]
    fn parses_record_flags() {
        let cli = Cli::try_parse_from([
            "memcert",
            "record",
            "--upstream",
            "http://h",
            "--out",
            "o.json",
        ])
        .unwrap();
        assert!(matches!(cli.command, Cmd::Record(r) if r.timeout == 1800.0));
        assert!(Cli::try_parse_from(["memcert", "record", "--out", "o.json"]).is_err());
    }
}
