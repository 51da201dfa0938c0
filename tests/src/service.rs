//! What the Restate services in `src/bin/` (`restate_desk`, `restate_tasks`) share: their
//! command-line arguments, and the files in their state folder they count what happened in,
//! outside the process, so that a test counts across restarts.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::Path;

/// Appends `line` to the file `name` in `dir`.
pub fn append(dir: &Path, name: &str, line: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(name))
        .expect("the state folder is writable");
    writeln!(file, "{line}").expect("the state folder is writable");
}

/// The value after the argument `name` in `args`; `usage` says how the program is run.
pub fn arg(args: &[String], name: &str, usage: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .unwrap_or_else(|| panic!("usage: {usage} ({name} is missing)"))
        .clone()
}
