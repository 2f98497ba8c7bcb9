//! Wire types of the memory tool: the six commands a `tool_use` block carries in its `input`,
//! and the `tool_result` a handler answers with.
//!
//! [`Command::parse`] turns an arbitrary JSON value into a typed [`Command`] or an
//! [`InputError`] whose message a model can act on (never a serde or Rust internal string).
//! The typed enum also (de)serialises with serde, tagged on `command`, with the wire field names
//! (`old_str`, `insert_line`, `view_range`), so catalogs and adapters build inputs from it.
//!
//! # What counts as malformed
//! A value that is not an object; `command` missing, not a string or not one of the six; a
//! required field missing or of the wrong JSON type; `view_range` that is not a list of exactly
//! two integers; `insert_line` that is not an integer. Unknown extra fields are ignored, as both
//! SDK handlers ignore them (behaviour spec spec:2.7/Z4). `new_str` may be omitted: the doc says
//! old_str is then deleted (spec:2.3/X1). A negative or too large `insert_line` is well-formed; the
//! handler answers it with the documented range error. An integer above `i64::MAX` is saturated
//! to `i64::MAX`, which is out of every file's range.
//!
//! # Non-guarantees
//! - Paths are plain strings here; they become [`crate::vpath::VPath`]s in the handler, so
//!   a path error is reported after the input is known to be well-formed.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One memory-tool command, as sent in a `tool_use` block's `input` (spec spec:2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// List a directory two levels deep, or show a file with line numbers.
    View {
        /// Directory or file to show.
        path: String,
        /// `[start, end]`, 1-based and inclusive; `end` may be -1 for "to the end".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view_range: Option<[i64; 2]>,
    },
    /// Create a new file.
    Create {
        /// File to create.
        path: String,
        /// Its whole content.
        file_text: String,
    },
    /// Replace the one occurrence of `old_str` in a file.
    StrReplace {
        /// File to edit.
        path: String,
        /// Text that must occur exactly once.
        old_str: String,
        /// Replacement; empty (or omitted on the wire) deletes `old_str`.
        #[serde(default)]
        new_str: String,
    },
    /// Insert text after line `insert_line` (0 = at the top).
    Insert {
        /// File to edit.
        path: String,
        /// Line after which to insert, in `[0, number of lines]`.
        insert_line: i64,
        /// Text to insert.
        insert_text: String,
    },
    /// Delete a file or a directory tree.
    Delete {
        /// File or directory to delete.
        path: String,
    },
    /// Rename or move a file or directory.
    Rename {
        /// Existing path.
        old_path: String,
        /// New path; must not exist.
        new_path: String,
    },
}

/// Why an input is malformed. Its `Display` is the message sent to the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// The input is not a JSON object.
    #[error("the tool input must be a JSON object with a \"command\" field, got {got}")]
    NotAnObject {
        /// JSON type name of what was sent.
        got: &'static str,
    },
    /// No `command` field.
    #[error("the tool input has no \"command\" field; use one of view, create, str_replace, insert, delete, rename")]
    MissingCommand,
    /// `command` is not one of the six.
    #[error(
        "unknown command {command}; use one of view, create, str_replace, insert, delete, rename"
    )]
    UnknownCommand {
        /// The command as sent (a JSON rendering if it was not a string).
        command: String,
    },
    /// A required field is absent (or null).
    #[error("the {command} command needs the field \"{field}\" ({expected})")]
    MissingField {
        /// Command name.
        command: &'static str,
        /// Field name.
        field: &'static str,
        /// What the field must hold.
        expected: &'static str,
    },
    /// A field has the wrong JSON type or shape.
    #[error("the field \"{field}\" of the {command} command must be {expected}, got {got}")]
    WrongType {
        /// Command name.
        command: &'static str,
        /// Field name.
        field: &'static str,
        /// What the field must hold.
        expected: &'static str,
        /// Short rendering of what was sent (at most 60 characters).
        got: String,
    },
}

const STRING: &str = "a string";
const INTEGER: &str = "an integer";
const RANGE: &str = "a list of two integers [start, end]";

impl Command {
    /// Parse a `tool_use` input. See the module docs for what is malformed.
    ///
    /// # Errors
    /// [`InputError`], whose message is safe to send to the model as is.
    pub fn parse(input: &Value) -> Result<Command, InputError> {
        let obj = input.as_object().ok_or(InputError::NotAnObject {
            got: type_name(input),
        })?;
        let command = match obj.get("command") {
            None | Some(Value::Null) => return Err(InputError::MissingCommand),
            Some(Value::String(s)) => s.as_str(),
            Some(other) => {
                return Err(InputError::UnknownCommand {
                    command: short(other),
                })
            }
        };
        let f = Fields { obj, command };
        Ok(match command {
            "view" => Command::View {
                path: f.string("path")?,
                view_range: f.range("view_range")?,
            },
            "create" => Command::Create {
                path: f.string("path")?,
                file_text: f.string("file_text")?,
            },
            "str_replace" => Command::StrReplace {
                path: f.string("path")?,
                old_str: f.string("old_str")?,
                new_str: f.optional_string("new_str")?.unwrap_or_default(),
            },
            "insert" => Command::Insert {
                path: f.string("path")?,
                insert_line: f.integer("insert_line")?,
                insert_text: f.string("insert_text")?,
            },
            "delete" => Command::Delete {
                path: f.string("path")?,
            },
            "rename" => Command::Rename {
                old_path: f.string("old_path")?,
                new_path: f.string("new_path")?,
            },
            other => {
                return Err(InputError::UnknownCommand {
                    command: other.to_owned(),
                })
            }
        })
    }

    /// The wire name of the command (`"str_replace"`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Command::View { .. } => "view",
            Command::Create { .. } => "create",
            Command::StrReplace { .. } => "str_replace",
            Command::Insert { .. } => "insert",
            Command::Delete { .. } => "delete",
            Command::Rename { .. } => "rename",
        }
    }

    /// The command as a `tool_use` input object.
    pub fn to_input(&self) -> Value {
        serde_json::to_value(self).expect("a Command always serialises")
    }
}

/// Every string value inside a JSON value (paths, texts), in document order.
pub fn strings_in(v: &Value) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut out);
    out
}

/// The six command names, in spec order.
pub const COMMANDS: [&str; 6] = [
    "view",
    "create",
    "str_replace",
    "insert",
    "delete",
    "rename",
];

/// The fields a command needs, as (name, expected type) pairs, in wire order.
pub fn required_fields(command: &str) -> &'static [(&'static str, &'static str)] {
    match command {
        "view" => &[("path", STRING)],
        "create" => &[("path", STRING), ("file_text", STRING)],
        "str_replace" => &[("path", STRING), ("old_str", STRING)],
        "insert" => &[
            ("path", STRING),
            ("insert_line", INTEGER),
            ("insert_text", STRING),
        ],
        "delete" => &[("path", STRING)],
        "rename" => &[("old_path", STRING), ("new_path", STRING)],
        _ => &[],
    }
}

struct Fields<'a> {
    obj: &'a Map<String, Value>,
    command: &'a str,
}

impl Fields<'_> {
    fn name(&self) -> &'static str {
        COMMANDS
            .iter()
            .find(|c| **c == self.command)
            .copied()
            .unwrap_or("unknown")
    }

    fn missing(&self, field: &'static str, expected: &'static str) -> InputError {
        InputError::MissingField {
            command: self.name(),
            field,
            expected,
        }
    }

    fn wrong(&self, field: &'static str, expected: &'static str, got: &Value) -> InputError {
        InputError::WrongType {
            command: self.name(),
            field,
            expected,
            got: short(got),
        }
    }

    fn string(&self, field: &'static str) -> Result<String, InputError> {
        self.optional_string(field)?
            .ok_or_else(|| self.missing(field, STRING))
    }

    fn optional_string(&self, field: &'static str) -> Result<Option<String>, InputError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(self.wrong(field, STRING, other)),
        }
    }

    fn integer(&self, field: &'static str) -> Result<i64, InputError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Err(self.missing(field, INTEGER)),
            Some(v) => as_integer(v).ok_or_else(|| self.wrong(field, INTEGER, v)),
        }
    }

    fn range(&self, field: &'static str) -> Result<Option<[i64; 2]>, InputError> {
        match self.obj.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(v @ Value::Array(items)) => match items.as_slice() {
                [a, b] => match (as_integer(a), as_integer(b)) {
                    (Some(a), Some(b)) => Ok(Some([a, b])),
                    _ => Err(self.wrong(field, RANGE, v)),
                },
                _ => Err(self.wrong(field, RANGE, v)),
            },
            Some(other) => Err(self.wrong(field, RANGE, other)),
        }
    }
}

fn as_integer(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    n.as_i64().or_else(|| n.as_u64().map(|_| i64::MAX))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// JSON rendering of a value, cut to 60 characters, with control characters escaped.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Content of a `tool_result`: a string, a list of content blocks, or null (a Python handler
/// that returned `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text, what every SDK handler answers.
    Text(String),
    /// Content blocks, e.g. `[{"type":"text","text":"..."}]`.
    Blocks(Vec<Value>),
    /// `null`.
    Null,
}

impl Content {
    /// The text a model reads: the string, or the `text` of every text block joined with `\n`;
    /// `None` for null.
    pub fn text(&self) -> Option<String> {
        match self {
            Content::Text(s) => Some(s.clone()),
            Content::Blocks(blocks) => Some(
                blocks
                    .iter()
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Content::Null => None,
        }
    }
}

/// A handler's answer to one command, as sent back in a `tool_result` block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// What the model reads.
    pub content: Content,
    /// True when the command failed. On the wire the key is absent on success (spec spec:1).
    pub is_error: bool,
}

impl ToolResult {
    /// A successful answer with text.
    pub fn ok(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: Content::Text(text.into()),
            is_error: false,
        }
    }

    /// An error answer with text.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            content: Content::Text(text.into()),
            is_error: true,
        }
    }

    /// The text of the content (see [`Content::text`]); empty for null.
    pub fn text(&self) -> String {
        self.content.text().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        Command::parse(&v).unwrap_err().to_string()
    }

    #[test]
    fn parses_every_command() {
        assert_eq!(
            Command::parse(&json!({"command":"view","path":"/memories","view_range":[1,-1]}))
                .unwrap(),
            Command::View {
                path: "/memories".into(),
                view_range: Some([1, -1])
            }
        );
        assert_eq!(
            Command::parse(&json!({"command":"str_replace","path":"/memories/a","old_str":"x"}))
                .unwrap(),
            Command::StrReplace {
                path: "/memories/a".into(),
                old_str: "x".into(),
                new_str: String::new()
            }
        );
        assert_eq!(
            Command::parse(&json!({"command":"insert","path":"/memories/a","insert_line":-4,"insert_text":"x","extra":1}))
                .unwrap(),
            Command::Insert {
                path: "/memories/a".into(),
                insert_line: -4,
                insert_text: "x".into()
            }
        );
        assert_eq!(
            Command::parse(&json!({"command":"insert","path":"/m","insert_line":18446744073709551615u64,"insert_text":"x"}))
                .unwrap(),
            Command::Insert {
                path: "/m".into(),
                insert_line: i64::MAX,
                insert_text: "x".into()
            }
        );
    }

    #[test]
    fn malformed_messages_are_plain_sentences() {
        assert_eq!(
            err(json!("view")),
            "the tool input must be a JSON object with a \"command\" field, got a string"
        );
        assert_eq!(
            err(json!({"path":"/memories"})),
            "the tool input has no \"command\" field; use one of view, create, str_replace, insert, delete, rename"
        );
        assert_eq!(
            err(json!({"command":"foo"})),
            "unknown command foo; use one of view, create, str_replace, insert, delete, rename"
        );
        assert_eq!(
            err(json!({"command":"view","path":123})),
            "the field \"path\" of the view command must be a string, got 123"
        );
        assert_eq!(
            err(json!({"command":"view","path":"/memories","view_range":[1,2.7]})),
            "the field \"view_range\" of the view command must be a list of two integers [start, end], got [1,2.7]"
        );
        assert_eq!(
            err(json!({"command":"insert","path":"/m","insert_line":"1","insert_text":"x"})),
            "the field \"insert_line\" of the insert command must be an integer, got \"1\""
        );
        assert_eq!(
            err(json!({"command":"create","path":"/memories/a"})),
            "the create command needs the field \"file_text\" (a string)"
        );
    }

    fn valid(command: &str) -> Value {
        let mut v = json!({"command": command});
        for (field, kind) in required_fields(command) {
            v[*field] = if *kind == INTEGER {
                json!(0)
            } else {
                json!("/memories/a")
            };
        }
        v
    }

    #[test]
    fn every_field_of_every_command_missing_or_mistyped() {
        for command in COMMANDS {
            assert!(Command::parse(&valid(command)).is_ok(), "{command}");
            for (field, kind) in required_fields(command) {
                let mut missing = valid(command);
                missing.as_object_mut().unwrap().remove(*field);
                assert_eq!(
                    Command::parse(&missing).unwrap_err().to_string(),
                    format!("the {command} command needs the field \"{field}\" ({kind})")
                );
                let mut null = valid(command);
                null[*field] = Value::Null;
                assert!(matches!(
                    Command::parse(&null),
                    Err(InputError::MissingField { .. })
                ));
                let mut wrong = valid(command);
                wrong[*field] = if *kind == INTEGER {
                    json!("1")
                } else {
                    json!(5)
                };
                let got = if *kind == INTEGER { "\"1\"" } else { "5" };
                assert_eq!(
                    Command::parse(&wrong).unwrap_err().to_string(),
                    format!(
                        "the field \"{field}\" of the {command} command must be {kind}, got {got}"
                    )
                );
            }
        }
        let mut v = valid("str_replace");
        v["new_str"] = json!([1]);
        assert_eq!(
            Command::parse(&v).unwrap_err().to_string(),
            "the field \"new_str\" of the str_replace command must be a string, got [1]"
        );
        for range in [
            json!([1]),
            json!([1, 2, 3]),
            json!("1-2"),
            json!([1.0, 2]),
            json!([true, 2]),
        ] {
            let mut v = valid("view");
            v["view_range"] = range;
            assert!(matches!(
                Command::parse(&v),
                Err(InputError::WrongType {
                    field: "view_range",
                    ..
                })
            ));
        }
    }

    #[test]
    fn round_trips_through_serde() {
        let c = Command::Rename {
            old_path: "/memories/a".into(),
            new_path: "/memories/b".into(),
        };
        let v = c.to_input();
        assert_eq!(
            v,
            json!({"command":"rename","old_path":"/memories/a","new_path":"/memories/b"})
        );
        assert_eq!(Command::parse(&v).unwrap(), c);
        assert_eq!(serde_json::from_value::<Command>(v).unwrap(), c);
    }

    #[test]
    fn content_text_of_blocks() {
        let c: Content = serde_json::from_value(
            json!([{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]),
        )
        .unwrap();
        assert_eq!(c.text().unwrap(), "a\nb");
        let n: Content = serde_json::from_value(Value::Null).unwrap();
        assert_eq!(n, Content::Null);
    }
}
