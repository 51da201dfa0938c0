//! A `Result` is recognised by its type, however it is written: an alias, a generic alias,
//! `use … as`, a `#[tools]` method returning an alias. Its error is classified, never sent as
//! an output.

use std::sync::Arc;

use reticent::{Tool, ToolContext, ToolError, Toolbox};
use serde_json::json;

#[derive(Debug, serde::Serialize, thiserror::Error)]
#[error("cannot reach {dsn}")]
struct DbError {
    dsn: String,
}

type Outcome = Result<String, DbError>;
type AppResult<T> = Result<T, DbError>;

mod renamed {
    pub use std::result::Result as Res;
}
use renamed::Res;

fn db_error() -> DbError {
    DbError { dsn: "postgres://admin:hunter2@db".into() }
}

/// An alias.
#[reticent::tool]
fn aliased() -> Outcome {
    Err(db_error())
}

/// A generic alias.
#[reticent::tool]
async fn generic_alias(n: u32) -> AppResult<u32> {
    if n == 0 {
        return Err(db_error());
    }
    Ok(n)
}

/// Renamed.
#[reticent::tool]
fn renamed_result() -> Res<String, DbError> {
    Err(db_error())
}


struct Shop;

#[reticent::tools]
impl Shop {
    /// A method returning an alias.
    #[tool]
    fn method_aliased(&self) -> Outcome {
        Err(db_error())
    }
}

fn kind(tool: &dyn Tool, args: serde_json::Value) -> String {
    let future = tool.call(args, ToolContext::default());
    let error = futures_lite(future).expect_err("the tool fails");
    let ToolError::Failed(failure) = error else { panic!("not a failure") };
    failure.kind().to_owned()
}

fn futures_lite<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(future)
}

fn main() {
    assert_eq!(kind(&Aliased, json!({})), "DbError");
    assert_eq!(kind(&GenericAlias, json!({"n": 0})), "DbError");
    assert_eq!(kind(&RenamedResult, json!({})), "DbError");
    let tools = Arc::new(Shop).tools();
    assert_eq!(kind(&*tools[0], json!({})), "DbError");
    let ok = futures_lite(GenericAlias.call(json!({"n": 7}), ToolContext::default()));
    assert_eq!(ok.unwrap(), json!(7));
}
