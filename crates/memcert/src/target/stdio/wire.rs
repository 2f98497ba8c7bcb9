//! One request line out and one answer line in over a handler's pipes, both under one deadline
//! and the answer under a read cap.
//!
//! The pipes are switched to non-blocking mode ([`nonblocking`]) and driven by `poll(2)` from
//! the calling thread: no reader thread, no blocking `write_all`.
//!
//! # Guarantees
//! - [`exchange`] returns by the deadline whatever the handler does: one that never reads its
//!   stdin (the pipe fills up) times out like one that never answers.
//! - At most `cap` bytes of one answer line (plus one read of [`CHUNK`] bytes) are ever held:
//!   an endless line, with or without a newline at its end, is [`Got::TooLarge`] as soon as it
//!   passes the cap, and the bytes read are dropped but for the first [`HEAD`] ones.
//! - While the request is being written, the answer side is read too, so a handler that starts
//!   answering before it has read the whole request cannot deadlock the exchange.
//!
//! # Non-guarantees
//! - Bytes after the answer's newline (a handler writing more than one line) stay in the
//!   `pending` buffer for the next exchange, where they are taken as its answer, as the
//!   lockstep protocol reads them; they count against the next answer's cap.

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};

use crate::stop::{Stop, StopReason, POLL};

/// Bytes read from the answer pipe at a time.
pub const CHUNK: usize = 64 * 1024;
/// Bytes of a cut answer kept for the error message.
pub const HEAD: usize = 200;

/// What one exchange got.
#[derive(Debug, PartialEq, Eq)]
pub enum Got {
    /// One answer line, its newline taken off (the bytes before the end of the stream when the
    /// handler closed it in the middle of a line).
    Line(Vec<u8>),
    /// The handler closed its stdout with no bytes pending.
    Closed,
    /// The handler closed its stdin (or exited) before the whole request was written.
    WriteClosed,
    /// The deadline passed.
    Timeout,
    /// The run stopped (a signal, its deadline) before an answer came.
    Stopped(StopReason),
    /// The answer line passed the cap: its first [`HEAD`] bytes.
    TooLarge(Vec<u8>),
    /// The `give_up` test of [`exchange_watched`] said to stop waiting.
    GaveUp,
}

/// Put `fd` (a pipe end memcert holds) in non-blocking mode.
///
/// # Errors
/// The `ioctl(FIONBIO)` error.
pub fn nonblocking(fd: impl AsFd) -> std::io::Result<()> {
    Ok(rustix::io::ioctl_fionbio(fd, true)?)
}

/// Write `request` to `input` and read one line from `output` into `pending` (bytes already
/// read and not yet taken), by `deadline`, holding at most `cap` bytes of the line (plus one
/// [`CHUNK`]). Both pipes must be non-blocking ([`nonblocking`]). `stop` is looked at least every
/// [`crate::stop::POLL`]: once it fires, the exchange ends with [`Got::Stopped`].
///
/// # Errors
/// An I/O error other than the pipe closing (`EPIPE` is [`Got::WriteClosed`], end of stream
/// [`Got::Closed`] or [`Got::Line`]).
pub fn exchange<W, R>(
    input: &mut W,
    output: &mut R,
    pending: &mut Vec<u8>,
    request: &[u8],
    deadline: Instant,
    cap: usize,
    stop: &Stop,
) -> std::io::Result<Got>
where
    W: Write + AsFd,
    R: Read + AsFd,
{
    exchange_watched(
        input,
        output,
        pending,
        request,
        deadline,
        cap,
        stop,
        &|| false,
    )
}

/// [`exchange`], also asking `give_up` at most every [`crate::stop::POLL`] while it waits: once
/// it says true, the exchange ends with [`Got::GaveUp`] (a handler that has read more than it
/// may for one call is not waited for until the deadline).
///
/// # Errors
/// As [`exchange`].
#[allow(clippy::too_many_arguments)]
pub fn exchange_watched<W, R>(
    input: &mut W,
    output: &mut R,
    pending: &mut Vec<u8>,
    request: &[u8],
    deadline: Instant,
    cap: usize,
    stop: &Stop,
    give_up: &dyn Fn() -> bool,
) -> std::io::Result<Got>
where
    W: Write + AsFd,
    R: Read + AsFd,
{
    let mut asked = Instant::now();
    let mut out = request;
    let mut chunk = vec![0u8; CHUNK];
    // `pending[..scanned]` holds no newline.
    let mut scanned = 0;
    loop {
        let newline = pending[scanned..]
            .iter()
            .position(|&b| b == b'\n')
            .map(|i| scanned + i);
        scanned = newline.unwrap_or(pending.len());
        if newline.is_some_and(|at| at > cap) || (newline.is_none() && pending.len() > cap) {
            let head = pending[..pending.len().min(HEAD)].to_vec();
            pending.clear();
            pending.shrink_to(CHUNK);
            return Ok(Got::TooLarge(head));
        }
        if let (Some(at), true) = (newline, out.is_empty()) {
            let rest = pending.split_off(at + 1);
            let mut line = std::mem::replace(pending, rest);
            line.pop();
            return Ok(Got::Line(line));
        }
        let Some(left) = deadline.checked_duration_since(Instant::now()) else {
            return Ok(Got::Timeout);
        };
        if let Some(why) = stop.reason() {
            return Ok(Got::Stopped(why));
        }
        if asked.elapsed() >= POLL {
            asked = Instant::now();
            if give_up() {
                return Ok(Got::GaveUp);
            }
        }
        let (write_ready, read_ready) = wait(
            input,
            output,
            !out.is_empty(),
            newline.is_none(),
            left.min(POLL),
        )?;
        if write_ready {
            match input.write(out) {
                Ok(n) => out = &out[n..],
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::BrokenPipe => return Ok(Got::WriteClosed),
                Err(e) => return Err(e),
            }
        }
        if read_ready {
            match output.read(&mut chunk) {
                Ok(0) if pending.is_empty() => return Ok(Got::Closed),
                Ok(0) => return Ok(Got::Line(std::mem::take(pending))),
                Ok(n) => extend_bounded(pending, &chunk[..n], cap),
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Wait until `input` can be written (when `write`) or `output` read (when `read`), or `left`
/// passes; which of the two is ready (a closed or failed pipe counts as ready, so the write or
/// read that follows reports it).
fn wait(
    input: &impl AsFd,
    output: &impl AsFd,
    write: bool,
    read: bool,
    left: Duration,
) -> std::io::Result<(bool, bool)> {
    let mut fds = Vec::with_capacity(2);
    if write {
        fds.push(PollFd::new(input, PollFlags::OUT));
    }
    if read {
        fds.push(PollFd::new(output, PollFlags::IN));
    }
    let timeout = Timespec {
        tv_sec: left.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(left.subsec_nanos()),
    };
    match poll(&mut fds, Some(&timeout)) {
        Ok(_) => {}
        Err(rustix::io::Errno::INTR) => return Ok((false, false)),
        Err(e) => return Err(e.into()),
    }
    let ready = |f: &PollFd| !f.revents().is_empty();
    Ok(match (write, read) {
        (true, true) => (ready(&fds[0]), ready(&fds[1])),
        (true, false) => (ready(&fds[0]), false),
        (false, true) => (false, ready(&fds[0])),
        (false, false) => (false, false),
    })
}

/// Append `bytes` to `buf`, growing its allocation no further than `cap` plus one [`CHUNK`]
/// (doubling as a `Vec` does, but never past that bound).
fn extend_bounded(buf: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    let need = buf.len() + bytes.len();
    if need > buf.capacity() {
        let bound = cap.saturating_add(CHUNK).max(need);
        let want = (buf.capacity() * 2).max(need).min(bound);
        buf.reserve_exact(want - buf.len());
    }
    buf.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    /// `sh -c script` with piped stdin and stdout, both non-blocking on memcert's side.
    fn spawn(script: &str) -> std::process::Child {
        let child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        nonblocking(child.stdin.as_ref().unwrap()).unwrap();
        nonblocking(child.stdout.as_ref().unwrap()).unwrap();
        child
    }

    fn run(child: &mut std::process::Child, request: &[u8], secs: f64, cap: usize) -> Got {
        let mut pending = Vec::new();
        let deadline = Instant::now() + Duration::from_secs_f64(secs);
        let got = exchange(
            child.stdin.as_mut().unwrap(),
            child.stdout.as_mut().unwrap(),
            &mut pending,
            request,
            deadline,
            cap,
            &Stop::never(),
        )
        .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        got
    }

    #[test]
    fn a_line_comes_back_without_its_newline_and_the_rest_stays_pending() {
        let mut child = spawn("read l; printf '%s\\nextra' \"$l\"; sleep 5");
        let mut pending = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = exchange(
            child.stdin.as_mut().unwrap(),
            child.stdout.as_mut().unwrap(),
            &mut pending,
            b"hello\n",
            deadline,
            100,
            &Stop::never(),
        )
        .unwrap();
        assert_eq!(got, Got::Line(b"hello".to_vec()));
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn an_endless_line_is_cut_at_the_cap() {
        // `yes` writes `y\n` forever: a line without end is the same with tr deleting newlines.
        let mut child = spawn("read l; yes | tr -d '\\n'");
        let started = Instant::now();
        match run(&mut child, b"go\n", 20.0, 1 << 20) {
            Got::TooLarge(head) => assert_eq!(head, vec![b'y'; HEAD]),
            other => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(15));
    }

    #[test]
    fn a_long_line_with_a_newline_past_the_cap_is_too_large() {
        let mut child = spawn("read l; head -c 5000 /dev/zero | tr '\\0' a; echo");
        assert_eq!(
            run(&mut child, b"x\n", 10.0, 4096),
            Got::TooLarge(vec![b'a'; HEAD])
        );
        let mut child = spawn("read l; head -c 4096 /dev/zero | tr '\\0' a; echo");
        assert_eq!(
            run(&mut child, b"x\n", 10.0, 4096),
            Got::Line(vec![b'a'; 4096])
        );
    }

    // See: issue 13 ("writing a request is a blocking write_all with no deadline"): a handler
    // that never reads its stdin hung memcert past --timeout.
    #[test]
    fn a_handler_that_never_reads_its_stdin_times_out() {
        let mut child = spawn("sleep 30");
        let request = vec![b'x'; 4 << 20];
        let started = Instant::now();
        assert_eq!(run(&mut child, &request, 0.5, 1024), Got::Timeout);
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn a_closed_stdin_and_a_closed_stdout_are_told_apart() {
        let mut child = spawn("exec 0<&-; sleep 5");
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            run(&mut child, &vec![b'x'; 1 << 20], 10.0, 1024),
            Got::WriteClosed
        );
        let mut child = spawn("read l; exec 1>&-; sleep 5");
        assert_eq!(run(&mut child, b"x\n", 10.0, 1024), Got::Closed);
        let mut child = spawn("read l; printf partial");
        assert_eq!(
            run(&mut child, b"x\n", 10.0, 1024),
            Got::Line(b"partial".to_vec())
        );
    }

    #[test]
    fn the_buffer_never_grows_past_the_cap_and_a_chunk() {
        let cap = 1 << 20;
        let mut buf = Vec::new();
        while buf.len() <= cap {
            extend_bounded(&mut buf, &[0; CHUNK], cap);
        }
        assert!(buf.capacity() <= cap + CHUNK, "{}", buf.capacity());
    }

    // See: issue 12 (a handler that read more than 16 MiB for one call is FAIL at once, not
    // waited for until the deadline).
    #[test]
    fn a_wait_ends_when_give_up_says_so_and_not_before() {
        let mut child = spawn("read l; sleep 30");
        let mut pending = Vec::new();
        let asked = std::cell::Cell::new(0);
        let got = exchange_watched(
            child.stdin.as_mut().unwrap(),
            child.stdout.as_mut().unwrap(),
            &mut pending,
            b"x\n",
            Instant::now() + Duration::from_secs(20),
            1024,
            &Stop::never(),
            &|| {
                asked.set(asked.get() + 1);
                asked.get() == 3
            },
        )
        .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(got, Got::GaveUp);
        assert_eq!(asked.get(), 3);
    }
}
