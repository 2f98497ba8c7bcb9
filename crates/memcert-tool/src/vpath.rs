//! Virtual memory paths: the only way a model-chosen path string becomes something a handler
//! may act on.
//!
//! A [`VPath`] is built only by [`VPath::parse`], so a `&VPath` argument proves the string
//! passed every rule below. Parsing is purely lexical: it touches no file and it never decodes,
//! normalises or re-roots anything. Confinement on disk is the handler's job
//! (`handler::reference` walks a `cap_std::fs::Dir` component by component); this module makes
//! sure the walk only ever sees plain, single names.
//!
//! # Grammar
//!
//! ```text
//! vpath     = "/memories" [ "/" ]                       ; the root, two spellings
//!           | "/memories/" name *( "/" name ) [ "/" ]   ; one trailing "/" allowed
//! name      = 1*255 bytes of UTF-8, none of them "/"
//! ```
//!
//! and each rule, with the reason it exists (bug ids are entries of `docs/threat-model.md`):
//!
//! | rule | [`Reason`] | why |
//! |---|---|---|
//! | at most 4096 bytes in all | [`Reason::PathTooLong`] | `PATH_MAX`; an over-long path becomes a host error that SDKs echo with the host path (spec:3/P-10, bug:B07) |
//! | no control character (Unicode category Cc, NUL included), no U+2028/U+2029, no bidirectional mark or override | [`Reason::ControlCharacter`] | a NUL truncates at the C boundary or crashes the handler (bug:B16); a newline or tab in a name forges listing lines (spec:3/P-11); an override disguises a name |
//! | `/memories` followed by `/` or the end | [`Reason::OutsideMemories`] | a bare prefix test accepts `/memoriesX` and `/memories_evil` (bug:B04, bug:B05, bug:B06) |
//! | no `.` component | [`Reason::DotComponent`] | one spelling per file; `.` aliases the root for delete and rename (bug:B07) |
//! | no `..` component | [`Reason::DotDotComponent`] | lexical traversal (bug:B01, bug:B02, bug:B03, bug:B18) |
//! | no empty component, except one trailing `/` | [`Reason::EmptyComponent`] | `//` aliases the root for delete (bug:B07) |
//! | no `\` | [`Reason::Backslash`] | a later layer or a Windows host treats it as a separator (bug:B21, bug:B25) |
//! | no percent-encoded `.`, `/`, `\` or control character, nor an overlong UTF-8 escape, at any decoding depth | [`Reason::PercentEncoded`] | a later decoding stage turns `%2e%2e%2f` or `%252e` or `%c0%af` into traversal, or `..%00` into `..` at the C boundary (bug:B16, bug:B19, bug:B20) |
//! | no component whose NFKC form contains `/` or `\` or is `.` or `..` | [`Reason::UnicodeLookalike`] | a careless normaliser folds U+FF0E, U+FF0F, U+2024, U+2025, U+FE52, U+FE68, U+FF3C into dots and separators |
//! | each component at most 255 bytes | [`Reason::ComponentTooLong`] | `NAME_MAX`; same host-error disclosure as above (spec:3/P-10) |
//!
//! The checks run in the order of [`Reason`]'s variants; the first rule broken is the reason
//! reported. Only `/memories` and `/memories/` are the root: `/memories/.`, `/memories//` and
//! `/memories/a/..` are refused here, so the root guards of delete and rename only ever see the
//! two real spellings.
//!
//! # Non-guarantees
//! - A valid `VPath` may still name a symlink, a FIFO or a hard link planted by another process;
//!   the handler must refuse those when it opens them.
//! - Case folding is not applied: on a case-insensitive filesystem `A` and `a` name one file (bug:B23).

use std::fmt;

use unicode_normalization::UnicodeNormalization;

/// The virtual root every memory path lives under.
pub const ROOT: &str = "/memories";
/// Longest accepted path, in bytes of UTF-8 (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// Longest accepted component, in bytes of UTF-8 (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// A memory path that passed every rule of the [module grammar](self).
///
/// Holds the path exactly as the model wrote it (echoed in replies) and its components
/// (`/memories/a/b/` has components `["a", "b"]` and a trailing slash).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct VPath {
    raw: String,
    components: Vec<String>,
    trailing_slash: bool,
}

/// Why a path string is not a [`VPath`]. Variants are in the order the checks run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reason {
    /// Longer than [`MAX_PATH_BYTES`].
    PathTooLong,
    /// Holds a character of Unicode category Cc (NUL, newline, tab, DEL, ...), U+2028, U+2029 or
    /// a bidirectional mark or override (see [`forbidden_char`]).
    ControlCharacter,
    /// Not `/memories` followed by `/` or the end of the string.
    OutsideMemories,
    /// An empty component (`//`), other than one trailing `/`.
    EmptyComponent,
    /// A `.` component.
    DotComponent,
    /// A `..` component.
    DotDotComponent,
    /// A backslash anywhere after `/memories/`.
    Backslash,
    /// A percent-encoded dot, slash, backslash or control character (`%00`: a decoder that runs
    /// after the check truncates `..%00` to `..`), or an overlong UTF-8 escape, at any depth.
    PercentEncoded,
    /// A component whose NFKC form contains `/` or `\` or equals `.` or `..`.
    UnicodeLookalike,
    /// A component longer than [`MAX_NAME_BYTES`].
    ComponentTooLong,
}

impl Reason {
    /// Every reason, in check order.
    pub const ALL: [Reason; 10] = [
        Reason::PathTooLong,
        Reason::ControlCharacter,
        Reason::OutsideMemories,
        Reason::EmptyComponent,
        Reason::DotComponent,
        Reason::DotDotComponent,
        Reason::Backslash,
        Reason::PercentEncoded,
        Reason::UnicodeLookalike,
        Reason::ComponentTooLong,
    ];

    /// The clause shown to the model after the path, e.g. `it contains a ".." component`.
    pub fn explanation(self) -> &'static str {
        match self {
            Reason::PathTooLong => "it is longer than 4096 bytes",
            Reason::ControlCharacter => {
                "it contains a control, line-separator or bidirectional-override character"
            }
            Reason::OutsideMemories => "it must be /memories or start with /memories/",
            Reason::EmptyComponent => "it contains an empty path component (//)",
            Reason::DotComponent => "it contains a \".\" component",
            Reason::DotDotComponent => "it contains a \"..\" component",
            Reason::Backslash => "it contains a backslash",
            Reason::PercentEncoded => {
                "it contains a percent-encoded dot, separator or control character"
            }
            Reason::UnicodeLookalike => {
                "it contains a character that normalises to a dot or a separator"
            }
            Reason::ComponentTooLong => "a path component is longer than 255 bytes",
        }
    }

    /// Stable kebab-case name, used in case ids and JSON reports.
    pub fn slug(self) -> &'static str {
        match self {
            Reason::PathTooLong => "path-too-long",
            Reason::ControlCharacter => "control-character",
            Reason::OutsideMemories => "outside-memories",
            Reason::EmptyComponent => "empty-component",
            Reason::DotComponent => "dot-component",
            Reason::DotDotComponent => "dotdot-component",
            Reason::Backslash => "backslash",
            Reason::PercentEncoded => "percent-encoded",
            Reason::UnicodeLookalike => "unicode-lookalike",
            Reason::ComponentTooLong => "component-too-long",
        }
    }
}

/// A refused path: the string as given (for the message) and the first rule it broke.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid memory path {}: {}", display_path(.path), .reason.explanation())]
pub struct VPathError {
    /// The path as the model sent it.
    pub path: String,
    /// The first rule it broke.
    pub reason: Reason,
}

/// True for the characters no memory path may hold: Unicode category Cc (NUL, newline, tab, DEL,
/// C1 controls), the line and paragraph separators U+2028 and U+2029, and the bidirectional
/// marks and overrides (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069), which can
/// forge listing lines or disguise a name (`b\u{202e}txt.exe`).
pub fn forbidden_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// Render a model-supplied path for a message: control characters are escaped (`\n`, `\u{0}`),
/// so a refused path can never forge lines in a reply; everything else is kept as is.
pub fn display_path(path: &str) -> String {
    // Printable ASCII (most paths) needs no escape: one copy.
    if path.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return path.to_owned();
    }
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if forbidden_char(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

impl VPath {
    /// Parse a model-supplied path. See the [module grammar](self) for every rule.
    ///
    /// # Errors
    /// [`VPathError`] with the first [`Reason`] broken, in the order of its variants.
    pub fn parse(path: &str) -> Result<VPath, VPathError> {
        let err = |reason| {
            Err(VPathError {
                path: path.to_owned(),
                reason,
            })
        };
        if path.len() > MAX_PATH_BYTES {
            return err(Reason::PathTooLong);
        }
        if path.chars().any(forbidden_char) {
            return err(Reason::ControlCharacter);
        }
        let rest = match path.strip_prefix(ROOT) {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => rest,
            _ => return err(Reason::OutsideMemories),
        };
        if rest.is_empty() || rest == "/" {
            return Ok(VPath {
                raw: path.to_owned(),
                components: Vec::new(),
                trailing_slash: rest == "/",
            });
        }
        let mut body = &rest[1..];
        let trailing_slash = body.ends_with('/');
        if trailing_slash {
            body = &body[..body.len() - 1];
        }
        // Each rule splits the body again (no list of names is made until the path is taken).
        let names = || body.split('/');
        // Structural rules first over the whole path, then the per-name rules, so a path with
        // both `..` and `%2e` reports the traversal.
        if names().any(str::is_empty) {
            return err(Reason::EmptyComponent);
        }
        if names().any(|n| n == ".") {
            return err(Reason::DotComponent);
        }
        if names().any(|n| n == "..") {
            return err(Reason::DotDotComponent);
        }
        if body.contains('\\') {
            return err(Reason::Backslash);
        }
        if names().any(has_encoded_separator) {
            return err(Reason::PercentEncoded);
        }
        if names().any(is_lookalike) {
            return err(Reason::UnicodeLookalike);
        }
        if names().any(|n| n.len() > MAX_NAME_BYTES) {
            return err(Reason::ComponentTooLong);
        }
        Ok(VPath {
            raw: path.to_owned(),
            components: names().map(str::to_owned).collect(),
            trailing_slash,
        })
    }

    /// The path exactly as the model sent it.
    pub fn as_str(&self) -> &str {
        &self.raw
    }

    /// The names below the root, outermost first; empty for the root.
    pub fn components(&self) -> &[String] {
        &self.components
    }

    /// True for `/memories` and `/memories/`.
    pub fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// True when the path ends in `/` (it then has to name a directory).
    pub fn has_trailing_slash(&self) -> bool {
        self.trailing_slash
    }

    /// The one canonical spelling: `/memories` or `/memories/a/b`, no trailing slash.
    /// `VPath::parse(&p.canonical())` gives back the same components.
    pub fn canonical(&self) -> String {
        let mut s = String::from(ROOT);
        for c in &self.components {
            s.push('/');
            s.push_str(c);
        }
        s
    }

    /// True when `self` is `other` or lies below it (compares whole components).
    pub fn starts_with(&self, other: &VPath) -> bool {
        self.components.starts_with(&other.components)
    }
}

impl fmt::Display for VPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

/// True when `name`, percent-decoded once, twice, ... (up to 4 times), ever shows a `.`, `/` or
/// `\` that came out of an escape, or an overlong UTF-8 lead byte, or an IIS `%u` escape of one
/// of those. The NFKC form is checked as well (`%２ｅ` folds to `%2e`).
fn has_encoded_separator(name: &str) -> bool {
    // An ASCII name is its own NFKC form (no ASCII character has a compatibility
    // decomposition), and one without `%` holds no escape: the answer without normalizing.
    if name.is_ascii() {
        return name.contains('%') && encoded_separator_bytes(name.as_bytes());
    }
    let nfkc: String = name.nfkc().collect();
    [name.as_bytes(), nfkc.as_bytes()]
        .iter()
        .any(|bytes| encoded_separator_bytes(bytes))
}

fn encoded_separator_bytes(bytes: &[u8]) -> bool {
    if !bytes.contains(&b'%') {
        return false;
    }
    let mut current = bytes.to_vec();
    for _ in 0..4 {
        if !current.contains(&b'%') {
            return false;
        }
        if escapes_a_separator(&current) {
            return true;
        }
        let decoded: Vec<u8> = percent_encoding::percent_decode(&current).collect();
        if decoded == current {
            return false;
        }
        current = decoded;
    }
    // Still changing after four rounds: nobody names a memory file like that.
    current.contains(&b'%')
}

/// One decoding round: does any `%XX` (or `%uXXXX`) escape in `s` stand for a separator, a dot
/// or an overlong UTF-8 sequence?
fn escapes_a_separator(s: &[u8]) -> bool {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut decoded_run: Vec<u8> = Vec::new();
    let mut i = 0;
    let mut found = false;
    while i < s.len() {
        if s[i] == b'%' {
            if let (Some(h), Some(l)) = (
                s.get(i + 1).and_then(|&b| hex(b)),
                s.get(i + 2).and_then(|&b| hex(b)),
            ) {
                decoded_run.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
            if matches!(s.get(i + 1), Some(b'u' | b'U')) && i + 6 <= s.len() {
                let code = s[i + 2..i + 6]
                    .iter()
                    .try_fold(0u32, |acc, &b| hex(b).map(|d| acc * 16 + d));
                if let Some(code) = code {
                    if let Some(c) = char::from_u32(code) {
                        let folded: String = c.to_string().nfkc().collect();
                        if folded.contains(['.', '/', '\\']) || folded.chars().any(forbidden_char) {
                            found = true;
                        }
                    }
                    i += 6;
                    continue;
                }
            }
        }
        found |= bad_escaped_run(&decoded_run);
        decoded_run.clear();
        i += 1;
    }
    found | bad_escaped_run(&decoded_run)
}

/// A run of bytes that came out of consecutive `%XX` escapes.
fn bad_escaped_run(run: &[u8]) -> bool {
    run.iter().enumerate().any(|(k, &b)| {
        let next = run.get(k + 1).copied();
        matches!(b, b'.' | b'/' | b'\\' | 0xC0 | 0xC1 | 0x00..=0x1F | 0x7F)
            || (b == 0xE0 && matches!(next, Some(0x80..=0x9F)))
            || (b == 0xF0 && matches!(next, Some(0x80..=0x8F)))
    })
}

fn is_lookalike(name: &str) -> bool {
    if name.is_ascii() {
        return false;
    }
    let folded: String = name.nfkc().collect();
    folded == "." || folded == ".." || folded.contains(['/', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(p: &str) -> Reason {
        VPath::parse(p).unwrap_err().reason
    }

    #[test]
    fn display_path_escapes_controls_and_bidi_marks_and_keeps_the_rest() {
        assert_eq!(display_path("/memories/a b~.txt"), "/memories/a b~.txt");
        assert_eq!(
            display_path("/memories/a\nb\u{7f}"),
            "/memories/a\\nb\\u{7f}"
        );
        assert_eq!(
            display_path("/memories/caf\u{e9}\u{202e}"),
            "/memories/caf\u{e9}\\u{202e}"
        );
    }

    #[test]
    fn accepts_root_spellings_and_names() {
        assert!(VPath::parse("/memories").unwrap().is_root());
        assert!(VPath::parse("/memories/").unwrap().is_root());
        let p = VPath::parse("/memories/a/b.txt").unwrap();
        assert_eq!(p.components(), ["a", "b.txt"]);
        assert_eq!(p.canonical(), "/memories/a/b.txt");
        let d = VPath::parse("/memories/dir/").unwrap();
        assert!(d.has_trailing_slash());
        assert_eq!(d.canonical(), "/memories/dir");
        assert_eq!(d.as_str(), "/memories/dir/");
    }

    #[test]
    fn literal_percent_and_dots_inside_names_are_fine() {
        for ok in [
            "/memories/100%.txt",
            "/memories/a%20b",
            "/memories/v1.2",
            "/memories/...",
            "/memories/.hidden",
            "/memories/a..b",
            "/memories/café",
            "/memories/Ａ",
        ] {
            assert!(VPath::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn each_reason_with_its_inputs() {
        let cases: &[(&str, Reason)] = &[
            ("/memoriesX/y", Reason::OutsideMemories),
            ("/memories_evil", Reason::OutsideMemories),
            ("memories/x", Reason::OutsideMemories),
            ("", Reason::OutsideMemories),
            ("/", Reason::OutsideMemories),
            ("/MEMORIES", Reason::OutsideMemories),
            (" /memories", Reason::OutsideMemories),
            ("/memories/.", Reason::DotComponent),
            ("/memories/./a", Reason::DotComponent),
            ("/memories/..", Reason::DotDotComponent),
            ("/memories/a/..", Reason::DotDotComponent),
            ("/memories/../memories_evil/x", Reason::DotDotComponent),
            ("/memories//", Reason::EmptyComponent),
            ("/memories//a", Reason::EmptyComponent),
            ("/memories/a//b", Reason::EmptyComponent),
            ("/memories/a\u{0}b", Reason::ControlCharacter),
            ("/memories/new\nline", Reason::ControlCharacter),
            ("/memories/a\tb", Reason::ControlCharacter),
            ("/memories/a\u{7f}", Reason::ControlCharacter),
            ("/memories/a\u{85}", Reason::ControlCharacter),
            ("/memories/a\u{2028}b", Reason::ControlCharacter),
            ("/memories/b\u{202e}txt.exe", Reason::ControlCharacter),
            ("/memories/\u{2066}x", Reason::ControlCharacter),
            ("/memories/a\\..\\x", Reason::Backslash),
            ("/memories/%2e%2e/x", Reason::PercentEncoded),
            ("/memories/%2E%2E/x", Reason::PercentEncoded),
            ("/memories/..%2fsecret", Reason::PercentEncoded),
            ("/memories/a%5cb", Reason::PercentEncoded),
            ("/memories/%252e%252e/x", Reason::PercentEncoded),
            ("/memories/%25252e/x", Reason::PercentEncoded),
            ("/memories/%c0%ae%c0%ae", Reason::PercentEncoded),
            ("/memories/..%c0%afetc", Reason::PercentEncoded),
            ("/memories/%e0%80%ae", Reason::PercentEncoded),
            ("/memories/%u002e%u002e", Reason::PercentEncoded),
            ("/memories/%uff0e", Reason::PercentEncoded),
            ("/memories/%%32%65", Reason::PercentEncoded),
            ("/memories/..%00", Reason::PercentEncoded),
            ("/memories/a%0ab", Reason::PercentEncoded),
            ("/memories/a%u0000", Reason::PercentEncoded),
            ("/memories/\u{ff0e}\u{ff0e}", Reason::UnicodeLookalike),
            ("/memories/\u{2025}", Reason::UnicodeLookalike),
            ("/memories/\u{2024}", Reason::UnicodeLookalike),
            ("/memories/\u{fe52}", Reason::UnicodeLookalike),
            ("/memories/a\u{ff0f}b", Reason::UnicodeLookalike),
            ("/memories/a\u{ff3c}b", Reason::UnicodeLookalike),
            ("/memories/a\u{fe68}b", Reason::UnicodeLookalike),
        ];
        for (input, want) in cases {
            assert_eq!(reason(input), *want, "{input:?}");
        }
        let long_name = format!("/memories/{}", "a".repeat(256));
        assert_eq!(reason(&long_name), Reason::ComponentTooLong);
        assert!(VPath::parse(&format!("/memories/{}", "a".repeat(255))).is_ok());
        let long_path = format!("/memories{}", "/abcdefg".repeat(512));
        assert_eq!(reason(&long_path), Reason::PathTooLong);
    }

    #[test]
    fn message_names_the_virtual_path_with_controls_escaped() {
        let e = VPath::parse("/memories/new\nline").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid memory path /memories/new\\nline: it contains a control, line-separator or bidirectional-override character"
        );
    }

    #[test]
    fn canonical_form_reparses_to_itself() {
        for p in ["/memories", "/memories/", "/memories/a/b/", "/memories/x y"] {
            let v = VPath::parse(p).unwrap();
            let again = VPath::parse(&v.canonical()).unwrap();
            assert_eq!(again.components(), v.components());
            assert_eq!(again.canonical(), v.canonical());
        }
    }
}
