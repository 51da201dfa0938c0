//! A notes assistant: sync and async tools (one returning `anyhow::Result`), `ToolContext`,
//! the event stream printed as it happens, and the `execute_tool` tracing spans.
//!
//! ```text
//! cargo run --example notes_assistant
//! ```
//!
//! The notes live in a temporary folder the example creates. Offline by default; set
//! `RETICENT_MODEL` to use a real model (see the README).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use futures::StreamExt;
use reticent::{Agent, AgentEvent, Model, ModelResponse, ScriptedModel, ToolCall, ToolContext};
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The notes folder. Tools receive it through `#[tools]` shared state.
pub struct Notes {
    root: PathBuf,
}

/// One search hit.
#[derive(Debug, Serialize)]
pub struct Hit {
    note: String,
    line: usize,
    text: String,
}

/// How to match a search query.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchMode {
    /// Case-insensitive substring (the default).
    #[default]
    Contains,
    /// Whole words only.
    Word,
}

/// Options of a search.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchOptions {
    /// How to match.
    #[serde(default)]
    mode: MatchMode,
    /// At most this many hits (default 10).
    limit: Option<usize>,
}

impl Notes {
    /// A notes folder under `root`, filled with a few notes.
    pub fn create(root: &Path) -> std::io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let notes = [
            (
                "rust-async.md",
                "Futures do nothing until polled.\nCancellation is dropping the future.\nUse a CancellationToken to let a task clean up.\n",
            ),
            (
                "schema.md",
                "Models read the JSON Schema of each tool.\nDoc comments become descriptions.\n",
            ),
            (
                "incidents.md",
                "2024-03-02: payment gateway timeouts, retried after 30s.\nLesson: a timeout is not a failure of the charge; reconcile first.\n",
            ),
        ];
        for (name, text) in notes {
            std::fs::write(root.join(name), text)?;
        }
        Ok(Self {
            root: root.to_owned(),
        })
    }

    fn path(&self, name: &str) -> Result<PathBuf, ReadError> {
        let valid = !name.is_empty()
            && name.ends_with(".md")
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !name.contains("..");
        if valid {
            Ok(self.root.join(name))
        } else {
            Err(ReadError::BadName(name.chars().take(80).collect()))
        }
    }
}

#[reticent::tools]
impl Notes {
    /// List the notes, by file name.
    #[tool(read_only)]
    fn list_notes(&self) -> std::io::Result<Vec<String>> {
        let mut names = std::fs::read_dir(&self.root)?
            .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<Vec<_>, _>>()?;
        names.sort();
        Ok(names)
    }

    /// Read one note in full.
    #[tool(read_only)]
    fn read_note(
        &self,
        /// The note's file name, like "schema.md".
        name: String,
    ) -> Result<String, ReadError> {
        let path = self.path(&name)?;
        Ok(std::fs::read_to_string(path)?)
    }

    /// Count the words of one note.
    ///
    /// Written the `anyhow` way: `?` on any error, `.context(..)` for the caller. The model is
    /// shown the argument error of a bad name in full (`ReadError::BadName`, found in the
    /// chain), `NoteUnreadable` for a file that cannot be read, and never the context string,
    /// which holds the note's path.
    #[tool(read_only)]
    fn count_words(
        &self,
        /// The note's file name, like "schema.md".
        name: String,
    ) -> anyhow::Result<usize> {
        let path = self.path(&name)?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| reticent::Failure::new("NoteUnreadable", e))
            .with_context(|| format!("counting the words of {}", path.display()))?;
        Ok(text.split_whitespace().count())
    }

    /// Search every note for a query, line by line.
    #[tool(read_only, timeout = "5s")]
    async fn search_notes(
        &self,
        /// What to look for.
        query: String,
        /// How to match, and how many hits to return.
        options: Option<SearchOptions>,
        cx: &ToolContext,
    ) -> std::io::Result<Vec<Hit>> {
        let options = options.unwrap_or_default();
        let limit = options.limit.unwrap_or(10);
        let needle = query.to_lowercase();
        let mut hits = Vec::new();
        for name in self.list_notes()? {
            // A long search checks in with the run between files: a cancelled run stops it.
            if cx.cancellation().is_cancelled() {
                break;
            }
            tokio::task::yield_now().await;
            let text = tokio::fs::read_to_string(self.root.join(&name)).await?;
            for (i, line) in text.lines().enumerate() {
                let lower = line.to_lowercase();
                let found = match options.mode {
                    MatchMode::Contains => lower.contains(&needle),
                    MatchMode::Word => lower
                        .split(|c: char| !c.is_alphanumeric())
                        .any(|w| w == needle),
                };
                if found && hits.len() < limit {
                    hits.push(Hit {
                        note: name.clone(),
                        line: i + 1,
                        text: line.to_owned(),
                    });
                }
            }
        }
        tracing::info!(call = cx.call_id(), hits = hits.len(), "search finished");
        Ok(hits)
    }
}

/// Why a note could not be read: the model's mistake (a bad name) or the file system's.
#[derive(Debug, thiserror::Error, reticent::Disclose)]
pub enum ReadError {
    /// The model's mistake: shown to it in full.
    #[error(
        "{0:?} is not a note name: names look like \"schema.md\" (letters, digits, `-`, `_`, ending in .md)"
    )]
    #[disclose(argument)]
    BadName(String),
    /// The model sees `ReadError::Io`; the path in the message stays with the caller.
    #[error("cannot read the note: {0}")]
    Io(#[from] std::io::Error),
}

/// The scripted conversation.
pub fn script() -> Vec<ModelResponse> {
    vec![
        ModelResponse::tool_call("call_1", "list_notes", json!({})),
        ModelResponse::tool_calls(vec![
            ToolCall::new(
                "call_2",
                "search_notes",
                json!({"query": "timeout", "options": {"mode": "word", "limit": 5}}),
            ),
            ToolCall::new("call_3", "read_note", json!({"name": "postmortem.md"})),
        ]),
        ModelResponse::tool_calls(vec![
            ToolCall::new("call_4", "read_note", json!({"name": "incidents.md"})),
            ToolCall::new("call_5", "count_words", json!({"name": "../secrets.md"})),
        ]),
        ModelResponse::text(
            "Your notes mention one timeout incident (2024-03-02, the payment gateway). The \
             lesson recorded: a timeout is not a failed charge — reconcile before retrying. \
             There is no postmortem.md note, and \"../secrets.md\" is not a note name.",
        ),
    ]
}

/// The notes agent.
pub fn agent(model: impl Model, notes: Arc<Notes>) -> Agent {
    Agent::builder(model)
        .system("You answer questions from the user's notes. Cite the note you used.")
        .toolbox(notes)
        .record_content(true)
        .build()
        .expect("the notes agent's configuration is valid")
}

/// The user's question.
pub const QUESTION: &str = "What did we learn from timeouts? Also check the postmortem note.";

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), reticent_examples::Report> {
    // Spans as they close, with their fields: look for `execute_tool` and `error.type`.
    tracing_subscriber::fmt()
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_target(false)
        .without_time()
        .with_writer(std::io::stderr)
        .init();

    let root = std::env::temp_dir().join(format!("reticent-notes-{}", std::process::id()));
    let notes = Arc::new(Notes::create(&root)?);
    let model: Arc<dyn Model> = match reticent_examples::model_from_env()? {
        Some(model) => model,
        None => Arc::new(ScriptedModel::new(script())),
    };
    let agent = agent(model, notes);

    let mut events = agent.run_stream(QUESTION);
    let mut outcome = None;
    // The model's text is printed as it streams in (from a real model, word by word).
    let mut streaming = false;
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextDelta { turn, text } => {
                if !streaming {
                    print!("[turn {turn}] model says: ");
                    streaming = true;
                }
                print!("{text}");
                let _ = std::io::Write::flush(&mut std::io::stdout());
            }
            AgentEvent::ModelResponded { turn, response } => {
                if std::mem::take(&mut streaming) {
                    println!();
                }
                for call in &response.tool_calls {
                    println!(
                        "[turn {turn}] model calls {}({})",
                        call.name, call.arguments
                    );
                }
            }
            AgentEvent::ToolSucceeded {
                tool,
                call_id,
                elapsed,
                ..
            } => {
                println!("          {tool} [{call_id}] ok in {elapsed:?}");
            }
            AgentEvent::ToolFailed(failure) => {
                println!(
                    "          {} [{}] failed; model was shown: {}",
                    failure.tool, failure.call_id, failure.shown_to_model
                );
                println!(
                    "          caller has the full error: {}",
                    failure.error_chain()
                );
            }
            AgentEvent::Finished(result) => outcome = Some(result),
            _ => {}
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    let result = outcome.expect("the stream always ends with Finished")?;
    println!("\nanswer: {}", result.output);
    Ok(())
}
