#!/usr/bin/env python3
"""Compile-time cost of `#[tool]`, as ratios against hand-written tools, measured in one run.

Generates up to four crates with the same 50 tool functions (a string, an integer and an
optional nested struct parameter each, doc comments, a trivial body returning a `Result` with a
thiserror type):

  manual/   hand-written: a `#[derive(Deserialize, JsonSchema)]` argument struct and an
            `impl reticent::Tool` that decodes, calls and classifies, per tool;
  reticent/ each function carries `#[reticent::tool]`;
  rmcp/     rmcp's `#[tool_router]` on an `impl` block of `#[tool]` methods, each taking
            `Parameters<..>` of a derived argument struct (rmcp's documented form);
  rig/      each function carries rig's `#[rig_tool]`;
  base/     with `--base PATH`, the reticent crate built against the checkout at PATH.

Each crate also has a `tools()` function that collects its tools the way the framework runs
them (`Arc<dyn Tool>`, rmcp's `ToolRouter`, rig's `dyn ErasedTool`), so the code a program
runs is built, not only the parts nothing calls. The reticent and hand-written crates depend on
this checkout of reticent; rmcp and rig on their releases from crates.io. Every crate gets a
copy of the workspace's `Cargo.lock`, so the dependencies they share are the versions the
workspace pins. All share one target dir (under `target/compile-time/` by default, kept between
runs), so dependencies build once.

Each run times, for every crate in turn (which crate goes first rotates every run):

  touch + build    a comment appended to `lib.rs`, then `cargo build` (incremental);
  touch + check    the same, then `cargo check`;
  touch + build, not incremental
                   the same, built with incremental compilation off for the crate;
  edit + build     the body of the first tool changed, then `cargo build` (incremental);

and reports the median of each over the runs and its ratio to the hand-written crate's, by
wall time and by CPU time (user + system of cargo, rustc and the linker), which a machine
loaded by other work disturbs less than wall time.

    python3 runtime/benches/compile_time.py [--runs 5] [--tools 50] [--crates manual,reticent,rmcp,rig]
    python3 runtime/benches/compile_time.py --check-only

`--check-only` generates the reticent and hand-written crates and runs `cargo check` on each,
failing if either does not build: CI runs it, so an API change that breaks the benchmark fails
CI instead of leaving a stale number.
"""

import argparse
import os
import pathlib
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

CRATES = ("manual", "reticent", "rmcp", "rig")

COMMON = '''
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Address { pub street: String, pub city: String, pub zip: u32 }

#[derive(Debug, Serialize)]
pub struct Out { pub id: String, pub n: i64, pub city: Option<String> }

#[derive(Debug, thiserror::Error)]
#[error("backend failed: {0}")]
pub struct BackendError(pub String);
'''

DOC = "Tool number {i}: does a thing with a name, a count and an address."

# The body every crate's tool runs; `edit + build` changes the number in the first tool's.
BODY = '''if count < 0 {{ return Err(BackendError(name)); }}
    Ok(Out {{ id: name, n: count + {i}, city: address.map(|a| a.city) }})'''


def attribute_crate(n: int, prelude: str, attribute: str, boxed: str, erased: str) -> str:
    """The crate of `n` functions under `attribute`, and `tools()` holding each as `erased`
    (`boxed` wraps a tool's unit struct)."""
    out = [COMMON, prelude]
    for i in range(n):
        out.append(f'''
/// {DOC.format(i=i)}
#[{attribute}]
pub fn tool_{i}(
    /// The name.
    name: String,
    /// The count.
    count: i64,
    /// Where.
    address: Option<Address>,
) -> Result<Out, BackendError> {{
    {BODY.format(i=i)}
}}
''')
    names = ", ".join(boxed.format(f"Tool{i}") for i in range(n))
    out.append(f'''
/// Every tool, as an agent holds them.
pub fn tools() -> Vec<{erased}> {{
    vec![{names}]
}}
''')
    return ''.join(out)


def reticent_crate(n: int) -> str:
    return attribute_crate(n, "", "reticent::tool", "std::sync::Arc::new({})",
                           "std::sync::Arc<dyn reticent::Tool>")


def manual_crate(n: int) -> str:
    out = [COMMON, '''
use reticent::tool::ToolFuture;
use reticent::{ArgumentError, Failure, Tool, ToolContext, ToolDefinition, ToolError};
use std::sync::OnceLock;

/// The output as JSON, or the failure of an output that cannot be.
fn output(out: Out) -> Result<serde_json::Value, ToolError> {
    serde_json::to_value(out).map_err(|e| Failure::new("OutputError", e).fatal().into())
}
''']
    for i in range(n):
        out.append(f'''
/// {DOC.format(i=i)}
pub fn tool_{i}(name: String, count: i64, address: Option<Address>) -> Result<Out, BackendError> {{
    {BODY.format(i=i)}
}}

/// Arguments of tool number {i}.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool{i}Args {{
    /// The name.
    pub name: String,
    /// The count.
    pub count: i64,
    /// Where.
    #[serde(default)]
    pub address: Option<Address>,
}}

pub struct Tool{i};

impl Tool for Tool{i} {{
    fn definition(&self) -> &ToolDefinition {{
        static DEF: OnceLock<ToolDefinition> = OnceLock::new();
        DEF.get_or_init(|| {{
            ToolDefinition::new(
                "tool_{i}",
                "{DOC.format(i=i)}",
                serde_json::to_value(schemars::schema_for!(Tool{i}Args)).unwrap(),
            )
        }})
    }}

    fn call(&self, args: serde_json::Value, _cx: ToolContext) -> ToolFuture<'_> {{
        let args: Tool{i}Args = match serde_json::from_value(args) {{
            Ok(args) => args,
            Err(e) => return ToolFuture::ready(Err(ArgumentError::new(e.to_string()).into())),
        }};
        ToolFuture::ready(match tool_{i}(args.name, args.count, args.address) {{
            Ok(out) => output(out),
            Err(e) => Err(Failure::from_error(e).into()),
        }})
    }}
}}
''')
    names = ", ".join(f"std::sync::Arc::new(Tool{i})" for i in range(n))
    out.append(f'''
/// Every tool, as an agent holds them.
pub fn tools() -> Vec<std::sync::Arc<dyn Tool>> {{
    vec![{names}]
}}
''')
    return ''.join(out)


def rmcp_crate(n: int) -> str:
    out = [COMMON, '''
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

/// The server whose tools they are.
#[derive(Clone)]
pub struct Tools { tool_router: ToolRouter<Self> }
''']
    methods = []
    for i in range(n):
        out.append(f'''
/// Arguments of tool number {i}.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tool{i}Args {{
    /// The name.
    pub name: String,
    /// The count.
    pub count: i64,
    /// Where.
    #[serde(default)]
    pub address: Option<Address>,
}}
''')
        methods.append(f'''
    /// {DOC.format(i=i)}
    #[tool]
    fn tool_{i}(&self, Parameters(args): Parameters<Tool{i}Args>) -> Result<String, String> {{
        let Tool{i}Args {{ name, count, address }} = args;
        let run = || -> Result<Out, BackendError> {{
            {BODY.format(i=i)}
        }};
        match run() {{
            Ok(out) => serde_json::to_string(&out).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        }}
    }}
''')
    out.append("\n#[tool_router]\nimpl Tools {" + "".join(methods) + "}\n")
    out.append('''
#[tool_handler(router = self.tool_router)]
impl ServerHandler for Tools {}

/// Every tool, as the server holds them.
pub fn tools() -> Tools {
    Tools { tool_router: Tools::tool_router() }
}
''')
    return ''.join(out)


def rig_crate(n: int) -> str:
    return attribute_crate(n, "\nuse rig_core::rig_tool;\n", "rig_tool", "Box::new({})",
                           "Box<dyn rig_core::tool::ErasedTool>")


COMMON_DEPS = '''serde = { version = "1", features = ["derive"] }
serde_json = "1"
schemars = "1"
thiserror = "2"
'''

DEPS = {
    "manual": f'reticent = {{ path = "{ROOT / "runtime"}" }}\n',
    "reticent": f'reticent = {{ path = "{ROOT / "runtime"}" }}\n',
    "rmcp": 'rmcp = { version = "=3.11.0", default-features = false, features = ["macros", "server"] }\n',
    "rig": 'rig-core = { version = "=0.44.0", default-features = false, features = ["derive"] }\n',
}

SOURCES = {
    "manual": manual_crate,
    "reticent": reticent_crate,
    "base": reticent_crate,
    "rmcp": rmcp_crate,
    "rig": rig_crate,
}


def package(key: str) -> str:
    return f"bench_{key}_tools"


def write_crate(dir: pathlib.Path, key: str, tools: int) -> None:
    (dir / "src").mkdir(parents=True, exist_ok=True)
    (dir / "Cargo.toml").write_text(f'''[package]
name = "{package(key)}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
{DEPS[key]}{COMMON_DEPS}''')
    # The workspace's pins for the dependencies the crates share.
    shutil.copyfile(ROOT / "Cargo.lock", dir / "Cargo.lock")
    (dir / "src" / "lib.rs").write_text(SOURCES[key](tools))


def cargo(args, cwd, env, quiet=True) -> None:
    out = subprocess.DEVNULL if quiet else None
    subprocess.run(["cargo", *args], cwd=cwd, env=env, check=True, stdout=out, stderr=out)


def timed(args, cwd, env) -> tuple:
    """Wall time and CPU time (user + system, of cargo, rustc and the linker) of a build."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    cargo(args, cwd, env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def touch(lib: pathlib.Path, run: int) -> None:
    """Appends a comment: the crate is built again, its items unchanged."""
    lib.write_text(lib.read_text() + f"\n// touch {run}\n")


def edit(lib: pathlib.Path, run: int) -> None:
    """Changes the number the first tool adds to its count."""
    text, count = re.subn(r"count \+ \d+", f"count + {1000 + run}", lib.read_text(), count=1)
    assert count == 1, "the first tool's body is where it was"
    lib.write_text(text)


def load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", type=int, default=50)
    parser.add_argument("--crates", default=",".join(CRATES),
                        help="which crates to build, of " + ", ".join(CRATES))
    parser.add_argument("--dir", type=pathlib.Path, default=ROOT / "target" / "compile-time",
                        help="where the crates and their target dir go (kept between runs)")
    parser.add_argument("--base", type=pathlib.Path,
                        help="another checkout of reticent: adds the crate `base`, the reticent "
                             "crate built against it, to compare a change with what it changes")
    parser.add_argument("--check-only", action="store_true",
                        help="generate the reticent and hand-written crates and `cargo check` them")
    args = parser.parse_args()

    keys = ["manual", "reticent"] if args.check_only else args.crates.split(",")
    if args.base and not args.check_only:
        DEPS["base"] = f'reticent = {{ path = "{args.base.resolve() / "runtime"}" }}\n'
        keys.append("base")
    for key in keys:
        if key not in CRATES and key != "base":
            parser.error(f"unknown crate {key!r}")
    if "manual" not in keys:
        parser.error("the hand-written crate is the baseline: keep `manual` in --crates")

    work = args.dir.resolve()
    env = dict(os.environ, CARGO_TARGET_DIR=str(work / "target"), CARGO_TERM_COLOR="never")
    # The dev profile's own setting (incremental) for the crates, and the not-incremental mode
    # turns it off for one crate in its profile: `CARGO_INCREMENTAL` would apply to reticent
    # too, and rebuild it whenever it changed.
    env.pop("CARGO_INCREMENTAL", None)
    for key in keys:
        write_crate(work / key, key, args.tools)

    if args.check_only:
        for key in keys:
            print(f"cargo check of the {key} crate in {work / key}", flush=True)
            cargo(["check", "--quiet"], work / key, env, quiet=False)
        return 0

    print(f"crates in {work}; building dependencies once ...", flush=True)
    for key in keys:
        cargo(["build", "--quiet"], work / key, env, quiet=False)
        cargo(["check", "--quiet"], work / key, env, quiet=False)

    # (what changes in `lib.rs`, the cargo command) per mode
    modes = {
        "touch + build": (touch, lambda key: ["build"]),
        "touch + check": (touch, lambda key: ["check"]),
        "touch + build, not incremental": (touch, lambda key: [
            "build", "--config", f"profile.dev.package.{package(key)}.incremental=false"]),
        "edit + build": (edit, lambda key: ["build"]),
    }
    times = {mode: {key: [] for key in keys} for mode in modes}
    print(f"before: {load()}", flush=True)
    for run in range(args.runs):
        order = keys[run % len(keys):] + keys[:run % len(keys)]
        for mode, (change, command) in modes.items():
            for key in order:
                change(work / key / "src" / "lib.rs", run)
                times[mode][key].append(timed([*command(key), "--quiet"], work / key, env))
        print(f"run {run + 1}/{args.runs} done; {load()}", flush=True)

    for index, what in ((0, "wall time"), (1, "CPU time (user + system)")):
        print()
        print(f"{args.tools} tools, {what}, median of {args.runs} runs, seconds "
              "(ratio to hand-written)")
        header = "".join(f"{key:>18}" for key in keys)
        print(f"{'':32}{header}")
        for mode in modes:
            base = statistics.median(t[index] for t in times[mode]["manual"])
            cells = []
            for key in keys:
                m = statistics.median(t[index] for t in times[mode][key])
                cells.append(f"{m:>9.2f} ({m / base:.2f}x)")
            print(f"{mode:32}" + "".join(f"{c:>18}" for c in cells))
    print()
    print("every run, wall / CPU seconds:")
    for mode in modes:
        for key in keys:
            print(f"  {mode:32}{key:>10}: "
                  + " ".join(f"{w:.2f}/{c:.2f}" for w, c in times[mode][key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
