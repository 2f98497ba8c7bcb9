//! Injected faults (`--inject`): their syntax (`STATUS@TURN`, `drop@TURN`, `truncate@TURN`,
//! each optionally `xTIMES`) and which request of a turn a fault hits.

/// A fault the mock injects, to certify the app's own retry and failure behaviour
/// (`--inject`). Turns count from 1, as a person reads a transcript; each session (transcript)
/// gets the fault anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// `STATUS@TURN[xTIMES]` (e.g. `529@3`, `500@2x3`): the first `times` requests for that turn
    /// get a Messages-API-shaped error with this status (`overloaded_error` for 529,
    /// `rate_limit_error` for 429, `api_error` otherwise), `x-should-retry: true` and
    /// `retry-after-ms: 10` for 408, 409, 429 and 5xx, `false` otherwise. Both pinned SDKs retry a
    /// retryable status twice (wire:6).
    Status {
        /// HTTP status, 400..=599.
        status: u16,
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
    /// `drop@TURN[xTIMES]`: the answer to that turn is cut midway and the connection closed:
    /// a stream after its first delta event, a JSON body after half its bytes (the
    /// `Content-Length` promises the whole). Served by the hyper listener, since wiremock only
    /// sends whole bodies.
    Drop {
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
    /// `truncate@TURN[xTIMES]`: the answer to that turn ends early but cleanly (the HTTP body
    /// is complete): a stream after its first delta event, with no `message_delta` or
    /// `message_stop`; a JSON body after half its bytes. The Python SDK takes such a stream as a
    /// partial reply and stops without an error (wire:5).
    Truncate {
        /// 1-based turn.
        turn: usize,
        /// How many requests for that turn get it.
        times: usize,
    },
}

impl std::str::FromStr for Fault {
    type Err = String;

    /// Parse `529@3`, `500@2x3`, `drop@2`, `drop@1x2`, `truncate@2`.
    fn from_str(s: &str) -> Result<Fault, String> {
        let bad = || {
            format!("bad fault {s:?}: expected STATUS@TURN, drop@TURN or truncate@TURN, optionally xTIMES (e.g. 529@3, drop@2, 500@1x3)")
        };
        let (what, at) = s.split_once('@').ok_or_else(bad)?;
        let (turn, times) = match at.split_once('x') {
            Some((t, n)) => (t, n.parse::<usize>().map_err(|_| bad())?),
            None => (at, 1),
        };
        let turn = turn.parse::<usize>().map_err(|_| bad())?;
        if turn == 0 || times == 0 {
            return Err(format!("{}; turns and times count from 1", bad()));
        }
        match what {
            "drop" => return Ok(Fault::Drop { turn, times }),
            "truncate" => return Ok(Fault::Truncate { turn, times }),
            _ => {}
        }
        match what.parse::<u16>() {
            Ok(status @ 400..=599) => Ok(Fault::Status {
                status,
                turn,
                times,
            }),
            Ok(_) => Err(format!("{}; STATUS must be 400 to 599", bad())),
            Err(_) => Err(bad()),
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, turn, times) = match self {
            Fault::Status {
                status,
                turn,
                times,
            } => (status.to_string(), turn, times),
            Fault::Drop { turn, times } => ("drop".to_owned(), turn, times),
            Fault::Truncate { turn, times } => ("truncate".to_owned(), turn, times),
        };
        write!(f, "{what}@{turn}")?;
        if *times != 1 {
            write!(f, "x{times}")?;
        }
        Ok(())
    }
}

impl Fault {
    /// The turn it hits, counted from 1.
    pub fn turn(&self) -> usize {
        match self {
            Fault::Status { turn, .. }
            | Fault::Drop { turn, .. }
            | Fault::Truncate { turn, .. } => *turn,
        }
    }

    fn times(&self) -> usize {
        match self {
            Fault::Status { times, .. }
            | Fault::Drop { times, .. }
            | Fault::Truncate { times, .. } => *times,
        }
    }
}

/// The fault, if any, that the `attempt`-th request (from 1) for `turn` (from 1) gets: faults
/// count the requests for their turn, in the order given, and a retry past their `times` is
/// served normally.
pub(super) fn due(faults: &[Fault], turn: usize, attempt: usize) -> Option<Fault> {
    let mut earlier = 0;
    for fault in faults.iter().filter(|f| f.turn() == turn) {
        if attempt > earlier + fault.times() {
            earlier += fault.times();
            continue;
        }
        return Some(*fault);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_parse_and_print_back() {
        for s in [
            "529@3",
            "500@2x3",
            "drop@2",
            "drop@1x2",
            "429@1",
            "truncate@4",
        ] {
            assert_eq!(s.parse::<Fault>().unwrap().to_string(), s);
        }
        assert_eq!(
            "529@3".parse::<Fault>(),
            Ok(Fault::Status {
                status: 529,
                turn: 3,
                times: 1
            })
        );
        assert_eq!(
            "drop@2x2".parse::<Fault>(),
            Ok(Fault::Drop { turn: 2, times: 2 })
        );
        assert_eq!(
            "200@1".parse::<Fault>().unwrap_err(),
            "bad fault \"200@1\": expected STATUS@TURN, drop@TURN or truncate@TURN, optionally xTIMES (e.g. 529@3, drop@2, 500@1x3); STATUS must be 400 to 599"
        );
        for bad in ["529", "200@1", "drop@0", "529@1x0", "cut@2", "529@x"] {
            let e = bad.parse::<Fault>().unwrap_err();
            assert!(e.starts_with(&format!("bad fault {bad:?}")), "{e}");
        }
    }
}
