//! Compile-fail cases: each file under `tests/ui/{tool,tools,disclose,secret}` holds one
//! mistake, and its `.stderr` is the diagnostic the user sees. Compile-pass cases under
//! `tests/ui/pass` cover every supported shape and check its behavior in `main`.
//!
//! `reticent` is built here without features, as a program that depends on it alone: what it
//! refuses must not depend on them. The shapes its features add (a tool returning
//! `anyhow::Result<T>`) are checked in `reticent-tests`.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p reticent-ui-tests`
//! and read every one: each must point at the offending token and say the fix.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/tool/*.rs");
    t.compile_fail("tests/ui/tools/*.rs");
    t.compile_fail("tests/ui/disclose/*.rs");
    t.compile_fail("tests/ui/secret/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
