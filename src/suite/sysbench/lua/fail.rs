//! The one-line error of a script's side ([`Fail`]).

/// The first line of a Lua error, which names the file and line.
pub fn one_line(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::CallbackError { cause, .. } => return one_line(cause),
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    let first = text.lines().next().unwrap_or("").trim();
    first
        .strip_prefix("runtime error: ")
        .unwrap_or(first)
        .to_string()
}

/// What went wrong in a script or its command line, in one line (the file
/// and line first, where Lua says them), and whether Lua raised it (a
/// syntax or runtime error of the script) or rqps found it (an option, a
/// command).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct Fail {
    pub message: String,
    pub raised_by_lua: bool,
}

impl Fail {
    /// A Lua error, as its first line.
    pub fn lua(e: &mlua::Error) -> Fail {
        Fail {
            message: one_line(e),
            raised_by_lua: true,
        }
    }
}

impl From<String> for Fail {
    fn from(message: String) -> Fail {
        Fail {
            message,
            raised_by_lua: false,
        }
    }
}

impl From<&str> for Fail {
    fn from(message: &str) -> Fail {
        Fail::from(message.to_string())
    }
}

impl From<Fail> for String {
    fn from(f: Fail) -> String {
        f.message
    }
}
