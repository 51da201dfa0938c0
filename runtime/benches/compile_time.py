#!/usr/bin/env python3
"""Compile-time cost of `#[tool]`, as a ratio against hand-written tools, measured in one run.

Generates two crates with the same 50 tool functions (a string, an integer and an optional
nested struct parameter each, returning a `Result` with a thiserror type):

  macro/  each function carries `#[reticent::tool]`;
  manual/ each function has a hand-written `#[derive(Deserialize, JsonSchema)]` argument struct
          and a hand-written `impl Tool` that decodes, calls and classifies.

Both depend on this checkout of reticent and share one target dir, so dependencies are built
once. For each crate it times a full rebuild of the crate alone (`cargo clean -p`) and an
incremental rebuild after touching `lib.rs`, alternating the two crates, and reports medians
and the ratios macro/manual.

    python3 runtime/benches/compile_time.py [--runs 5] [--tools 50]
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def common(n: int) -> str:
    return '''
use serde::{Deserialize, Serialize};

#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Address { pub street: String, pub city: String, pub zip: u32 }

#[derive(Debug, Serialize)]
pub struct Out { pub id: String, pub n: i64, pub city: Option<String> }

#[derive(Debug, thiserror::Error)]
#[error("backend failed: {0}")]
pub struct BackendError(pub String);
'''


def macro_crate(n: int) -> str:
    out = [common(n)]
    for i in range(n):
        out.append(f'''
/// Tool number {i}: does a thing with a name, a count and an address.
#[reticent::tool]
pub fn tool_{i}(
    /// The name.
    name: String,
    /// The count.
    count: i64,
    /// Where.
    address: Option<Address>,
) -> Result<Out, BackendError> {{
    if count < 0 {{ return Err(BackendError(name)); }}
    Ok(Out {{ id: name, n: count + {i}, city: address.map(|a| a.city) }})
}}
''')
    return ''.join(out)


def manual_crate(n: int) -> str:
    out = [common(n), '''
use reticent::{ArgumentError, Failure, Tool, ToolContext, ToolDefinition, ToolError};
use std::sync::OnceLock;
''']
    for i in range(n):
        out.append(f'''
pub fn tool_{i}(name: String, count: i64, address: Option<Address>) -> Result<Out, BackendError> {{
    if count < 0 {{ return Err(BackendError(name)); }}
    Ok(Out {{ id: name, n: count + {i}, city: address.map(|a| a.city) }})
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
        DEF.get_or_init(|| ToolDefinition {{
            name: "tool_{i}".into(),
            description: "Tool number {i}: does a thing with a name, a count and an address.".into(),
            parameters: serde_json::to_value(schemars::schema_for!(Tool{i}Args)).unwrap(),
            annotations: Default::default(),
        }})
    }}
    fn call(&self, args: serde_json::Value, _cx: ToolContext)
        -> futures::future::BoxFuture<'_, Result<serde_json::Value, ToolError>> {{
        Box::pin(async move {{
            let args: Tool{i}Args = serde_json::from_value(args)
                .map_err(|e| ToolError::Argument(ArgumentError::new(e.to_string())))?;
            match tool_{i}(args.name, args.count, args.address) {{
                Ok(out) => serde_json::to_value(out)
                    .map_err(|e| ToolError::Failed(Failure::new("OutputError", e))),
                Err(e) => Err(ToolError::Failed(Failure::from_error(e))),
            }}
        }})
    }}
}}
''')
    return ''.join(out)


def write_crate(dir: pathlib.Path, name: str, source: str) -> None:
    (dir / "src").mkdir(parents=True, exist_ok=True)
    (dir / "Cargo.toml").write_text(f'''[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
reticent = {{ path = "{ROOT / 'runtime'}" }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = {{ version = "1", features = ["preserve_order"] }}
schemars = {{ version = "1", default-features = false, features = ["derive", "std", "preserve_order"] }}
thiserror = "2"
futures = {{ version = "0.3", default-features = false, features = ["std"] }}
''')
    (dir / "src" / "lib.rs").write_text(source)


def timed(cmd, cwd, env) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tools", type=int, default=50)
    args = parser.parse_args()

    work = pathlib.Path(tempfile.mkdtemp(prefix="reticent-compile-time-"))
    env = dict(os.environ, CARGO_TARGET_DIR=str(work / "target"), CARGO_INCREMENTAL="1")
    crates = {
        "macro": ("bench_macro_tools", macro_crate(args.tools)),
        "manual": ("bench_manual_tools", manual_crate(args.tools)),
    }
    for key, (name, source) in crates.items():
        write_crate(work / key, name, source)
    print(f"crates in {work}; building dependencies once ...", flush=True)
    for key in crates:
        subprocess.run(["cargo", "build", "-q"], cwd=work / key, env=env, check=True)

    full = {k: [] for k in crates}
    incremental = {k: [] for k in crates}
    for run in range(args.runs):
        for key, (name, _) in crates.items():
            subprocess.run(["cargo", "clean", "-q", "-p", name], cwd=work / key, env=env, check=True)
            full[key].append(timed(["cargo", "build", "-q"], work / key, env))
            lib = work / key / "src" / "lib.rs"
            lib.write_text(lib.read_text() + f"\n// touch {run}\n")
            incremental[key].append(timed(["cargo", "build", "-q"], work / key, env))
        print(f"run {run + 1}/{args.runs} done", flush=True)

    def med(xs):
        return statistics.median(xs)

    print()
    print(f"{args.tools} tools, median of {args.runs} runs (seconds)")
    print(f"{'':24}{'#[tool]':>10}{'hand-written':>14}{'ratio':>8}")
    for label, data in (("rebuild of the crate", full), ("incremental rebuild", incremental)):
        m, h = med(data["macro"]), med(data["manual"])
        print(f"{label:24}{m:>10.2f}{h:>14.2f}{m / h:>8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
