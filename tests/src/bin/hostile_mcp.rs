//! A hostile MCP server over stdio, for the `mcp` tests of `McpClient`: raw JSON-RPC, one
//! message a line, with one answer spoiled as [`Misbehaviour`] says.
//!
//! ```text
//! hostile_mcp MISBEHAVIOUR    # silent-list, garbled-list, deep-schema, garbled-call, ...
//! ```

use std::io::{BufRead as _, Write as _};

use reticent_tests::mcp::hostile::{Misbehaviour, answer};

fn main() {
    let misbehaviour = std::env::args()
        .nth(1)
        .and_then(|name| Misbehaviour::from_name(&name))
        .unwrap_or_else(|| {
            let names: Vec<_> = Misbehaviour::ALL.iter().map(|m| m.name()).collect();
            eprintln!(
                "usage: hostile_mcp MISBEHAVIOUR (one of {})",
                names.join(", ")
            );
            std::process::exit(2);
        });
    let mut stdout = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str(&line) else {
            continue;
        };
        for reply in answer(misbehaviour, &message) {
            if writeln!(stdout, "{reply}")
                .and_then(|()| stdout.flush())
                .is_err()
            {
                return;
            }
        }
    }
}
