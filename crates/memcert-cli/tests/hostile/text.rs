//! Untrusted text stays text: what a handler writes (its stderr, a refused hello, its name, its
//! replies) reaches the terminal and every report only with its controls, ANSI escapes and
//! bidi or format characters shown as escapes, the JUnit parses, and the Markdown renders no
//! link or image from it.

use super::*;

/// The escapes the fixture's text shows as, in a terminal (a sample of them).
const SHOWN: [&str; 5] = [
    "\\u{1b}[2J",
    "\\u{1b}]52;c;cm0gLXJmIH4K\\u{7}",
    "\\u{1b}]0;pwned-title\\u{7}",
    "\\u{202e}txt.exe",
    "\\u{fffe}",
];

// See: issue 13 ("on the start-up error path (hello refused, handler dies before hello) raw
// clear-screen, window-title and OSC 52 clipboard-write sequences reach the terminal").
#[test]
fn escapes_at_start_up_reach_the_terminal_only_as_escapes() {
    for mode in ["die", "refuse"] {
        let tmp = tempfile::tempdir().unwrap();
        let out = memcert(tmp.path())
            .args(["certify", "--stdio"])
            .arg(format!("python3 {} {mode}", hostile("terminal_escapes.py")))
            .output()
            .unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{mode}: {stderr}");
        assert!(
            stderr.starts_with("memcert: error: the handler cannot be started"),
            "{stderr}"
        );
        assert_eq!(raw_hidden(&stderr, "\n"), Vec::<String>::new(), "{mode}");
        for s in SHOWN {
            assert!(stderr.contains(s), "{mode}: {s} not in {stderr}");
        }
        assert!(out.stdout.is_empty());
        assert_no_scratch(tmp.path());
    }
}

// See: issue 13 ("bidi overrides (U+202E) pass raw everywhere"; "JUnit XML does not parse when
// a reply holds U+FFFE or U+FFFF; links and images from a handler's stderr render in the
// Markdown summary").
#[test]
fn escapes_and_links_in_replies_stay_text_in_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = memcert(tmp.path())
        .args(["certify", "--verbose", "--cases", "view/dir/*"])
        .arg("--stdio")
        .arg(format!("python3 {} reply", hostile("terminal_escapes.py")))
        .args(report_flags(dir.path()))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("verdict: NOT CERTIFIED"), "{stdout}");
    for (what, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert_eq!(raw_hidden(text, "\n"), Vec::<String>::new(), "{what}");
    }
    for s in SHOWN {
        assert!(stdout.contains(s), "{s} not in {stdout}");
    }
    // Checked: valid, no raw hidden character, no link or image.
    let r = Reports::read(dir.path());
    let verdicts: Vec<&str> = r.json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts.len(), 8);
    assert!(
        verdicts.iter().all(|v| *v == "FAIL" || *v == "NON-STRICT"),
        "{verdicts:?}"
    );
    // JSON escapes are lossless: the reply reads back as the handler sent it.
    let reply = r.json["cases"][0]["steps"][0]["reply"]["content"]
        .as_str()
        .unwrap();
    assert!(
        reply.contains("\u{1b}]52;c;") && reply.contains("\u{202e}txt.exe"),
        "{reply}"
    );
    assert!(r.json["summary"]["target"]
        .as_str()
        .unwrap()
        .contains("\u{202e}"));
    // The handler's Markdown is in the summary, as code.
    assert!(
        r.md.contains("[click](https://evil.example/link)"),
        "{}",
        r.md
    );
    assert!(r.html.contains("\\u{202e}"));
    assert!(r.xml.contains("\\u{fffe}"));
}
