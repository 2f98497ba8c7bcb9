//! The input of the `command_sequence` fuzz target and of the model property tests: a
//! [`Sequence`] of commands whose paths and texts are spelled from small alphabets, and
//! [`decode`], which reads one from fuzz bytes.

use crate::protocol::Command;

/// Most commands of a sequence that are run; the rest are ignored.
pub const MAX_COMMANDS: usize = 16;

/// Fixed names a [`PathToken::Name`] picks from: the planted names (so commands meet the
/// links, the FIFO, the hard link) and a few new ones.
pub const NAMES: [&str; 18] = [
    "a.txt",
    "d",
    "b.txt",
    "in",
    "rel",
    "out",
    "up",
    "dang",
    "fifo",
    "hard.txt",
    "bin.dat",
    ".hidden",
    "node_modules",
    "e",
    "loop",
    "big.txt",
    "new",
    "canary.txt",
];

/// Percent-encoded pieces a [`PathToken::Encoded`] picks from.
pub const ENCODED: [&str; 8] = [
    "%2e",
    "%2e%2e",
    "%2f",
    "%5c",
    "%252e",
    "%c0%af",
    "%00",
    "%2E%2E%2F",
];

/// Unicode look-alikes of dots and separators a [`PathToken::Lookalike`] picks from.
pub const LOOKALIKES: [&str; 7] = [
    "\u{ff0e}",
    "\u{ff0e}\u{ff0e}",
    "\u{2024}",
    "\u{2025}",
    "\u{ff0f}",
    "\u{fe52}",
    "\u{ff3c}",
];

/// File texts a [`TextSpec::Fixed`] picks from: pieces of the planted files (so str_replace
/// finds them once or several times), newlines, non-ASCII, and one text over
/// [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES).
pub const TEXTS: [&str; 11] = [
    "",
    "alpha",
    "beta\n",
    "alpha\nbeta\ngamma\n",
    "\n",
    "a",
    "new text\n",
    "line\nline\nline\n",
    "caf\u{e9} \u{1f600}\n",
    "a\r\nb",
    BIG_TEXT,
];

/// A text over [`MAX_FILE_BYTES`](super::MAX_FILE_BYTES), also planted as `big.txt`.
pub(super) const BIG_TEXT: &str = concat!(
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n",
);

/// One piece of a path; a path is its pieces concatenated.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PathToken {
    /// `/memories`.
    Root,
    /// `/` (an empty component, or a trailing slash).
    Slash,
    /// `/` and a fixed name, [`NAMES`]`[n % len]`.
    Name(u8),
    /// `/.`.
    Dot,
    /// `/..`.
    DotDot,
    /// `\`.
    Backslash,
    /// NUL.
    Nul,
    /// [`ENCODED`]`[n % len]`, e.g. `%2e%2e`.
    Encoded(u8),
    /// [`LOOKALIKES`]`[n % len]`, e.g. U+FF0E.
    Lookalike(u8),
    /// `/` and a name of `250 + n % 8` bytes (the limit is 255).
    LongName(u8),
    /// This text, as is.
    Raw(String),
}

impl PathToken {
    fn push_to(&self, out: &mut String) {
        match self {
            PathToken::Root => out.push_str(crate::vpath::ROOT),
            PathToken::Slash => out.push('/'),
            PathToken::Name(n) => {
                out.push('/');
                out.push_str(NAMES[*n as usize % NAMES.len()]);
            }
            PathToken::Dot => out.push_str("/."),
            PathToken::DotDot => out.push_str("/.."),
            PathToken::Backslash => out.push('\\'),
            PathToken::Nul => out.push('\0'),
            PathToken::Encoded(n) => out.push_str(ENCODED[*n as usize % ENCODED.len()]),
            PathToken::Lookalike(n) => out.push_str(LOOKALIKES[*n as usize % LOOKALIKES.len()]),
            PathToken::LongName(n) => {
                out.push('/');
                out.extend(std::iter::repeat_n('L', 250 + *n as usize % 8));
            }
            PathToken::Raw(s) => out.push_str(s),
        }
    }
}

/// A path: `/memories` when `rooted`, then the tokens.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PathSpec {
    /// Start with `/memories`.
    pub rooted: bool,
    /// The pieces after it.
    pub tokens: Vec<PathToken>,
}

impl PathSpec {
    /// A path that is this text as is (one [`PathToken::Raw`], not rooted).
    pub fn raw(text: impl Into<String>) -> PathSpec {
        PathSpec {
            rooted: false,
            tokens: vec![PathToken::Raw(text.into())],
        }
    }

    /// The path string.
    pub fn render(&self) -> String {
        let mut s = String::new();
        if self.rooted {
            s.push_str(crate::vpath::ROOT);
        }
        for t in &self.tokens {
            t.push_to(&mut s);
        }
        s
    }
}

/// A file text, an old_str or a new_str.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextSpec {
    /// [`TEXTS`]`[n % len]`.
    Fixed(u8),
    /// This text.
    Raw(String),
}

impl TextSpec {
    /// The text.
    pub fn render(&self) -> String {
        match self {
            TextSpec::Fixed(n) => TEXTS[*n as usize % TEXTS.len()].to_owned(),
            TextSpec::Raw(s) => s.clone(),
        }
    }
}

/// One command of a sequence; numbers are small so ranges and insert lines hit the edges.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandSpec {
    /// view, with an optional `view_range`.
    View {
        /// Path.
        path: PathSpec,
        /// `[start, end]`.
        range: Option<(i8, i8)>,
    },
    /// create.
    Create {
        /// Path.
        path: PathSpec,
        /// `file_text`.
        text: TextSpec,
    },
    /// str_replace.
    StrReplace {
        /// Path.
        path: PathSpec,
        /// `old_str`.
        old: TextSpec,
        /// `new_str`.
        new: TextSpec,
    },
    /// insert.
    Insert {
        /// Path.
        path: PathSpec,
        /// `insert_line`.
        line: i8,
        /// `insert_text`.
        text: TextSpec,
    },
    /// delete.
    Delete {
        /// Path.
        path: PathSpec,
    },
    /// rename.
    Rename {
        /// `old_path`.
        old: PathSpec,
        /// `new_path`.
        new: PathSpec,
    },
}

impl CommandSpec {
    /// The paths it names: `path`, or a rename's `old_path` and `new_path`.
    pub fn paths(&self) -> Vec<&PathSpec> {
        match self {
            CommandSpec::View { path, .. }
            | CommandSpec::Create { path, .. }
            | CommandSpec::StrReplace { path, .. }
            | CommandSpec::Insert { path, .. }
            | CommandSpec::Delete { path } => vec![path],
            CommandSpec::Rename { old, new } => vec![old, new],
        }
    }

    /// [`CommandSpec::paths`], to change.
    pub fn paths_mut(&mut self) -> Vec<&mut PathSpec> {
        match self {
            CommandSpec::View { path, .. }
            | CommandSpec::Create { path, .. }
            | CommandSpec::StrReplace { path, .. }
            | CommandSpec::Insert { path, .. }
            | CommandSpec::Delete { path } => vec![path],
            CommandSpec::Rename { old, new } => vec![old, new],
        }
    }

    /// The typed command.
    pub fn command(&self) -> Command {
        match self {
            CommandSpec::View { path, range } => Command::View {
                path: path.render(),
                view_range: range.map(|(a, b)| [a.into(), b.into()]),
            },
            CommandSpec::Create { path, text } => Command::Create {
                path: path.render(),
                file_text: text.render(),
            },
            CommandSpec::StrReplace { path, old, new } => Command::StrReplace {
                path: path.render(),
                old_str: old.render(),
                new_str: new.render(),
            },
            CommandSpec::Insert { path, line, text } => Command::Insert {
                path: path.render(),
                insert_line: (*line).into(),
                insert_text: text.render(),
            },
            CommandSpec::Delete { path } => Command::Delete {
                path: path.render(),
            },
            CommandSpec::Rename { old, new } => Command::Rename {
                old_path: old.render(),
                new_path: new.render(),
            },
        }
    }
}

/// The input of one run: which [`LAYOUT`](super::LAYOUT) items to plant, the profile, the
/// commands.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sequence {
    /// Bit `i` plants [`LAYOUT`](super::LAYOUT)`[i]`; the bits above it (14 and up) are the
    /// hazards `memcert fuzz` plants beyond the layout (`fuzz::search::plan`), which the
    /// harness ignores. Fuzz bytes give the low 16 bits only ([`decode`] reads two bytes, as
    /// when this was a `u16`, so committed inputs keep their meaning).
    #[cfg_attr(feature = "arbitrary", arbitrary(with = layout_bits))]
    pub layout: u32,
    /// [`Profile::ALL`](crate::text::Profile::ALL)`[profile % 3]`.
    pub profile: u8,
    /// The commands; only the first [`MAX_COMMANDS`] are run.
    pub commands: Vec<CommandSpec>,
}

/// The layout bits fuzz bytes give: a little-endian `u16`.
#[cfg(feature = "arbitrary")]
fn layout_bits(u: &mut arbitrary::Unstructured<'_>) -> arbitrary::Result<u32> {
    <u16 as arbitrary::Arbitrary>::arbitrary(u).map(u32::from)
}

/// Decode a fuzz input into a [`Sequence`], as `cargo fuzz` decodes a typed target's input
/// (`arbitrary_take_rest`).
///
/// # Errors
/// `None` when the bytes do not decode (the input is skipped).
#[cfg(feature = "arbitrary")]
pub fn decode(data: &[u8]) -> Option<Sequence> {
    use arbitrary::Arbitrary;
    Sequence::arbitrary_take_rest(arbitrary::Unstructured::new(data)).ok()
}

/// The bytes [`decode`] reads back as `seq` (`decode(&encode(seq)?) == Some(seq)`): to write
/// seed inputs drawn by a structured generator. `None` when `seq` holds a [`PathToken::Raw`]
/// or a [`TextSpec::Raw`], whose length `arbitrary` takes from the end of the data, or a layout
/// bit above 15 (fuzz bytes give 16).
///
/// The layout `arbitrary` 1.x derives: integers little-endian, a `bool` one byte (bit 0), an
/// enum variant a `u32` `v` picking `(v * variants) >> 32`, an `Option` a `bool` and the value,
/// a `Vec` a `true` byte before each element and a `false` byte after the last (the last field
/// of [`Sequence`] ends at the end of the data instead).
#[cfg(feature = "arbitrary")]
pub fn encode(seq: &Sequence) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    out.extend(u16::try_from(seq.layout).ok()?.to_le_bytes());
    out.push(seq.profile);
    for c in &seq.commands {
        out.push(1);
        encode_command(c, &mut out)?;
    }
    Some(out)
}

/// The `u32` that makes a derived `Arbitrary` enum of `count` variants pick `index`.
#[cfg(feature = "arbitrary")]
fn variant(index: u64, count: u64, out: &mut Vec<u8>) {
    let v = ((index << 32) + count - 1) / count;
    out.extend((v as u32).to_le_bytes());
}

#[cfg(feature = "arbitrary")]
fn encode_command(c: &CommandSpec, out: &mut Vec<u8>) -> Option<()> {
    let text = |t: &TextSpec, out: &mut Vec<u8>| match t {
        TextSpec::Fixed(n) => {
            variant(0, 2, out);
            out.push(*n);
            Some(())
        }
        TextSpec::Raw(_) => None,
    };
    match c {
        CommandSpec::View { path, range } => {
            variant(0, 6, out);
            encode_path(path, out)?;
            match range {
                Some((a, b)) => out.extend([1, a.to_le_bytes()[0], b.to_le_bytes()[0]]),
                None => out.push(0),
            }
        }
        CommandSpec::Create { path, text: t } => {
            variant(1, 6, out);
            encode_path(path, out)?;
            text(t, out)?;
        }
        CommandSpec::StrReplace { path, old, new } => {
            variant(2, 6, out);
            encode_path(path, out)?;
            text(old, out)?;
            text(new, out)?;
        }
        CommandSpec::Insert {
            path,
            line,
            text: t,
        } => {
            variant(3, 6, out);
            encode_path(path, out)?;
            out.push(line.to_le_bytes()[0]);
            text(t, out)?;
        }
        CommandSpec::Delete { path } => {
            variant(4, 6, out);
            encode_path(path, out)?;
        }
        CommandSpec::Rename { old, new } => {
            variant(5, 6, out);
            encode_path(old, out)?;
            encode_path(new, out)?;
        }
    }
    Some(())
}

#[cfg(feature = "arbitrary")]
fn encode_path(p: &PathSpec, out: &mut Vec<u8>) -> Option<()> {
    out.push(u8::from(p.rooted));
    for t in &p.tokens {
        out.push(1);
        let (index, arg) = match t {
            PathToken::Root => (0, None),
            PathToken::Slash => (1, None),
            PathToken::Name(n) => (2, Some(*n)),
            PathToken::Dot => (3, None),
            PathToken::DotDot => (4, None),
            PathToken::Backslash => (5, None),
            PathToken::Nul => (6, None),
            PathToken::Encoded(n) => (7, Some(*n)),
            PathToken::Lookalike(n) => (8, Some(*n)),
            PathToken::LongName(n) => (9, Some(*n)),
            PathToken::Raw(_) => return None,
        };
        variant(index, 11, out);
        out.extend(arg);
    }
    out.push(0);
    Some(())
}
