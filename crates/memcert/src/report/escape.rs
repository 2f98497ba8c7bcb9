//! Untrusted text made safe to show: every byte a handler or an app sent (a reply, its stderr, a
//! hello's name, an error it gave) passes through here before it reaches a terminal or a report.
//!
//! A character is *hidden* ([`hidden`]) when showing it could act instead of read: the C0 and C1
//! controls and DEL (ANSI escapes: clear-screen, window titles, OSC 52 clipboard writes), the
//! Unicode format characters (general category Cf: bidi embeddings, overrides, isolates and
//! marks, zero-width characters, the byte-order mark, tags), the line and paragraph separators,
//! and the noncharacters (U+FFFE, U+FFFF, ...). Each report shows a hidden character as an
//! escape in its own way:
//!
//! - terminal ([`terminal`], [`terminal_lines`]): `\t`, `\r`, `\n`, else `\u{1b}`;
//! - JSON ([`json`]): the JSON escape `\u001b`, `\u202e` (lossless: a parser reads back the
//!   same string);
//! - JUnit XML ([`xml`]): `\u{..}` as text, so the XML 1.0 characters it forbids (C0 but tab,
//!   newline and carriage return; U+FFFE, U+FFFF) never reach the file;
//! - Markdown and HTML: `\u{..}` as text, in their own modules.
//!
//! # Guarantees
//! - The output of [`terminal`] holds no hidden character; that of [`terminal_lines`] none but
//!   the newline.
//! - [`json`] and [`xml`] change nothing outside string values and text (every hidden character
//!   is outside ASCII's printable range, and JSON and XML markup is printable ASCII).

/// Whether `c` must be shown as an escape rather than as itself (see the module docs).
pub fn hidden(c: char) -> bool {
    let u = c as u32;
    c.is_control()
        || matches!(
            u,
            0x00AD
                | 0x0600..=0x0605
                | 0x061C
                | 0x06DD
                | 0x070F
                | 0x0890..=0x0891
                | 0x08E2
                | 0x180E
                | 0x200B..=0x200F
                | 0x2028..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xFDD0..=0xFDEF
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
        )
        || u & 0xFFFE == 0xFFFE
}

/// How a terminal shows hidden `c`: `\t`, `\r`, `\n`, else `\u{..}` (lower-case hex).
pub fn shown(c: char) -> String {
    match c {
        '\t' => "\\t".into(),
        '\r' => "\\r".into(),
        '\n' => "\\n".into(),
        c => format!("\\u{{{:x}}}", c as u32),
    }
}

/// `text` for one terminal line: every hidden character, the newline included, as an escape.
pub fn terminal(text: &str) -> String {
    escaped(text, |c| hidden(c))
}

/// `text` for a terminal, its newlines kept: every other hidden character as an escape.
pub fn terminal_lines(text: &str) -> String {
    escaped(text, |c| c != '\n' && hidden(c))
}

/// `text` with each character `escape` picks shown as [`shown`].
fn escaped(text: &str, escape: impl Fn(char) -> bool) -> String {
    if !text.chars().any(&escape) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            out.push_str(&shown(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// A serialised JSON text with every hidden character a JSON serialiser writes as itself (DEL,
/// the C1 controls, format characters, separators, noncharacters) written as a `\uXXXX` escape
/// instead (a surrogate pair above U+FFFF): the same JSON value, with nothing in the file that
/// could reorder or hide text where it is shown.
pub fn json(text: String) -> String {
    // C0 controls are escaped by the serialiser inside strings, and are whitespace outside.
    let pick = |c: char| c >= '\u{7f}' && hidden(c);
    if !text.chars().any(pick) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64);
    for c in text.chars() {
        if pick(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{:04x}", u));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A serialised XML text with every hidden character but tab, newline and carriage return shown
/// as `\u{..}` text: no character XML 1.0 forbids (a file with one does not parse) and no
/// format character that reorders or hides text.
pub fn xml(text: String) -> String {
    let pick = |c: char| !matches!(c, '\t' | '\n' | '\r') && hidden(c);
    if !text.chars().any(pick) {
        return text;
    }
    escaped(&text, pick)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_format_characters_are_hidden_and_text_is_not() {
        for c in [
            '\u{0}',
            '\u{7}',
            '\u{1b}',
            '\u{7f}',
            '\u{85}',
            '\u{9b}',
            '\u{ad}',
            '\u{200b}',
            '\u{200e}',
            '\u{2028}',
            '\u{202a}',
            '\u{202e}',
            '\u{2066}',
            '\u{2069}',
            '\u{feff}',
            '\u{fffe}',
            '\u{ffff}',
            '\u{1fffe}',
            '\u{e0041}',
            '\u{fff9}',
        ] {
            assert!(hidden(c), "{:x}", c as u32);
        }
        for c in ['a', ' ', 'é', '中', '\u{fffd}', '😀', '/', '\u{a0}'] {
            assert!(!hidden(c), "{:x}", c as u32);
        }
    }

    #[test]
    fn each_report_shows_them_its_own_way() {
        let evil = "a\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{202e}txt.exe\r\nb\u{fffe}\u{7f}";
        assert_eq!(
            terminal(evil),
            "a\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{1b}[2J\\u{202e}txt.exe\\r\\nb\\u{fffe}\\u{7f}"
        );
        assert_eq!(
            terminal_lines(evil),
            "a\\u{1b}]52;c;ZXZpbA==\\u{7}\\u{1b}[2J\\u{202e}txt.exe\\r\nb\\u{fffe}\\u{7f}"
        );
        let j = json(serde_json::to_string(&evil).unwrap());
        assert_eq!(
            j,
            "\"a\\u001b]52;c;ZXZpbA==\\u0007\\u001b[2J\\u202etxt.exe\\r\\nb\\ufffe\\u007f\""
        );
        assert_eq!(serde_json::from_str::<String>(&j).unwrap(), evil);
        assert_eq!(json("\"\u{e0041}\"".into()), "\"\\udb40\\udc41\"");
        assert_eq!(
            xml("<a>\u{1}\t\u{ffff}\u{2066}</a>".into()),
            "<a>\\u{1}\t\\u{ffff}\\u{2066}</a>"
        );
    }
}
